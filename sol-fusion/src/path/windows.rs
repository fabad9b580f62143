//! Lexical Windows paths: `\` and `/` both separate, roots are drives or UNC shares.
//!
//! Resolution follows Node's `path.win32.resolve`, with two differences:
//!
//! - a drive-relative path on another drive than the working directory (`D:notes.md` from
//!   `C:\work`) resolves to the root of that drive, because the per-drive working
//!   directories of a Windows process are not part of the context;
//! - the device namespaces `\\.\NAME` and `\\?\NAME` are roots like a UNC share
//!   (`\\.\COM1\`), so that resolution stays idempotent; Node lets `..` remove `NAME`.

/// An absolute Windows path split into its root and normalised segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Absolute {
    root: Root,
    segments: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Root {
    /// A drive such as `C:`, in the case it was written.
    Drive(String),
    /// `\\server\share`. The device namespaces `\\.\NAME` and `\\?\NAME` take this form too,
    /// with `.` or `?` as the server, so that `..` never climbs above `NAME`.
    Unc { server: String, share: String },
}

/// The syntactic form of a Windows path and what follows its root.
enum Form<'a> {
    /// A drive with a separator, or a UNC share.
    Qualified { root: Root, rest: &'a str },
    /// `C:notes.md`: relative to the working directory of drive C.
    DriveRelative { drive: &'a str, rest: &'a str },
    /// `\notes.md`: relative to the root of the current drive or share.
    RootRelative { rest: &'a str },
    /// `notes.md`.
    Relative { rest: &'a str },
}

fn is_separator(c: char) -> bool {
    c == '/' || c == '\\'
}

impl<'a> Form<'a> {
    fn of(path: &'a str) -> Form<'a> {
        if let Some(after) = path
            .strip_prefix(is_separator)
            .and_then(|after| after.strip_prefix(is_separator))
        {
            return Form::unc_or_device(after).unwrap_or(Form::RootRelative { rest: path });
        }
        if path.starts_with(is_separator) {
            return Form::RootRelative { rest: path };
        }
        match path.as_bytes() {
            [letter, b':', ..] if letter.is_ascii_alphabetic() => {
                let (drive, rest) = path.split_at(2);
                if rest.starts_with(is_separator) {
                    Form::Qualified {
                        root: Root::Drive(drive.to_owned()),
                        rest,
                    }
                } else {
                    Form::DriveRelative { drive, rest }
                }
            }
            _ => Form::Relative { rest: path },
        }
    }

    /// `after` is what follows two leading separators. `\\server\share` needs both names;
    /// `\\server` alone is `\server` on the current drive. As in Node, repeated separators
    /// may follow the server name.
    fn unc_or_device(after: &'a str) -> Option<Form<'a>> {
        let (server, after_server) = after.split_once(is_separator)?;
        let after_server = after_server.trim_start_matches(is_separator);
        let share_end = after_server
            .find(is_separator)
            .unwrap_or(after_server.len());
        let (share, rest) = after_server.split_at(share_end);
        (!server.is_empty() && !share.is_empty()).then(|| Form::Qualified {
            root: Root::Unc {
                server: server.to_owned(),
                share: share.to_owned(),
            },
            rest,
        })
    }
}

impl Absolute {
    /// `path` as an absolute path, when it is fully qualified (a drive with a separator
    /// after it, or a UNC share) and free of NUL bytes.
    pub(super) fn parse(path: &str) -> Option<Absolute> {
        if path.contains('\0') {
            return None;
        }
        match Form::of(path) {
            Form::Qualified { root, rest } => Some(Absolute::new(root, rest)),
            Form::DriveRelative { .. } | Form::RootRelative { .. } | Form::Relative { .. } => None,
        }
    }

    fn new(root: Root, rest: &str) -> Absolute {
        let mut absolute = Absolute {
            root,
            segments: Vec::new(),
        };
        absolute.push(rest);
        absolute
    }

    /// `path` resolved against this directory, rendered with `\` separators.
    pub(super) fn resolve(&self, path: &str) -> String {
        match Form::of(path) {
            Form::Qualified { root, rest } => Absolute::new(root, rest).render(),
            Form::DriveRelative { drive, rest } => match &self.root {
                Root::Drive(own) if own.eq_ignore_ascii_case(drive) => {
                    let mut resolved = Absolute {
                        root: Root::Drive(drive.to_owned()),
                        segments: self.segments.clone(),
                    };
                    resolved.push(rest);
                    resolved.render()
                }
                _ => Absolute::new(Root::Drive(drive.to_owned()), rest).render(),
            },
            Form::RootRelative { rest } => Absolute::new(self.root.clone(), rest).render(),
            Form::Relative { rest } => self.join(rest),
        }
    }

    /// `rest` appended below this directory, even when `rest` starts with a separator.
    pub(super) fn join(&self, rest: &str) -> String {
        let mut joined = self.clone();
        joined.push(rest);
        joined.render()
    }

    fn push(&mut self, rest: &str) {
        for segment in rest.split(is_separator) {
            match segment {
                "" | "." => {}
                ".." => {
                    self.segments.pop();
                }
                name => self.segments.push(name.to_owned()),
            }
        }
    }

    fn render(&self) -> String {
        let root = match &self.root {
            Root::Drive(drive) => format!("{drive}\\"),
            Root::Unc { server, share } => format!("\\\\{server}\\{share}\\"),
        };
        root + &self.segments.join("\\")
    }
}

/// The native form of a drive path written by Git Bash or MSYS (`/c/…`), WSL (`/mnt/c/…`)
/// or Cygwin (`/cygdrive/c/…`), with the drive letter upper-cased; `None` for any other
/// path, which then keeps its Windows meaning (`/usr/bin` is `\usr\bin` on the current
/// drive).
pub(super) fn from_shell_drive_path(path: &str) -> Option<String> {
    let after_root = path.strip_prefix('/')?;
    let mounted = ["mnt/", "cygdrive/"]
        .into_iter()
        .find_map(|mount| after_root.strip_prefix(mount).and_then(drive_and_rest));
    let (letter, rest) = mounted.or_else(|| drive_and_rest(after_root))?;
    let letter = letter.to_ascii_uppercase();
    Some(if rest.is_empty() {
        format!("{letter}:\\")
    } else {
        format!("{letter}:{rest}")
    })
}

/// A single-letter first segment and what follows it (empty or starting with `/`).
fn drive_and_rest(path: &str) -> Option<(char, &str)> {
    let mut chars = path.chars();
    let letter = chars.next().filter(char::is_ascii_alphabetic)?;
    let rest = chars.as_str();
    (rest.is_empty() || rest.starts_with('/')).then_some((letter, rest))
}
