//! mcfed-lsf's integration tests, one test binary: the LSF configuration
//! library through its public API (the catalogue, import of the fixture
//! trees under the workspace's tests/lsf, export and round trips).

mod catalog;
mod fixtures;
mod roundtrip;

use std::path::{Path, PathBuf};

/// `path` in the LSF trees under the workspace's `tests/lsf` (the fixtures
/// the binary's tests and the documented commands use too).
fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsf")
        .join(path)
}
