//! Path resolution cases that do not belong in the shared fixture file, because they are
//! about this crate rather than about agreeing with Node.

use sol_fusion::FusionError;
use sol_fusion::path::{PathContext, PathError, Platform, resolve_tool_path};

const POSIX: PathContext<'static> = PathContext {
    cwd: "/work/app",
    home: "/home/dev",
    platform: Platform::Posix,
};

const WINDOWS: PathContext<'static> = PathContext {
    cwd: r"C:\work\app",
    home: r"C:\Users\dev",
    platform: Platform::Windows,
};

fn code(input: &str, ctx: &PathContext<'_>) -> &'static str {
    match resolve_tool_path(input, ctx) {
        Ok(path) => panic!("{input:?} resolved to {path:?}"),
        Err(error) => error.code(),
    }
}

#[test]
fn a_percent_encoded_nul_is_rejected_although_node_would_decode_it() {
    assert_eq!(code("file:///tmp/a%00b", &POSIX), "nul_byte");
    assert_eq!(code("file:///C:/a%00b", &WINDOWS), "nul_byte");
}

#[test]
fn a_nul_in_the_context_makes_it_invalid() {
    let cwd = PathContext {
        cwd: "/work\0",
        ..POSIX
    };
    assert_eq!(code("x", &cwd), "invalid_cwd");
    let home = PathContext {
        home: "C:\\Users\\dev\0",
        ..WINDOWS
    };
    assert_eq!(code("~", &home), "invalid_home");
}

#[test]
fn an_unusable_home_matters_only_for_tilde_paths() {
    let ctx = PathContext { home: "", ..POSIX };
    assert_eq!(
        resolve_tool_path("a/b", &ctx),
        Ok("/work/app/a/b".to_owned())
    );
    assert_eq!(code("~", &ctx), "invalid_home");
}

#[test]
fn the_context_is_normalised_too() {
    let posix = PathContext {
        cwd: "/work//app/./src/..//",
        home: "/home/dev/",
        platform: Platform::Posix,
    };
    assert_eq!(resolve_tool_path("x", &posix), Ok("/work/app/x".to_owned()));
    assert_eq!(
        resolve_tool_path("~/x", &posix),
        Ok("/home/dev/x".to_owned())
    );
    let windows = PathContext {
        cwd: "C:/work/app/",
        home: r"\\srv\homes\dev",
        platform: Platform::Windows,
    };
    assert_eq!(
        resolve_tool_path("x", &windows),
        Ok(r"C:\work\app\x".to_owned())
    );
    assert_eq!(
        resolve_tool_path("~/x", &windows),
        Ok(r"\\srv\homes\dev\x".to_owned())
    );
}

#[test]
fn a_windows_working_directory_must_be_fully_qualified() {
    for cwd in [r"\work", "C:work", r"\\server", r"\\server\", "work"] {
        let ctx = PathContext { cwd, ..WINDOWS };
        assert_eq!(code("x", &ctx), "invalid_cwd", "{cwd}");
    }
}

#[test]
fn a_server_without_share_is_a_rooted_path_as_in_node() {
    assert_eq!(
        resolve_tool_path(r"\\server", &WINDOWS),
        Ok(r"C:\server".to_owned())
    );
    assert_eq!(resolve_tool_path(r"\\\x", &WINDOWS), Ok(r"C:\x".to_owned()));
}

#[test]
fn unc_paths_never_climb_above_the_share() {
    assert_eq!(
        resolve_tool_path(r"\\srv\share\..\..\x", &WINDOWS),
        Ok(r"\\srv\share\x".to_owned())
    );
    assert_eq!(
        resolve_tool_path(r"\\srv\share", &WINDOWS),
        Ok(r"\\srv\share\".to_owned())
    );
}

#[test]
fn device_paths_are_rooted_at_their_first_name() {
    // Node would let `..` remove `C:` here and then resolve `\\?\` to `C:\`; keeping the
    // name in the root keeps resolution idempotent.
    assert_eq!(
        resolve_tool_path(r"\\?\C:\x\..\..", &WINDOWS),
        Ok(r"\\?\C:\".to_owned())
    );
    assert_eq!(
        resolve_tool_path(r"//./COM1", &WINDOWS),
        Ok(r"\\.\COM1\".to_owned())
    );
}

#[test]
fn shell_drive_paths_are_converted_only_on_windows() {
    for input in ["/c/src/app.ts", "/mnt/d/x", "/cygdrive/e/x"] {
        assert_eq!(resolve_tool_path(input, &POSIX), Ok(input.to_owned()));
    }
    // Mount names are case-sensitive, like the mount points themselves.
    assert_eq!(
        resolve_tool_path("/MNT/d/x", &WINDOWS),
        Ok(r"C:\MNT\d\x".to_owned())
    );
    // Only a leading forward slash marks a shell path; `\c\x` is a rooted native path.
    assert_eq!(
        resolve_tool_path(r"\c\x", &WINDOWS),
        Ok(r"C:\c\x".to_owned())
    );
}

#[test]
fn unicode_spaces_in_a_file_url_become_ascii_spaces_before_decoding() {
    assert_eq!(
        resolve_tool_path("file:///tmp/a\u{a0}b", &POSIX),
        Ok("/tmp/a b".to_owned())
    );
}

#[test]
fn decoded_unicode_spaces_are_not_idempotent() {
    // The file really is named with a no-break space; only a raw path gets step 1.
    let resolved = resolve_tool_path("file:///tmp/a%C2%A0b", &POSIX);
    assert_eq!(resolved, Ok("/tmp/a\u{a0}b".to_owned()));
    assert_eq!(
        resolve_tool_path("/tmp/a\u{a0}b", &POSIX),
        Ok("/tmp/a b".to_owned())
    );
}

#[test]
fn spaces_and_extra_dots_in_names_are_kept() {
    assert_eq!(
        resolve_tool_path("  spaced  ", &POSIX),
        Ok("/work/app/  spaced  ".to_owned())
    );
    assert_eq!(
        resolve_tool_path("...", &POSIX),
        Ok("/work/app/...".to_owned())
    );
}

#[test]
fn file_url_hosts_are_decoded_and_lower_cased() {
    assert_eq!(
        resolve_tool_path("file://%6Cocalhost/x", &POSIX),
        Ok("/x".to_owned())
    );
    assert_eq!(
        resolve_tool_path("file://FileServer/Share/x", &WINDOWS),
        Ok(r"\\fileserver\Share\x".to_owned())
    );
    assert_eq!(
        code("file://[::1]/share/x", &WINDOWS),
        "invalid_file_url_host"
    );
}

#[test]
fn a_drive_letter_in_the_host_position_starts_the_path() {
    assert_eq!(
        resolve_tool_path("file://C:/x", &POSIX),
        Ok("/C:/x".to_owned())
    );
    assert_eq!(
        resolve_tool_path("file://c|/x", &WINDOWS),
        Ok(r"c:\x".to_owned())
    );
}

#[test]
fn errors_name_the_input() {
    let cases = [
        (
            "file:///a%2Fb",
            "file URL must not contain an encoded path separator: file:///a%2Fb",
        ),
        (
            "file://server/x",
            "file URL host must be \"localhost\" or empty on this platform: file://server/x",
        ),
        ("@", "empty path"),
        ("a\0b", "path contains a NUL byte: \"a\\0b\""),
    ];
    for (input, message) in cases {
        let error = resolve_tool_path(input, &POSIX).expect_err(input);
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn fusion_error_keeps_the_code_and_message() {
    let error = resolve_tool_path("", &POSIX).expect_err("empty");
    assert_eq!(
        error,
        PathError::Empty {
            input: String::new()
        }
    );
    let wrapped = FusionError::from(error.clone());
    assert_eq!(wrapped.code(), "empty_path");
    assert_eq!(wrapped.to_string(), error.to_string());
}
