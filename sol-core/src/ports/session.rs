/// Pi's session log, for SoL-Pi's custom entries (persisted state and journals).
pub trait SessionStore {
    /// Appends a custom entry of type `custom_type` to the current branch.
    fn append_custom(
        &self,
        custom_type: &str,
        data: &serde_json::Value,
    ) -> Result<(), SessionStoreError>;

    /// The data of every custom entry of type `custom_type` on the current branch, oldest
    /// first.
    fn custom_entries(
        &self,
        custom_type: &str,
    ) -> Result<Vec<serde_json::Value>, SessionStoreError>;
}

/// A failed session-log operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionStoreError {
    /// There is no session to read from or write to.
    #[error("no session is available")]
    NoSession,
    /// The host's session manager reported a failure.
    #[error("session store failed: {message}")]
    Failed {
        /// The host's description of the failure.
        message: String,
    },
}
