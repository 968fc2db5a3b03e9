//! mcfed-transport's integration tests, one test binary: QUIC endpoints on
//! loopback.

mod common;
mod faults;
mod keys;
mod learned;
mod log_flood;
mod security;
mod unsendable;
