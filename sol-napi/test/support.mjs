// Shared test support: loads a real Pi install (the one named by
// SOL_PI_TEST_PI_ROOT, else the checkout's development dependency) and runs a
// real AgentSession with Pi's faux provider, in-memory session and settings,
// and the SoL-Pi package loaded from a package root through Pi's own
// DefaultResourceLoader.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const piRoot = path.resolve(process.env.SOL_PI_TEST_PI_ROOT ?? repoRoot);

function packageDir(name) {
	return path.join(piRoot, "node_modules", ...name.split("/"));
}

function entryUrl(name) {
	const dir = packageDir(name);
	const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
	const exp = pkg.exports?.["."];
	const rel = typeof exp === "string" ? exp : (exp?.import ?? exp?.default ?? pkg.main);
	return pathToFileURL(path.join(dir, rel)).href;
}

export const piVersion = JSON.parse(
	fs.readFileSync(path.join(packageDir("@earendil-works/pi-coding-agent"), "package.json"), "utf8"),
).version;
export const pi = await import(entryUrl("@earendil-works/pi-coding-agent"));
export const ai = await import(entryUrl("@earendil-works/pi-ai"));

/** The `pi` CLI entry of the install under test. */
export function piCliPath() {
	const dir = packageDir("@earendil-works/pi-coding-agent");
	const bin = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).bin;
	return path.join(dir, typeof bin === "string" ? bin : bin.pi);
}

/** A fresh folder tree: `project/` (cwd) and `agent/` (agent dir). */
export function makeWorkspace(t) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-test-"));
	const cwd = path.join(root, "project");
	const agentDir = path.join(root, "agent");
	fs.mkdirSync(cwd, { recursive: true });
	fs.mkdirSync(agentDir, { recursive: true });
	t?.after(() => fs.rmSync(root, { recursive: true, force: true }));
	return { root, cwd, agentDir };
}

/** A `sol-pi.json` with all four mechanisms on, the reducer answered by the faux model. */
export const ALL_FOUR_MECHANISMS = Object.freeze({
	version: 1,
	actionFusion: true,
	observationPack: true,
	evidencePreservingReducer: true,
	evidencePreservingReducerProvider: "sol-faux",
	evidencePreservingReducerModel: "faux-1",
	onlineContextCompact: true,
});

export function writeJson(file, value) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`);
	return file;
}

// Every method of Pi's ExtensionUIContext (identical on 0.84.2 and 1.6.0).
const uiMethods = [
	"select", "confirm", "input", "notify", "onTerminalInput", "setStatus", "setWorkingMessage",
	"setWorkingVisible", "setWorkingIndicator", "setHiddenThinkingLabel", "setWidget", "setFooter",
	"setHeader", "setTitle", "custom", "pasteToEditor", "setEditorText", "getEditorText", "editor",
	"addAutocompleteProvider", "setEditorComponent", "getEditorComponent", "getAllThemes", "getTheme",
	"setTheme", "getToolsExpanded", "setToolsExpanded",
];

/** A UI context that records every call and otherwise does nothing. */
function recordingUi(calls) {
	const ui = {};
	for (const method of uiMethods) {
		ui[method] = (...args) => {
			calls.push({ method, args });
			return undefined;
		};
	}
	return ui;
}

/**
 * Starts a real AgentSession with SoL-Pi loaded from `extensionPath` (a package
 * root or an entry file). `mode: "tui"` binds a recording UI context so notices
 * can be read; any other mode binds no UI, as print/JSON runs do.
 */
export async function startSession({
	cwd,
	agentDir,
	trusted = true,
	extensionPath = repoRoot,
	extraExtensionPaths = [],
	earlierExtensionPaths = [],
	extensionFactories = [],
	settings = {},
	mode = "print",
	replies = ["done"],
	sessionManager = pi.SessionManager.inMemory(cwd),
	extraProviders = [],
	// A prepared faux provider ({provider, getModel}) instead of one scripted with `replies`.
	faux: preparedFaux,
}) {
	const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
	// getAgentDir() reads this, as it does for the real CLI.
	process.env.PI_CODING_AGENT_DIR = agentDir;
	let faux = preparedFaux;
	if (!faux) {
		faux = ai.fauxProvider({ provider: "sol-faux", models: [{ id: "faux-1", contextWindow: 100000 }] });
		faux.setResponses(replies.map((reply) => (typeof reply === "string" ? ai.fauxAssistantMessage(reply) : reply)));
	}
	const modelRuntime = await pi.ModelRuntime.create({
		authPath: path.join(agentDir, "auth.json"),
		modelsPath: path.join(agentDir, "models.json"),
	});
	modelRuntime.registerNativeProvider(faux.provider);
	for (const provider of extraProviders) modelRuntime.registerNativeProvider(provider);
	const settingsManager = pi.SettingsManager.inMemory({ compaction: { enabled: false }, ...settings }, { projectTrusted: trusted });
	const resourceLoader = new pi.DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		additionalExtensionPaths: [...earlierExtensionPaths, extensionPath, ...extraExtensionPaths],
		extensionFactories,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
	});
	await resourceLoader.reload();
	const loaded = resourceLoader.getExtensions();
	const { session } = await pi.createAgentSession({
		cwd,
		agentDir,
		model: faux.getModel(),
		thinkingLevel: "off",
		modelRuntime,
		resourceLoader,
		sessionManager,
		settingsManager,
	});
	const errors = [];
	const uiCalls = [];
	const bindings = { onError: (error) => errors.push(error) };
	if (mode === "tui") Object.assign(bindings, { mode: "tui", uiContext: recordingUi(uiCalls) });
	await session.bindExtensions(bindings);
	const solPi = loaded.extensions.find((ext) => ext.path.startsWith(path.resolve(extensionPath)));
	return {
		session,
		faux,
		loaded,
		solPi,
		errors,
		notices: () => uiCalls.filter((c) => c.method === "notify").map((c) => ({ message: c.args[0], level: c.args[1] })),
		uiCalls,
		close() {
			session.dispose();
			// SoL-Pi never deletes its files; the tests clean the temp folders of their in-memory sessions.
			if (!sessionManager.getSessionDir()) {
				const prefix = `sol-pi-${sessionManager.getSessionId()}-`;
				for (const name of fs.readdirSync(os.tmpdir())) {
					if (name.startsWith(prefix)) fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
				}
			}
			if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
		},
	};
}

/** Sends one prompt and returns the assistant's final text. */
export async function ask(session, text = "hello") {
	await session.prompt(text);
	return session.getLastAssistantText();
}

/** A scripted assistant turn that calls tools (run in parallel by Pi unless a tool says otherwise). */
export function toolCalls(...calls) {
	return ai.fauxAssistantMessage(
		calls.map(([name, args, id]) => ai.fauxToolCall(name, args, { id })),
		{ stopReason: "toolUse" },
	);
}

/** The tool results of the session so far, by tool-call id. */
export function toolResults(session) {
	const results = new Map();
	for (const message of session.messages) {
		if (message.role === "toolResult") results.set(message.toolCallId, message);
	}
	return results;
}

export function resultText(result) {
	return (result?.content ?? []).filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

/** Pi's major version: 0 (0.84.2) or 1. */
export const piMajor = Number(piVersion.split(".")[0]);
