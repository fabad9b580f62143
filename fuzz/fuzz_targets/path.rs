#![no_main]
//! Fuzz target `path`: the body is `sol_fuzz::path`; seeds in `fixtures/fuzz/path/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::path(data));
