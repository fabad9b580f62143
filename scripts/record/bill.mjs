// The bill the provider's reports add up to, and how far `/sol-pi`'s net saving is from the
// difference of two such bills: a session recorded with plain Pi and the same steps
// recorded with SoL-Pi (record-session.mjs, the long scenarios). Every usage a provider
// response reported counts (the agent's replies, the reducer's calls in its journal, Pi's
// compaction summaries), at `/sol-pi`'s default prices.
import * as fs from "node:fs";

/** `/sol-pi`'s default prices, dollars per million tokens. */
export const PRICES = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 };

const entriesOf = (file) =>
	fs
		.readFileSync(file, "utf8")
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line));

/** Dollars for one reported usage. */
const priced = (usage) => Object.entries(PRICES).reduce((sum, [field, price]) => sum + ((usage?.[field] ?? 0) * price) / 1e6, 0);

/** The usage a session entry reports, if it reports one. */
function usageOf(entry) {
	if (entry.type === "message" && entry.message?.role === "assistant") return entry.message.usage;
	if (entry.type === "compaction") return entry.usage;
	if (entry.type === "custom" && entry.data?.kind === "provider_response") return entry.data.usage;
	return undefined;
}

/** Every usage the session file reports, summed as dollars, with the count of reports. */
export function providerBill(file) {
	let dollars = 0;
	let reports = 0;
	for (const entry of entriesOf(file)) {
		const usage = usageOf(entry);
		if (usage) {
			dollars += priced(usage);
			reports++;
		}
	}
	return { dollars, reports };
}

/**
 * The two bills, their difference, and the net saving and table `/sol-pi` shows from the
 * SoL-Pi file's newest totals entry (`addon`: SoL-Pi's loaded addon). `off` is how far the
 * net is from the difference, in percent of it.
 */
export function compareBills(plainFile, solPiFile, addon) {
	const plain = providerBill(plainFile);
	const solPi = providerBill(solPiFile);
	const data = entriesOf(solPiFile)
		.filter((entry) => entry.type === "custom" && entry.customType === "sol-pi-savings-totals")
		.at(-1)?.data;
	if (!data) throw new Error(`${solPiFile} has no savings totals entry`);
	const table = addon.savingsViewOfEntry(data, PRICES).table;
	const total = /^Total +\S+ +\S+ +\S+ +\S+ +(-?)\$([\d,.]+)$/m.exec(table);
	if (!total) throw new Error(`the /sol-pi table of ${solPiFile} has no total row`);
	const net = (total[1] ? -1 : 1) * Number(total[2].replaceAll(",", ""));
	const difference = plain.dollars - solPi.dollars;
	const off = difference === 0 ? Number.NaN : ((net - difference) / Math.abs(difference)) * 100;
	return { plain, solPi, difference, net, off, table };
}

/** The comparison as the lines savings-vs-bill.mjs and the demo print. */
export function comparisonLines({ plain, solPi, difference, net, off }) {
	const signed = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
	return [
		`plain Pi bill:   $${plain.dollars.toFixed(4)} (${plain.reports} reports)`,
		`SoL-Pi bill:     $${solPi.dollars.toFixed(4)} (${solPi.reports} reports)`,
		`bill difference: $${difference.toFixed(4)} (${signed((-difference / plain.dollars) * 100)} % with SoL-Pi)`,
		`/sol-pi net:     $${net.toFixed(4)} (${signed(off)} % of the difference)`,
	];
}
