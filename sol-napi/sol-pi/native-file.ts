// Checks an addon file before Node maps it. A `.node` file cut short (an interrupted copy or
// download) passes the dynamic loader's header checks on Linux, and touching a segment past its
// end then kills the whole process with SIGBUS, Pi included. So an ELF file is read here first:
// when the file is shorter than its own headers say, it is refused with a message instead.
// Other formats, and a file for another architecture, fail to load as an ordinary error.
import * as fs from "node:fs";

/** Why the file cannot be loaded safely, or undefined when it looks whole (or is not ELF). */
export function truncatedElf(file: string): string | undefined {
	let fd: number | undefined;
	try {
		fd = fs.openSync(file, "r");
		const size = fs.fstatSync(fd).size;
		const header = Buffer.alloc(64);
		const read = fs.readSync(fd, header, 0, 64, 0);
		if (read < 4 || header.toString("latin1", 0, 4) !== "\x7fELF") return undefined;
		const wide = header[4] === 2;
		const little = header[5] !== 2;
		if (read < (wide ? 64 : 52)) return `${file} is cut short (${size} bytes, less than an ELF header)`;
		const u16 = (b: Buffer, at: number) => (little ? b.readUInt16LE(at) : b.readUInt16BE(at));
		const u32 = (b: Buffer, at: number) => (little ? b.readUInt32LE(at) : b.readUInt32BE(at));
		const addr = (b: Buffer, at: number) => (wide ? Number(little ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at)) : u32(b, at));
		const [phoff, shoff] = wide ? [addr(header, 0x20), addr(header, 0x28)] : [addr(header, 0x1c), addr(header, 0x20)];
		const [phentsize, phnum, shentsize, shnum] = wide
			? [u16(header, 0x36), u16(header, 0x38), u16(header, 0x3a), u16(header, 0x3c)]
			: [u16(header, 0x2a), u16(header, 0x2c), u16(header, 0x2e), u16(header, 0x30)];
		let needed = Math.max(phoff + phnum * phentsize, shoff + shnum * shentsize);
		if (phoff + phnum * phentsize <= size && phentsize > 0) {
			const table = Buffer.alloc(phnum * phentsize);
			fs.readSync(fd, table, 0, table.length, phoff);
			for (let i = 0; i < phnum; i++) {
				const entry = table.subarray(i * phentsize, (i + 1) * phentsize);
				if (u32(entry, 0) !== 1) continue; // PT_LOAD only: the segments the loader maps
				const [offset, filesz] = wide ? [addr(entry, 0x08), addr(entry, 0x20)] : [addr(entry, 0x04), addr(entry, 0x10)];
				needed = Math.max(needed, offset + filesz);
			}
		}
		return size < needed ? `${file} is cut short (${size} bytes where its ELF headers need ${needed})` : undefined;
	} catch {
		return undefined; // unreadable here: the load reports it
	} finally {
		if (fd !== undefined) fs.closeSync(fd);
	}
}
