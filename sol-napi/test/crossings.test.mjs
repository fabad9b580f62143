// A steady provider request crosses into Rust at most six times with all four mechanisms on
// (issue 28's bound), counted in a real Pi AgentSession by crossings.mjs.
import assert from "node:assert/strict";
import test from "node:test";

import { countCrossings } from "./crossings.mjs";
import { piVersion } from "./support.mjs";

const MAX_PER_REQUEST = 6;

test(`Pi ${piVersion}: a steady request crosses into Rust at most ${MAX_PER_REQUEST} times, all four mechanisms on`, async () => {
	const { steady } = await countCrossings(6);
	assert.equal(steady.length, 4);
	for (const names of steady) {
		// The count is of the real work: the request is packed, booked and answered in Rust.
		for (const name of ["ObsPack.onContext()", "SavingsBook.recordRequest()", "SavingsBook.recordResponse()"]) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
		assert.ok(names.length <= MAX_PER_REQUEST, `${names.length} crossings: ${names.join(", ")}`);
	}
});
