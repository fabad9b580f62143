//! Lexical POSIX paths: `/` is the only separator.

/// `path` normalised, when it is absolute and free of NUL bytes.
pub(super) fn absolute(path: &str) -> Option<String> {
    (path.starts_with('/') && !path.contains('\0')).then(|| normalize(path))
}

/// `path` resolved against the absolute, normalised `cwd`.
pub(super) fn resolve(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        normalize(path)
    } else {
        join(cwd, path)
    }
}

/// `rest` appended below the absolute `base`, even when `rest` starts with `/`.
pub(super) fn join(base: &str, rest: &str) -> String {
    normalize(&format!("{base}/{rest}"))
}

/// Removes empty and `.` segments and applies `..` segments to an absolute path; `..` at
/// the root stays at the root. The result has no trailing `/` unless it is the root.
pub(super) fn normalize(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            name => segments.push(name),
        }
    }
    format!("/{}", segments.join("/"))
}
