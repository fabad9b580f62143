//! # sol-pi-cli: the `sol-pi` command
//!
//! `sol-pi replay [OPTIONS] <FILES>...` reads recorded Pi session files (JSONL, as Pi writes
//! them under `~/.pi/agent/sessions/`), replays each with [`sol_replay`] and prints the
//! report: per session SoL-Pi's `/sol-pi` table as replayed and the policies side by side,
//! then the totals over every file, as text, Markdown (`--md`) or JSON (`--json`).
//!
//! Everything the command does is in [`run`], which takes the arguments and the two output
//! streams, so the binary (`src/main.rs`) and the addon's `replayMain` export (`npm run
//! replay`) run the same code and give the same output and exit codes:
//!
//! - `0`: every file was read and replayed (a line torn by a writer that stopped, last or in
//!   the middle, is a warning, not a failure: Pi itself opens such a file);
//! - `1`: a file could not be opened or read (it is not a regular file, or it is over
//!   [`READ_LIMITS`]), or is not a session the reader accepts (the other files are still
//!   replayed and printed), or no file could be read at all;
//! - `2`: a usage error (an unknown option, no file, a price that is not a price).
//!
//! ```
//! let mut stdout = Vec::new();
//! let mut stderr = Vec::new();
//! let code = sol_pi_cli::run(["sol-pi", "replay", "--md", "no-such-file.jsonl"], &mut stdout, &mut stderr);
//! assert_eq!(code, 1);
//! assert!(stdout.is_empty());
//! assert!(String::from_utf8_lossy(&stderr).starts_with("sol-pi: no-such-file.jsonl: cannot be opened: "));
//! ```
//!
//! The input files are opened read-only and never changed, non-blocking (a FIFO is refused at
//! once, never waited on) and only when they are regular files after following links. A file over [`PROGRESS_MIN_BYTES`]
//! shows a progress bar on the process's stderr while it is read, and only when that stderr
//! is a terminal.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sol_core::savings::PriceTable;
use sol_replay::reader::{ReadLimits, Size, formats, read_session_limited};
use sol_replay::render::{Format, render};
use sol_replay::replay::{ReplayOptions, SessionReplay, replay_session};

/// Every file was read and replayed.
pub const EXIT_OK: i32 = 0;
/// A file could not be read, or was not a session; or the report could not be written.
pub const EXIT_FAILED: i32 = 1;
/// The command line was wrong (clap's usage errors, a price out of range).
pub const EXIT_USAGE: i32 = 2;

/// Files from this size on get a progress bar (when stderr is a terminal).
pub const PROGRESS_MIN_BYTES: u64 = 8 * 1024 * 1024;

/// The bounds every session file is read within: a line of at most 64 MiB and a file of
/// at most 1 GiB ([`sol_replay::reader::MAX_LINE_BYTES`],
/// [`sol_replay::reader::MAX_FILE_BYTES`]). A file or a line over them is an error naming
/// the file and the limit (exit code 1); the other files are still replayed.
pub const READ_LIMITS: ReadLimits = ReadLimits {
    max_line_bytes: sol_replay::reader::MAX_LINE_BYTES,
    max_file_bytes: sol_replay::reader::MAX_FILE_BYTES,
};

/// How often, in bytes read, the progress bar is moved on.
const PROGRESS_STEP: u64 = 256 * 1024;

const ABOUT: &str = "SoL-Pi in Rust: token-efficiency mechanisms for the Pi coding agent";

const LONG_ABOUT: &str = "SoL-Pi in Rust: token-efficiency mechanisms for the Pi coding agent.

This command works on what Pi has already recorded: `sol-pi replay` reads Pi's session
files and shows what SoL-Pi's mechanisms would have saved on them.";

const REPLAY_ABOUT: &str =
    "Replay recorded Pi sessions and compare what each policy would have sent and cost";

const REPLAY_LONG_ABOUT: &str =
    "Replay recorded Pi sessions and compare what each policy would have sent and cost.

