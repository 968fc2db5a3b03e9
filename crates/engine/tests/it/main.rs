//! mcfed-engine's integration tests, one test binary: both engines on the
//! bundled scenarios, conservation and liveness properties.

mod common;
mod conservation;
mod engines_agree;
mod liveness;
mod trace_liveness;
