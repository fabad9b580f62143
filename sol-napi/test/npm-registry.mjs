// A registry of its own for the install tests: serves the packuments and tarballs of the
// packages `scripts/package.mjs` packed, as the npm registry would after a release, and 404
// for every other name. npm reaches it through `npm_config_registry`, so `pi install npm:sol-pi`
// runs exactly as a user types it, with no network; the platform packages not built here
// are 404, as on the registry before their release job, and npm skips them (optional).
import * as fs from "node:fs";
import * as http from "node:http";

export async function startRegistry(packed) {
	const byName = new Map(packed.map((p) => [p.name, p]));
	const requests = [];
	const server = http.createServer((req, res) => {
		const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
		requests.push(`${req.method} ${url}`);
		const tarball = url.match(/^\/-\/tarball\/(.+)$/);
		if (tarball) {
			const p = packed.find((x) => x.file.endsWith(`/${tarball[1]}`));
			if (!p) return notFound(res);
			res.writeHead(200, { "content-type": "application/octet-stream" });
			return res.end(fs.readFileSync(p.file));
		}
		const p = byName.get(url.slice(1));
		if (!p) return notFound(res);
		const base = `http://127.0.0.1:${server.address().port}`;
		const version = {
			...p.manifest,
			_id: `${p.name}@${p.version}`,
			dist: { tarball: `${base}/-/tarball/${p.file.split("/").pop()}`, integrity: p.integrity, shasum: p.shasum },
		};
		res.writeHead(200, { "content-type": "application/json" });
		res.end(JSON.stringify({ name: p.name, "dist-tags": { latest: p.version }, versions: { [p.version]: version } }));
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}/`,
		requests,
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

function notFound(res) {
	res.writeHead(404, { "content-type": "application/json" });
	res.end('{"error":"Not found"}');
}
