//! Live federations for the end-to-end tests: `mcfed cluster` processes
//! started by hand (killed when dropped), the LSF-style commands against
//! them.

#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::federation::three_clusters;
use super::{MCFED, mcfed, root, succeeded};

/// A running `mcfed cluster` process, killed when dropped.
pub struct Process {
    pub child: Child,
    pub args: Vec<String>,
    stdout: Option<PathBuf>,
    /// Where it says it listens (its standard error's
    /// `mcfed cluster NAME: listening on ADDRESS`).
    listening: mpsc::Receiver<String>,
}

impl Process {
    pub fn start(args: Vec<String>, stdout: Option<PathBuf>) -> Process {
        let out = match &stdout {
            Some(path) => Stdio::from(std::fs::File::create(path).expect("stdout file")),
            None => Stdio::null(),
        };
        let mut child = Command::new(MCFED)
            .args(&args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcfed cluster starts");
        // Read standard error to its end, so the process never blocks on it.
        let stderr = child.stderr.take().expect("piped stderr");
        let (tell, listening) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // `mcfed cluster NAME: listening on ADDRESS, dialling ...`
                if let Some((_, address)) = mcfed_process::process::parse_listening_line(&line) {
                    let _ = tell.send(address.to_owned());
                }
            }
        });
        Process {
            child,
            args,
            stdout,
            listening,
        }
    }

    /// Where the process listens, once it says so.
    pub fn address(&self) -> String {
        self.listening
            .recv_timeout(Duration::from_secs(30))
            .expect("the process says where it listens")
    }

    /// SIGKILL.
    pub fn kill(&mut self) -> ExitStatus {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait")
    }

    /// Starts the same command again (appending to nothing: a new file),
    /// on the port it had.
    pub fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stdout = self
            .stdout
            .as_ref()
            .map(|path| path.with_extension("restarted"));
        *self = Process::start(self.args.clone(), stdout);
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A hand-started federation: its scenario, certificates, and where each
/// started cluster listens.
pub struct Federation {
    pub scenario: PathBuf,
    pub certs: PathBuf,
    addresses: RefCell<Vec<(String, String)>>,
}

impl Federation {
    /// A federation of `scenario` with the certificates in `certs`, no
    /// process started yet.
    pub fn new(scenario: PathBuf, certs: PathBuf) -> Federation {
        Federation {
            scenario,
            certs,
            addresses: RefCell::new(Vec::new()),
        }
    }

    /// Where `cluster` listens.
    pub fn address(&self, cluster: &str) -> String {
        self.addresses
            .borrow()
            .iter()
            .find(|(name, _)| name == cluster)
            .map(|(_, address)| address.clone())
            .unwrap_or_else(|| panic!("{cluster} is not started"))
    }

    /// Starts `cluster` on a port the OS picks, told where the clusters
    /// started before it listen (it learns of later ones from their
    /// hellos), and records its port, which a restart keeps.
    pub fn start(&self, cluster: &str, stdout: Option<PathBuf>) -> Process {
        let mut args = cluster_args(&self.scenario, &self.certs, cluster);
        args.extend(["--listen", "127.0.0.1:0", "--base-port", "0"].map(str::to_owned));
        for (name, address) in self.addresses.borrow().iter() {
            args.extend(["--peer".to_owned(), format!("{name}={address}")]);
        }
        let mut process = Process::start(args, stdout);
        let address = process.address();
        if let Some(listen) = process.args.iter().position(|arg| arg == "127.0.0.1:0") {
            process.args[listen] = address.clone();
        }
        self.addresses
            .borrow_mut()
            .push((cluster.to_owned(), address));
        process
    }
}

/// The federation of [`three_clusters`], its processes listening on
/// ports the OS picks ([`Federation::start`]).
pub fn federation(dir: &Path) -> Federation {
    federation_of(dir, &three_clusters("restart").text())
}

/// A hand-started federation of scenario `text` (clusters Cluster1 to
/// Cluster3), with certificates.
pub fn federation_of(dir: &Path, text: &str) -> Federation {
    let path = dir.join("federation.toml");
    std::fs::write(&path, text).expect("write scenario");
    let certs = dir.join("certs");
    succeeded(&mcfed(&[
        "certs",
        "init",
        certs.to_str().expect("utf-8"),
        "--clusters",
        "Cluster1,Cluster2,Cluster3",
    ]));
    Federation {
        scenario: path,
        certs,
        addresses: RefCell::new(Vec::new()),
    }
}

/// The arguments of `mcfed cluster` for cluster `name`.
pub fn cluster_args(scenario: &Path, certs: &Path, name: &str) -> Vec<String> {
    [
        "cluster",
        "--scenario",
        scenario.to_str().expect("utf-8"),
        "--name",
        name,
        "--certs",
        certs.to_str().expect("utf-8"),
        "--speed",
        "10",
        "--report",
        "json",
        "--exit-on-stdin-eof",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect()
}

/// Runs an LSF-style command against `cluster` and parses its `-o json`.
pub fn ask(fed: &Federation, command: &str, cluster: &str, extra: &[&str]) -> Value {
    let address = fed.address(cluster);
    let mut args = vec![
        command,
        "--cluster",
        cluster,
        "--address",
        &address,
        "--certs",
        fed.certs.to_str().expect("utf-8"),
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let json = succeeded(&mcfed(&args));
    serde_json::from_str(&json).expect("JSON")
}

pub fn text(fed: &Federation, command: &[&str], cluster: &str) -> String {
    let address = fed.address(cluster);
    let mut args = command.to_vec();
    args.extend_from_slice(&[
        "--cluster",
        cluster,
        "--address",
        &address,
        "--certs",
        fed.certs.to_str().expect("utf-8"),
    ]);
    succeeded(&mcfed(&args))
}

pub fn links_up_with_updates(links: &Value) -> bool {
    links.as_array().is_some_and(|rows| {
        rows.iter().all(|row| {
            row["status"] == "ok"
                && (row["job_flow"] == "recv" || !row["last_update_seq"].is_null())
        })
    })
}

pub fn jobs_from(jobs: &Value, cluster: &str) -> Vec<u64> {
    let mut ids: Vec<u64> = jobs
        .as_array()
        .expect("array")
        .iter()
        .filter(|job| job["forwarded_from"]["cluster"] == cluster)
        .map(|job| job["forwarded_from"]["source_job"].as_u64().expect("id"))
        .collect();
    ids.sort_unstable();
    ids
}

/// The pids of `parent`'s child processes (Linux).
pub fn children(parent: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

/// Whether `pid` is still a running (not zombie) process.
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next())
        })
        .is_some_and(|state| state != 'Z' && state != 'X')
}
