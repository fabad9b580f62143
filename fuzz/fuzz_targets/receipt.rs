#![no_main]
//! Fuzz target `receipt`: the body is `sol_fuzz::receipt`; seeds in `fixtures/fuzz/receipt/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::receipt(data));
