//! Helpers shared by the end-to-end tests: the one way to run `mcfed` to
//! its end (one time limit; on a failure, its status and both streams
//! shown), polling with a deadline, the test federations' scenarios
//! ([`federation`]) and the processes they run ([`live`], [`journaled`]).

pub mod browser;
pub(crate) mod federation;
pub(crate) mod journaled;
pub mod live;

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The built `mcfed` binary.
pub(crate) const MCFED: &str = env!("CARGO_BIN_EXE_mcfed");

/// How long one `mcfed` invocation may take before the test fails: a hang
/// must fail the test, not stall CI. Not a measure of speed: generous, so
/// a busy machine never reaches it.
pub(crate) const LIMIT: Duration = Duration::from_secs(120);

/// The project's root, where `mcfed` runs unless told otherwise (the
/// scenarios' relative paths start there).
pub(crate) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `mcfed ARGS` from the project root with no standard input, failing
/// the test if it runs past [`LIMIT`].
pub(crate) fn mcfed(args: &[&str]) -> Output {
    Mcfed::new(args).run()
}

/// Runs `mcfed COMMAND ... --cluster CLUSTER --address ADDRESS --certs
/// CERTS` against a running cluster process (a command's own arguments
/// first, as a user types them).
pub(crate) fn mcfed_at(cluster: &str, address: &str, certs: &Path, command: &[&str]) -> Output {
    let mut args = command.to_vec();
    args.extend_from_slice(&[
        "--cluster",
        cluster,
        "--address",
        address,
        "--certs",
        certs.to_str().expect("utf-8"),
    ]);
    mcfed(&args)
}

/// One `mcfed` invocation, for what [`mcfed`] does not give: another
/// directory, environment variables, a standard input.
pub(crate) struct Mcfed {
    args: Vec<String>,
    dir: PathBuf,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    limit: Duration,
}

impl Mcfed {
    /// `mcfed ARGS`, from the project root.
    pub(crate) fn new(args: &[&str]) -> Mcfed {
        Mcfed {
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
            dir: root().to_owned(),
            env: Vec::new(),
            stdin: None,
            limit: LIMIT,
        }
    }

    /// Run from `dir`.
    pub(crate) fn in_dir(mut self, dir: &Path) -> Mcfed {
        dir.clone_into(&mut self.dir);
        self
    }

    /// With `key` set to `value` in its environment.
    pub(crate) fn env(mut self, key: &str, value: &str) -> Mcfed {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// With `input` on its standard input (which it must read).
    pub(crate) fn stdin(mut self, input: Vec<u8>) -> Mcfed {
        self.stdin = Some(input);
        self
    }

    /// With `limit` instead of [`LIMIT`]: only for a run whose length the
    /// test sets (a launched run at a low speed, a load test).
    pub(crate) fn within(mut self, limit: Duration) -> Mcfed {
        self.limit = limit;
        self
    }

    /// Runs it to its end, killing it (and failing the test, showing what
    /// it wrote) if it runs past its limit ([`LIMIT`] unless told).
    pub(crate) fn run(self) -> Output {
        let mut child = Command::new(MCFED)
            .args(&self.args)
            .current_dir(&self.dir)
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcfed starts");
        let writer = self.stdin.map(|input| {
            let mut pipe = child.stdin.take().expect("piped stdin");
            std::thread::spawn(move || pipe.write_all(&input))
        });
        // Drained on threads so a chatty child cannot block on a pipe.
        let stdout = Drained::start(child.stdout.take().expect("piped stdout"));
        let stderr = Drained::start(child.stderr.take().expect("piped stderr"));
        let Some(status) = wait_within(&mut child, self.limit) else {
            // Not joined: a process it started may hold the pipes open.
            panic!(
                "`mcfed {}` ran longer than {:?}; so far:\n{}",
                self.args.join(" "),
                self.limit,
                shown(&Output {
                    status: child.wait().expect("killed"),
                    stdout: stdout.so_far(),
                    stderr: stderr.so_far(),
                })
            );
        };
        if let Some(writer) = writer {
            writer
                .join()
                .expect("stdin writer")
                .expect("mcfed reads its standard input");
        }
        Output {
            status,
            stdout: stdout.join(),
            stderr: stderr.join(),
        }
    }
}

/// A pipe read to its end on a thread.
struct Drained {
    read: Arc<Mutex<Vec<u8>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Drained {
    fn start(mut pipe: impl Read + Send + 'static) -> Drained {
        let read = Arc::new(Mutex::new(Vec::new()));
        let into = read.clone();
        let thread = std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(count @ 1..) = pipe.read(&mut buffer) {
                into.lock()
                    .expect("buffer")
                    .extend_from_slice(&buffer[..count]);
            }
        });
        Drained { read, thread }
    }

    fn so_far(&self) -> Vec<u8> {
        self.read
            .lock()
            .map(|read| read.clone())
            .unwrap_or_default()
    }

    fn join(self) -> Vec<u8> {
        self.thread.join().expect("pipe reader");
        self.read
            .lock()
            .map(|read| read.clone())
            .unwrap_or_default()
    }
}

/// `child`'s exit status, or `None` (it is killed) past `limit`.
fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("mcfed waits") {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `output`'s exit status and both streams, for a failed assertion.
pub(crate) fn shown(output: &Output) -> String {
    format!(
        "{}\n--- stdout:\n{}\n--- stderr:\n{}",
        output.status,
        stdout(output),
        stderr(output)
    )
}

/// The standard output of `output`, which must come with success (else
/// the test fails showing its status and both streams).
pub(crate) fn succeeded(output: &Output) -> String {
    assert!(output.status.success(), "{}", shown(output));
    stdout(output)
}

/// The standard error of `output`, which must come with exit status
/// `code` (else the test fails showing its status and both streams).
pub(crate) fn refused(output: &Output, code: i32) -> String {
    assert_eq!(output.status.code(), Some(code), "{}", shown(output));
    stderr(output)
}

/// `output`'s standard output, as text.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `output`'s standard error, as text.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Polls `check` until it holds, failing the test past `limit` (a
/// deadline against a hang, not a measure of speed).
pub(crate) fn eventually(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
