//! The book's entries of the [`Engine`]: thin napi faces of `SharedBook` (`savings.rs`).

use napi_derive::napi;
use serde_json::Value;
use sol_core::savings::SAVINGS_ENTRY_TYPE;

use super::Engine;
use crate::account::count;
use crate::boundary::quiet;
use crate::savings::{SavingsRequest, SavingsUsage, SavingsView, mechanism};

#[napi]
impl Engine {
    /// `mechanism` (its `sol-pi.json` key) registered the tool `name`, listed in the system
    /// prompt with `snippet` and `guidelines`: its calls, results and lines are not plain
    /// Pi's (`sol_core::savings::OwnPrompt`).
    #[napi(catch_unwind)]
    pub fn own_tool(
        &self,
        name: String,
        mechanism_key: String,
        snippet: Option<String>,
        guidelines: Option<Vec<String>>,
    ) {
        quiet(|| {
            let Some(by) = mechanism(&mechanism_key) else {
                return;
            };
            let guidelines: Vec<&str> = guidelines.iter().flatten().map(String::as_str).collect();
            self.book
                .own_tool(&name, by, snippet.as_deref(), &guidelines);
        });
    }

    /// The `customType` of the totals entries.
    #[napi(getter)]
    pub fn entry_type(&self) -> String {
        SAVINGS_ENTRY_TYPE.to_owned()
    }

    /// The status key of the running total.
    #[napi(getter)]
    pub fn status_key(&self) -> String {
        sol_core::tui::TOTAL_STATUS_KEY.to_owned()
    }

    /// A provider's response, with the `request` as it was sent (the extension keeps it from
    /// the request's own event until the reply, so both cross once); an abort or an error
    /// that was not billed is dropped with its request. Without a request, the one begun last.
    #[napi(catch_unwind)]
    pub fn record_response(&self, usage: SavingsUsage, request: Option<SavingsRequest>) {
        quiet(|| self.book.record_response(usage, request));
    }

    /// The reducer's model calls go to `model` (`provider/model`, named in `sol-pi.json`), at
    /// its `cost` in Pi's model registry when it has one; without it, to the session's model.
    #[napi(catch_unwind, ts_args_type = "model: string, cost?: unknown")]
    pub fn reducer_model(&self, model: String, cost: Option<Value>) {
        quiet(|| self.book.reducer_model(model, cost.as_ref()));
    }

    /// The host's accounting failed (an internal error): the figures are incomplete from now
    /// on, so no more totals entries are written; the session goes on.
    #[napi(catch_unwind)]
    pub fn stop_accounting(&self) {
        quiet(|| self.book.stop());
    }

    /// The model recalled `bytes` from the archive.
    #[napi(catch_unwind)]
    pub fn record_recall(&self, bytes: f64) {
        quiet(|| self.book.record_recall(count(bytes)));
    }

    /// The table and the status line, at the configured prices.
    #[napi(catch_unwind)]
    pub fn view(&self) -> SavingsView {
        quiet(|| self.book.view(&self.prices))
    }
}
