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

use mcfed_federation::GroupState;
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::SimTime;
use mcfed_scenario::chaos::{ChaosConfig, ChaosOverrides, Outage};
use mcfed_scenario::model::Scenario;
use mcfed_scenario::{RunOutput, RunStats};
use mcfed_transport::FederationTls;
use tokio::process::{Child, Command};

use crate::admin::{AdminRequest, AdminResponse, RecordsReply};
use crate::client::{ClientError, Session, admin_tls};
use crate::process::{DEFAULT_BASE_PORT, known_address, parse_listening_line, peers_of};
use mcfed_scenario::records::EventRecord;

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
}

/// How far ahead emulated time zero is set when faults are injected, so
/// that the processes connect before the faults start.
pub const FAULTY_STARTUP: Duration = Duration::from_secs(2);

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
            chaos: ChaosOverrides::default(),
            oracle: false,
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

/// The `mcfed cluster` arguments of cluster `index`, listening on `listen`
/// and told the addresses of its peers that are known.
fn cluster_args(
    options: &LaunchOptions,
    scenario: &Scenario,
    certs: &Path,
    listen: &str,
    addresses: &[Option<String>],
    index: usize,
    epoch_ms: u64,
) -> Vec<OsString> {
    let spec = &scenario.clusters[index];
    let mut args: Vec<OsString> = vec![
        "cluster".into(),
        "--scenario".into(),
        options.scenario.clone().into(),
        "--name".into(),
        spec.config.name.to_string().into(),
        "--certs".into(),
        certs.into(),
        "--listen".into(),
        listen.into(),
        "--base-port".into(),
        options.base_port.to_string().into(),
        "--speed".into(),
        options.speed.to_string().into(),
        "--epoch-ms".into(),
        epoch_ms.to_string().into(),
        "--report".into(),
        "none".into(),
        "--exit-on-stdin-eof".into(),
    ];
    for peer in peers_of(spec) {
        if let Some(address) = scenario
            .clusters
            .iter()
            .position(|other| other.config.name == peer)
            .and_then(|position| addresses[position].as_ref())
        {
            args.push("--peer".into());
            args.push(format!("{peer}={address}").into());
        }
    }
    args.extend(options.chaos.to_args().into_iter().map(OsString::from));
    if options.oracle {
        args.push("--oracle".into());
    }
    args
}

/// Starts `mcfed cluster` with `args`; its standard error is piped (see
/// [`forward_stderr`] and [`listening`]).
fn spawn(binary: &Path, cluster: &str, args: &[OsString]) -> Result<Child, LaunchError> {
    Command::new(binary)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| LaunchError::Spawn {
            cluster: cluster.to_owned(),
            source,
        })
}

type StderrLines = tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>;

fn stderr_lines(child: &mut Child) -> Option<StderrLines> {
    use tokio::io::AsyncBufReadExt as _;
    child
        .stderr
        .take()
        .map(|stderr| tokio::io::BufReader::new(stderr).lines())
}

/// Copies what a process writes on standard error to the launcher's, until
/// it closes (but for where it listens).
fn forward_stderr(lines: Option<StderrLines>) {
    if let Some(mut lines) = lines {
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                // A restarted process listens where it did before.
                if parse_listening_line(&line).is_none() {
                    pass_on(&line);
                }
            }
        });
    }
}

