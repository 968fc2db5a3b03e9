//! `mcfed launch`: one `mcfed cluster` process per cluster of a scenario.
//!
//! The launcher makes certificates (unless given a directory), starts
//! every process with a shared clock origin a moment ahead, one after the
//! other, each reading back where the process says it listens (with
//! `--base-port 0` each listens on a port the OS picks and is told where
//! the earlier ones listen; they learn of the later ones from their
//! hellos), waits until every process is connected to all its peers both
//! ways, plays the scenario's submissions at their emulated times through
//! the admin channel (the jobs present at start each process builds
//! itself), waits for the scenario's end, gathers every process's decision
//! records and initial job states into one [`RunOutput`] (printed like
//! `mcfed run`'s), and stops every process: by an admin shutdown, then by a
//! kill if one lingers. It does so as well on Ctrl-C, on SIGTERM, and when a
//! process dies. Each process also stops when the launcher's end of its
//! standard input closes, so even a killed launcher leaves no orphans.
//!
//! Faults (the scenario's `[chaos]` and the fault flags, passed on to every
//! process) act in the processes, on their datagrams. Outages are the
//! launcher's: at a `[[chaos.outage]]`'s start it takes the cluster's
//! decision records, then SIGKILLs its process; at its end it starts the
//! same command again, on the same port and told every peer's address (a
//! new incarnation: its peers reconnect, and the jobs
//! it held come back to their submission clusters). Submissions to a
//! cluster that is down wait until it is back.

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcfed_chaos::{ChaosConfig, ChaosOverrides, Outage};
use mcfed_federation::GroupState;
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::SimTime;
use mcfed_run::{RunOutput, RunStats};
use mcfed_scenario::Scenario;
use mcfed_transport::FederationTls;
use tokio::process::{Child, Command};

pub use mcfed_process::client::Started;
use mcfed_process::client::{ClientError, Session, admin_tls};
use mcfed_process::process::parse_listening_line;

pub use addresses::{
    DEFAULT_BASE_PORT, PlanError, PlanOptions, address_of, certificate_hosts, cluster_index,
    default_address, known_address, peers_of, plan_cluster,
};
use mcfed_admin::{AdminRequest, AdminResponse, RecordsReply};
use mcfed_run::records::{EventRecord, UsageRecord};

pub mod addresses;
mod commands;
mod drain;
mod drive;
mod spawn;
mod timeline;

pub use commands::{PrintOptions, print_commands};

use drive::*;
use spawn::*;

