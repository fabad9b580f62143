//! The recall tool's name as an option: Pi's name by default, any valid tool name for
//! another harness, in every text that names the tool.

use proptest::prelude::*;
use sol_obspack::text::{MAX_TOOL_NAME_CHARS, Names, TOOL_NAME, ToolNameError};
use sol_obspack::{
    Pack, RecallError, Seen, observe, placeholder, placeholder_with, recall_page, recall_page_with,
    search_page, search_page_with,
};

use crate::fixtures::{CARGO_TEST_LOG, MULTIBYTE_TEXT, bash};

fn recall_output() -> Names {
    Names::new("recall_output").expect("a valid name")
}

#[test]
fn the_default_is_pis_name() {
    assert_eq!(Names::default().recall_tool(), "obs_recall");
    assert_eq!(Names::default().recall_tool(), TOOL_NAME);
    assert_eq!(Pack::new().names(), &Names::default());
}

#[test]
fn names_that_providers_refuse_are_refused() {
    for bad in [
        "",
        "recall output",
        "recall\noutput",
        "récall",
        "a.b",
        "obs/recall",
    ] {
        assert_eq!(
            Names::new(bad),
            Err(ToolNameError {
                name: bad.to_owned()
            }),
            "{bad:?}"
        );
    }
    assert!(Names::new(&"r".repeat(MAX_TOOL_NAME_CHARS)).is_ok());
    assert!(Names::new(&"r".repeat(MAX_TOOL_NAME_CHARS + 1)).is_err());
}

/// The texts a model reads when the harness calls its recall tool `recall_output`.
#[test]
fn texts_with_another_recall_tool_name() {
    let names = recall_output();
    let log = bash(CARGO_TEST_LOG);
    let multibyte = bash(MULTIBYTE_TEXT);
    let inside = (1..MULTIBYTE_TEXT.len())
        .find(|&at| !MULTIBYTE_TEXT.is_char_boundary(at))
        .expect("a multi-byte character") as u64;
    let texts = [
        placeholder_with(&log, CARGO_TEST_LOG, &names),
        recall_page_with(&log.id, CARGO_TEST_LOG.as_bytes(), 0, &names)
            .expect("a page")
            .text
            .lines()
            .take(4)
            .collect::<Vec<_>>()
            .join("\n"),
        search_page_with(&log.id, CARGO_TEST_LOG.as_bytes(), "FAILED", 0, &names)
            .expect("a search page")
            .text,
        recall_page_with(&multibyte.id, MULTIBYTE_TEXT.as_bytes(), inside, &names)
            .expect_err("inside a character")
            .to_string(),
    ];
    assert_text_snapshot!("texts_named_recall_output", texts.join("\n---\n"));
}

#[test]
fn a_pack_with_names_sends_placeholders_that_name_its_tool() {
    let mut pack = Pack::with_names(recall_output());
    let handle = pack.admit(bash(CARGO_TEST_LOG), CARGO_TEST_LOG);
    let seen = [Seen {
        handle,
        prior_requests: 2,
    }];
    let step = pack.on_context(3, &seen);
    let sent = &pack.get(handle).expect("admitted").placeholder;
    assert!(
        sent.contains("\nretrieve: call recall_output with {\"id\":\""),
        "{sent}"
    );
    assert!(!sent.contains("obs_recall"));
    assert_eq!(step.replace, [true]);
}

fn valid_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,64}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A name is accepted exactly when it is 1 to 64 ASCII letters, digits, '_' or '-'.
    #[test]
    fn names_are_accepted_by_the_providers_rule(name in prop_oneof![valid_name(), ".{0,70}"]) {
        let rule = (1..=MAX_TOOL_NAME_CHARS).contains(&name.len())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        prop_assert_eq!(Names::new(&name).is_ok(), rule);
        if let Ok(names) = Names::new(&name) {
            prop_assert_eq!(names.recall_tool(), name.as_str());
        }
    }

    /// With any valid name the texts are Pi's texts with the name in the tool's place, and
    /// the pages say the same: only the name changes.
    #[test]
    fn only_the_name_changes(name in valid_name(), offset in 0usize..CARGO_TEST_LOG.len()) {
        let names = Names::new(&name).expect("valid");
        let log = bash(CARGO_TEST_LOG);
        prop_assert_eq!(
            placeholder_with(&log, CARGO_TEST_LOG, &names),
            placeholder(&log, CARGO_TEST_LOG)
                .replacen("call obs_recall with", &format!("call {name} with"), 1)
        );
        let bytes = CARGO_TEST_LOG.as_bytes();
        let offset = offset as u64;
        let pi = recall_page(&log.id, bytes, offset).expect("ASCII log: any offset");
        let named = recall_page_with(&log.id, bytes, offset, &names).expect("the same page");
        prop_assert_eq!(&named.details, &pi.details);
        prop_assert_eq!(named.text, pi.text.replacen("[obs_recall ", &format!("[{name} "), 1));
        let pi = search_page(&log.id, bytes, "test", offset);
        let named = search_page_with(&log.id, bytes, "test", offset, &names);
        match (pi, named) {
            (Ok(pi), Ok(named)) => {
                prop_assert_eq!(&named.details, &pi.details);
                prop_assert_eq!(named.text, pi.text.replacen("[obs_recall ", &format!("[{name} "), 1));
            }
            (pi, named) => prop_assert_eq!(pi.map(|page| page.text), named.map(|page| page.text)),
        }
    }

    /// The offset error names the tool it tells the model to call.
    #[test]
    fn the_offset_error_names_the_tool(name in valid_name()) {
        let names = Names::new(&name).expect("valid");
        let obs = bash(MULTIBYTE_TEXT);
        let inside = (1..MULTIBYTE_TEXT.len())
            .find(|&at| !MULTIBYTE_TEXT.is_char_boundary(at))
            .expect("a multi-byte character") as u64;
        let error = recall_page_with(&obs.id, MULTIBYTE_TEXT.as_bytes(), inside, &names)
            .expect_err("inside a character");
        let named = matches!(&error, RecallError::OffsetInsideCharacter { recall_tool, .. } if *recall_tool == name);
        prop_assert!(named, "{:?}", error);
        let message = error.to_string();
        prop_assert!(message.ends_with(&format!("returned by {name}")), "{}", message);
    }
}

#[test]
fn observations_do_not_depend_on_the_name() {
    // Identity comes from the tool and the content, never from the recall tool's name.
    let a = observe("bash", "call_1", CARGO_TEST_LOG);
    let mut pack = Pack::with_names(recall_output());
    let handle = pack.admit(a.clone(), CARGO_TEST_LOG);
    assert_eq!(pack.get(handle).expect("admitted").observation, a);
}
