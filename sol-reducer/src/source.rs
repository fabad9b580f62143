//! The exact log of a candidate and the checks it must pass before it is archived: size
//! bounds, agreement of the exit signal with `isError`, and the secret gate.
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::ContentBlock;
//! use sol_reducer::pi::{select_candidate, ToolResultView};
//! use sol_reducer::source::{prepare_source, FullOutput};
//! use sol_reducer::ReasonCode;
//!
//! let log = "test parser::tokens ... ok\n".repeat(200);
//! let text = format!("{log}\n\nCommand exited with code 101");
//! let content = [ContentBlock::text(text)];
//! let input = json!({"command": "cargo test"});
//! let view = ToolResultView { tool_name: "bash", input: &input, content: &content, is_error: true, ..ToolResultView::default() };
//! let source = prepare_source(select_candidate(&view).expect("candidate"), FullOutput::NotRead)
//!     .expect("a reducible log");
//! assert_eq!(source.body(), log);
//! assert_eq!(source.status_line(), Some("Command exited with code 101"));
//!
//! // The same text reported as a success contradicts its own status line.
//! let view = ToolResultView { is_error: false, ..view };
//! let fallback = prepare_source(select_candidate(&view).expect("candidate"), FullOutput::NotRead)
//!     .unwrap_err();
//! assert_eq!(fallback.reason, ReasonCode::ExitStateMismatch);
//! ```

use camino::Utf8Path;
use serde::{Deserialize, Serialize};
use sol_core::FileSystem;

use crate::archive::{ArchiveError, ArchivedLog, archive_hashed};
use crate::candidate::Candidate;
use crate::digest::{line_count, sha256_hex, utf16_len};
use crate::failure::{check_success_log, identify_failures};
use crate::reason::{Fallback, ReasonCode};
use crate::receipt::ReceiptStatus;
use crate::secret::{SecretFinding, find_likely_secret};
use crate::{MAX_SOURCE_CHARS, MIN_SOURCE_BYTES};

/// What the host did about the candidate's full-output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FullOutput {
    /// There is no trusted full-output file; the inline log is the exact log.
    NotRead,
    /// The trusted file was read whole; its text is the exact log.
    Read(String),
    /// The trusted file could not be read within [`crate::MAX_FULL_OUTPUT_BYTES`], or is
    /// not UTF-8; the inline log is a truncated preview, so nothing is reduced.
    Unavailable(String),
}

/// Where the archived log came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SourceOrigin {
    /// The result's own text.
    Inline,
    /// The host's untruncated full-output file (Pi's `pi-bash-*.log`).
    FullOutputFile,
}

/// A candidate's exact log, ready to archive and send.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    candidate: Candidate,
    body: String,
    status_line: Option<String>,
    origin: SourceOrigin,
    sha256: String,
    command_sha256: String,
    bytes: u64,
    lines: u64,
    full_output_artifact: Option<ArchivedLog>,
}

impl Source {
    /// Archives the log under `store_root` as [`crate::archive::archive_log`] does, reusing
    /// the hash it already carries.
    pub fn archive(
        &self,
        fs: &dyn FileSystem,
        store_root: &Utf8Path,
    ) -> Result<ArchivedLog, ArchiveError> {
        archive_hashed(fs, store_root, self.body(), self.sha256().to_owned())
    }

    /// The host's whole output archived beside the log, when the log is the part the model
    /// saw (the cache-aware policy) and the whole output was read.
    pub fn full_output_artifact(&self) -> Option<&ArchivedLog> {
        self.full_output_artifact.as_ref()
    }

    /// This log with the archive of the host's whole output beside it.
    pub(crate) fn with_full_output_artifact(self, archived: ArchivedLog) -> Source {
        Source {
            full_output_artifact: Some(archived),
            ..self
        }
    }

    /// The candidate this log belongs to.
    pub fn candidate(&self) -> &Candidate {
        &self.candidate
    }

    /// The exact log: what is archived, sent to the model and quoted.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// Pi's runtime status line split off a failed result's text, re-appended after the
    /// receipt ([`Candidate::split_inline_log`]).
    pub fn status_line(&self) -> Option<&str> {
        self.status_line.as_deref()
    }

    /// Where the log came from.
    pub fn origin(&self) -> SourceOrigin {
        self.origin
    }

    /// SHA-256 of the log, lower-case hex; also the archive object's name.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// SHA-256 of the command, lower-case hex (the command itself is not sent).
    pub fn command_sha256(&self) -> &str {
        &self.command_sha256
    }

    /// Size of the log in UTF-8 bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Lines of the log: one per LF, plus a last line without LF.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The result's `isError` flag.
    pub fn is_error(&self) -> bool {
        self.candidate.is_error
    }

