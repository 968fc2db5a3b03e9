//! mcfed-actors' integration tests, one test binary.

mod oracle_fetch;
