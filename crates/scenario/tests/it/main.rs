//! mcfed-scenario's integration tests, one test binary: errors, bounds and
//! nonsense input.

mod bounds;
mod common;
mod errors;
mod nonsense;
