//! One cluster as an OS process (`mcfed cluster`): the same
//! [`MemberActor`] as the in-process actor engine, with the QUIC transport
//! in place of that engine's mail (its `Mail` actor), inside one actix
//! system.
//!
//! The transport's tasks hand this process [`Event`]s: messages and hellos
//! from peers go to the member actor (the member decides which half each
//! concerns); admin requests are answered here. What the actor sends goes
//! to the transport through [`Outbox`].
//!
//! Emulated time runs `speed` times faster than the wall clock from a
//! shared origin (`epoch`), so the processes of one federation agree on
//! it; every timer (update intervals, job run times, MAX_RSCHED_TIME) is
//! scaled by it. The origin is `--epoch-ms`, else the journal's, else the
//! first peer's that answers in [`EPOCH_WAIT`], else the process's start.
//!
//! With a state directory (`--state`, [`state`]) the member is journaled
//! and a restarted process resumes where it was.
//!
//! With faults (the scenario's `[chaos]`, or the fault flags) the datagrams
//! this process sends to its peers pass through [`crate::faults`], and its
//! clock runs ahead or behind by its skew. With the oracle on (faults,
//! `--oracle`, or a scenario that wants it) the forwarder asks every
//! execution cluster for its true counters before each session, over
//! oracle queries the faults do not touch (`mcfed_transport::truth`), and
//! this process answers its peers' queries.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcfed_chaos::ChaosConfig;
use mcfed_federation::{BuildError, InitialJobs, MemberConfig};
use mcfed_protocol::{ClusterName, MAX_FRAME_SIZE};
use mcfed_transport::{
    FederationTls, Peer, Role, Timeouts, TlsError, TransportConfig, TransportError, TruthError,
};

use crate::faults::stretched_timeouts;

mod oracle;
mod serve;
mod shell;
mod state;

pub use state::COMPACT_MIN_BYTES;

pub use serve::{LocalWatch, WATCH_DECISIONS, listening_line, parse_listening_line};

/// How long a job control command given at a job's submission cluster
/// waits for its execution cluster's answer (wall time).
pub const DEFAULT_CONTROL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a forwarding session waits for the true counters of the
/// execution clusters (wall time) before it runs without judging its
/// decisions.
pub const DEFAULT_ORACLE_TIMEOUT: Duration = Duration::from_millis(500);

/// How long a process started without an emulated time zero (no
/// `--epoch-ms`, no journal) waits for a peer to tell it the federation's,
/// before it takes its own start.
pub const EPOCH_WAIT: Duration = Duration::from_secs(2);

/// Why a cluster process could not run.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// An address is not usable.
    #[error("{what}: `{address}` is not a usable address: {reason}")]
    Address {
        /// Whose address.
        what: String,
        /// The address.
        address: String,
        /// Why.
        reason: String,
    },
    /// TLS material is missing or wrong.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The cluster could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The transport could not start.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// Oracle queries could not be set up.
    #[error(transparent)]
    Truth(#[from] TruthError),
    /// The runtime failed.
    #[error("the process runtime failed: {0}")]
    Runtime(#[from] std::io::Error),
    /// The state directory could not be used.
    #[error(transparent)]
    Journal(#[from] mcfed_journal::JournalError),
    /// The lsb.acct log could not be opened.
    #[error("--lsb-acct: {0}")]
    LsbAcct(std::io::Error),
    /// The state directory does not fit this process.
    #[error("{0}")]
    State(String),
}

/// How a cluster process prints the decisions its forwarder makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveReport {
    /// Not at all (they are kept for `mcfed launch`).
    None,
    /// As `mcfed run` prints them.
    Text,
    /// One JSON object per line.
    Json,
}

/// What one cluster process runs: its member, where it listens and whom
/// it dials, its faults and whether its decisions are judged — planned
/// from a scenario by `mcfed-launch`, or put together by hand.
#[derive(Clone, Debug)]
pub struct ClusterPlan {
    /// What its member is built from.
    pub member: MemberConfig,
    /// The jobs present at start.
    pub initial_jobs: Vec<InitialJobs>,
    /// Where to listen (`host:port`; port 0: the OS picks).
    pub listen: String,
    /// The clusters it exchanges messages with, with their addresses when
    /// known (else learned from their hellos).
    pub peers: Vec<Peer>,
    /// Faults on its datagrams and clock.
    pub chaos: Option<ChaosConfig>,
    /// Judge every decision by the oracle.
    pub oracle: bool,
    /// How often to sample its slots in use (from emulated time zero).
    pub sample_every: Option<Duration>,
}

impl ClusterPlan {
    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        &self.member.cluster.name
    }
}

