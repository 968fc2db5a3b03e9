//! One cluster as an OS process (`mcfed cluster`): the same
//! [`MemberActor`] as the in-process actor engine, with the QUIC transport
//! in place of the router, inside one actix system.
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

use mcfed_chaos::{ChaosConfig, ChaosOverrides};
use mcfed_federation::BuildError;
use mcfed_protocol::{ClusterName, MAX_FRAME_SIZE};
use mcfed_scenario::ScenarioError;
use mcfed_scenario::model::{ClusterSpec, Scenario};
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

/// How long a forwarding session waits for the true counters of the
/// execution clusters (wall time) before it runs without judging its
/// decisions.
pub const DEFAULT_ORACLE_TIMEOUT: Duration = Duration::from_millis(500);

/// The port of the first cluster of a scenario when the scenario gives no
/// addresses; the others follow in scenario order.
pub const DEFAULT_BASE_PORT: u16 = 7100;

/// How long a process started without an emulated time zero (no
/// `--epoch-ms`, no journal) waits for a peer to tell it the federation's,
/// before it takes its own start.
pub const EPOCH_WAIT: Duration = Duration::from_secs(2);

/// Why a cluster process could not run.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The scenario is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The scenario has no such cluster.
    #[error("the scenario has no cluster `{name}` (it has {known})")]
    UnknownCluster {
        /// The name asked for.
        name: String,
        /// The clusters it has.
        known: String,
    },
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

/// Everything `mcfed cluster` takes.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The scenario file.
    pub scenario: PathBuf,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses.
    pub hosts: Option<PathBuf>,
    /// The cluster to run.
    pub name: String,
    /// The certificate directory (`mcfed certs init`).
    pub certs: PathBuf,
    /// A certificate file to use instead of the directory's.
    pub cert: Option<PathBuf>,
    /// Its key.
    pub key: Option<PathBuf>,
    /// Where to listen, instead of the scenario's address.
    pub listen: Option<String>,
    /// Peer addresses that override the scenario's: (cluster, host:port).
    pub peers: Vec<(String, String)>,
    /// The default port of the scenario's first cluster; 0: the OS picks
    /// this process's port, and a peer's address not given (by `peers` or
    /// the scenario) is learned from its hello.
    pub base_port: u16,
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
    /// Faults on every link from the command line, on top of the
    /// scenario's `[chaos]`.
    pub chaos: ChaosOverrides,
    /// Judge every decision by the oracle (on anyway with faults or when
    /// the scenario wants it).
    pub oracle: bool,
    /// How long a session waits for the true counters.
    pub oracle_timeout: Duration,
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
}

impl ClusterOptions {
    /// Options for cluster `name` of `scenario` with the defaults.
    pub fn new(scenario: PathBuf, name: String, certs: PathBuf) -> Self {
        ClusterOptions {
            scenario,
            hosts: None,
            name,
            certs,
            cert: None,
            key: None,
            listen: None,
            peers: Vec::new(),
            base_port: DEFAULT_BASE_PORT,
            speed: 1.0,
            epoch_unix_ms: None,
            exit_on_stdin_eof: false,
            report: LiveReport::Text,
            max_frame: MAX_FRAME_SIZE,
            timeouts: Timeouts::default(),
            chaos: ChaosOverrides::default(),
            oracle: false,
            oracle_timeout: DEFAULT_ORACLE_TIMEOUT,
            state: None,
            keep_journals: false,
            salvage: false,
            watch: None,
        }
    }
}

/// The address of cluster `index` of `scenario`: its `address` key, or
/// `127.0.0.1:(base_port + index)`.
pub fn default_address(scenario: &Scenario, index: usize, base_port: u16) -> String {
    scenario.clusters[index].address.clone().unwrap_or_else(|| {
        let port = u16::try_from(index)
            .ok()
            .and_then(|offset| base_port.checked_add(offset))
            .unwrap_or(base_port);
        format!("127.0.0.1:{port}")
    })
}

