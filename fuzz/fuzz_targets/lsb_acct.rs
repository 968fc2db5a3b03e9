//! Fuzz target `lsb_acct`: see `mcfed_fuzzing::lsb_acct`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::lsb_acct(data));
