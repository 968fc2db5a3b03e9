//! Fuzz target `message`: see `mcfed_fuzzing::message`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::message(data));
