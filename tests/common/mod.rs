//! Helpers shared by the end-to-end tests.

use std::process::{Command, Output};

/// Runs the built `mcfed` binary from the project root.
pub(crate) fn mcfed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcfed"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcfed runs")
}
