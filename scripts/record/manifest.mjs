// The corpus manifest (fixtures/sessions/corpus/manifest.json): one row per recorded file,
// with what the file should hold, counted here from the file itself (session-file.mjs reads
// it without Pi), and its shape (entry types, message roles and tool names in order), which
// the corpus test compares with a fresh recording.
import * as fs from "node:fs";
import * as path from "node:path";

import { parseSession } from "../../sol-napi/test/session-file.mjs";

/** An entry's kind: its type, and for custom entries and messages also their custom type. */
const kindOf = (entry) => (entry.type === "custom" || entry.type === "custom_message" ? `${entry.type}:${entry.customType}` : entry.type);

/** The counts of a session file's text: entries after the header, messages of the active branch, leaves. */
export function countsOf(text, name) {
	const session = parseSession(text, name);
	const parents = new Set(session.entries.map((e) => e.parentId).filter((id) => typeof id === "string"));
	return {
		entries: session.entries.length,
		branchEntries: session.branch.length,
		branchMessages: session.branch.filter((e) => e.type === "message").length,
		leaves: session.entries.filter((e) => !parents.has(e.id)).length,
		compactions: session.entries.filter((e) => e.type === "compaction").length,
	};
}

/** The shape of a session file's text: what a re-recording of the same scenario must repeat. */
export function shapeOf(text, name) {
	const { entries } = parseSession(text, name);
	const messages = entries.filter((e) => e.type === "message").map((e) => e.message);
	return {
		entries: entries.map(kindOf),
		roles: messages.map((m) => m.role),
		tools: messages.filter((m) => m.role === "assistant").flatMap((m) => (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === "toolCall").map((b) => b.name)),
	};
}

/**
 * Adds or replaces the row of `file` in the `manifest.json` beside it, if there is one (the
 * corpus's, or fixtures/sessions/long/'s);
 * returns the row (or undefined when the folder has no manifest).
 */
export function updateManifest(file, { scenario, piVersion, withSolPi, cacheAware = false }) {
	const manifestFile = path.join(path.dirname(file), "manifest.json");
	if (!fs.existsSync(manifestFile)) return undefined;
	const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
	const name = path.basename(file);
	// `cacheAware` only on the rows of cache-aware recordings, so the corpus rows keep their shape.
	const row = { file: name, piVersion, scenario, solPi: withSolPi, ...(cacheAware ? { cacheAware: true } : {}), ...countsOf(fs.readFileSync(file, "utf8"), name) };
	const files = manifest.files.filter((r) => r.file !== name);
	files.push(row);
	files.sort((a, b) => a.file.localeCompare(b.file));
	fs.writeFileSync(manifestFile, `${JSON.stringify({ ...manifest, files }, null, 2)}\n`);
	return row;
}