/// Writes a line of a process's standard error on the launcher's (a
/// launcher whose standard error is closed drops it).
fn pass_on(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Waits, at most `limit`, until the process of `cluster` says where it
/// listens (passing on what else it writes on standard error), and returns
/// that address; then keeps passing its standard error on.
async fn listening(
    cluster: &str,
    child: &mut Child,
    limit: Duration,
) -> Result<String, LaunchError> {
    let mut lines = stderr_lines(child);
    let read = async {
        let lines = lines.as_mut()?;
        while let Ok(Some(line)) = lines.next_line().await {
            match parse_listening_line(&line) {
                Some((name, address)) if name == cluster => return Some(address.to_owned()),
                _ => pass_on(&line),
            }
        }
        None
    };
    let address = tokio::time::timeout(limit, read).await;
    forward_stderr(lines);
    match address {
        Ok(Some(address)) => Ok(address),
        Ok(None) => {
            let status = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
            Err(LaunchError::ClusterDied {
                cluster: cluster.to_owned(),
                status: match status {
                    Ok(Ok(status)) => status.to_string(),
                    Ok(Err(error)) => error.to_string(),
                    Err(_) => "it closed its standard error".to_owned(),
                },
            })
        }
        Err(_) => Err(LaunchError::NotConnected {
            limit,
            detail: format!("the process of cluster `{cluster}` did not say where it listens"),
        }),
    }
}

async fn run(
    options: &LaunchOptions,
    scenario: &Scenario,
    certs: &Path,
) -> Result<RunOutput, LaunchError> {
    let tls = admin_tls(certs)?;
    let chaos = options.chaos.apply(scenario).filter(ChaosConfig::is_active);
    // With faults, give the processes time to connect before the clock
    // starts: the faults act from emulated time zero on.
    let startup = match &chaos {
        Some(_) => options.startup.max(FAULTY_STARTUP),
        None => options.startup,
    };
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
                return Err(error);
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
    let running = RefCell::new(running);
    let ctrl_c = tokio::signal::ctrl_c();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
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

fn wall_time_of(epoch: SystemTime, at: SimTime, speed: f64) -> tokio::time::Instant {
    let offset = Duration::from_millis(at.as_millis()).div_f64(speed.max(1e-6));
    let target = epoch + offset;
    let now = tokio::time::Instant::now();
    match target.duration_since(SystemTime::now()) {
        Ok(ahead) => now + ahead,
        Err(_) => now,
    }
}

/// Connects to one process, retrying until `deadline`.
async fn connect_one(
    tls: &FederationTls,
    cluster: &str,
    address: &str,
    deadline: tokio::time::Instant,
    limit: Duration,
) -> Result<Session, LaunchError> {
    loop {
        match Session::connect(tls, cluster, address, Duration::from_secs(2)).await {
            Ok(session) => return Ok(session),
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

async fn connect_all(
    tls: &FederationTls,
    targets: &[(String, String)],
    limit: Duration,
) -> Result<Vec<Session>, LaunchError> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut sessions = Vec::new();
    for (cluster, address) in targets {
        sessions.push(connect_one(tls, cluster, address, deadline, limit).await?);
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

/// What the launcher does, in emulated-time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// A cluster comes back (first, at an instant: it may get submissions).
    Up(usize),
    /// A cluster goes down.
    Down(usize),
    /// A submission.
    Submit(usize),
}

/// Everything the launcher does, in order: the submissions and the
/// outages' kills and restarts.
fn timeline(scenario: &Scenario, outages: &[Outage]) -> Vec<(SimTime, Step)> {
    let mut steps: Vec<(SimTime, Step)> = scenario
        .submissions
        .iter()
        .enumerate()
        .take_while(|(_, submission)| submission.at <= scenario.end)
        .map(|(index, submission)| (submission.at, Step::Submit(index)))
        .collect();
    for outage in outages {
        let Some(index) = scenario
            .clusters
            .iter()
            .position(|spec| spec.config.name == outage.cluster)
        else {
            continue;
        };
        if outage.at <= scenario.end {
            steps.push((outage.at, Step::Down(index)));
            if outage.until <= scenario.end {
                steps.push((outage.until, Step::Up(index)));
            }
        }
    }
    steps.sort();
    steps
}

/// The launcher's admin connection to one cluster's process.
enum Link {
    /// Connected.
    Connected(Session),
    /// Started again after an outage; connected when first needed.
    Starting,
    /// Killed for an outage.
    Down,
}

impl Link {
    /// The session, connecting first to a process started again; `None`
    /// while the cluster is down.
    async fn session(
        &mut self,
        tls: &FederationTls,
        cluster: &str,
        address: &str,
        options: &LaunchOptions,
    ) -> Result<Option<&Session>, LaunchError> {
        if let Link::Starting = self {
            let deadline = tokio::time::Instant::now() + options.connect_timeout;
            let session =
                connect_one(tls, cluster, address, deadline, options.connect_timeout).await?;
            *self = Link::Connected(session);
        }
        Ok(match self {
            Link::Connected(session) => Some(session),
            Link::Starting | Link::Down => None,
        })
    }
}

/// Per cluster, the decision records and initial states of the processes
/// the launcher killed (outages), kept before each kill.
#[derive(Default)]
struct Gathered {
    records: Vec<DecisionRecord>,
    events: Vec<EventRecord>,
    initial_states: Option<Vec<GroupState>>,
}

async fn records_of(session: &Session) -> Result<RecordsReply, LaunchError> {
    match session.ask(&AdminRequest::Records { from: 0 }).await? {
        AdminResponse::Records(reply) => Ok(reply),
        _ => Err(ClientError::Unexpected(session.cluster().to_owned()).into()),
    }
}

async fn drive(
    options: &LaunchOptions,
    scenario: &Scenario,
    tls: &FederationTls,
    running: &RefCell<Vec<Running>>,
    outages: &[Outage],
    epoch: SystemTime,
) -> Result<RunOutput, LaunchError> {
    let targets: Vec<(String, String)> = running
        .borrow()
        .iter()
        .map(|process| (process.cluster.clone(), process.address.clone()))
        .collect();
    let mut sessions: Vec<Link> = connect_all(tls, &targets, options.connect_timeout)
        .await?
        .into_iter()
        .map(Link::Connected)
        .collect();
    tracing::info!(clusters = sessions.len(), "every cluster is connected");
    let mut events: Vec<EventRecord> = Vec::new();
    let mut stats = RunStats {
        end: scenario.end,
        ..RunStats::default()
    };
    let mut gathered: Vec<Gathered> = targets.iter().map(|_| Gathered::default()).collect();
    // Submissions to a cluster that is down wait until it is back.
    let mut waiting: Vec<Vec<usize>> = targets.iter().map(|_| Vec::new()).collect();
    for (at, step) in timeline(scenario, outages) {
        tokio::time::sleep_until(wall_time_of(epoch, at, options.speed)).await;
        match step {
            Step::Submit(index) => {
                let submission = &scenario.submissions[index];
                let Some(cluster) = targets
                    .iter()
                    .position(|(name, _)| name == submission.cluster.as_str())
                else {
                    continue;
                };
                let (name, address) = &targets[cluster];
                match sessions[cluster]
                    .session(tls, name, address, options)
                    .await?
                {
                    Some(session) => {
                        submit(session, scenario, index, &mut stats, &mut events).await?
                    }
                    None => waiting[cluster].push(index),
                }
            }
            Step::Down(cluster) => {
                let (name, address) = &targets[cluster];
                if sessions[cluster]
                    .session(tls, name, address, options)
                    .await?
                    .is_none()
                {
                    continue;
                }
                let Link::Connected(session) =
                    std::mem::replace(&mut sessions[cluster], Link::Down)
                else {
                    continue;
                };
                // Keep what it decided: the killed process takes it along.
                let reply = records_of(&session).await?;
                session.close().await;
                let kept = &mut gathered[cluster];
                kept.records.extend(reply.records);
                kept.events.extend(reply.events);
                kept.initial_states.get_or_insert(reply.initial_states);
                tracing::info!(cluster = %name, at = %at, "outage: killing the process");
                let mut processes = running.borrow_mut();
                let process = &mut processes[cluster];
                process.down = true;
                let _ = process.child.start_kill();
            }
            Step::Up(cluster) => {
                if !matches!(sessions[cluster], Link::Down) {
                    continue;
                }
                // Reap the killed process, then start the same command.
                loop {
                    let exited = {
                        let mut processes = running.borrow_mut();
                        !matches!(processes[cluster].child.try_wait(), Ok(None))
                    };
                    if exited {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                {
                    let mut processes = running.borrow_mut();
                    let process = &mut processes[cluster];
                    process.child = spawn(&options.binary, &process.cluster, &process.args)?;
                    forward_stderr(stderr_lines(&mut process.child));
                    process.down = false;
                }
                tracing::info!(cluster = %targets[cluster].0, at = %at, "outage over: the process is started again");
                // Connect when needed, so that the other clusters'
                // submissions are not held up by its start.
                sessions[cluster] = Link::Starting;
                let (name, address) = &targets[cluster];
                for index in std::mem::take(&mut waiting[cluster]) {
                    if let Some(session) = sessions[cluster]
                        .session(tls, name, address, options)
                        .await?
                    {
                        submit(session, scenario, index, &mut stats, &mut events).await?;
                    }
                }
            }
        }
    }
    tokio::time::sleep_until(wall_time_of(epoch, scenario.end, options.speed)).await;
    // Let what was sent at the last instant arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut decisions: Vec<(usize, DecisionRecord)> = Vec::new();
    let mut initial_states = Vec::new();
    for (index, (link, kept)) in sessions.iter_mut().zip(gathered).enumerate() {
        decisions.extend(kept.records.into_iter().map(|record| (index, record)));
        events.extend(kept.events);
        let mut states = kept.initial_states;
        let (name, address) = &targets[index];
        if let Some(session) = link.session(tls, name, address, options).await? {
            let reply = records_of(session).await?;
            decisions.extend(reply.records.into_iter().map(|record| (index, record)));
            events.extend(reply.events);
            states.get_or_insert(reply.initial_states);
        }
        initial_states.push(states.unwrap_or_default());
    }
    for link in sessions {
        if let Link::Connected(session) = link {
            session.close().await;
        }
    }
    // Time order; cluster order, then each cluster's own order, within an
    // instant (as the event loop settles clusters).
    decisions.sort_by(|(a_index, a), (b_index, b)| {
        a.time.total_cmp(&b.time).then_with(|| a_index.cmp(b_index))
    });
    events.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(RunOutput {
        decisions: decisions.into_iter().map(|(_, record)| record).collect(),
        events,
        initial_states,
        stats,
        ..RunOutput::default()
    })
}

/// Plays submission `index` through `session`.
async fn submit(
    session: &Session,
    scenario: &Scenario,
    index: usize,
    stats: &mut RunStats,
    events: &mut Vec<EventRecord>,
) -> Result<(), LaunchError> {
    let submission = &scenario.submissions[index];
    let request = AdminRequest::Submit {
        queue: submission.queue.clone(),
        spec: submission.spec.clone(),
    };
    match session.ask(&request).await {
        Ok(AdminResponse::Submitted(submitted)) => {
            stats.submitted += 1;
            // The job's submission, as the event loop records it.
            let mut event = EventRecord::new(
                submission.at.as_secs_f64(),
                &submitted.cluster,
                &submission.spec.name,
                submitted.job_id,
                "submitted",
            );
            event.queue = Some(submitted.queue.clone());
            if submitted.forwarded {
                event.source_cluster = Some(submitted.cluster);
                event.source_job_id = Some(submitted.job_id);
            }
            events.push(event);
        }
        Ok(_) => stats.submitted += 1,
        Err(ClientError::Refused { message, .. }) => {
            stats.refused += 1;
            tracing::warn!(job = %submission.spec.name, cluster = %submission.cluster, %message, "submission refused");
        }
        Err(error) => return Err(error.into()),
    }
    Ok(())
}
