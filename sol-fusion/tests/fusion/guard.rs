//! The hash guard's rule and its properties.

use proptest::prelude::*;
use proptest::sample::select;
use sol_fusion::guard::{FileKind, GuardDecision, TargetLook, Unguarded, decide, unguarded_note};
use sol_fusion::text;

fn digest(hex: &str) -> TargetLook {
    TargetLook::Digest(hex.to_owned())
}

fn unguarded(reason: Unguarded) -> TargetLook {
    TargetLook::Unguarded(reason)
}

fn skipped_changed() -> GuardDecision {
    GuardDecision::Skip {
        text: text::skipped_after_change(text::CHANGED_REASON),
    }
}

#[test]
fn equal_digests_run_without_a_note_and_different_ones_skip() {
    assert_eq!(
        decide(&digest("ab"), &digest("ab")),
        GuardDecision::Run { note: None }
    );
    assert_eq!(decide(&digest("ab"), &digest("cd")), skipped_changed());
}

#[test]
fn a_target_that_cannot_be_guarded_runs_with_one_line_naming_the_reason() {
    for reason in Unguarded::ALL {
        let note = unguarded_note(reason);
        assert_eq!(
            decide(&unguarded(reason), &unguarded(reason)),
            GuardDecision::Run {
                note: Some(note.clone())
            },
            "{reason:?}"
        );
        assert!(!note.contains('\n'), "{note}");
        assert!(
            note.starts_with(&format!("Hash guard not applied ({}): ", reason.label())),
            "{note}"
        );
        assert!(
            !note.contains("[then_run:"),
            "no marker in the note: {note}"
        );
    }
}

#[test]
fn a_regular_file_that_was_hashed_once_and_is_too_large_or_slow_the_other_time_runs() {
    for reason in [Unguarded::TooLarge, Unguarded::TooSlow] {
        let expected = GuardDecision::Run {
            note: Some(unguarded_note(reason)),
        };
        assert_eq!(decide(&digest("ab"), &unguarded(reason)), expected);
        assert_eq!(decide(&unguarded(reason), &digest("ab")), expected);
    }
    // Both unguarded, both regular: the first look's reason is named.
    assert_eq!(
        decide(
            &unguarded(Unguarded::TooLarge),
            &unguarded(Unguarded::TooSlow)
        ),
        GuardDecision::Run {
            note: Some(unguarded_note(Unguarded::TooLarge))
        }
    );
}

#[test]
fn a_target_that_became_another_kind_of_file_is_a_change() {
    assert_eq!(
        decide(&digest("ab"), &unguarded(Unguarded::Fifo)),
        skipped_changed()
    );
    assert_eq!(
        decide(&unguarded(Unguarded::Device), &unguarded(Unguarded::Fifo)),
        skipped_changed()
    );
    assert_eq!(
        decide(
            &unguarded(Unguarded::TooLarge),
            &unguarded(Unguarded::Directory)
        ),
        skipped_changed()
    );
}

#[test]
fn an_unreadable_look_skips_with_the_error() {
    let error = TargetLook::Unreadable("Permission denied (os error 13)".to_owned());
    let expected = GuardDecision::Skip {
        text: text::skipped_after_change(&text::unreadable_reason(
            "Permission denied (os error 13)",
        )),
    };
    for other in [digest("ab"), unguarded(Unguarded::Fifo), error.clone()] {
        assert_eq!(decide(&error, &other), expected);
        assert_eq!(decide(&other, &error), expected);
    }
}

#[test]
fn codes_round_trip_and_are_distinct() {
    for reason in Unguarded::ALL {
        assert_eq!(Unguarded::from_code(reason.code()), Some(reason));
    }
    assert_eq!(Unguarded::from_code("pipe"), None);
    assert_eq!(Unguarded::TooLarge.kind(), FileKind::Regular);
    assert_eq!(Unguarded::Fifo.kind(), FileKind::Fifo);
}

fn look() -> impl Strategy<Value = TargetLook> {
    prop_oneof![
        select(vec!["aa", "bb"]).prop_map(digest),
        select(Unguarded::ALL.to_vec()).prop_map(unguarded),
        select(vec!["EACCES", "ENOENT"]).prop_map(|e| TargetLook::Unreadable(e.to_owned())),
    ]
}

fn kind(look: &TargetLook) -> Option<FileKind> {
    match look {
        TargetLook::Digest(_) => Some(FileKind::Regular),
        TargetLook::Unguarded(reason) => Some(reason.kind()),
        TargetLook::Unreadable(_) => None,
    }
}

proptest! {
    #[test]
    fn the_command_runs_exactly_when_both_looks_agree(before in look(), after in look()) {
        let decision = decide(&before, &after);
        let readable = kind(&before).is_some() && kind(&after).is_some();
        let same_kind = readable && kind(&before) == kind(&after);
        let digests_differ = matches!((&before, &after), (TargetLook::Digest(a), TargetLook::Digest(b)) if a != b);
        let runs = same_kind && !digests_differ;
        match &decision {
            GuardDecision::Run { note } => {
                prop_assert!(runs, "{before:?} {after:?}");
                let any_unguarded = matches!(before, TargetLook::Unguarded(_)) || matches!(after, TargetLook::Unguarded(_));
                prop_assert_eq!(note.is_some(), any_unguarded);
            }
            GuardDecision::Skip { text } => {
                prop_assert!(!runs, "{before:?} {after:?}");
                prop_assert!(text.starts_with(sol_fusion::text::SKIPPED));
            }
        }
        // Whether it runs does not depend on which look came first.
        let swapped = decide(&after, &before);
        prop_assert_eq!(matches!(swapped, GuardDecision::Run { .. }), matches!(decision, GuardDecision::Run { .. }));
    }
}
