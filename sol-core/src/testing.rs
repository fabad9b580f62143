//! In-memory doubles of the ports, for tests of this crate and of the mechanism crates.
//!
//! Enabled by the `testing` feature. Each double keeps its state behind a `Mutex`, so it can
//! be shared as `&dyn Port` (and across threads), and records what it was asked to do so a
//! test can assert on it afterwards.
//!
//! ```
//! use camino::Utf8Path;
//! use sol_core::testing::MemoryFileSystem;
//! use sol_core::{load_config, ConfigSearch, ConfigSource, Mechanism};
//!
//! let fs = MemoryFileSystem::new()
//!     .with_file("/home/u/.pi/agent/sol-pi.json", br#"{"version": 1, "actionFusion": true}"#)
//!     .with_file("/work/app/.pi/sol-pi.json", br#"{"version": 1}"#);
//! let search = ConfigSearch {
//!     cwd: Utf8Path::new("/work/app"),
//!     agent_dir: Utf8Path::new("/home/u/.pi/agent"),
//!     project_trusted: false,
//! };
//! let loaded = load_config(&fs, &search)?;
//! assert_eq!(loaded.source, ConfigSource::AgentDir("/home/u/.pi/agent/sol-pi.json".into()));
//! assert_eq!(loaded.config.enabled_mechanisms(), vec![Mechanism::ActionFusion]);
//! // The untrusted project's file was seen but never read.
//! assert!(fs.reads().iter().all(|path| !path.starts_with("/work/app")));
//! assert_eq!(
//!     loaded.startup_notice(&search),
//!     "SoL-Pi: Action Fusion enabled (config: /home/u/.pi/agent/sol-pi.json); \
//!      /work/app/.pi/sol-pi.json ignored because the project is not trusted"
//! );
//! # Ok::<(), sol_core::ConfigError>(())
//! ```

mod fs;
mod scripted;

pub use fs::{MemoryFileSystem, MemoryNode};
pub use scripted::{MemorySessionStore, RecordedEntry, ScriptedModelClient, ScriptedShell};
