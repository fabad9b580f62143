#![no_main]
//! Fuzz target `recall`: the body is `sol_fuzz::recall`; seeds in `fixtures/fuzz/recall/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::recall(data));
