//! Fuzz target `admin`: see `mcfed_fuzzing::admin`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::admin(data));
