//! Properties of path resolution: no panics, file URL round trips, absolute and normalised
//! results, idempotence.

use proptest::prelude::*;
use proptest::sample::select;
use sol_fusion::path::{PathContext, Platform, resolve_tool_path};

/// Pieces that reach every branch of the resolver when strung together.
const FRAGMENTS: &[&str] = &[
    "file://",
    "file:///",
    "@",
    "~",
    "/",
    "\\",
    "//",
    "\\\\",
    ".",
    "..",
    "C:",
    "c|",
    "%",
    "%2F",
    "%2f",
    "%5C",
    "%2e",
    "%2E%2e",
    "%C3",
    "%A9",
    "%00",
    "%zz",
    "?",
    "#",
    "localhost",
    "server",
    "/mnt/",
    "/cygdrive/",
    "/c",
    "d",
    "\t",
    "\n",
    " ",
    "\u{a0}",
    "\u{3000}",
    "\u{202f}",
    "é",
    "🦀",
    "\0",
    ":",
    "[",
    "]",
    r"\\?\",
    r"\\.\",
    "share",
];

fn tricky_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![select(FRAGMENTS).prop_map(str::to_owned), ".{0,3}"];
    prop::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat())
}

fn any_path_string() -> impl Strategy<Value = String> {
    prop_oneof![tricky_string(), any::<String>()]
}

fn platform() -> impl Strategy<Value = Platform> {
    prop_oneof![Just(Platform::Posix), Just(Platform::Windows)]
}

/// Valid contexts of both platforms, including a UNC working directory.
fn valid_context() -> impl Strategy<Value = PathContext<'static>> {
    select(vec![
        PathContext {
            cwd: "/work/app",
            home: "/home/dev",
            platform: Platform::Posix,
        },
        PathContext {
            cwd: "/",
            home: "/root",
            platform: Platform::Posix,
        },
        PathContext {
            cwd: r"C:\work\app",
            home: r"C:\Users\dev",
            platform: Platform::Windows,
        },
        PathContext {
            cwd: r"\\srv\proj\app",
            home: r"D:\home",
            platform: Platform::Windows,
        },
    ])
}

fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Checks, independently of the implementation, that `path` is absolute and normalised.
fn assert_absolute_and_normal(path: &str, platform: Platform) -> Result<(), TestCaseError> {
    let segments: Vec<&str> = match platform {
        Platform::Posix => {
            let rest = path.strip_prefix('/');
            prop_assert!(rest.is_some(), "not absolute: {path:?}");
            let rest = rest.unwrap_or_default();
            if rest.is_empty() {
                return Ok(());
            }
            rest.split('/').collect()
        }
        Platform::Windows => {
            prop_assert!(!path.contains('/'), "forward slash left in {path:?}");
            let bytes = path.as_bytes();
            let rest = if let [letter, b':', b'\\', ..] = bytes
                && letter.is_ascii_alphabetic()
            {
                &path[3..]
            } else {
                let unc = path.strip_prefix(r"\\");
                prop_assert!(unc.is_some(), "not absolute: {path:?}");
                let mut parts = unc.unwrap_or_default().splitn(3, '\\');
                let server = parts.next().unwrap_or_default();
                let share = parts.next().unwrap_or_default();
                prop_assert!(!server.is_empty() && !share.is_empty(), "bad UNC: {path:?}");
                let rest = parts.next();
                prop_assert!(rest.is_some(), "UNC root without separator: {path:?}");
                rest.unwrap_or_default()
            };
            if rest.is_empty() {
                return Ok(());
            }
            rest.split('\\').collect()
        }
    };
    for segment in segments {
        prop_assert!(
            !matches!(segment, "" | "." | ".."),
            "segment {segment:?} left in {path:?}"
        );
    }
    Ok(())
}

/// Every byte outside the URL "unreserved" set, percent-encoded.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A path segment: any Unicode except `/` and NUL, and not `.` or `..`.
fn posix_segment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^/\u{0}]{1,12}",
        any::<String>().prop_map(|s| s.replace(['/', '\0'], "_")),
    ]
    .prop_filter("non-empty, not a dot segment", |segment| {
        !matches!(segment.as_str(), "" | "." | "..")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn resolution_never_panics(
        input in any_path_string(),
        cwd in any_path_string(),
        home in any_path_string(),
        platform in platform(),
    ) {
        let ctx = PathContext { cwd: &cwd, home: &home, platform };
        let _ = resolve_tool_path(&input, &ctx);
    }

    #[test]
    fn resolution_never_panics_with_valid_context(
        input in any_path_string(),
        ctx in valid_context(),
    ) {
        let _ = resolve_tool_path(&input, &ctx);
    }

    #[test]
    fn percent_encoded_posix_file_urls_round_trip(
        segments in prop::collection::vec(posix_segment(), 0..6),
        at_prefix in any::<bool>(),
        localhost in any::<bool>(),
    ) {
        let path = format!("/{}", segments.join("/"));
        let encoded: Vec<String> = segments.iter().map(|segment| percent_encode(segment)).collect();
        let host = if localhost { "localhost" } else { "" };
        let at = if at_prefix { "@" } else { "" };
        let url = format!("{at}file://{host}/{}", encoded.join("/"));
        let ctx = PathContext { cwd: "/work/app", home: "/home/dev", platform: Platform::Posix };
        prop_assert_eq!(resolve_tool_path(&url, &ctx), Ok(path));
    }

    #[test]
    fn ok_results_are_absolute_and_normalised(
        input in any_path_string(),
        ctx in valid_context(),
    ) {
        if let Ok(resolved) = resolve_tool_path(&input, &ctx) {
            assert_absolute_and_normal(&resolved, ctx.platform)?;
        }
    }

    #[test]
    fn resolving_a_result_again_changes_nothing(
        input in any_path_string(),
        ctx in valid_context(),
    ) {
        // The one exception: a file URL may decode to a name with a Unicode space, which
        // step 1 would turn into an ASCII space if the decoded path were resolved again
        // (see `paths::decoded_unicode_spaces_are_not_idempotent`).
        if let Ok(resolved) = resolve_tool_path(&input, &ctx)
            && !resolved.contains(is_unicode_space)
        {
            prop_assert_eq!(resolve_tool_path(&resolved, &ctx), Ok(resolved.clone()));
        }
    }
}
