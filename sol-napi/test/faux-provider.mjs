// A faux provider that behaves like Pi's HTTP providers in one respect: its stream functions
// call `options.onPayload` first, so `before_provider_request` fires. Shared by the CLI test
// fixtures and the scripted models of the demo and the session recorder; `ai` is the Pi AI
// module of the install under test, `core` a `createFauxCore()`, `payload` what it hands over.
export function payloadProvider(ai, core, payload) {
	const withPayload = (fn) => (model, context, options) => {
		if (options?.onPayload) void Promise.resolve(options.onPayload(payload, model));
		return fn(model, context, options);
	};
	return ai.createProvider({
		id: core.provider,
		auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
		models: core.models,
		api: { stream: withPayload(core.stream), streamSimple: withPayload(core.streamSimple), fetchDeferred: core.fetchDeferred, cancelDeferred: core.cancelDeferred },
	});
}
