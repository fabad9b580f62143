// Compares what `/sol-pi` says SoL-Pi saved with what the provider's reports say it saved:
// a session recorded with plain Pi and the same steps recorded with SoL-Pi
// (scripts/record-session.mjs, the long scenarios), both billed from the usage every provider
// response reported (the agent's replies, the reducer's calls in its journal, Pi's compaction
// summaries), at the `/sol-pi` default prices.
//
//   node scripts/savings-vs-bill.mjs <plain.jsonl> <sol-pi.jsonl>
//
// Prints the two bills, their difference, the `/sol-pi` net saving of the SoL-Pi file's newest
// totals entry, and how far that is from the difference.
import * as fs from "node:fs";
import { createRequire } from "node:module";

const addon = createRequire(import.meta.url)("../sol-napi/index.js");
const PRICES = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 };

const entries = (file) =>
	fs
		.readFileSync(file, "utf8")
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line));

/** Dollars for one reported usage. */
const priced = (usage) => Object.entries(PRICES).reduce((sum, [field, price]) => sum + ((usage?.[field] ?? 0) * price) / 1e6, 0);

/** Every usage the file reports, summed as dollars, with the count of reports. */
function bill(file) {
	let dollars = 0;
	let reports = 0;
	for (const entry of entries(file)) {
		const usage =
			entry.type === "message" && entry.message?.role === "assistant"
				? entry.message.usage
				: entry.type === "compaction"
					? entry.usage
					: entry.type === "custom" && entry.data?.kind === "provider_response"
						? entry.data.usage
						: undefined;
		if (usage) {
			dollars += priced(usage);
			reports++;
		}
	}
	return { dollars, reports };
}

const [plainFile, solPiFile] = process.argv.slice(2);
if (!plainFile || !solPiFile) {
	console.error("usage: node scripts/savings-vs-bill.mjs <plain.jsonl> <sol-pi.jsonl>");
	process.exit(2);
}
const plain = bill(plainFile);
const solPi = bill(solPiFile);
const data = entries(solPiFile)
	.filter((entry) => entry.type === "custom" && entry.customType === "sol-pi-savings-totals")
	.at(-1)?.data;
if (!data) throw new Error(`${solPiFile} has no savings totals entry`);
const view = addon.savingsViewOfEntry(data, PRICES);
const total = /^Total +\S+ +\S+ +\S+ +\S+ +(-?)\$([\d,.]+)$/m.exec(view.table);
const net = (total[1] ? -1 : 1) * Number(total[2].replaceAll(",", ""));
const difference = plain.dollars - solPi.dollars;
const off = difference === 0 ? NaN : ((net - difference) / Math.abs(difference)) * 100;
console.log(`plain Pi bill:   $${plain.dollars.toFixed(4)} (${plain.reports} reports)`);
console.log(`SoL-Pi bill:     $${solPi.dollars.toFixed(4)} (${solPi.reports} reports)`);
console.log(`bill difference: $${difference.toFixed(4)}`);
console.log(`/sol-pi net:     $${net.toFixed(4)} (${off >= 0 ? "+" : ""}${off.toFixed(1)} % of the difference)`);
