//! The receipt cache: LRU behaviour, and reuse without a model call after re-verification.

use serde_json::json;
use sol_reducer::cache::{CacheKey, CachedReceipt, ReceiptCache};
use sol_reducer::{RECEIPT_CACHE_CAPACITY, Route};

use crate::support::{
    Harness, archive_path, bash, failing_log, failing_receipt, passing_log, passing_receipt, reason,
};

fn key(n: usize) -> CacheKey {
    CacheKey::from_parts(format!("{n:064x}"), false, "p", "m")
}

fn entry(text: &str) -> CachedReceipt {
    CachedReceipt {
        reply_text: text.into(),
        provider: "p".into(),
        model: "m".into(),
    }
}

#[test]
fn the_cache_holds_64_entries_and_evicts_the_least_recently_used() {
    let mut cache = ReceiptCache::new();
    assert_eq!(cache.capacity(), RECEIPT_CACHE_CAPACITY);
    assert_eq!(RECEIPT_CACHE_CAPACITY, 64);
    for n in 0..64 {
        cache.insert(key(n), entry(&n.to_string()));
    }
    assert_eq!(cache.len(), 64);
    assert!(cache.get(&key(0)).is_some());
    cache.insert(key(64), entry("64"));
    assert_eq!(cache.len(), 64);
    assert!(
        cache.get(&key(1)).is_none(),
        "1 was the least recently used"
    );
    assert!(cache.get(&key(0)).is_some());
    assert!(cache.get(&key(64)).is_some());
}

#[test]
fn inserting_a_key_again_replaces_its_entry() {
    let mut cache = ReceiptCache::with_capacity(2);
    cache.insert(key(1), entry("old"));
    cache.insert(key(1), entry("new"));
    assert_eq!(cache.len(), 1);
    assert_eq!(
        cache.get(&key(1)).map(|e| e.reply_text),
        Some("new".to_owned())
    );
    assert_eq!(
        cache.remove(&key(1)).map(|e| e.reply_text),
        Some("new".to_owned())
    );
    assert!(cache.is_empty());
    assert_eq!(ReceiptCache::with_capacity(0).capacity(), 1);
}

#[test]
fn keys_separate_error_flag_and_route() {
    let base = CacheKey::from_parts("a", true, "p", "m");
    assert_ne!(base, CacheKey::from_parts("a", false, "p", "m"));
    assert_ne!(base, CacheKey::from_parts("a", true, "q", "m"));
    assert_ne!(base, CacheKey::from_parts("a", true, "p", "n"));
    assert_ne!(base, CacheKey::from_parts("b", true, "p", "m"));
}

#[test]
fn three_identical_logs_are_reduced_once_and_hits_cost_nothing() {
    let log = failing_log(150);
    let harness = Harness::new().replying(failing_receipt(&log));
    let mut cache = ReceiptCache::new();
    let result = bash(
        "cargo test",
        &format!("{log}\n\nCommand exited with code 101"),
        true,
    );
    let first = harness.run_with(&result, Some(&mut cache));
    let second = harness.run_with(&result, Some(&mut cache));
    let third = harness.run_with(&result, Some(&mut cache));
    assert_eq!(harness.model.requests().len(), 1);
    let first = first.replacement().expect("reduced");
    for hit in [&second, &third] {
        let hit = hit.replacement().expect("reduced from the cache");
        assert!(hit.provenance.cache_hit);
        assert_eq!(hit.provenance.usage.total_tokens, 0);
        assert!(hit.receipt_text.contains("reducer_total_tokens=0\n"));
        assert_eq!(
            hit.content[0].as_text().map(|t| t.ends_with("code 101")),
            Some(true)
        );
        assert_eq!(hit.summary.source_sha256, first.summary.source_sha256);
    }
    assert_eq!(
        harness.kinds(),
        [
            "candidate",
            "provider_response",
            "applied",
            "candidate",
            "cache_hit",
            "applied",
            "candidate",
            "cache_hit",
            "applied",
        ]
    );
    let applied = harness.journal();
    assert_eq!(applied[2]["cacheHit"], json!(false));
    assert_eq!(applied[5]["cacheHit"], json!(true));
    assert_eq!(applied[5]["usage"]["totalTokens"], json!(0));
    assert_eq!(applied[4]["usage"]["totalTokens"], json!(0));
}

#[test]
fn a_different_error_flag_or_route_misses_the_cache() {
    let log = passing_log(150);
    let harness = Harness::new()
        .replying(passing_receipt(&log))
        .replying(passing_receipt(&log));
    let mut cache = ReceiptCache::new();
    let result = bash("cargo test", &log, false);
    assert!(
        harness
            .run_with(&result, Some(&mut cache))
            .replacement()
            .is_some()
    );
    let mut other = Harness::new().replying(passing_receipt(&log));
    other.route = Route::new("openai-codex", "gpt-5.6-mini");
    assert!(
        other
            .run_with(&result, Some(&mut cache))
            .replacement()
            .is_some()
    );
    assert_eq!(other.model.requests().len(), 1);
    assert_eq!(cache.len(), 2);
}

#[test]
fn fallbacks_are_not_cached() {
    let log = failing_log(150);
    let harness = Harness::new()
        .replying("not json")
        .replying(failing_receipt(&log));
    let mut cache = ReceiptCache::new();
    let result = bash("cargo test", &log, true);
    assert_eq!(
        reason(&harness.run_with(&result, Some(&mut cache))),
        "invalid-json"
    );
    assert!(cache.is_empty());
    assert!(
        harness
            .run_with(&result, Some(&mut cache))
            .replacement()
            .is_some()
    );
    assert_eq!(harness.model.requests().len(), 2);
}

#[test]
fn a_cached_receipt_is_verified_again_against_the_archive() {
    let log = failing_log(150);
    let harness = Harness::new().replying(failing_receipt(&log));
    let mut cache = ReceiptCache::new();
    let result = bash("cargo test", &log, true);
    assert!(
        harness
            .run_with(&result, Some(&mut cache))
            .replacement()
            .is_some()
    );
    // Poison the cached reply: it now quotes something the archived log does not contain.
    let route = harness.route.clone();
    let sha = sol_reducer::sha256_hex(log.as_bytes());
    let key = CacheKey::from_parts(
        sha.clone(),
        true,
        route.provider.clone(),
        route.model.clone(),
    );
    let mut poisoned = cache.get(&key).expect("cached");
    poisoned.reply_text = poisoned.reply_text.replace(
        "rejects_empty_input ... FAILED",
        "rejects_empty_input ... ok",
    );
    cache.insert(key.clone(), poisoned);
    let decision = harness.run_with(&result, Some(&mut cache));
    assert_eq!(reason(&decision), "unverifiable-quote");
    assert!(cache.get(&key).is_none(), "the stale entry is evicted");
    assert_eq!(
        harness.model.requests().len(),
        1,
        "no model call for a cache hit"
    );
    assert_eq!(harness.fs.file(archive_path(&log)), Some(log.into_bytes()));
    let kinds = harness.kinds();
    assert_eq!(&kinds[3..], ["candidate", "cache_hit", "fallback"]);
}
