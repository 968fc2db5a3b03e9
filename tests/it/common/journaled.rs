//! A federation of cluster processes started by hand, each with a state
//! directory, that tests kill with SIGKILL and restart: for the recovery
//! and kill tests. Every process is killed when its guard drops.

#![allow(dead_code)]

use std::cell::RefCell;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::{MCFED, mcfed, root, succeeded};

/// A running `mcfed cluster` process, killed when dropped.
pub(crate) struct Process {
    pub(crate) cluster: String,
    child: Child,
    args: Vec<String>,
    listening: mpsc::Receiver<String>,
}

impl Process {
    fn start(cluster: &str, args: Vec<String>, log: &Path) -> Process {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let mut child = Command::new(MCFED)
            .args(&args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcfed cluster starts");
        let pipe = child.stderr.take().expect("piped stderr");
        let (tell, listening) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Write as _;
            let mut log = stderr;
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                // `mcfed cluster NAME: listening on ADDRESS, dialling ...`
                if let Some((_, address)) = mcfed_process::process::parse_listening_line(&line) {
                    let _ = tell.send(address.to_owned());
                }
                let _ = writeln!(log, "{line}");
            }
        });
        Process {
            cluster: cluster.to_owned(),
            child,
            args,
            listening,
        }
    }

    /// Where it listens, once it says so.
    fn address(&self) -> String {
        self.listening
            .recv_timeout(Duration::from_secs(60))
            .expect("the process says where it listens")
    }

    /// SIGKILL.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether it still runs.
    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A hand-started federation: scenario, certificates, state directories
/// and where each cluster listens (a restart keeps the port).
pub(crate) struct Live {
    pub(crate) dir: PathBuf,
    pub(crate) scenario: PathBuf,
    pub(crate) certs: PathBuf,
    addresses: RefCell<Vec<(String, String)>>,
    /// Arguments every process gets.
    pub(crate) extra: Vec<String>,
}

impl Live {
    /// Writes `scenario` into `dir` and makes certificates for `clusters`.
    pub(crate) fn new(dir: &Path, scenario: &str, clusters: &[&str]) -> Live {
        let path = dir.join("federation.toml");
        std::fs::write(&path, scenario).expect("write scenario");
        let certs = dir.join("certs");
        succeeded(&mcfed(&[
            "certs",
            "init",
            certs.to_str().expect("utf-8"),
            "--clusters",
            &clusters.join(","),
        ]));
        Live {
            dir: dir.to_owned(),
            scenario: path,
            certs,
            addresses: RefCell::new(Vec::new()),
            extra: Vec::new(),
        }
    }

    /// The state directory of `cluster`.
    pub(crate) fn state(&self, cluster: &str) -> PathBuf {
        self.dir.join("state").join(cluster)
    }

    /// Where `cluster` writes its standard error.
    pub(crate) fn log(&self, cluster: &str) -> PathBuf {
        self.dir.join(format!("{cluster}.log"))
    }

    /// Where `cluster` listens.
    pub(crate) fn address(&self, cluster: &str) -> String {
        self.addresses
            .borrow()
            .iter()
            .find(|(name, _)| name == cluster)
            .map(|(_, address)| address.clone())
            .unwrap_or_else(|| panic!("{cluster} was never started"))
    }

    fn args(&self, cluster: &str, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "cluster",
            "--scenario",
            self.scenario.to_str().expect("utf-8"),
            "--name",
            cluster,
            "--certs",
            self.certs.to_str().expect("utf-8"),
            "--report",
            "none",
            "--exit-on-stdin-eof",
            "--base-port",
            "0",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        args.extend(self.extra.iter().cloned());
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let known = self.addresses.borrow();
        match known.iter().find(|(name, _)| name == cluster) {
            Some((_, address)) => args.extend(["--listen".to_owned(), address.clone()]),
            None => args.extend(["--listen".to_owned(), "127.0.0.1:0".to_owned()]),
        }
        for (name, address) in known.iter().filter(|(name, _)| name != cluster) {
            args.extend(["--peer".to_owned(), format!("{name}={address}")]);
        }
        args
    }

    /// Starts `cluster` with its state directory (and `extra` arguments),
    /// on the port it had if it ran before.
    pub(crate) fn start(&self, cluster: &str, extra: &[&str]) -> Process {
        let state = self.state(cluster);
        let mut all = vec!["--state", state.to_str().expect("utf-8"), "--keep-journals"];
        all.extend_from_slice(extra);
        self.start_plain(cluster, &all)
    }

    /// Starts `cluster` with only `extra` arguments (no state directory).
    pub(crate) fn start_plain(&self, cluster: &str, extra: &[&str]) -> Process {
        let args = self.args(cluster, extra);
        let mut process = Process::start(cluster, args, &self.log(cluster));
        let address = process.address();
        // A restart listens where it did.
        if let Some(listen) = process.args.iter().position(|arg| arg == "127.0.0.1:0") {
            process.args[listen] = address.clone();
        }
        let mut known = self.addresses.borrow_mut();
        if !known.iter().any(|(name, _)| name == cluster) {
            known.push((cluster.to_owned(), address));
        }
        process
    }

    /// Starts `process` again with the arguments it had (same port).
    pub(crate) fn restart(&self, process: &mut Process) {
        process.kill();
        let cluster = process.cluster.clone();
        let fresh = Process::start(&cluster, process.args.clone(), &self.log(&cluster));
        let _ = fresh.address();
        *process = fresh;
    }

    /// Runs an LSF-style command against `cluster` with `-o json`.
    pub(crate) fn ask(&self, command: &str, cluster: &str, extra: &[&str]) -> Value {
        let output = self.try_ask(command, cluster, extra);
        output.unwrap_or_else(|error| panic!("mcfed {command} {cluster}: {error}"))
    }

    /// Like [`Live::ask`], but a failure (a process down) is an error.
    pub(crate) fn try_ask(
        &self,
        command: &str,
        cluster: &str,
        extra: &[&str],
    ) -> Result<Value, String> {
        let mut args = vec![command, "-o", "json"];
        args.extend_from_slice(extra);
        let output = super::mcfed_at(cluster, &self.address(cluster), &self.certs, &args);
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        serde_json::from_slice(&output.stdout).map_err(|error| error.to_string())
    }
}
