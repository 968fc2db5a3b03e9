//! Helpers shared by the end-to-end tests.

pub mod browser;
pub(crate) mod journaled;
pub mod live;

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one `mcfed` invocation may take before the test fails: a hang
/// must fail the test, not stall CI.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs the built `mcfed` binary from the project root, killing it (and
/// failing the test) if it runs longer than two minutes.
#[allow(dead_code)]
pub(crate) fn mcfed(args: &[&str]) -> Output {
    mcfed_within(args, LIMIT)
}

/// Runs the built `mcfed` binary from the project root with no standard
/// input, killing it (and failing the test) if it runs longer than `limit`.
#[allow(dead_code)]
pub(crate) fn mcfed_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcfed"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcfed starts");
    // Drain the pipes on threads so a chatty child cannot block on them.
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = stdout.read_to_end(&mut buffer);
        buffer
    });
    let err = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = stderr.read_to_end(&mut buffer);
        buffer
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("mcfed waits") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcfed {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// The standard output of `output`, which must come with success (else
/// the test fails showing both streams).
#[allow(dead_code)]
pub(crate) fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
