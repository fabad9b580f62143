#![no_main]
//! Fuzz target `then_run`: the body is `sol_fuzz::then_run`; seeds in `fixtures/fuzz/then_run/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::then_run(data));