    /// The status every receipt for this log must carry.
    pub fn expected_status(&self) -> ReceiptStatus {
        ReceiptStatus::for_error_flag(self.candidate.is_error)
    }

    /// The call's id.
    pub fn tool_call_id(&self) -> &str {
        &self.candidate.tool_call_id
    }
}

/// Settles the exact log of `candidate` and checks it, in this order: the full-output file
/// was readable, at least [`MIN_SOURCE_BYTES`] bytes (not journaled), at most
/// [`MAX_SOURCE_CHARS`] UTF-16 units, an exit signal that agrees with `isError`, and no
/// likely secret.
///
/// A result that reported success must not name failing tests in its log (a pipe or
/// `|| true` hid the runner's exit code): such a log is kept whole ([`check_success_log`]).
///
/// A failed Pi result's trailing runtime status line is always taken from the inline text
/// (Pi's full-output file does not contain it).
pub fn prepare_source(candidate: Candidate, full_output: FullOutput) -> Result<Source, Fallback> {
    let (inline_log, status_line) = candidate.split_inline_log();
    let status_line = status_line.map(str::to_owned);
    let (body, origin) = match full_output {
        FullOutput::NotRead => (inline_log.to_owned(), SourceOrigin::Inline),
        FullOutput::Read(text) => (text, SourceOrigin::FullOutputFile),
        FullOutput::Unavailable(error) => {
            return Err(
                Fallback::new(ReasonCode::SourceUnavailableOrOverMaxChars).with(|facts| {
                    facts.max_chars = Some(MAX_SOURCE_CHARS as u64);
                    facts.detail = Some(error);
                }),
            );
        }
    };
    let bytes = body.len() as u64;
    if body.len() < MIN_SOURCE_BYTES {
        return Err(
            Fallback::new(ReasonCode::SourceUnderMinBytes).with(|facts| {
                facts.source_bytes = Some(bytes);
                facts.min_bytes = Some(MIN_SOURCE_BYTES as u64);
            }),
        );
    }
    // Every UTF-16 unit takes at least one UTF-8 byte, so only longer logs need counting.
    if body.len() > MAX_SOURCE_CHARS {
        let chars = utf16_len(&body);
        if chars > MAX_SOURCE_CHARS {
            return Err(Fallback::new(ReasonCode::SourceOverMaxChars).with(|facts| {
                facts.source_chars = Some(chars as u64);
                facts.max_chars = Some(MAX_SOURCE_CHARS as u64);
            }));
        }
    }
    let sha256 = sha256_hex(body.as_bytes());
    if candidate.exit_signal.contradicts(candidate.is_error) {
        return Err(Fallback::new(ReasonCode::ExitStateMismatch).with(|facts| {
            facts.source_sha256 = Some(sha256);
            facts.is_error = Some(candidate.is_error);
            facts.exit_signal = Some(candidate.exit_signal);
            facts.exit_code = candidate.exit_code;
        }));
    }
    if let Some(finding) = find_likely_secret(&body) {
        return Err(secret_fallback(sha256, finding, None));
    }
    if !candidate.is_error {
        check_success_body(&body, &sha256, candidate.exit_code, None)?;
    }
    Ok(Source {
        command_sha256: sha256_hex(candidate.command.as_bytes()),
        lines: line_count(&body),
        candidate,
        body,
        status_line,
        origin,
        sha256,
        bytes,
        full_output_artifact: None,
    })
}

/// The `likely-secret` fallback for the log hashed `sha256`; `detail` says where the secret
/// was when it was not in the log itself.
pub(crate) fn secret_fallback(
    sha256: String,
    finding: SecretFinding,
    detail: Option<&str>,
) -> Fallback {
    Fallback::new(ReasonCode::LikelySecret).with(|facts| {
        facts.source_sha256 = Some(sha256);
        facts.secret_kind = Some(finding.kind);
        facts.secret_line = Some(finding.line);
        facts.detail = detail.map(str::to_owned);
    })
}

/// The `success-with-failing-tests` fallback when `text`, the log of a command that
/// reported success (or the host's whole output of it, `whole`), names failing tests.
pub(crate) fn check_success_body(
    text: &str,
    sha256: &str,
    exit_code: Option<i32>,
    whole: Option<&str>,
) -> Result<(), Fallback> {
    check_success_log(&identify_failures(text)).map_err(|failing| {
        Fallback::new(ReasonCode::SuccessWithFailingTests).with(|facts| {
            facts.source_sha256 = Some(sha256.to_owned());
            facts.is_error = Some(false);
            facts.exit_code = exit_code;
            facts.detail = Some(match whole {
                None => failing.detail(),
                Some(place) => format!("{place}: {}", failing.detail()),
            });
        })
    })
}
