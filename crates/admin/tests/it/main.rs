//! mcfed-admin's integration tests, one test binary: the admin commands
//! through the crate's public API (requests applied to a member, their
//! answers and printers).

mod apply;
mod hostile_names;