/// How `mcfed cluster` runs a planned cluster: its credentials, clock,
/// state directory and output.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The certificate directory (`mcfed certs init`).
    pub certs: PathBuf,
    /// A certificate file to use instead of the directory's.
    pub cert: Option<PathBuf>,
    /// Its key.
    pub key: Option<PathBuf>,
    /// Emulated seconds per wall-clock second.
    pub speed: f64,
    /// When emulated time zero is, in milliseconds since the Unix epoch
    /// (default: when the process starts).
    pub epoch_unix_ms: Option<u64>,
    /// Stop when standard input closes (the launcher's way of making sure
    /// no process outlives it).
    pub exit_on_stdin_eof: bool,
    /// How to print decisions as they are made.
    pub report: LiveReport,
    /// The largest frame accepted or sent.
    pub max_frame: usize,
    /// Connection timeouts and backoff (stretched for the faults'
    /// delays, if any).
    pub timeouts: Timeouts,
    /// How long a session waits for the true counters.
    pub oracle_timeout: Duration,
    /// How long a job control command sent to a job's execution cluster
    /// waits for its answer before saying it has none.
    pub control_timeout: Duration,
    /// The state directory: journal the member there, and resume from it.
    pub state: Option<PathBuf>,
    /// Keep every compacted journal as `journal.N` (like LSF's
    /// `lsb.events.N`).
    pub keep_journals: bool,
    /// Start on a damaged journal: keep it aside and take every sound
    /// record (`mcfed cluster --salvage`); without it, damage is refused.
    pub salvage: bool,
    /// Where the process hands a read-only handle on itself once it runs
    /// (the live page of `mcfed cluster --web`).
    pub watch: Option<tokio::sync::mpsc::UnboundedSender<LocalWatch>>,
    /// Keep every job event (and slot-usage sample) for the run's record
    /// that `mcfed launch` gathers at the end (`--record-events`, which the
    /// launcher gives). Without it the process keeps none: a long-lived
    /// cluster's memory is its jobs and its job history, which CLEAN_PERIOD
    /// bounds (`bjobs -a`, `bhist` and `bacct` read the history).
    pub record_events: bool,
    /// Write the cluster's lsb.acct under this directory
    /// (`DIR/NAME/logdir/lsb.acct`, appended to, a record per job as it
    /// finishes; `--lsb-acct`).
    pub lsb_acct: Option<PathBuf>,
}

impl ClusterOptions {
    /// The defaults, with the certificates in `certs`.
    pub fn new(certs: PathBuf) -> Self {
        ClusterOptions {
            certs,
            cert: None,
            key: None,
            speed: 1.0,
            epoch_unix_ms: None,
            exit_on_stdin_eof: false,
            report: LiveReport::Text,
            max_frame: MAX_FRAME_SIZE,
            timeouts: Timeouts::default(),
            oracle_timeout: DEFAULT_ORACLE_TIMEOUT,
            control_timeout: DEFAULT_CONTROL_TIMEOUT,
            state: None,
            keep_journals: false,
            salvage: false,
            watch: None,
            record_events: false,
            lsb_acct: None,
        }
    }
}