/// What each cluster's certificate should name: the host of its address
/// (the scenario's `address`, or a hosts file's), this machine's loopback
/// names when it has none, and the `extra` hosts given for it.
pub fn certificate_hosts(
    scenario: &Scenario,
    extra: &[(String, String)],
) -> Vec<mcfed_transport::certs::ClusterHosts> {
    let clusters: Vec<(String, Option<&str>)> = scenario
        .clusters
        .iter()
        .map(|spec| (spec.config.name.to_string(), spec.address.as_deref()))
        .collect();
    hosts_of_clusters(&clusters, extra)
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

/// The address of cluster `index` of `scenario` if it can be known
/// beforehand: its `address` key, or with a `base_port` other than 0
/// `127.0.0.1:(base_port + index)`; with 0 the OS picks ports, so only the
/// scenario's addresses are known.
pub fn known_address(scenario: &Scenario, index: usize, base_port: u16) -> Option<String> {
    match base_port {
        0 => scenario.clusters[index].address.clone(),
        _ => Some(default_address(scenario, index, base_port)),
    }
}

/// The position of cluster `name` in `scenario`.
pub fn cluster_index(scenario: &Scenario, name: &str) -> Result<usize, NodeError> {
    scenario
        .clusters
        .iter()
        .position(|spec| spec.config.name == name)
        .ok_or_else(|| NodeError::UnknownCluster {
            name: name.to_owned(),
            known: scenario
                .clusters
                .iter()
                .map(|spec| format!("`{}`", spec.config.name))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The clusters `spec` exchanges messages with: those it sends to and
/// those that send to it.
pub fn peers_of(spec: &ClusterSpec) -> Vec<ClusterName> {
    let mut peers: Vec<ClusterName> = spec.subscribers.clone();
    if let Some(forwarder) = &spec.forwarder {
        for queue in &forwarder.send_queues {
            for target in &queue.send_to {
                if !peers.contains(&target.cluster) {
                    peers.push(target.cluster.clone());
                }
            }
        }
    }
    peers
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

/// Runs cluster `options.name` until it is told to stop (an admin
/// shutdown, Ctrl-C, SIGTERM, or standard input closing with
/// `exit_on_stdin_eof`).
pub fn run_cluster(options: ClusterOptions) -> Result<(), NodeError> {
    let scenario =
        mcfed_scenario::hosts::load_with_hosts(&options.scenario, options.hosts.as_deref())?;
    let index = cluster_index(&scenario, &options.name)?;
    let spec = scenario.clusters[index].clone();
    let name = spec.config.name.clone();
    let tls = match (&options.cert, &options.key) {
        (Some(cert), Some(key)) => FederationTls::load_files(
            &mcfed_transport::certs::ca_cert_path(&options.certs),
            cert,
            key,
            None,
        )?,
        _ => FederationTls::load(&options.certs, Role::Cluster, name.as_str())?,
    };
    let listen_text = options
        .listen
        .clone()
        .unwrap_or_else(|| default_address(&scenario, index, options.base_port));
    let listen = resolve(&format!("cluster `{name}`"), &listen_text)?;
    let mut peers = Vec::new();
    for peer in peers_of(&spec) {
        let address = match options
            .peers
            .iter()
            .find(|(cluster, _)| cluster == peer.as_str())
        {
            Some((_, address)) => Some(address.clone()),
            None => known_address(
                &scenario,
                cluster_index(&scenario, peer.as_str())?,
                options.base_port,
            ),
        };
        peers.push(Peer {
            name: peer,
            address,
        });
    }
    let (failed, journal_failure) = tokio::sync::mpsc::unbounded_channel();
    let mut prepared = state::prepare(&options, &spec, move |why| {
        let _ = failed.send(why);
    })?;
    // A process answers bjobs -a, bhist and bacct: it keeps its jobs'
    // history for CLEAN_PERIOD (after a restart, from the jobs restored).
    prepared.member.keep_history(
        spec.config
            .params
            .clean_period
            .unwrap_or(mcfed_cluster::DEFAULT_CLEAN_PERIOD),
    );
    let chaos = options
        .chaos
        .apply(scenario.chaos.as_ref(), scenario.seed)
        .filter(ChaosConfig::is_active);
    let oracle = options.oracle || chaos.is_some() || scenario.wants_oracle();
    if oracle {
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
        peers,
        tls,
        max_frame: options.max_frame,
        timeouts,
        faults: None,
        resume: Some(mcfed_protocol::Resume {
            lineage: prepared.facts.lineage,
            epoch_unix_ms: prepared.facts.epoch_unix_ms,
        }),
    };
    // Slot usage is sampled as in-process runs sample it: every shortest
    // update interval of the federation, from emulated time zero.
    let sample_every = Some(scenario.sample_interval());
    let system = actix_rt::System::new();
    system.block_on(serve::serve(
        options,
        prepared,
        journal_failure,
        config,
        chaos,
        sample_every,
    ))
}
