//! Fuzz target `frame`: see `mcfed_fuzzing::frame`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::frame(data));
