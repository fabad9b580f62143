// Compares what `/sol-pi` says SoL-Pi saved with what the provider's reports say it saved:
// a session recorded with plain Pi and the same steps recorded with SoL-Pi
// (scripts/record-session.mjs, the long scenarios), both billed from the usage every provider
// response reported, at the `/sol-pi` default prices (scripts/record/bill.mjs).
//
//   node scripts/savings-vs-bill.mjs <plain.jsonl> <sol-pi.jsonl>
//
// Prints the two bills, their difference, the `/sol-pi` net saving of the SoL-Pi file's newest
// totals entry, and how far that is from the difference.
import { createRequire } from "node:module";

import { compareBills, comparisonLines } from "./record/bill.mjs";

const addon = createRequire(import.meta.url)("../sol-napi/index.js");
const [plainFile, solPiFile] = process.argv.slice(2);
if (!plainFile || !solPiFile) {
	console.error("usage: node scripts/savings-vs-bill.mjs <plain.jsonl> <sol-pi.jsonl>");
	process.exit(2);
}
for (const line of comparisonLines(compareBills(plainFile, solPiFile, addon))) console.log(line);
