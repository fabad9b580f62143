// Online Context Compact in Pi: the `update_plan` tool. Its calls and every other step of
// Online Context Compact are the session engine's (`Engine.updatePlan`; the lifecycle handlers
// in session.ts carry out the effects).
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import type { TSchema } from "typebox";

import type { NativeAddon } from "./native.ts";
import type { SavingsTracker } from "./savings.ts";
import type { SessionDriver } from "./session.ts";
import { badge, messageOf, piMajor } from "./tui.ts";

/** Registers `update_plan` over `engine`'s plan steps, carried out by `session`; its calls are SoL-Pi's in the savings `tracker`. */
export function registerPlanTool(pi: ExtensionAPI, addon: typeof NativeAddon, engine: NativeAddon.Engine, session: SessionDriver, tracker: SavingsTracker): void {
	const texts = addon.occTexts();
	tracker.ownTool(texts.toolName, "onlineContextCompact", texts.promptSnippet, texts.promptGuidelines);
	pi.registerTool({
		name: texts.toolName,
		label: texts.toolLabel,
		description: texts.toolDescription,
		promptSnippet: texts.promptSnippet,
		promptGuidelines: texts.promptGuidelines,
		// The JSON Schema carries sol-occ's bounds; TypeBox checks lengths in code points, as sol-occ does.
		parameters: texts.parametersSchema as TSchema,
		// Who may call it, as Rust says (Pi 1.x only: 0.84.2 ignores it and its types lack it).
		...(piMajor >= 1 ? ({ exposure: texts.toolExposure } as object) : {}),
		async execute(toolCallId, params, signal, _onUpdate, c) {
			let result: NativeAddon.OccPlanResult;
			try {
				session.prepare(c);
				result = engine.updatePlan(toolCallId, params, signal?.aborted === true);
			} catch (error) {
				throw new Error(addon.occInternalError(messageOf(error)));
			}
			// The state snapshot, valid call or not.
			session.apply(c, result);
			if (!result.ok) throw new Error(result.error ?? texts.toolName);
			return { content: [{ type: "text", text: result.text ?? "" }], details: result.details };
		},
		renderCall(args, theme) {
			return badge(theme, texts.badgeTitle, texts.badgeSaving, addon.occRenderCall(args ?? {}));
		},
		renderResult(result, renderOptions, theme) {
			const boundary = (result.details as { boundary?: boolean } | undefined)?.boundary === true;
			const label = renderOptions.isPartial ? texts.renderPartial : boundary ? texts.renderBoundary : texts.renderPlan;
			return new Text(theme.fg("muted", label), 0, 0);
		},
	});
}
