// CLI test helper: registers Pi's faux provider "sol-faux/faux-1" so `pi -p`
// runs with no network and no credentials. The reply is fixed so the test can
// compare stdout byte for byte.
import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function fauxProviderExtension(pi: ExtensionAPI) {
	const faux = fauxProvider({ provider: "sol-faux", models: [{ id: "faux-1", contextWindow: 100000 }] });
	faux.setResponses([fauxAssistantMessage("faux answer from the CLI")]);
	pi.registerProvider(faux.provider as never);
}
