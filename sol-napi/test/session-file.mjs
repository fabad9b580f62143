// A small reader of Pi's session files (JSONL): the header line, the entries in file
// order, and the active branch, which is the newest entry and its ancestors by `parentId`
// links, root first (what Pi rebuilds the session from when it opens the file). It
// imports nothing from Pi, so it reads the files of every Pi version of the matrix.
import * as fs from "node:fs";

/**
 * Parses a session file's text. Throws an Error naming the line for a line that is not
 * JSON, a missing header, an entry without an id, a repeated id, or a parent link that
 * points nowhere or loops.
 */
export function parseSession(text, name = "session file") {
	const lines = text.split("\n");
	if (lines.at(-1) === "") lines.pop();
	const records = lines.map((line, i) => {
		try {
			return JSON.parse(line);
		} catch (error) {
			throw new Error(`${name}:${i + 1}: not a JSON line (${error.message})`);
		}
	});
	const [header, ...entries] = records;
	if (header?.type !== "session" || typeof header.id !== "string") throw new Error(`${name}:1: not a session header`);
	const byId = new Map();
	entries.forEach((entry, i) => {
		if (typeof entry?.id !== "string") throw new Error(`${name}:${i + 2}: an entry without an id`);
		if (byId.has(entry.id)) throw new Error(`${name}:${i + 2}: the id ${entry.id} is used twice`);
		byId.set(entry.id, entry);
	});
	const branch = [];
	const seen = new Set();
	for (let entry = entries.at(-1); entry; ) {
		if (seen.has(entry.id)) throw new Error(`${name}: the parent links loop at ${entry.id}`);
		seen.add(entry.id);
		branch.push(entry);
		const parent = entry.parentId;
		if (parent === null || parent === undefined) break;
		entry = byId.get(parent);
		if (!entry) throw new Error(`${name}: ${branch.at(-1).id} names the parent ${parent}, which is not in the file`);
	}
	branch.reverse();
	return { header, entries, byId, branch };
}

/** Reads and parses the session file at `file`. */
export const readSessionFile = (file) => parseSession(fs.readFileSync(file, "utf8"), file);

/** A message's text: a string content as it is, text blocks joined with `\n` (as SoL-Pi joins them). */
export const textOf = (message) =>
	typeof message.content === "string"
		? message.content
		: (message.content ?? [])
				.filter((block) => block.type === "text")
				.map((block) => block.text)
				.join("\n");

/** The messages of `entries` (optionally of one role), in order. */
export const messagesOf = (entries, role) => entries.filter((e) => e.type === "message" && (role === undefined || e.message.role === role)).map((e) => e.message);

/** The custom entries of one type, in order. */
export const customEntries = (entries, customType) => entries.filter((e) => e.type === "custom" && e.customType === customType);
