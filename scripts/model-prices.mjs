// Writes sol-replay/data/model-prices.json: every model of Pi's model registry with its
// prices (dollars per million tokens) and prompt-cache lifetimes, as `sol-pi replay` prices
// each request at the model that answered it (replay runs without Pi).
//
//   node scripts/model-prices.mjs [<pi install root>]   # default: the newest matrix version
//
// The root is a folder with node_modules/@earendil-works/pi-coding-agent (the checkout, or
// .cache/pi/<version> after scripts/setup.sh). The file names the Pi version and the date.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(process.argv[2] ?? path.join(repo, ".cache", "pi", "1.6.0"));
const dir = path.join(root, "node_modules", "@earendil-works", "pi-coding-agent");
const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
const exported = pkg.exports?.["."];
const entry = typeof exported === "string" ? exported : (exported?.import ?? exported?.default ?? pkg.main);
const pi = await import(pathToFileURL(path.join(dir, entry)).href);

// An empty agent folder: the built-in models only, none of the user's.
const agent = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-model-prices-"));
process.env.PI_CODING_AGENT_DIR = agent;
try {
	const runtime = await pi.ModelRuntime.create({
		authPath: path.join(agent, "auth.json"),
		modelsPath: path.join(agent, "models.json"),
	});
	const registry = new pi.ModelRegistry(runtime);
	const models = {};
	for (const model of registry.getAll()) {
		const cost = model.cost;
		if (!cost) continue;
		const row = {
			input: cost.input ?? 0,
			output: cost.output ?? 0,
			cacheRead: cost.cacheRead ?? 0,
			cacheWrite: cost.cacheWrite ?? 0,
		};
		if (model.promptCache?.short) row.cacheSeconds = model.promptCache.short;
		if (model.promptCache?.long) row.longCacheSeconds = model.promptCache.long;
		models[`${model.provider}/${model.id}`] = row;
	}
	const sorted = Object.fromEntries(Object.entries(models).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
	const lines = Object.entries(sorted).map(([key, row]) => `    ${JSON.stringify(key)}: ${JSON.stringify(row)}`);
	const date = new Date().toISOString().slice(0, 10);
	const text = `{\n  "pi": ${JSON.stringify(pkg.version)},\n  "generated": ${JSON.stringify(date)},\n  "models": {\n${lines.join(",\n")}\n  }\n}\n`;
	const out = path.join(repo, "sol-replay", "data", "model-prices.json");
	fs.mkdirSync(path.dirname(out), { recursive: true });
	fs.writeFileSync(out, text);
	console.log(`${out}: ${lines.length} models of Pi ${pkg.version}`);
} finally {
	fs.rmSync(agent, { recursive: true, force: true });
}
