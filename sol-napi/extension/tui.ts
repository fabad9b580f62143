// The savings treatment every mechanism shares in the interactive terminal: one
// notice, and a keyed status line that clears itself a few seconds later. The texts
// come from Rust (`sol_core::tui`); this file only shows them.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

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

	/** Stops a pending clear (the session ends). */
	clear(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
	}
}
