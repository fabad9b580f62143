// Pi's compaction tail for the demo session: small, so the boundary compaction has the
// task's earlier history to summarize (Pi's default keeps 20,000 tokens, more than the demo holds).
export const KEEP_RECENT_TOKENS = 150;
