//! Online Context Compact exports (wired in a later change).
