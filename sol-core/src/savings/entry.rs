//! The savings as a custom session entry: written by the host, never part of the model's
//! context, and read back from a branch so a resumed or forked session goes on from its own
//! totals.

use serde_json::{Value, json};

use super::Savings;
use crate::session::{SessionEntry, newest_readable};

/// The `customType` of the entry that holds a session's totals.
pub const SAVINGS_ENTRY_TYPE: &str = "sol-pi-savings-totals";

/// The schema version of the entry's data.
pub const SAVINGS_ENTRY_VERSION: u64 = 1;

/// Why a stored totals entry was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SavingsEntryError {
    /// Another schema version (or none).
    #[error("unsupported SoL-Pi savings entry version {0}")]
    Version(String),
    /// The data does not have the totals' shape.
    #[error("malformed SoL-Pi savings entry: {0}")]
    Malformed(String),
}

impl Savings {
    /// The entry's `data`: the totals with the schema version.
    pub fn to_entry_data(&self) -> Value {
        let mut data = serde_json::to_value(self).unwrap_or_else(|_| json!({}));
        if let Value::Object(object) = &mut data {
            object.insert("version".to_owned(), json!(SAVINGS_ENTRY_VERSION));
        }
        data
    }

    /// The totals in an entry's `data`.
    pub fn from_entry_data(data: &Value) -> Result<Savings, SavingsEntryError> {
        let Value::Object(object) = data else {
            return Err(SavingsEntryError::Malformed("not an object".to_owned()));
        };
        match object.get("version") {
            Some(version) if version.as_u64() == Some(SAVINGS_ENTRY_VERSION) => {}
            Some(other) => return Err(SavingsEntryError::Version(other.to_string())),
            None => return Err(SavingsEntryError::Version("missing".to_owned())),
        }
        let mut fields = object.clone();
        fields.remove("version");
        serde_json::from_value(Value::Object(fields))
            .map_err(|error| SavingsEntryError::Malformed(error.to_string()))
    }

    /// The totals of one session entry: `None` for any entry that is not a totals entry.
    pub fn from_entry(entry: &SessionEntry) -> Option<Result<Savings, SavingsEntryError>> {
        match entry {
            SessionEntry::Custom(custom) if custom.custom_type == SAVINGS_ENTRY_TYPE => Some(
                Savings::from_entry_data(custom.data.as_ref().unwrap_or(&Value::Null)),
            ),
            _ => None,
        }
    }
}

/// A branch's totals, with the entries passed over on the way to them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestoredSavings {
    /// The newest readable totals of the branch, else zero.
    pub savings: Savings,
    /// Why each newer totals entry was rejected, newest first.
    pub rejected: Vec<SavingsEntryError>,
}

/// The totals a branch (root first, as Pi lists it) ends with: the newest readable totals
/// entry, reporting every newer one that could not be read rather than skipping it silently.
pub fn restore_savings(branch: &[SessionEntry]) -> RestoredSavings {
    let (savings, rejected) = newest_readable(branch, Savings::from_entry);
    RestoredSavings {
        savings: savings.unwrap_or_default(),
        rejected,
    }
}
