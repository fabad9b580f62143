// The one door for Pi's events. Every event SoL-Pi takes is registered with Pi once, here, the
// first time a mechanism asks for it; each mechanism's handler is then called from that one
// registration, in the order the mechanisms registered (Rust's order, the savings book last),
// as Pi would call them:
// - a handler that throws does not stop the ones after it; the errors are thrown together at the
//   end, so Pi reports them once for the event;
// - `context`: a handler may edit the messages in place or return new ones, which the next
//   handler sees; `session_before_*`: the first cancel wins, else the last answer given;
// - a handler added while its event is being handled waits for the next one (Pi 1.x does the
//   same; Pi 0.84.2 called it at once, so the first `session_start` now runs the same handlers
//   on every version).
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

type Handler = (event: { type?: string; messages?: unknown[] }, ctx: ExtensionContext) => unknown;
type Answer = { cancel?: boolean; messages?: unknown[] } | undefined;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * A view of Pi's API whose `on` goes through one registration per event; everything else is
 * Pi's own. Pi's API is a plain object of closures, so its other methods work unchanged.
 */
export function routedEvents(pi: ExtensionAPI): ExtensionAPI {
	const handlers = new Map<string, Handler[]>();
	const dispatch = (name: string) => async (event: Parameters<Handler>[0], ctx: ExtensionContext) => {
		const errors: string[] = [];
		let answer: Answer;
		let replaced = false;
		for (const handler of handlers.get(name)!.slice()) {
			try {
				const result = (await handler(event, ctx)) as Answer;
				if (!result) continue;
				if (name === "context" && result.messages) [event.messages, replaced] = [result.messages, true];
				else if (name.startsWith("session_before_")) answer = result;
				if (answer?.cancel) break;
			} catch (error) {
				errors.push(messageOf(error));
			}
		}
		if (errors.length > 0) throw new Error(errors.join("\n"));
		return replaced ? { messages: event.messages } : answer;
	};
	const on = (name: string, handler: Handler) => {
		const list = handlers.get(name);
		if (list) return void list.push(handler);
		handlers.set(name, [handler]);
		// One registration per event; a single handler is called as Pi would call it.
		const many = dispatch(name);
		(pi.on as unknown as (name: string, handler: Handler) => void)(name, (event, ctx) => {
			const all = handlers.get(name)!;
			return all.length === 1 ? all[0](event, ctx) : many(event, ctx);
		});
	};
	return Object.create(pi, { on: { value: on } }) as ExtensionAPI;
}
