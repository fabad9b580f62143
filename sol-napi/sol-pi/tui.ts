// What the mechanisms share: the savings treatment in the TUI (a notice, a self-clearing keyed
// status, the tool badge; texts from Rust), warnings shown once, the guard of a step, and Pi's
// major version.
import { VERSION } from "@earendil-works/pi-coding-agent";
import type { ExtensionContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Text } from "@earendil-works/pi-tui";

import type { NativeAddon } from "./native.ts";

/** A savings notice as the addon returns it (ObservationPack, the Reducer, Action Fusion). */
export type SavingsNotice = { notice: string; statusKey: string; status: string; statusClearMs: number };

/** The message of anything thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Pi's major version, for what only its version tells: Pi 1.x shows each request with its system
 * message (`context_with_system`), takes a tool's exposure, and refuses tree navigation during a
 * compaction itself.
 */
export const piMajor = Number(VERSION.split(".")[0]);

/** A message's `usage` when it is an object (the addon reads four of its fields; anything else counts as none). */
export const usageOf = (message: { usage?: unknown }): NativeAddon.PiUsage | undefined =>
	typeof message.usage === "object" && message.usage !== null ? (message.usage as NativeAddon.PiUsage) : undefined;

/** Now, as the steps take the time (ISO 8601). */
export const now = (): string => new Date().toISOString();

/** A mechanism's savings notice and its self-clearing status line (one instance per mechanism; `SavingsTracker.status()` makes them). */
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

	/** Shows a notice the addon returned (none: nothing), as `show` does. */
	showNotice(ctx: ExtensionContext, notice: SavingsNotice | undefined): void {
		if (notice) this.show(ctx, notice.notice, notice.statusKey, notice.status, notice.statusClearMs);
	}

	/** Stops a pending clear (the session ends). */
	clear(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
	}
}

/** The SoL-Pi badge of a tool call: the title, the saving, then the call's own line (a text, or a component). */
export function badge(theme: Theme, title: string, saving: string, call?: string | Component): Container {
	const box = new Container();
	box.addChild(new Text(theme.fg("accent", theme.bold(title)), 0, 0));
	box.addChild(new Text(theme.fg("success", saving), 0, 0));
	if (typeof call === "string") box.addChild(new Text(theme.fg("toolTitle", call), 0, 0));
	else if (call) box.addChild(call);
	return box;
}

/**
 * Warnings shown once per distinct text: a warning notice in the interactive terminal, stderr
 * elsewhere (print and JSON runs), where Pi's own output stays clean; `guard` keeps Pi working
 * when a step fails.
 */
export class OnceWarnings {
	private readonly shown = new Set<string>();

	warn(ctx: ExtensionContext | undefined, message: string): void {
		if (this.shown.has(message)) return;
		this.shown.add(message);
		if (ctx?.mode === "tui") ctx.ui.notify(message, "warning");
		else process.stderr.write(`${message}\n`);
	}

	/** The messages not shown yet: in the TUI as warning notices, elsewhere thrown as one error for Pi to report. */
	raise(ctx: ExtensionContext, messages: string[]): void {
		const fresh = messages.filter((message) => !this.shown.has(message) && this.shown.add(message));
		if (fresh.length > 0 && ctx.mode !== "tui") throw new Error(fresh.join("\n"));
		for (const message of fresh) ctx.ui.notify(message, "warning");
	}

	/** Runs one step; if it throws or rejects (a panic in Rust), warns once (`describe` words it) and gives `fallback`. */
	guard<T>(ctx: ExtensionContext, describe: (detail: string) => string, fallback: Awaited<T>, step: () => T): T {
		const failed = (error: unknown) => (this.warn(ctx, describe(messageOf(error))), fallback);
		try {
			const out = step();
			return (out instanceof Promise ? out.catch(failed) : out) as T;
		} catch (error) {
			return failed(error) as T;
		}
	}
}