/// [`certificate_hosts`] for clusters given by name and address (`None`:
/// on this machine), e.g. `mcfed certs init --clusters`.
pub fn hosts_of_clusters(
    clusters: &[(String, Option<&str>)],
    extra: &[(String, String)],
) -> Vec<mcfed_transport::certs::ClusterHosts> {
    clusters
        .iter()
        .map(|(name, address)| {
            let mut hosts: Vec<String> =
                match address.and_then(mcfed_protocol::address::split_address) {
                    Some(split) => vec![split.host.to_owned()],
                    None => mcfed_transport::certs::LOOPBACK
                        .iter()
                        .map(|&host| host.to_owned())
                        .collect(),
                };
            for (cluster, host) in extra {
                if cluster == name && !hosts.contains(host) {
                    hosts.push(host.clone());
                }
            }
            mcfed_transport::certs::ClusterHosts {
                name: name.clone(),
                hosts,
            }
        })
        .collect()
}

fn resolve(what: &str, address: &str) -> Result<SocketAddr, NodeError> {
    let fail = |reason: String| NodeError::Address {
        what: what.to_owned(),
        address: address.to_owned(),
        reason,
    };
    address
        .to_socket_addrs()
        .map_err(|error| fail(error.to_string()))?
        .next()
        .ok_or_else(|| fail("it resolves to no address".to_owned()))
}

/// The tokio instant of emulated time zero for `epoch_unix_ms`.
fn origin(epoch_unix_ms: Option<u64>) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    let Some(epoch) = epoch_unix_ms else {
        return now;
    };
    let epoch = UNIX_EPOCH + Duration::from_millis(epoch);
    match epoch.duration_since(SystemTime::now()) {
        Ok(ahead) => now + ahead,
        Err(behind) => now.checked_sub(behind.duration()).unwrap_or(now),
    }
}

/// Runs the cluster of `plan` until it is told to stop (an admin
/// shutdown, Ctrl-C, SIGTERM, or standard input closing with
/// `exit_on_stdin_eof`).
pub fn run_cluster(options: ClusterOptions, plan: ClusterPlan) -> Result<(), NodeError> {
    let name = plan.name().clone();
    let tls = match (&options.cert, &options.key) {
        (Some(cert), Some(key)) => FederationTls::load_files(
            &mcfed_transport::certs::ca_cert_path(&options.certs),
            cert,
            key,
            None,
        )?,
        _ => FederationTls::load(&options.certs, Role::Cluster, name.as_str())?,
    };
    let listen = resolve(&format!("cluster `{name}`"), &plan.listen)?;
    let (failed, journal_failure) = tokio::sync::mpsc::unbounded_channel();
    let spec = plan.member.spec(&plan.initial_jobs);
    let mut prepared = state::prepare(&options, spec, move |why| {
        let _ = failed.send(why);
    })?;
    // A process answers bjobs -a, bhist and bacct: it keeps its jobs'
    // history for CLEAN_PERIOD (after a restart, from the jobs restored).
    prepared.member.keep_history(
        plan.member
            .cluster
            .params
            .clean_period
            .unwrap_or(mcfed_cluster::DEFAULT_CLEAN_PERIOD),
    );
    let chaos = plan.chaos.filter(ChaosConfig::is_active);
    if plan.oracle || chaos.is_some() {
        prepared.member.enable_oracle();
    }
    let timeouts = match &chaos {
        Some(chaos) => {
            if chaos.outages.iter().any(|outage| outage.cluster == name) {
                tracing::info!(cluster = %name, "the scenario's outages of this cluster are played by `mcfed launch` (it kills and restarts the process); a process started by hand ignores them");
            }
            stretched_timeouts(options.timeouts, chaos, options.speed)
        }
        None => options.timeouts,
    };
    let config = TransportConfig {
        cluster: name.clone(),
        incarnation: mcfed_transport::new_incarnation(),
        queues: prepared.member.cluster().queue_facts(),
        listen,
        peers: plan.peers,
        tls,
        max_frame: options.max_frame,
        timeouts,
        faults: None,
        resume: Some(mcfed_protocol::Resume {
            lineage: prepared.facts.lineage,
            epoch_unix_ms: prepared.facts.epoch_unix_ms,
        }),
    };
    let system = actix_rt::System::new();
    system.block_on(serve::serve(
        options,
        prepared,
        journal_failure,
        config,
        chaos,
        plan.sample_every,
    ))
}
