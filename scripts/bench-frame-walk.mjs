// The request frame taken two ways, side by side in one process: the extension's walk in
// TypeScript (sol-pi/request-frame.ts: Pi's own `estimateTokens` per message) and a walk from
// Rust over the same kind of array in place, reading each property through Node-API with no
// message converted whole (the test-hooks export `frameInPlace`, Rust's copy of the estimate).
// Prints medians and ratios, asserts nothing. It weighs whether the walk could move into Rust
// without the messages crossing.
//
//   node scripts/bench-frame-walk.mjs [rounds]
//
// Builds the addon's release profile with the test-hooks feature first (sol-napi/test/hooks.mjs);
// `npm run build` afterwards builds the shipped addon again, without it. The conversation is
// scripts/bench-conversation.mjs's; every timed walk gets a fresh structuredClone (untimed), as
// Pi clones the messages per request, and the two walks alternate which goes first. Pi's
// estimate is the repository's own Pi (its development dependency).
import { conversation, median } from "./bench-conversation.mjs";
import { frameOf, frameWith } from "../sol-napi/sol-pi/request-frame.ts";
import { testHooks } from "../sol-napi/test/hooks.mjs";

const rounds = Number(process.argv[2] ?? 50);
const hooks = testHooks({ release: true });
frameWith(hooks);

const now = () => process.hrtime.bigint();
const ms = (start, end) => Number(end - start) / 1e6;
const sum = (array) => array.reduce((total, value) => total + value, 0);

console.log(`request frame: TypeScript walk (Pi's estimateTokens) against a Rust walk in place (Node-API reads); median of ${rounds} walks each (ms)`);
console.log("messages  typescript  rust      rust/ts  same sizes");
for (const [count, seed] of [[100, 1], [1_000, 2], [5_000, 3]]) {
	const messages = conversation(count, seed);
	const [ts, rust] = [[], []];
	let same = true;
	for (let round = 0; round < rounds + 2; round++) {
		const [a, b] = [structuredClone(messages), structuredClone(messages)];
		const walks = [
			() => {
				const start = now();
				const frame = frameOf(a);
				return [ms(start, now()), frame];
			},
			() => {
				const start = now();
				const frame = hooks.frameInPlace(b);
				return [ms(start, now()), frame];
			},
		];
		const [first, second] = round % 2 === 0 ? walks : [walks[1], walks[0]];
		const [[t1, f1], [t2, f2]] = [first(), second()];
		const [tsTime, tsFrame, rustTime, rustFrame] = round % 2 === 0 ? [t1, f1, t2, f2] : [t2, f2, t1, f1];
		same &&= sum(tsFrame.tokens) === sum(rustFrame.tokens) && tsFrame.roles.every((role, i) => role === rustFrame.roles[i]);
		// The first two rounds warm up both walks.
		if (round >= 2) [ts.push(tsTime), rust.push(rustTime)];
	}
	const [t, r] = [median(ts), median(rust)];
	console.log(`${String(count).padStart(8)}  ${t.toFixed(3).padStart(10)}  ${r.toFixed(3).padStart(8)}  ${(r / t).toFixed(2).padStart(7)}  ${same ? "yes" : "NO"}`);
}
