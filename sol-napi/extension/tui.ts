// The savings treatment every mechanism shares in the interactive terminal: one
// notice, a keyed status line that clears itself a few seconds later, and the badge
// of a tool call. The texts
// come from Rust (`sol_core::tui`); this file only shows them.
import type { ExtensionContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Text } from "@earendil-works/pi-tui";

/** A savings notice as the addon returns it (ObservationPack, the Reducer, Action Fusion). */
export interface SavingsNotice {
	notice: string;
	statusKey: string;
	status: string;
	statusClearMs: number;
}

/** A mechanism's savings notice and its self-clearing status line (one instance per mechanism). */
export class SavingsStatus {
	private timer: ReturnType<typeof setTimeout> | undefined;

	/** Shows `notice` and sets `statusKey` to `statusText` until `clearMs` later; only in the TUI. */
	show(ctx: ExtensionContext, notice: string, statusKey: string, statusText: string, clearMs: number): void {
		if (ctx.mode !== "tui") return;
		ctx.ui.notify(notice, "info");
		ctx.ui.setStatus(statusKey, statusText);
		this.clear();
		this.timer = setTimeout(() => {
			this.timer = undefined;
			// The session may have ended meanwhile: its context is then stale and refuses every call.
			try {
				ctx.ui.setStatus(statusKey, undefined);
			} catch {}
		}, clearMs);
		this.timer.unref?.();
	}

	/** Shows a notice the addon returned, as `show` does. */
	showNotice(ctx: ExtensionContext, notice: SavingsNotice): void {
		this.show(ctx, notice.notice, notice.statusKey, notice.status, notice.statusClearMs);
	}

	/** Stops a pending clear (the session ends). */
	clear(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
	}
}

/**
 * The SoL-Pi badge of a tool call: the mechanism's title, its saving line, then the call's
 * own line (a text for the `toolTitle` colour, or an already rendered component).
 */
export function badge(theme: Theme, title: string, saving: string, call?: string | Component): Container {
	const box = new Container();
	box.addChild(new Text(theme.fg("accent", theme.bold(title)), 0, 0));
	box.addChild(new Text(theme.fg("success", saving), 0, 0));
	if (typeof call === "string") box.addChild(new Text(theme.fg("toolTitle", call), 0, 0));
	else if (call) box.addChild(call);
	return box;
}

/**
 * Warnings a mechanism shows once per distinct text: in the interactive terminal as a
 * warning notice, elsewhere (print and JSON runs) on stderr, where Pi's own output stays clean.
 */
export class OnceWarnings {
	private readonly shown = new Set<string>();

	warn(ctx: ExtensionContext | undefined, message: string): void {
		if (this.shown.has(message)) return;
		this.shown.add(message);
		if (ctx?.mode === "tui") ctx.ui.notify(message, "warning");
		else process.stderr.write(`${message}\n`);
	}
}
