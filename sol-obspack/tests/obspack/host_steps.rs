//! The steps a Rust host takes in one call: `Pack::store_and_admit`, `Pack::text_to_send`,
//! `Pack::recall` and `Pack::search`, `Seen::new`, and the `Display` of an observation.

use proptest::prelude::*;
use sol_core::testing::MemoryFileSystem;
use sol_obspack::text::Names;
use sol_obspack::{
    Handle, ObservationId, ObservationStore, Pack, RecallError, Seen, StoreError, StoreOutcome,
    observe, recall_page_with, search_page_with,
};

use crate::fixtures::{CALL_ID, CARGO_TEST_LOG, MULTIBYTE_TEXT, bash, minified_json};

const DIR: &str = "/sessions/s1/sol-pi/s1/observation-pack";

fn log(lines: usize, seed: u32) -> String {
    (0..lines)
        .map(|n| format!("case {seed}-{n} ... ok\n"))
        .collect()
}

#[test]
fn seen_new_is_the_struct_it_names() {
    let handle = Handle::from_number(3);
    assert_eq!(
        Seen::new(handle, 2),
        Seen {
            handle,
            prior_requests: 2
        }
    );
}

#[test]
fn store_and_admit_is_observe_store_and_admit() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let mut pack = Pack::new();
    let admitted = pack
        .store_and_admit(&store, "bash", CALL_ID, CARGO_TEST_LOG)
        .expect("stored");
    assert_eq!(admitted.observation, bash(CARGO_TEST_LOG));
    assert_eq!(admitted.outcome, StoreOutcome::Created);
    assert_eq!(
        fs.file(store.object_path(&admitted.observation.id))
            .as_deref(),
        Some(CARGO_TEST_LOG.as_bytes())
    );

    // The same as the steps one by one: the same packed result.
    let mut by_hand = Pack::new();
    let handle = by_hand.admit(bash(CARGO_TEST_LOG), CARGO_TEST_LOG);
    assert_eq!(pack.get(admitted.handle), by_hand.get(handle));

    // The same content again is reused in the archive (and admitted again, by contract).
    let again = pack
        .store_and_admit(&store, "bash", "call_other", CARGO_TEST_LOG)
        .expect("stored");
    assert_eq!(again.outcome, StoreOutcome::Reused);
    assert_eq!(again.observation.id, admitted.observation.id);
    assert_ne!(again.handle, admitted.handle);
}

#[test]
fn a_failed_archive_admits_nothing() {
    // A planted link in the storage path: the store refuses it, and the pack stays empty.
    let fs = MemoryFileSystem::new().with_symlink(DIR, "/elsewhere");
    let store = ObservationStore::new(&fs, DIR);
    let mut pack = Pack::new();
    let error = pack
        .store_and_admit(&store, "bash", CALL_ID, CARGO_TEST_LOG)
        .expect_err("a symlink in the storage path");
    assert!(
        matches!(error, StoreError::DirectoryNotRegular { .. }),
        "{error:?}"
    );
    assert!(pack.is_empty());
}

#[test]
fn recall_and_search_read_the_archive_and_name_the_packs_tool() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    for pack in [
        Pack::new(),
        Pack::with_names(Names::new("recall_output").expect("a valid name")),
    ] {
        let mut pack = pack;
        let id = pack
            .store_and_admit(&store, "bash", CALL_ID, CARGO_TEST_LOG)
            .expect("stored")
            .observation
            .id;
        let original = store.read_verified(&id).expect("stored");
        let page = pack.recall(&store, &id, 0).expect("a page");
        assert_eq!(
            page,
            recall_page_with(&id, &original, 0, pack.names()).expect("a page")
        );
        assert!(
            page.text
                .starts_with(&format!("[{} id=", pack.names().recall_tool()))
        );
        let found = pack.search(&store, &id, "FAILED", 0).expect("matches");
        assert_eq!(
            found,
            search_page_with(&id, &original, "FAILED", 0, pack.names()).expect("matches")
        );
        assert!(!found.details.matches.is_empty());
    }
}

#[test]
fn recall_and_search_of_an_id_never_stored_say_so() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let pack = Pack::new();
    let id = bash(CARGO_TEST_LOG).id;
    let unknown = |error: RecallError| matches!(error, RecallError::UnknownId { id: ref shown } if *shown == id.as_str());
    assert!(unknown(pack.recall(&store, &id, 0).expect_err("unknown")));
    assert!(unknown(
        pack.search(&store, &id, "x", 0).expect_err("unknown")
    ));
}

#[test]
fn the_display_of_observations() {
    let json = minified_json();
    let lines: Vec<String> = [
        bash(CARGO_TEST_LOG),
        observe("read", "toolu_01Read", MULTIBYTE_TEXT),
        observe("", "call", &json),
        observe("shell\n\"quoted\"", "call", &json),
        observe(&"long_tool_name_".repeat(8), "call", &json),
        // Not packable, but any observation shows: singular units, and an empty text.
        observe("bash", "call", "x"),
        observe("bash", "call", ""),
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_text_snapshot!("observation_display", lines.join("\n"));
}

proptest! {
    /// `text_to_send` sends the placeholder exactly where the step marks a replacement, and
    /// the original everywhere else, handles the pack never gave out included.
    #[test]
    fn text_to_send_follows_the_step(
        sizes in prop::collection::vec((600..1_200usize, any::<u32>()), 1..5),
        seen in prop::collection::vec((0..8usize, 0..6u32), 0..12),
        request in 1..20u32,
    ) {
        let mut pack = Pack::new();
        let texts: Vec<String> = sizes.iter().map(|&(lines, seed)| log(lines, seed)).collect();
        for text in &texts {
            pack.admit(observe("bash", "", text), text);
        }
        // Numbers past the admitted ones are handles this pack never gave out.
        let seen: Vec<Seen> = seen
            .iter()
            .map(|&(which, prior)| Seen::new(Handle::from_number(which as u32), prior))
            .collect();
        let original = |item: &Seen| texts.get(item.handle.get() as usize).map_or("unknown", String::as_str);
        let step = pack.on_context(request, &seen);
        for (item, replaced) in seen.iter().zip(&step.replace) {
            let sent = pack.text_to_send(*item, original(item));
            if *replaced {
                prop_assert_eq!(sent, pack.get(item.handle).expect("known").placeholder.as_str());
            } else {
                prop_assert_eq!(sent, original(item));
            }
        }
    }

    /// An observation shows as one line with its id and sizes, whatever the tool's name.
    #[test]
    fn an_observation_shows_as_one_line(tool in any::<String>(), text in ".{0,200}") {
        let obs = observe(&tool, "call", &text);
        let shown = obs.to_string();
        prop_assert!(!shown.contains('\n') && !shown.contains('\r'), "{:?}", shown);
        let id_prefix = format!("{} (", obs.id);
        let counted = |count: u64, unit: &str| match count {
            1 => format!("1 {unit}"),
            _ => format!("{count} {unit}s"),
        };
        let sizes = format!(
            "): {}, {}, about {}",
            counted(obs.bytes, "byte"),
            counted(obs.lines, "line"),
            counted(obs.tokens, "token")
        );
        prop_assert!(shown.starts_with(&id_prefix), "{}", shown);
        prop_assert!(shown.ends_with(&sizes), "{}", shown);
        prop_assert!(ObservationId::parse(obs.id.as_str()).is_ok());
    }
}
