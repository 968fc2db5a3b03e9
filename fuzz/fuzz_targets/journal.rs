//! Fuzz target `journal`: see `mcfed_fuzzing::journal`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::journal(data));
