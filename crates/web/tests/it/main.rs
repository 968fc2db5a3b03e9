//! mcfed-web's integration tests, one test binary.

mod server;
mod state;
