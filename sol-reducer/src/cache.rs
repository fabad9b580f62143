//! A small in-memory cache of accepted receipts, so an identical rerun of an unchanged log
//! costs no model call.
//!
//! Entries are keyed by the log's hash, the result's `isError` flag and the route, and are
//! inserted only after a fresh receipt was applied. A hit is never trusted blindly: the
//! cached reply is validated again against the archived log ([`reuse_cached`]) and its
//! receipt rebuilt; if that fails, the host evicts the entry and leaves the result
//! unchanged. The cache lives as long as the host keeps it; nothing persists.
//!
//! ```
//! use sol_reducer::cache::{CacheKey, CachedReceipt, ReceiptCache};
//!
//! let mut cache = ReceiptCache::with_capacity(2);
//! let key = |n: u8| CacheKey::from_parts(format!("{n:064x}"), true, "p", "m");
//! let entry = CachedReceipt { reply_text: "{}".into(), provider: "p".into(), model: "m".into() };
//! cache.insert(key(1), entry.clone());
//! cache.insert(key(2), entry.clone());
//! assert!(cache.get(&key(1)).is_some()); // 1 is now the most recently used
//! cache.insert(key(3), entry);
//! assert!(cache.get(&key(2)).is_none()); // 2 was the least recently used
//! assert_eq!(cache.len(), 2);
//! ```

use std::collections::VecDeque;

use crate::RECEIPT_CACHE_CAPACITY;
use crate::archive::ArchivedLog;
use crate::digest::sha256_hex;
use crate::model::{ReducerReply, Route, Usage};
use crate::reason::{Fallback, ReasonCode};
use crate::render::{Provenance, Replacement, apply_receipt, verify_against};
use crate::source::Source;

/// What identifies a reusable receipt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheKey {
    source_sha256: String,
    is_error: bool,
    provider: String,
    model: String,
}

impl CacheKey {
    /// The key for `source` reduced by `route`.
    pub fn new(source: &Source, route: &Route) -> CacheKey {
        CacheKey::from_parts(
            source.sha256(),
            source.is_error(),
            &*route.provider,
            &*route.model,
        )
    }

    /// A key from its parts.
    pub fn from_parts(
        source_sha256: impl Into<String>,
        is_error: bool,
        provider: impl Into<String>,
        model: impl Into<String>,
    ) -> CacheKey {
        CacheKey {
            source_sha256: source_sha256.into(),
            is_error,
            provider: provider.into(),
            model: model.into(),
        }
    }
}

/// An accepted reply, kept for reuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedReceipt {
    /// The model's reply text, as it was validated.
    pub reply_text: String,
    /// The provider that wrote it.
    pub provider: String,
    /// The model that wrote it.
    pub model: String,
}

impl CachedReceipt {
    /// The entry for an accepted fresh reply.
    pub fn from_reply(reply: &ReducerReply) -> CachedReceipt {
        CachedReceipt {
            reply_text: reply.text.clone(),
            provider: reply.provider.clone(),
            model: reply.model.clone(),
        }
    }
}

/// A least-recently-used cache of accepted receipts ([`RECEIPT_CACHE_CAPACITY`] entries
/// by default).
#[derive(Debug, Clone)]
pub struct ReceiptCache {
    capacity: usize,
    /// Most recently used first.
    entries: VecDeque<(CacheKey, CachedReceipt)>,
}

impl Default for ReceiptCache {
    fn default() -> Self {
        ReceiptCache::new()
    }
}

impl ReceiptCache {
    /// An empty cache of [`RECEIPT_CACHE_CAPACITY`] entries.
    pub fn new() -> ReceiptCache {
        ReceiptCache::with_capacity(RECEIPT_CACHE_CAPACITY)
    }

    /// An empty cache of `capacity` entries (at least one).
    pub fn with_capacity(capacity: usize) -> ReceiptCache {
        let capacity = capacity.max(1);
        ReceiptCache {
            capacity,
            entries: VecDeque::with_capacity(capacity),
        }
    }

    /// The entry for `key`, which becomes the most recently used.
    pub fn get(&mut self, key: &CacheKey) -> Option<CachedReceipt> {
        let index = self.entries.iter().position(|(k, _)| k == key)?;
        let entry = self.entries.remove(index)?;
        let value = entry.1.clone();
        self.entries.push_front(entry);
        Some(value)
    }

    /// Stores `value` as the most recently used entry, replacing an entry with the same
    /// key and evicting the least recently used one when full.
    pub fn insert(&mut self, key: CacheKey, value: CachedReceipt) {
        self.remove(&key);
        if self.entries.len() >= self.capacity {
            self.entries.pop_back();
        }
        self.entries.push_front((key, value));
    }

    /// Removes and returns the entry for `key`.
    pub fn remove(&mut self, key: &CacheKey) -> Option<CachedReceipt> {
        let index = self.entries.iter().position(|(k, _)| k == key)?;
        self.entries.remove(index).map(|(_, value)| value)
    }

    /// How many entries are stored.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The most entries kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// Rebuilds a replacement from a cached reply after verifying it again against
/// `archived_text`, the archived log as read back from `archived.path`: its hash must be
/// the log's, and the reply must pass every receipt check against it. The replacement
/// reports zero usage and a cache hit.
pub fn reuse_cached(
    source: &Source,
    archived: &ArchivedLog,
    archived_text: &str,
    cached: &CachedReceipt,
) -> Result<Replacement, Fallback> {
    if sha256_hex(archived_text.as_bytes()) != source.sha256() {
        return Err(Fallback::new(ReasonCode::ArchiveFailure).with(|facts| {
            facts.source_sha256 = Some(source.sha256().to_owned());
            facts.detail = Some(format!("archived log changed: {}", archived.path));
        }));
    }
    let receipt = verify_against(&cached.reply_text, source, archived_text, Usage::default())?;
    let provenance = Provenance {
        provider: cached.provider.clone(),
        model: cached.model.clone(),
        usage: Usage::default(),
        cache_hit: true,
    };
    apply_receipt(source, archived, &receipt, provenance)
}
