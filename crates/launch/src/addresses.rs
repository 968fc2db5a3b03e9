//! Where a scenario's clusters are: their addresses (the scenario's
//! `address` keys, a hosts file's, or `127.0.0.1` from a base port), what
//! their certificates name, whom each dials — and the plan of one cluster's
//! process (`mcfed cluster`) drawn from all of it.

use std::path::{Path, PathBuf};

use mcfed_chaos::ChaosOverrides;
use mcfed_process::ClusterPlan;
use mcfed_protocol::ClusterName;
use mcfed_scenario::Scenario;
use mcfed_scenario::ScenarioError;
use mcfed_scenario::model::ClusterSpec;
use mcfed_transport::Peer;

use mcfed_process::process::hosts_of_clusters;

/// The port of the first cluster of a scenario when the scenario gives no
/// addresses; the others follow in scenario order.
pub const DEFAULT_BASE_PORT: u16 = 7100;

/// Why a scenario's cluster cannot be placed.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
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
    /// No address was given and there is no scenario to find it in.
    #[error("give the cluster's address (--address) or the scenario that lists it (--scenario)")]
    NoAddress,
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
pub fn cluster_index(scenario: &Scenario, name: &str) -> Result<usize, PlanError> {
    scenario
        .clusters
        .iter()
        .position(|spec| spec.config.name == name)
        .ok_or_else(|| PlanError::UnknownCluster {
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

/// How to draw one cluster's plan from a scenario (`mcfed cluster`'s
/// scenario flags).
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// The scenario file.
    pub scenario: PathBuf,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses.
    pub hosts: Option<PathBuf>,
    /// The cluster.
    pub name: String,
    /// Where to listen, instead of the scenario's address.
    pub listen: Option<String>,
    /// Peer addresses that override the scenario's: (cluster, host:port).
    pub peers: Vec<(String, String)>,
    /// The default port of the scenario's first cluster; 0: the OS picks
    /// this process's port, and a peer's address not given (by `peers` or
    /// the scenario) is learned from its hello.
    pub base_port: u16,
    /// Faults on every link from the command line, on top of the
    /// scenario's `[chaos]`.
    pub chaos: ChaosOverrides,
    /// Judge every decision by the oracle (on anyway with faults or when
    /// the scenario wants it).
    pub oracle: bool,
}

impl PlanOptions {
    /// The defaults for cluster `name` of `scenario`.
    pub fn new(scenario: PathBuf, name: String) -> Self {
        PlanOptions {
            scenario,
            hosts: None,
            name,
            listen: None,
            peers: Vec::new(),
            base_port: DEFAULT_BASE_PORT,
            chaos: ChaosOverrides::default(),
            oracle: false,
        }
    }
}

/// The plan of cluster `options.name` of its scenario: its member, where
/// it listens and whom it dials, its faults and oracle, and how often it
/// samples its slots (every shortest update interval of the federation,
/// as in-process runs do).
pub fn plan_cluster(options: &PlanOptions) -> Result<ClusterPlan, PlanError> {
    let scenario =
        mcfed_scenario::hosts::load_with_hosts(&options.scenario, options.hosts.as_deref())?;
    let index = cluster_index(&scenario, &options.name)?;
    let spec = &scenario.clusters[index];
    let listen = options
        .listen
        .clone()
        .unwrap_or_else(|| default_address(&scenario, index, options.base_port));
    let mut peers = Vec::new();
    for peer in peers_of(spec) {
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
    let chaos = options.chaos.apply(scenario.chaos.as_ref(), scenario.seed);
    Ok(ClusterPlan {
        member: spec.member_config(),
        initial_jobs: spec.initial_jobs.clone(),
        listen,
        peers,
        chaos,
        oracle: options.oracle || scenario.wants_oracle(),
        sample_every: Some(scenario.sample_interval()),
    })
}

/// The address of cluster `cluster`: `address` if given, else the
/// scenario's (with `hosts` over it, from `base_port`).
pub fn address_of(
    cluster: &str,
    address: Option<&str>,
    scenario: Option<&Path>,
    hosts: Option<&Path>,
    base_port: u16,
) -> Result<String, PlanError> {
    if let Some(address) = address {
        return Ok(address.to_owned());
    }
    let path = scenario.ok_or(PlanError::NoAddress)?;
    let scenario = mcfed_scenario::hosts::load_with_hosts(path, hosts)?;
    let index = cluster_index(&scenario, cluster)?;
    Ok(default_address(&scenario, index, base_port))
}
