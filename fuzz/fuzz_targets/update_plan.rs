#![no_main]
//! Fuzz target `update_plan`: the body is `sol_fuzz::update_plan`; seeds in `fixtures/fuzz/update_plan/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::update_plan(data));