/// Why a launch failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The scenario could not be loaded.
    #[error(transparent)]
    Scenario(#[from] mcfed_scenario::ScenarioError),
    /// Certificates could not be made.
    #[error("cannot make certificates: {0}")]
    Certs(#[from] mcfed_transport::CertError),
    /// A process could not be started.
    #[error("cannot start the process of cluster `{cluster}`: {source}")]
    Spawn {
        /// The cluster.
        cluster: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A process exited before the run ended.
    #[error("the process of cluster `{cluster}` exited ({status}) before the run ended")]
    ClusterDied {
        /// The cluster.
        cluster: String,
        /// How it exited.
        status: String,
    },
    /// The federation did not connect in time.
    #[error("the clusters did not all connect within {}: {detail}", mcfed_protocol::words::duration(*limit))]
    NotConnected {
        /// The limit.
        limit: Duration,
        /// What was still missing.
        detail: String,
    },
    /// Talking to a process failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A workload's trace could not be opened.
    #[error(transparent)]
    Trace(#[from] mcfed_trace::SwfError),
    /// Interrupted by Ctrl-C or SIGTERM.
    #[error("interrupted; every cluster process was stopped")]
    Interrupted,
    /// The runtime failed.
    #[error("the launcher's runtime failed: {0}")]
    Runtime(#[from] std::io::Error),
}

/// A launch that failed, with what the processes still running had
/// decided and recorded by then (so it can be printed before the error).
#[derive(Debug)]
pub struct LaunchFailure {
    /// Why it failed.
    pub error: LaunchError,
    /// What was gathered, if anything.
    pub gathered: Option<Box<RunOutput>>,
}

impl From<LaunchError> for LaunchFailure {
    fn from(error: LaunchError) -> Self {
        LaunchFailure {
            error,
            gathered: None,
        }
    }
}

impl std::fmt::Display for LaunchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for LaunchFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

/// What `mcfed launch` takes.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The scenario file.
    pub scenario: PathBuf,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses.
    pub hosts: Option<PathBuf>,
    /// The `mcfed` executable to start for each cluster.
    pub binary: PathBuf,
    /// A certificate directory to use (default: fresh ones in a temporary
    /// directory, removed afterwards).
    pub certs: Option<PathBuf>,
    /// The first cluster's port when the scenario gives no addresses; 0:
    /// ports the OS picks.
    pub base_port: u16,
    /// Emulated seconds per wall-clock second.
    pub speed: f64,
    /// How long the processes may take to start and connect.
    pub connect_timeout: Duration,
    /// How far ahead of the start emulated time zero is set (at least
    /// [`FAULTY_STARTUP`] with faults).
    pub startup: Duration,
    /// Faults on every link from the command line, on top of the
    /// scenario's `[chaos]`; passed on to every process.
    pub chaos: ChaosOverrides,
    /// Judge every decision by the oracle (`--oracle`, passed on).
    pub oracle: bool,
    /// A directory under which each process keeps its state
    /// (`DIR/NAME`, `mcfed cluster --state`).
    pub state: Option<PathBuf>,
    /// A directory under which each process writes its cluster's lsb.acct
    /// (`mcfed cluster --lsb-acct`).
    pub lsb_acct: Option<PathBuf>,
    /// Where the launcher says, once every process has started, where
    /// they listen (the live page of `mcfed launch --web` watches them).
    pub watch: Option<tokio::sync::mpsc::UnboundedSender<Started>>,
}

/// How long each process may take to start and connect before emulated
/// time zero (the start is set at least this times the clusters ahead).
pub const STARTUP_PER_CLUSTER: Duration = Duration::from_millis(750);

/// How far ahead emulated time zero is set when faults are injected, so
/// that the processes connect before the faults start.
pub const FAULTY_STARTUP: Duration = Duration::from_secs(2);

impl LaunchOptions {
    /// Options for `scenario` with the defaults.
    pub fn new(scenario: PathBuf, binary: PathBuf) -> Self {
        LaunchOptions {
            scenario,
            hosts: None,
            binary,
            certs: None,
            base_port: DEFAULT_BASE_PORT,
            speed: 1.0,
            connect_timeout: Duration::from_secs(30),
            startup: Duration::from_secs(1),
            chaos: ChaosOverrides::default(),
            oracle: false,
            state: None,
            lsb_acct: None,
            watch: None,
        }
    }
}

struct Running {
    cluster: String,
    address: String,
    /// The `mcfed cluster` arguments, to start it again after an outage.
    args: Vec<OsString>,
    child: Child,
    /// Killed on purpose (an outage): its exit is not a failure.
    down: bool,
}

/// Runs `options.scenario` as one process per cluster and returns what
/// they decided; on a failure, what they had decided by then comes with
/// the error.
pub fn launch(options: &LaunchOptions) -> Result<RunOutput, LaunchFailure> {
    let scenario =
        mcfed_scenario::hosts::load_with_hosts(&options.scenario, options.hosts.as_deref())
            .map_err(LaunchError::from)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LaunchError::from)?;
    let scratch = match &options.certs {
        Some(_) => None,
        None => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.subsec_nanos());
            let dir =
                std::env::temp_dir().join(format!("mcfed-launch-{}-{nanos}", std::process::id()));
            mcfed_transport::certs::init_with_hosts(&dir, &certificate_hosts(&scenario, &[]))
                .map_err(LaunchError::from)?;
            Some(dir)
        }
    };
    let certs = options
        .certs
        .clone()
        .or_else(|| scratch.clone())
        .unwrap_or_default();
    let result = runtime.block_on(run(options, &scenario, &certs));
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

async fn run(
    options: &LaunchOptions,
    scenario: &Scenario,
    certs: &Path,
) -> Result<RunOutput, LaunchFailure> {
    let tls = std::sync::Arc::new(admin_tls(certs).map_err(LaunchError::from)?);
    let chaos = options
        .chaos
        .apply(scenario.chaos.as_ref(), scenario.seed)
        .filter(ChaosConfig::is_active);
    // With faults, give the processes time to connect before the clock
    // starts: the faults act from emulated time zero on.
    // Each process takes a moment to start and connect (they start one
    // after the other): a step due before they all have would be played
    // late, so the clock starts later the more clusters there are.
    let per_cluster = STARTUP_PER_CLUSTER.saturating_mul(scenario.clusters.len() as u32);
    let startup = match &chaos {
        Some(_) => options.startup.max(FAULTY_STARTUP),
        None => options.startup,
    }
    .max(per_cluster);
    let epoch = SystemTime::now() + startup;
    let epoch_ms = epoch
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64);
    // One after the other: each is told where the earlier ones listen (with
    // OS-assigned ports, the later ones are learned from their hellos).
    let mut addresses: Vec<Option<String>> = (0..scenario.clusters.len())
        .map(|index| known_address(scenario, index, options.base_port))
        .collect();
    let mut running: Vec<Running> = Vec::new();
    for (index, spec) in scenario.clusters.iter().enumerate() {
        let name = spec.config.name.to_string();
        let listen = addresses[index]
            .clone()
            .unwrap_or_else(|| "127.0.0.1:0".to_owned());
        let args = cluster_args(
            options, scenario, certs, &listen, &addresses, index, epoch_ms,
        );
        let mut child = spawn(&options.binary, &name, &args)?;
        let heard = match listening(&name, &mut child, options.connect_timeout).await {
            Ok(heard) => heard,
            Err(error) => {
                let _ = child.start_kill();
                stop_all(&tls, &mut running).await;
                return Err(error.into());
            }
        };
        // The address it was given, unless its port was 0 (the OS's pick).
        let address = match &addresses[index] {
            Some(known) if !known.ends_with(":0") => known.clone(),
            _ => heard,
        };
        tracing::info!(cluster = %name, %address, "started");
        addresses[index] = Some(address.clone());
        running.push(Running {
            cluster: name,
            address,
            args,
            child,
            down: false,
        });
    }
    // Started again after an outage: on the port it had, told every peer's
    // address.
    for (index, process) in running.iter_mut().enumerate() {
        process.args = cluster_args(
            options,
            scenario,
            certs,
            &process.address,
            &addresses,
            index,
            epoch_ms,
        );
    }
    if let Some(watch) = &options.watch {
        let _ = watch.send(Started {
            tls: tls.clone(),
            clusters: running
                .iter()
                .map(|process| (process.cluster.clone(), process.address.clone()))
                .collect(),
        });
    }
    let running = RefCell::new(running);
    let ctrl_c = tokio::signal::ctrl_c();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(LaunchError::from)?;
    let outages = chaos.map(|chaos| chaos.outages).unwrap_or_default();
    let outcome = {
        let drive = drive(options, scenario, &tls, &running, &outages, epoch);
        tokio::pin!(drive);
        tokio::select! {
            result = &mut drive => result,
            _ = ctrl_c => Err(LaunchError::Interrupted),
            _ = terminate.recv() => Err(LaunchError::Interrupted),
            (cluster, status) = first_exit(&running) => Err(LaunchError::ClusterDied {
                cluster,
                status: status.map_or_else(|error| error.to_string(), |status| status.to_string()),
            }),
        }
    };
    let outcome = match outcome {
        Ok(output) => Ok(output),
        Err(error) => Err(LaunchFailure {
            gathered: gather_partial(&tls, &running, scenario.end)
                .await
                .map(Box::new),
            error,
        }),
    };
    stop_all(&tls, &mut running.into_inner()).await;
    outcome
}

