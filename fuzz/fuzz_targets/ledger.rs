#![no_main]
//! Fuzz target `ledger`: the body is `sol_fuzz::ledger`; seeds in `fixtures/fuzz/ledger/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::ledger(data));
