//! `mcfed launch`: one `mcfed cluster` process per cluster of a scenario.
//!
//! The launcher makes certificates (unless given a directory), picks
//! addresses, starts every process with a shared clock origin a moment
//! ahead, waits until every process is connected to all its peers both
//! ways, plays the scenario's submissions at their emulated times through
//! the admin channel (the jobs present at start each process builds
//! itself), waits for the scenario's end, gathers every process's decision
//! records and initial job states into one [`RunOutput`] (printed like
//! `mcfed run`'s), and stops every process: by an admin shutdown, then by a
//! kill if one lingers. It does so as well on Ctrl-C, on SIGTERM, and when a
//! process dies. Each process also stops when the launcher's end of its
//! standard input closes, so even a killed launcher leaves no orphans.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::SimTime;
use mcfed_scenario::model::Scenario;
use mcfed_scenario::{RunOutput, RunStats};
use mcfed_transport::FederationTls;
use tokio::process::{Child, Command};

use crate::admin::{AdminRequest, AdminResponse};
use crate::client::{ClientError, Session, admin_tls};
use crate::process::{DEFAULT_BASE_PORT, default_address, peers_of};

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
    #[error("the clusters did not all connect within {limit:?}: {detail}")]
    NotConnected {
        /// The limit.
        limit: Duration,
        /// What was still missing.
        detail: String,
    },
    /// Talking to a process failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Interrupted by Ctrl-C or SIGTERM.
    #[error("interrupted; every cluster process was stopped")]
    Interrupted,
    /// The runtime failed.
    #[error("the launcher's runtime failed: {0}")]
    Runtime(#[from] std::io::Error),
}

/// What `mcfed launch` takes.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The `mcfed` executable to start for each cluster.
    pub binary: PathBuf,
    /// A certificate directory to use (default: fresh ones in a temporary
    /// directory, removed afterwards).
    pub certs: Option<PathBuf>,
    /// The first cluster's port when the scenario gives no addresses; 0
    /// picks free ports.
    pub base_port: u16,
    /// Emulated seconds per wall-clock second.
    pub speed: f64,
    /// How long the processes may take to start and connect.
    pub connect_timeout: Duration,
    /// How far ahead of the start emulated time zero is set.
    pub startup: Duration,
}

impl LaunchOptions {
    /// Options for `scenario` with the defaults.
    pub fn new(scenario: PathBuf, binary: PathBuf) -> Self {
        LaunchOptions {
            scenario,
            binary,
            certs: None,
            base_port: DEFAULT_BASE_PORT,
            speed: 1.0,
            connect_timeout: Duration::from_secs(30),
            startup: Duration::from_secs(1),
        }
    }
}

struct Running {
    cluster: String,
    address: String,
    child: Child,
}