/// Waits until one of the processes exits (other than one killed on
/// purpose).
async fn first_exit(running: &RefCell<Vec<Running>>) -> (String, std::io::Result<ExitStatus>) {
    loop {
        // The borrow ends before the sleep: `drive` borrows too.
        if let Some(exit) = running
            .borrow_mut()
            .iter_mut()
            .filter(|process| !process.down)
            .find_map(|process| match process.child.try_wait() {
                Ok(Some(status)) => Some((process.cluster.clone(), Ok(status))),
                Ok(None) => None,
                Err(error) => Some((process.cluster.clone(), Err(error))),
            })
        {
            return exit;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asks every process to stop, then kills those still running after a
/// while.
async fn stop_all(tls: &FederationTls, running: &mut [Running]) {
    for process in running.iter().filter(|process| !process.down) {
        if let Ok(session) = Session::connect(
            tls,
            &process.cluster,
            &process.address,
            Duration::from_secs(1),
        )
        .await
        {
            let _ = session.ask(&AdminRequest::Shutdown).await;
            session.close().await;
        }
    }
    for process in running.iter_mut() {
        // Closing its standard input stops it too.
        drop(process.child.stdin.take());
        match tokio::time::timeout(Duration::from_secs(3), process.child.wait()).await {
            Ok(Ok(status)) if !status.success() && !process.down => {
                tracing::warn!(cluster = %process.cluster, %status, "exited");
            }
            Ok(_) => {}
            Err(_) => {
                tracing::warn!(cluster = %process.cluster, "did not stop; killing it");
                let _ = process.child.kill().await;
            }
        }
    }
}
