#![no_main]
//! Fuzz target `placeholder`: the body is `sol_fuzz::placeholder`; seeds in `fixtures/fuzz/placeholder/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::placeholder(data));
