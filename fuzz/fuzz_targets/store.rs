#![no_main]
//! Fuzz target `store`: the body is `sol_fuzz::store`; seeds in `fixtures/fuzz/store/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::store(data));
