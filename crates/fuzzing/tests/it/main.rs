//! mcfed-fuzzing's integration tests, one test binary.

mod corpus;
mod seeds;