Each file is a Pi session (JSONL) as Pi writes it under ~/.pi/agent/sessions/. For each
one the report shows SoL-Pi's /sol-pi table as replayed and these policies side by side,
then the totals over every file:

  Plain Pi                      what was sent, with Pi's own compaction only
  SoL-Pi ObservationPack        large tool outputs archived, a short placeholder sent instead
  SoL-Pi ObservationPack + OCC  and Online Context Compact at each plan step (update_plan)
  Action Fusion                 an edit or write fused with the bash call of the next turn
  Reducer candidates            logs the reducer would send its model (counted, not priced)
  Masking (last N outputs)      the baseline: every tool output but the newest N replaced

Requests are priced as a prompt cache bills them, at the prices below. The files are only
read, never changed.";

const REPLAY_AFTER_HELP: &str =
    "Exit codes: 0 every file replayed; 1 a file could not be read or is not a Pi session
(the others are still printed); 2 a usage error.";

const REPLAY_AFTER_LONG_HELP: &str = "Examples:
  sol-pi replay ~/.pi/agent/sessions/*/*.jsonl
  sol-pi replay --md --all-branches session.jsonl > report.md
  sol-pi replay --json --price-cache-read 0.1 a.jsonl b.jsonl

Exit codes:
  0  every file was read and replayed (a line torn by a crash is only a warning)
  1  a file could not be opened or read (not a regular file, a line over 64 MiB, a file over
     1 GiB), or is not a Pi session the reader accepts; each gets one line on stderr and the
     other files are still replayed and printed
  2  a usage error (an unknown option, no file, a price out of range)";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "sol-pi",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    propagate_version = true,
    subcommand_required = true,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(
        about = REPLAY_ABOUT,
        long_about = REPLAY_LONG_ABOUT,
        after_help = REPLAY_AFTER_HELP,
        after_long_help = REPLAY_AFTER_LONG_HELP
    )]
    Replay(ReplayArgs),
}

const PRICES: &str = "Prices ($ per million tokens; without any, each model at its own from Pi's model list, and the defaults for a model the list lacks; any given prices every model)";

#[derive(Debug, Args)]
struct ReplayArgs {
    /// Pi session files (JSONL), e.g. ~/.pi/agent/sessions/<project>/<session>.jsonl
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,

    /// Print one JSON document (sessions, totals, options, method)
    #[arg(long, conflicts_with = "md")]
    json: bool,

    /// Print GitHub Markdown tables instead of aligned text
    #[arg(long)]
    md: bool,

    /// Replay every branch of the session tree, not only the one Pi continues
    #[arg(long)]
    all_branches: bool,

    /// Decide OCC's compactions again at this cacheWriteReadRatio
    ///
    /// Online Context Compact's own session machine runs on the session's plan steps, turns
    /// and sizes, with a 1,000-token summary assumed for each compaction it makes, instead of
    /// the compactions the session recorded. The SoL-Pi table stays the recorded one. The
    /// cache-aware ObservationPack weighs its cache rewrites at this ratio too [default: 12.5].
    #[arg(long, value_name = "RATIO", allow_negative_numbers = true, value_parser = ratio)]
    cache_write_read_ratio: Option<f64>,

    /// The session ran with "cacheAware": true: SoL-Pi's rows and table place ObservationPack's
    /// results by the cache-aware economics, as the extension did
    #[arg(long)]
    cache_aware: bool,

    /// The session ran with "keepRecentOutputs" (give its number with --keep-recent-outputs):
    /// SoL-Pi's rows and table place ObservationPack's results by the recent-outputs
    /// placement, as the extension did
    #[arg(long)]
    recent_outputs: bool,

    /// Pi's keepRecentTokens for the compactions decided again [default: Pi's]
    #[arg(long, value_name = "TOKENS", requires = "cache_write_read_ratio")]
    keep_recent_tokens: Option<u64>,

    /// The model's context window for the compactions decided again
    #[arg(long, value_name = "TOKENS", default_value_t = sol_replay::replay::DEFAULT_CONTEXT_WINDOW)]
    context_window: u64,

    /// How long the provider keeps a prompt cache: a user prompt sent longer than this after
    /// the previous response finds the cache expired (3600 where requests asked for long
    /// retention)
    #[arg(long, value_name = "SECONDS", default_value_t = sol_replay::replay::DEFAULT_CACHE_LIFETIME_SECONDS)]
    cache_lifetime: u64,

    /// How many of the newest tool outputs the recent-outputs placement keeps in full
    /// (keepRecentOutputs)
    #[arg(long, value_name = "N", default_value_t = sol_replay::replay::DEFAULT_KEEP_RECENT_OUTPUTS)]
    keep_recent_outputs: u32,

    /// Price every request from Pi's estimate, even where the session holds the usage the
    /// provider reported for it
    #[arg(long)]
    estimated: bool,

    /// How many of the newest tool outputs the masking baseline keeps
    #[arg(long, value_name = "N", allow_negative_numbers = true, default_value_t = ReplayOptions::default().mask_keep)]
    mask_keep: usize,

    /// Uncached input tokens (a mechanism's own model calls) [default: 3]
    #[arg(long, value_name = "DOLLARS", allow_negative_numbers = true, help_heading = PRICES)]
    price_input: Option<f64>,

    /// Input tokens read from the prompt cache [default: 0.3]
    #[arg(long, value_name = "DOLLARS", allow_negative_numbers = true, help_heading = PRICES)]
    price_cache_read: Option<f64>,

    /// Input tokens written to the prompt cache [default: 3.75]
    #[arg(long, value_name = "DOLLARS", allow_negative_numbers = true, help_heading = PRICES)]
    price_cache_write: Option<f64>,

    /// Output tokens [default: 15]
    #[arg(long, value_name = "DOLLARS", allow_negative_numbers = true, help_heading = PRICES)]
    price_output: Option<f64>,
}

/// A `cacheWriteReadRatio`: a finite number of at least 0, as `sol-pi.json` takes it.
fn ratio(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(ratio) if ratio.is_finite() && ratio >= 0.0 => Ok(ratio),
        _ => Err("a ratio is a finite number of at least 0".to_owned()),
    }
}

impl ReplayArgs {
    fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.md {
            Format::Markdown
        } else {
            Format::Text
        }
    }

    /// The prices given, checked as `sol-pi.json`'s are; a usage error names the option and
    /// the value, as clap's own errors do.
    fn prices(&self) -> Result<PriceTable, String> {
        let default = PriceTable::default();
        let table = PriceTable {
            input: self.price_input.unwrap_or(default.input),
            cache_read: self.price_cache_read.unwrap_or(default.cache_read),
            cache_write: self.price_cache_write.unwrap_or(default.cache_write),
            output: self.price_output.unwrap_or(default.output),
        };
        table.validated().map_err(|error| {
            let option = match error.field {
                "cacheRead" => "--price-cache-read",
                "cacheWrite" => "--price-cache-write",
                "output" => "--price-output",
                _ => "--price-input",
            };
            format!(
                "invalid value '{}' for '{option} <DOLLARS>': {error}",
                error.value
            )
        })
    }
}

/// Runs `sol-pi` with `args` (the program name first, as `std::env::args_os` gives them),
/// writing the report to `stdout` and errors and warnings to `stderr`; returns the exit code
/// ([`EXIT_OK`], [`EXIT_FAILED`] or [`EXIT_USAGE`]).
///
/// A report that cannot be written because `stdout` was closed (`sol-pi replay … | head`)
/// ends the run quietly; any other write error on `stdout` is reported on `stderr` and
/// fails the run. Write errors on `stderr` are ignored: there is nowhere left to say them.
pub fn run<I, T>(args: I, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version go to stdout with 0; usage errors to stderr with 2.
            let text = error.render().to_string();
            if error.use_stderr() {
                let _ = stderr.write_all(text.as_bytes());
                return EXIT_USAGE;
            }
            return match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => EXIT_OK,
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
                Err(_) => EXIT_FAILED,
            };
        }
    };
    match cli.command {
        Command::Replay(args) => replay(&args, stdout, stderr),
    }
}

fn replay(args: &ReplayArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let prices = match args.prices() {
        Ok(prices) => prices,
        Err(message) => {
            let _ = writeln!(
                stderr,
                "error: {message}\n\nFor more information, try '--help'."
            );
            return EXIT_USAGE;
        }
    };
    let options = ReplayOptions {
        prices,
        mask_keep: args.mask_keep,
        all_branches: args.all_branches,
        occ_ratio: args.cache_write_read_ratio,
        context_window: args.context_window,
        keep_recent_tokens: args.keep_recent_tokens,
        // The configured ratio is OCC's and the cache-aware placement's alike.
        placement_ratio: args
            .cache_write_read_ratio
            .unwrap_or(sol_replay::sol_core::config::DEFAULT_CACHE_WRITE_READ_RATIO),
        keep_recent_outputs: args.keep_recent_outputs,
        cache_aware: args.cache_aware,
        recent_outputs: args.recent_outputs,
        from_reports: !args.estimated,
        cache_lifetime_seconds: args.cache_lifetime,
        // Prices given on the command line price every model.
        per_model_prices: args.price_input.is_none()
            && args.price_cache_read.is_none()
            && args.price_cache_write.is_none()
            && args.price_output.is_none(),
        whole_requests: false,
    };
    let mut replays: Vec<SessionReplay> = Vec::new();
    let mut failed = false;
    for path in &args.files {
        match replay_file(path, &options, stderr) {
            Some(replay) => replays.push(replay),
            None => failed = true,
        }
    }
    let code = if failed { EXIT_FAILED } else { EXIT_OK };
    if replays.is_empty() {
        return code;
    }
    let report = render(&replays, &options, args.format());
    match stdout
        .write_all(report.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => code,
        // The reader went away (`| head`): nothing more to say, and no one to say it to.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => code,
        Err(error) => {
            let _ = writeln!(stderr, "sol-pi: the report could not be written: {error}");
            EXIT_FAILED
        }
    }
}

/// Reads and replays one file; `None` after its error line on `stderr`.
fn replay_file(
    path: &Path,
    options: &ReplayOptions,
    stderr: &mut dyn Write,
) -> Option<SessionReplay> {
    let name = path.to_string_lossy();
    let (file, size) = match open_session(path) {
        Ok(opened) => opened,
        Err(message) => {
            let _ = writeln!(stderr, "sol-pi: {name}: {message}");
            return None;
        }
    };
    let mut input = BufReader::new(file);
    // Another harness's file (a mini-swe-agent trajectory, one JSON object) is read whole
    // (the file's size is bounded above), then as the Pi session it amounts to.
    let foreign = input.fill_buf().ok().and_then(formats::detect);
    let read = if let Some(format) = foreign {
        let mut text = Vec::new();
        match (&mut input)
            .take(READ_LIMITS.max_file_bytes)
            .read_to_end(&mut text)
        {
            Ok(_) => (format.read)(&name, &text),
            Err(error) => {
                let _ = writeln!(stderr, "sol-pi: {name}: reading failed: {error}");
                return None;
            }
        }
    } else {
        let bar = progress_bar(&name, size);
        let mut shown = 0u64;
        let read = read_session_limited(&name, input, READ_LIMITS, |bytes| {
            if let Some(bar) = &bar
                && bytes - shown >= PROGRESS_STEP
            {
                shown = bytes;
                bar.set_position(bytes);
            }
        });
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        read
    };
    match read {
        Ok(session) => {
            for warning in session.warnings() {
                let _ = writeln!(stderr, "sol-pi: warning: {warning}");
            }
            Some(replay_session(&session, options))
        }
        Err(error) => {
            let _ = writeln!(stderr, "sol-pi: {error}");
            None
        }
    }
}

/// Opens a session file the way the config loader and the hash guard open what they read:
/// for reading only (the replay never changes its input), following links, non-blocking so
/// that a FIFO never waits for a writer (and without taking a terminal as the controlling
/// one), then checked on the open handle to be a regular file of at most
/// [`READ_LIMITS`]`.max_file_bytes`. Returns the file and its size, or the message why not.
fn open_session(path: &Path) -> Result<(File, u64), String> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options
        .open(path)
        .map_err(|error| format!("cannot be opened: {error}"))?;
    let metadata = file
        .metadata()
        .map_err(|error| format!("cannot be read: {error}"))?;
    if !metadata.is_file() {
        return Err(format!(
            "cannot be read: {}, not a regular file (a Pi session is a file)",
            file_kind(&metadata.file_type())
        ));
    }
    let limit = READ_LIMITS.max_file_bytes;
    if metadata.len() > limit {
        return Err(format!(
            "the file is {} bytes, more than the {} ({limit} bytes) this command reads of one \
             session file; it is not read",
            metadata.len(),
            Size(limit)
        ));
    }
    Ok((file, metadata.len()))
}

/// What a file that is not a regular file is, for the message.
fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// The bar for reading a file of `size` bytes: none under [`PROGRESS_MIN_BYTES`], else one
/// drawn on the process's stderr, which indicatif leaves undrawn when stderr is not a
/// terminal (a pipe, a file), so a redirected stderr carries only the error lines.
fn progress_bar(name: &str, size: u64) -> Option<ProgressBar> {
    if size < PROGRESS_MIN_BYTES {
        return None;
    }
    let target = ProgressDrawTarget::stderr();
    if target.is_hidden() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(size), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{wide_msg} [{bar:24}] {binary_bytes}/{binary_total_bytes} ({eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("reading {name}"));
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_small_file_gets_no_progress_bar() {
        assert!(progress_bar("small.jsonl", PROGRESS_MIN_BYTES - 1).is_none());
    }

    #[test]
    fn each_price_error_names_its_option() {
        let parse = |extra: &[&str]| {
            let mut args = vec!["sol-pi", "replay", "x.jsonl"];
            args.extend_from_slice(extra);
            match Cli::try_parse_from(args).expect("parses").command {
                Command::Replay(args) => args.prices(),
            }
        };
        assert_eq!(parse(&[]), Ok(PriceTable::default()));
        for option in [
            "--price-input",
            "--price-cache-read",
            "--price-cache-write",
            "--price-output",
        ] {
            let message = parse(&[option, "-1"]).expect_err("a negative price");
            assert!(
                message.starts_with(&format!("invalid value '-1' for '{option} <DOLLARS>': ")),
                "{message}"
            );
            let message = parse(&[option, "NaN"]).expect_err("not a number");
            assert!(message.contains(option), "{message}");
        }
    }

    /// A stdout that is closed, or broken in another way.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(self.0))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from(self.0))
        }
    }

    fn corpus_file() -> String {
        format!(
            "{}/../fixtures/sessions/corpus/resume-1.6.0.jsonl",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    #[test]
    fn a_closed_stdout_ends_the_run_quietly() {
        let mut stderr = Vec::new();
        let file = corpus_file();
        let code = run(
            ["sol-pi", "replay", file.as_str()],
            &mut Failing(io::ErrorKind::BrokenPipe),
            &mut stderr,
        );
        assert_eq!((code, stderr.as_slice()), (EXIT_OK, &b""[..]));
        let help = run(
            ["sol-pi", "--help"],
            &mut Failing(io::ErrorKind::BrokenPipe),
            &mut stderr,
        );
        assert_eq!((help, stderr.as_slice()), (EXIT_OK, &b""[..]));
    }

    #[test]
    fn another_write_error_fails_the_run() {
        let mut stderr = Vec::new();
        let file = corpus_file();
        let code = run(
            ["sol-pi", "replay", file.as_str()],
            &mut Failing(io::ErrorKind::StorageFull),
            &mut stderr,
        );
        assert_eq!(code, EXIT_FAILED);
        let text = String::from_utf8(stderr).expect("UTF-8");
        assert!(
            text.starts_with("sol-pi: the report could not be written: "),
            "{text}"
        );
    }
}
