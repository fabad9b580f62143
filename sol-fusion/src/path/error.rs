//! Why a path could not be resolved.

/// Why [`resolve_tool_path`](super::resolve_tool_path) refused a path.
///
/// Messages are lower-case and name the offending string, because the host shows them to
/// the model as the tool error. File URL inputs are quoted as given; the other strings are
/// quoted with Rust's debug escaping so that control characters stay visible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is empty once the Unicode spaces are replaced and one `@` is removed.
    #[error("empty path")]
    Empty {
        /// The path as given.
        input: String,
    },
    /// The path contains U+0000, literally or percent-encoded in a file URL.
    #[error("path contains a NUL byte: {input:?}")]
    NulByte {
        /// The path as given.
        input: String,
    },
    /// A file URL encodes a separator (`%2F`, and on Windows also `%5C`), which would make
    /// one segment look like two.
    #[error("file URL must not contain an encoded path separator: {input}")]
    EncodedSeparator {
        /// The path as given.
        input: String,
    },
    /// A POSIX file URL names a host other than `localhost`.
    #[error("file URL host must be \"localhost\" or empty on this platform: {input}")]
    ForeignHost {
        /// The path as given.
        input: String,
    },
    /// A file URL has a host that no URL parser accepts (a port, user info, brackets or
    /// another forbidden character).
    #[error("file URL has an invalid host: {input}")]
    InvalidHost {
        /// The path as given.
        input: String,
    },
    /// A file URL has a `%` that is not followed by two hexadecimal digits.
    #[error("file URL has a \"%\" that is not followed by two hex digits: {input}")]
    InvalidPercentEncoding {
        /// The path as given.
        input: String,
    },
    /// The bytes of a percent-decoded file URL path are not UTF-8.
    #[error("file URL path is not valid UTF-8 once percent-decoded: {input}")]
    InvalidUtf8 {
        /// The path as given.
        input: String,
    },
    /// A Windows file URL names neither a drive (`file:///C:/…`) nor a server and share
    /// (`file://server/share/…`).
    #[error(
        "file URL must name an absolute path with a drive letter or a server and share: {input}"
    )]
    NotAbsolute {
        /// The path as given.
        input: String,
    },
    /// The working directory in the context is not an absolute path of the platform.
    #[error("working directory is not an absolute path: {cwd:?}")]
    InvalidCwd {
        /// The working directory as given.
        cwd: String,
    },
    /// The path starts with `~` but the home directory in the context is not an absolute
    /// path of the platform.
    #[error("home directory is not an absolute path, so \"~\" cannot be expanded: {home:?}")]
    InvalidHome {
        /// The home directory as given.
        home: String,
    },
}

impl PathError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            PathError::Empty { .. } => "empty_path",
            PathError::NulByte { .. } => "nul_byte",
            PathError::EncodedSeparator { .. } => "encoded_separator",
            PathError::ForeignHost { .. } => "file_url_host",
            PathError::InvalidHost { .. } => "invalid_file_url_host",
            PathError::InvalidPercentEncoding { .. } => "invalid_percent_encoding",
            PathError::InvalidUtf8 { .. } => "invalid_utf8",
            PathError::NotAbsolute { .. } => "file_url_not_absolute",
            PathError::InvalidCwd { .. } => "invalid_cwd",
            PathError::InvalidHome { .. } => "invalid_home",
        }
    }
}
