#![no_main]
//! Fuzz target `secret_gate`: the body is `sol_fuzz::secret_gate`; seeds in `fixtures/fuzz/secret_gate/`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sol_fuzz::secret_gate(data));
