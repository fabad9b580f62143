// Loaded before SoL-Pi in the demo: hands every tool result, as the tool returned it and
// before any SoL-Pi handler sees it, to the demo's recorder (if one is installed), so the
// demo can check what SoL-Pi archived against the real original output.
export default function rawResults(pi: { on(event: string, handler: (event: unknown) => void): void }): void {
	pi.on("tool_result", (event) => {
		const sink = (globalThis as Record<symbol, unknown>)[Symbol.for("sol-pi-demo.raw-results")];
		if (typeof sink === "function") sink(structuredClone(event));
	});
}
