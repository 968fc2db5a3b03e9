//! mcfed-journal's integration tests, one test binary.

mod damage;
mod journal;
