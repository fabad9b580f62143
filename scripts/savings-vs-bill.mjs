// Compares what `/sol-pi` and `sol-pi replay` say SoL-Pi saved with what the provider's reports
// say it saved: a session recorded with plain Pi and the same steps recorded with SoL-Pi
// (scripts/record-session.mjs, the long scenarios), both billed from the usage every provider
// response reported, at the `/sol-pi` default prices (scripts/record/bill.mjs).
//
//   node scripts/savings-vs-bill.mjs <plain.jsonl> <sol-pi.jsonl> [--cache-aware]
//
// Prints the two bills, their difference, the `/sol-pi` net saving of the SoL-Pi file's newest
// totals entry, and how far that is from the difference; then what the replay of the SoL-Pi
// file alone makes of both bills (`npm run replay`; `--cache-aware` when the recording ran with
// `cacheAware`, as replay needs to be told).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { compareBills, comparisonLines, providerBill } from "./record/bill.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const addon = createRequire(import.meta.url)("../sol-napi/index.js");
const args = process.argv.slice(2);
const cacheAware = args.includes("--cache-aware");
const [plainFile, solPiFile] = args.filter((arg) => arg !== "--cache-aware");
if (!plainFile || !solPiFile) {
	console.error("usage: node scripts/savings-vs-bill.mjs <plain.jsonl> <sol-pi.jsonl> [--cache-aware]");
	process.exit(2);
}
const compared = compareBills(plainFile, solPiFile, addon);
for (const line of comparisonLines(compared)) console.log(line);

// The replay's report says "Priced bill: $<as sent> instead of $<plain Pi>".
const replay = spawnSync(process.execPath, [path.join(root, "scripts", "replay.mjs"), ...(cacheAware ? ["--cache-aware"] : []), solPiFile], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const priced = /^Priced bill: \$([\d,.]+) instead of \$([\d,.]+)/m.exec(replay.stdout ?? "");
if (replay.status !== 0 || !priced) {
	console.error(`the replay of ${solPiFile} failed: ${replay.stderr}`);
	process.exit(1);
}
const [asSent, plain] = [priced[1], priced[2]].map((text) => Number(text.replaceAll(",", "")));
const signed = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
const plainBill = providerBill(plainFile).dollars;
const net = plain - asSent;
console.log(`replay, plain Pi: $${plain.toFixed(4)} (${signed((plain / plainBill - 1) * 100)} % of the plain bill)`);
console.log(`replay, as sent:  $${asSent.toFixed(4)} (${signed((asSent / compared.solPi.dollars - 1) * 100)} % of the SoL-Pi bill)`);
console.log(`replay, net:      $${net.toFixed(4)} (${signed(((net - compared.difference) / Math.abs(compared.difference)) * 100)} % of the difference)`);
