//! Resolution of the `path` argument of a fused `edit` or `write` to one absolute path.
//!
//! The host needs the absolute target before the mutation: it keys the per-file queue and
//! the hash guard on it. The result must name the file the built-in tool is about to
//! change, so the steps mirror the ones Pi and Node apply to the same string:
//!
//! 1. the Unicode space characters U+00A0, U+2000–U+200A, U+202F, U+205F and U+3000 become
//!    an ASCII space (models sometimes emit them where a space was meant);
//! 2. one leading `@` is removed (Pi's file-mention prefix);
//! 3. a `file://` URL is decoded the way Node's `fileURLToPath` decodes it;
//! 4. `~` and `~/…` expand to the home directory (on Windows also `~\…`);
//! 5. on Windows only, Git Bash, MSYS, Cygwin and WSL drive paths (`/c/…`, `/mnt/c/…`,
//!    `/cygdrive/c/…`) become native drive paths;
//! 6. the path is resolved against the working directory and normalised lexically: `.` and
//!    `..` segments and repeated separators disappear, `..` never climbs above the root.
//!
//! Nothing here touches the file system: symbolic links are not followed and the result
//! may name a file that does not exist yet.
//!
//! For POSIX the result equals Node's `path.posix.resolve(cwd, fileURLToPath(url))` for file
//! URLs and `path.posix.resolve(cwd, path)` otherwise, with one exception: a percent-encoded
//! NUL is an error. On Windows it follows `path.win32` except where Node's answer is not
//! absolute or depends on process state (see the Windows notes in
//! `fixtures/fusion/README.md`).
//!
//! ```
//! use sol_fusion::path::{resolve_tool_path, PathContext, Platform};
//!
//! let posix = PathContext { cwd: "/work/app", home: "/home/me", platform: Platform::Posix };
//! assert_eq!(resolve_tool_path("@src/../README.md", &posix)?, "/work/app/README.md");
//! assert_eq!(resolve_tool_path("file:///tmp/caf%C3%A9.txt", &posix)?, "/tmp/café.txt");
//!
//! let windows = PathContext { cwd: r"C:\work", home: r"C:\Users\me", platform: Platform::Windows };
//! assert_eq!(resolve_tool_path("/mnt/d/notes.md", &windows)?, r"D:\notes.md");
//! assert_eq!(resolve_tool_path(r"~\todo.txt", &windows)?, r"C:\Users\me\todo.txt");
//! # Ok::<(), sol_fusion::path::PathError>(())
//! ```

mod error;
mod file_url;
mod posix;
mod windows;

pub use error::PathError;

/// The path syntax of the machine the host runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Linux, macOS and other Unix-like systems: `/` separates, a backslash is an ordinary
    /// filename character.
    Posix,
    /// Windows: `\` and `/` both separate; paths start with a drive (`C:\`) or a server and
    /// share (`\\server\share\`).
    Windows,
}

/// What a path is resolved against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathContext<'a> {
    /// The working directory of the tool call (Pi's `ctx.cwd`); must be absolute.
    pub cwd: &'a str,
    /// The user's home directory, used only when the path starts with `~`; must then be
    /// absolute.
    pub home: &'a str,
    /// Whose path syntax applies, to the input and to the result.
    pub platform: Platform,
}

impl<'a> PathContext<'a> {
    /// A context with POSIX path syntax (Linux, macOS): relative paths resolve in `cwd`,
    /// `~` in `home`.
    ///
    /// ```
    /// use sol_fusion::path::{resolve_tool_path, PathContext, Platform};
    ///
    /// let ctx = PathContext::posix("/work/app", "/home/dev");
    /// assert_eq!(ctx.platform, Platform::Posix);
    /// assert_eq!(resolve_tool_path("~/notes.md", &ctx).as_deref(), Ok("/home/dev/notes.md"));
    /// ```
    pub fn posix(cwd: &'a str, home: &'a str) -> Self {
        PathContext {
            cwd,
            home,
            platform: Platform::Posix,
        }
    }
}

/// Resolves the `path` argument of a fused tool call to an absolute path in the syntax of
/// `ctx.platform`.
///
/// See the [module documentation](self) for the steps. File URLs follow Node's
/// `fileURLToPath`, including the WHATWG URL parser's handling of dot segments, tabs and
/// newlines, backslashes and a `?query` or `#fragment`; the decoded path is then normalised
/// like any other absolute path.
///
/// # Errors
///
/// A [`PathError`] when the input is empty after the first two steps, contains a NUL byte
/// (also when percent-encoded), is a file URL that Node would reject (on Windows also one
/// that names no absolute path), or when the working
/// directory (or, for `~`, the home directory) is not absolute. Nothing has been changed on
/// disk when this fails, so the host can reject the tool call before the mutation.
pub fn resolve_tool_path(input: &str, ctx: &PathContext<'_>) -> Result<String, PathError> {
    if input.contains('\0') {
        return Err(PathError::NulByte {
            input: input.to_owned(),
        });
    }
    let spaced = replace_unicode_spaces(input);
    let path = spaced.strip_prefix('@').unwrap_or(&spaced);
    if path.is_empty() {
        return Err(PathError::Empty {
            input: input.to_owned(),
        });
    }
    match ctx.platform {
        Platform::Posix => resolve_posix(input, path, ctx),
        Platform::Windows => resolve_windows(input, path, ctx),
    }
}

fn resolve_posix(input: &str, path: &str, ctx: &PathContext<'_>) -> Result<String, PathError> {
    let cwd = posix::absolute(ctx.cwd).ok_or_else(|| PathError::InvalidCwd {
        cwd: ctx.cwd.to_owned(),
    })?;
    if path.starts_with(file_url::PREFIX) {
        let decoded = file_url::to_posix_path(input, path)?;
        return Ok(posix::normalize(&decoded));
    }
    if let Some(rest) = home_relative(path, Platform::Posix) {
        let home = posix::absolute(ctx.home).ok_or_else(|| invalid_home(ctx))?;
        return Ok(posix::join(&home, rest));
    }
    Ok(posix::resolve(&cwd, path))
}

fn resolve_windows(input: &str, path: &str, ctx: &PathContext<'_>) -> Result<String, PathError> {
    let cwd = windows::Absolute::parse(ctx.cwd).ok_or_else(|| PathError::InvalidCwd {
        cwd: ctx.cwd.to_owned(),
    })?;
    if path.starts_with(file_url::PREFIX) {
        let decoded = file_url::to_windows_path(input, path)?;
        return Ok(cwd.resolve(&decoded));
    }
    if let Some(rest) = home_relative(path, Platform::Windows) {
        let home = windows::Absolute::parse(ctx.home).ok_or_else(|| invalid_home(ctx))?;
        return Ok(home.join(rest));
    }
    let native = windows::from_shell_drive_path(path);
    Ok(cwd.resolve(native.as_deref().unwrap_or(path)))
}

fn invalid_home(ctx: &PathContext<'_>) -> PathError {
    PathError::InvalidHome {
        home: ctx.home.to_owned(),
    }
}

/// `Some(rest)` when `path` is `~` (rest empty) or `~` followed by a separator.
fn home_relative(path: &str, platform: Platform) -> Option<&str> {
    let rest = path.strip_prefix('~')?;
    let separated = match platform {
        Platform::Posix => rest.starts_with('/'),
        Platform::Windows => rest.starts_with(['/', '\\']),
    };
    (rest.is_empty() || separated).then_some(rest)
}

/// Whether `c` is one of the space characters that Pi's resolver turns into an ASCII space.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

fn replace_unicode_spaces(input: &str) -> String {
    input
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect()
}
