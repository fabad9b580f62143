//! Throw-away directories and small helpers shared by the modules.

pub(crate) use sol_testkit::Sandbox;

#[cfg(unix)]
pub(crate) use sol_testkit::mode;
pub(crate) use sol_testkit::{literal_pattern, without_blocking};
