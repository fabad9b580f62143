// The demo's models for `bash scripts/demo.sh --tui`: registers the scripted agent model
// (sol-faux/faux-1) and the reducer model (sol-faux-reducer/reducer-1) in the real `pi`
// CLI, with the same choices as the in-process demo (scripts/demo/script.mjs).
import * as ai from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

import { agentProvider, agentScript, reducerProvider } from "./script.mjs";

export default function demoModels(pi: ExtensionAPI): void {
	const script = agentScript(ai);
	pi.registerProvider(agentProvider(ai, { next: script.next }).provider as never);
	pi.registerProvider(reducerProvider(ai).provider as never);
}
