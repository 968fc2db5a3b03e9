//! Fuzz target `lsf`: see `mcfed_fuzzing::lsf`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::lsf(data));
