// A steady provider request crosses into Rust at most four times with all four mechanisms on,
// and five with a provider that calls `onPayload` (Online Context Compact's
// `beforeProviderRequest`, which takes the `context` event with it), counted in a real Pi
// AgentSession by crossings.mjs. Issue 28's bound is six.
import assert from "node:assert/strict";
import test from "node:test";

import { countCrossings } from "./crossings.mjs";
import { piVersion } from "./support.mjs";

for (const [payload, most] of [
	[false, 4],
	[true, 5],
]) {
	const provider = payload ? "a provider that calls onPayload" : "Pi's faux provider";
	test(`Pi ${piVersion}: a steady request crosses into Rust at most ${most} times, all four mechanisms on, ${provider}`, async () => {
		const { steady } = await countCrossings(6, { payload });
		assert.equal(steady.length, 4);
		for (const names of steady) {
			// The count is of the real work: the request is packed, booked with its reply and answered in Rust.
			for (const name of ["Engine.obsContext()", "Engine.recordResponse()", "Engine.turnEnd()"]) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
			// The request as sent crosses with its reply, not on its own.
			assert.ok(!names.includes("Engine.recordRequest()"), names.join(", "));
			// The context event rides on the next step.
			assert.ok(!names.includes("Engine.context()"), names.join(", "));
			assert.equal(names.includes("Engine.beforeProviderRequest()"), payload, names.join(", "));
			assert.ok(names.length <= most, `${names.length} crossings: ${names.join(", ")}`);
		}
	});
}
