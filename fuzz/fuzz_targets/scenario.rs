//! Fuzz target `scenario`: see `mcfed_fuzzing::scenario`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::scenario(data));
