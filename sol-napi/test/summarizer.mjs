// What tells Pi's compaction summarizer request from the agent's own requests, for the
// scripted faux models of the OCC tests and of the demo. It imports nothing from Pi, so the
// extensions the real `pi` CLI loads (the demo's, and the OCC CLI test's faux provider) can
// import it too.

const SUMMARIZER = "You are a context summarization assistant";

/** A message's text: a string content, or its text blocks joined by newlines. */
export const textOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("\n"));

/** Whether a provider request is Pi's compaction summarizer (its prompt differs between 0.84.2 and 1.x). */
export function isSummarization(context) {
	if (typeof context.systemPrompt === "string" && context.systemPrompt.startsWith(SUMMARIZER)) return true;
	const messages = context.messages ?? [];
	if (messages.some((m) => m.role === "system" && textOf(m).startsWith(SUMMARIZER))) return true;
	const users = messages.filter((m) => m.role === "user");
	return users.length === 1 && messages.every((m) => m.role === "user" || m.role === "system") && /^(<conversation>\n|# Conversation\n)/.test(textOf(users[0]));
}
