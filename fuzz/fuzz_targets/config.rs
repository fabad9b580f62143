#![no_main]
//! Fuzz target `config`: the body is `sol_fuzz::config`; seeds in `fixtures/fuzz/config/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::config(data));
