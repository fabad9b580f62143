// The one door for Pi's events. Every event SoL-Pi takes is registered with Pi once, here, the
// first time a mechanism asks for it; each mechanism's handler is then called from that one
// registration, in the order the mechanisms registered (Rust's order, the savings book last),
// as Pi would call them:
// - a handler that throws does not stop the ones after it; the errors are thrown together at the
//   end, so Pi reports them once for the event;
// - `context` and `message_end`: a handler may return new messages (a new message), which the
//   next handler sees; `context` handlers may also edit the messages in place;
//   `session_before_*`: the first cancel wins, else the last answer given;
// - a handler added while its event is being handled waits for the next one (Pi 1.x does the
//   same; Pi 0.84.2 called it at once, so the first `session_start` now runs the same handlers
//   on every version).
// Only the events in `COMBINE` may have more than one handler: Pi gives each other event's
// answers a meaning of its own (a blocked tool call, a changed result or payload, ...), which
// this door does not merge, so a second handler for one of them is refused when registered.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import { messageOf } from "./tui.ts";

type Event = { type?: string; messages?: unknown[]; message?: unknown };
type Handler = (event: Event, ctx: ExtensionContext) => unknown;
type Answer = { cancel?: boolean; messages?: unknown[]; message?: unknown } | undefined;

/** How the answers of several handlers of an event combine: Pi ignores them, or chains the messages, the message, or a cancel. */
const COMBINE: Record<string, "ignored" | "messages" | "message" | "cancel"> = {
	session_start: "ignored",
	session_tree: "ignored",
	session_compact: "ignored",
	session_shutdown: "ignored",
	agent_start: "ignored",
	agent_settled: "ignored",
	turn_end: "ignored",
	model_select: "ignored",
	context: "messages",
	message_end: "message",
	session_before_compact: "cancel",
	session_before_tree: "cancel",
};

/** Calls every handler of an event in order, combining their answers as `combine` says. */
async function dispatch(handlers: readonly Handler[], combine: (typeof COMBINE)[string], first: Event, ctx: ExtensionContext): Promise<Answer> {
	const errors: string[] = [];
	let [event, answer, changed] = [first, undefined as Answer, false];
	for (const handler of handlers) {
		try {
			const result = (await handler(event, ctx)) as Answer;
			if (!result) continue;
			if (combine === "messages" && result.messages) [event, changed] = [{ ...event, messages: result.messages }, true];
			else if (combine === "message" && result.message) [event, changed] = [{ ...event, message: result.message }, true];
			else if (combine === "cancel") answer = result;
			if (answer?.cancel) break;
		} catch (error) {
			errors.push(messageOf(error));
		}
	}
	if (errors.length > 0) throw new Error(errors.join("\n"));
	if (!changed) return answer;
	return combine === "messages" ? { messages: event.messages } : { message: event.message };
}

/**
 * A view of Pi's API whose `on` goes through one registration per event; everything else is
 * Pi's own. Pi's API is a plain object of closures, so its other methods work unchanged.
 */
export function routedEvents(pi: ExtensionAPI): ExtensionAPI {
	const handlers = new Map<string, Handler[]>();
	const on = (name: string, handler: Handler) => {
		const list = handlers.get(name);
		if (list) {
			if (!(name in COMBINE)) throw new Error(`SoL-Pi: a second "${name}" handler, whose answers cannot be combined`);
			return void list.push(handler);
		}
		handlers.set(name, [handler]);
		(pi.on as unknown as (name: string, handler: Handler) => void)(name, (event, ctx) => {
			const all = handlers.get(name)!;
			// One handler is called as Pi would call it; several in order, from a copy of the list.
			return all.length === 1 ? all[0](event, ctx) : dispatch(all.slice(), COMBINE[name], event, ctx);
		});
	};
	return Object.create(pi, { on: { value: on } }) as ExtensionAPI;
}
