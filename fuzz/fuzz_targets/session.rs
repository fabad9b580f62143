#![no_main]
//! Fuzz target `session`: the body is `sol_fuzz::session`; seeds in `fixtures/fuzz/session/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::session(data));