/// Runs `options.scenario` as one process per cluster and returns what
/// they decided.
pub fn launch(options: &LaunchOptions) -> Result<RunOutput, LaunchError> {
    let scenario = mcfed_scenario::load(&options.scenario)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let scratch = match &options.certs {
        Some(_) => None,
        None => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.subsec_nanos());
            let dir =
                std::env::temp_dir().join(format!("mcfed-launch-{}-{nanos}", std::process::id()));
            let names: Vec<String> = scenario
                .clusters
                .iter()
                .map(|spec| spec.config.name.to_string())
                .collect();
            mcfed_transport::certs::init(&dir, &names)?;
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

fn addresses(scenario: &Scenario, base_port: u16) -> Result<Vec<String>, std::io::Error> {
    if base_port != 0 {
        return Ok((0..scenario.clusters.len())
            .map(|index| default_address(scenario, index, base_port))
            .collect());
    }
    // Free ports: hold them all at once so they differ, then let go.
    let sockets: Vec<std::net::UdpSocket> = (0..scenario.clusters.len())
        .map(|_| std::net::UdpSocket::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()?;
    sockets
        .iter()
        .map(|socket| socket.local_addr().map(|address| address.to_string()))
        .collect()
}

async fn run(
    options: &LaunchOptions,
    scenario: &Scenario,
    certs: &Path,
) -> Result<RunOutput, LaunchError> {
    let tls = admin_tls(certs)?;
    let addresses = addresses(scenario, options.base_port)?;
    let epoch = SystemTime::now() + options.startup;
    let epoch_ms = epoch
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64);
    let mut running: Vec<Running> = Vec::new();
    for (index, spec) in scenario.clusters.iter().enumerate() {
        let name = spec.config.name.to_string();
        let mut command = Command::new(&options.binary);
        command
            .arg("cluster")
            .arg("--scenario")
            .arg(&options.scenario)
            .args(["--name", &name])
            .arg("--certs")
            .arg(certs)
            .args(["--listen", &addresses[index]])
            .args(["--speed", &options.speed.to_string()])
            .args(["--epoch-ms", &epoch_ms.to_string()])
            .args(["--report", "none", "--exit-on-stdin-eof"]);
        for peer in peers_of(spec) {
            if let Some(position) = scenario
                .clusters
                .iter()
                .position(|other| other.config.name == peer)
            {
                command.args(["--peer", &format!("{peer}={}", addresses[position])]);
            }
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let child = command.spawn().map_err(|source| LaunchError::Spawn {
            cluster: name.clone(),
            source,
        })?;
        tracing::info!(cluster = %name, address = %addresses[index], "started");
        running.push(Running {
            cluster: name,
            address: addresses[index].clone(),
            child,
        });
    }
    let ctrl_c = tokio::signal::ctrl_c();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let targets: Vec<(String, String)> = running
        .iter()
        .map(|process| (process.cluster.clone(), process.address.clone()))
        .collect();
    let outcome = {
        let drive = drive(options, scenario, &tls, &targets, epoch);
        tokio::pin!(drive);
        tokio::select! {
            result = &mut drive => result,
            _ = ctrl_c => Err(LaunchError::Interrupted),
            _ = terminate.recv() => Err(LaunchError::Interrupted),
            (cluster, status) = first_exit(&mut running) => Err(LaunchError::ClusterDied {
                cluster,
                status: status.map_or_else(|error| error.to_string(), |status| status.to_string()),
            }),
        }
    };
    stop_all(&tls, &mut running).await;
    outcome
}

/// Waits until one of the processes exits.
async fn first_exit(running: &mut [Running]) -> (String, std::io::Result<ExitStatus>) {
    loop {
        for process in running.iter_mut() {
            match process.child.try_wait() {
                Ok(Some(status)) => return (process.cluster.clone(), Ok(status)),
                Ok(None) => {}
                Err(error) => return (process.cluster.clone(), Err(error)),
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asks every process to stop, then kills those still running after a
/// while.
async fn stop_all(tls: &FederationTls, running: &mut [Running]) {
    for process in running.iter() {
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
            Ok(Ok(status)) if !status.success() => {
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

fn wall_time_of(epoch: SystemTime, at: SimTime, speed: f64) -> tokio::time::Instant {
    let offset = Duration::from_millis(at.as_millis()).div_f64(speed.max(1e-6));
    let target = epoch + offset;
    let now = tokio::time::Instant::now();
    match target.duration_since(SystemTime::now()) {
        Ok(ahead) => now + ahead,
        Err(_) => now,
    }
}

async fn connect_all(
    tls: &FederationTls,
    targets: &[(String, String)],
    limit: Duration,
) -> Result<Vec<Session>, LaunchError> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut sessions = Vec::new();
    for (cluster, address) in targets {
        loop {
            match Session::connect(tls, cluster, address, Duration::from_secs(2)).await {
                Ok(session) => {
                    sessions.push(session);
                    break;
                }
                Err(error) if tokio::time::Instant::now() >= deadline => {
                    return Err(LaunchError::NotConnected {
                        limit,
                        detail: error.to_string(),
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
    // Wait until every process is connected to all its peers, both ways.
    loop {
        let mut missing = Vec::new();
        for session in &sessions {
            if let AdminResponse::Status(status) = session.ask(&AdminRequest::Status).await? {
                for peer in status
                    .peers
                    .iter()
                    .filter(|peer| !(peer.outbound && peer.inbound > 0))
                {
                    missing.push(format!(
                        "{} <-> {}{}",
                        status.cluster,
                        peer.cluster,
                        peer.last_error
                            .as_ref()
                            .map(|error| format!(" ({error})"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
        if missing.is_empty() {
            return Ok(sessions);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(LaunchError::NotConnected {
                limit,
                detail: format!("not connected: {}", missing.join(", ")),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn drive(
    options: &LaunchOptions,
    scenario: &Scenario,
    tls: &FederationTls,
    targets: &[(String, String)],
    epoch: SystemTime,
) -> Result<RunOutput, LaunchError> {
    let sessions = connect_all(tls, targets, options.connect_timeout).await?;
    tracing::info!(clusters = sessions.len(), "every cluster is connected");
    let mut stats = RunStats {
        end: scenario.end,
        ..RunStats::default()
    };
    for submission in &scenario.submissions {
        if submission.at > scenario.end {
            break;
        }
        tokio::time::sleep_until(wall_time_of(epoch, submission.at, options.speed)).await;
        let Some(session) = sessions
            .iter()
            .find(|session| session.cluster() == submission.cluster.as_str())
        else {
            continue;
        };
        let request = AdminRequest::Submit {
            queue: submission.queue.clone(),
            spec: submission.spec.clone(),
        };
        match session.ask(&request).await {
            Ok(_) => stats.submitted += 1,
            Err(ClientError::Refused { message, .. }) => {
                stats.refused += 1;
                tracing::warn!(job = %submission.spec.name, cluster = %submission.cluster, %message, "submission refused");
            }
            Err(error) => return Err(error.into()),
        }
    }
    tokio::time::sleep_until(wall_time_of(epoch, scenario.end, options.speed)).await;
    // Let what was sent at the last instant arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut decisions: Vec<(usize, DecisionRecord)> = Vec::new();
    let mut initial_states = Vec::new();
    for (index, session) in sessions.iter().enumerate() {
        match session.ask(&AdminRequest::Records { from: 0 }).await? {
            AdminResponse::Records(reply) => {
                decisions.extend(reply.records.into_iter().map(|record| (index, record)));
                initial_states.push(reply.initial_states);
            }
            _ => return Err(ClientError::Unexpected(session.cluster().to_owned()).into()),
        }
    }
    for session in sessions {
        session.close().await;
    }
    // Time order; cluster order, then each cluster's own order, within an
    // instant (as the event loop settles clusters).
    decisions.sort_by(|(a_index, a), (b_index, b)| {
        a.time.total_cmp(&b.time).then_with(|| a_index.cmp(b_index))
    });
    Ok(RunOutput {
        decisions: decisions.into_iter().map(|(_, record)| record).collect(),
        initial_states,
        stats,
        ..RunOutput::default()
    })
}
