//! mcfed-sweep's integration tests, one test binary.

mod script_quoting;
