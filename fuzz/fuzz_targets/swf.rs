//! Fuzz target `swf`: see `mcfed_fuzzing::swf`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcfed_fuzzing::swf(data));
