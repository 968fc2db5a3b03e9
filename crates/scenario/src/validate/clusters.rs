//! Clusters (`[[cluster]]`) and their hosts (`[[cluster.host]]`): names,
//! the draft each cluster's parts are gathered into, the check of each
//! configuration as its scheduler would make it, and the [`ClusterSpec`]s
//! built from the drafts.

use std::time::Duration;

use mcfed_cluster::{
    AdvanceReservationConfig, Cluster, ClusterConfig, ConfigLocation, Consumers, HostConfig,
    LimitConfig, MAX_GPUS,
};
use mcfed_forwarder::ScheduleMode;
use mcfed_protocol::{ClusterName, QueueName, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::check::Checker;
use crate::format::{RawCluster, RawParams, WordList};
use crate::locate::FieldPath;
use crate::model::ClusterSpec;

/// What validation learns about each cluster before building it.
pub(super) struct ClusterDraft {
    pub(super) name: ClusterName,
    pub(super) path: FieldPath,
    /// Host entry index of every expanded host.
    host_entries: Vec<usize>,
    /// Whether each lsb.params field the cluster may complain about was set
    /// by the cluster itself (else by the federation's `[params]`).
    own_params: Vec<&'static str>,
    pub(super) config: ClusterConfig,
    pub(super) mode: ScheduleMode,
    pub(super) max_forwards: u32,
    /// MC_UNREACHABLE_UPDATES (0: never stale).
    pub(super) unreachable_updates: u32,
    /// MC_RECLAIM_TIME (`None`: never).
    pub(super) reclaim_time: Option<Duration>,
    /// MAX_RSCHED_TIME of its send queues.
    pub(super) max_rsched_time: FxHashMap<QueueName, Duration>,
    /// Where its process listens.
    pub(super) address: Option<String>,
}

impl ClusterDraft {
    /// The field of the scenario a cluster's configuration problem is at.
    fn locate(&self, location: &ConfigLocation) -> FieldPath {
        match *location {
            ConfigLocation::Cluster { field } => {
                if self.own_params.contains(&field) {
                    self.path.key("params").key(field)
                } else {
                    FieldPath::root().key("params").key(field)
                }
            }
            ConfigLocation::Host { index, field } => self
                .path
                .key("host")
                .index(self.host_entries.get(index).copied().unwrap_or(0))
                .key(field),
            ConfigLocation::Queue { index, field } => {
                self.path.key("queue").index(index).key(field)
            }
            ConfigLocation::User { index, field } => self.path.key("user").index(index).key(field),
            ConfigLocation::UserGroup { index, field } => {
                self.path.key("user_group").index(index).key(field)
            }
            ConfigLocation::Limit { index, field } => {
                self.path.key("limit").index(index).key(field)
            }
            ConfigLocation::Reservation { index, field } => {
                self.path.key("reservation").index(index).key(field)
            }
        }
    }

    /// The cluster as a scenario runs it, without subscribers or jobs yet.
    fn spec(&self, drafts: &[ClusterDraft]) -> ClusterSpec {
        ClusterSpec {
            config: self.config.clone(),
            forwarder: super::links::forwarder(self, drafts),
            subscribers: Vec::new(),
            collectors: Vec::new(),
            initial_jobs: Vec::new(),
            address: self.address.clone(),
        }
    }
}

/// The hosts of a cluster, expanded.
struct Hosts<'r> {
    configs: Vec<HostConfig>,
    /// Host entry index of every expanded host.
    entries: Vec<usize>,
    /// The hosts each entry expands to, by the entry's name: a queue's
    /// HOSTS may name the entry for all of them.
    groups: FxHashMap<&'r str, Vec<String>>,
}

/// The clusters of a scenario, with their subscribers, from their drafts.
pub(super) fn specs(drafts: &[ClusterDraft]) -> Vec<ClusterSpec> {
    let mut specs: Vec<ClusterSpec> = drafts.iter().map(|draft| draft.spec(drafts)).collect();
    super::links::add_subscribers(&mut specs);
    specs
}

impl Checker<'_> {
    /// The name of every cluster (`None` where it is not a name), and the
    /// set of the valid ones; a name used twice is a problem.
    pub(super) fn cluster_names(
        &mut self,
        clusters: &[RawCluster],
    ) -> (Vec<Option<ClusterName>>, FxHashSet<ClusterName>) {
        let mut names: Vec<Option<ClusterName>> = Vec::new();
        let mut seen = FxHashSet::default();
        for (index, cluster) in clusters.iter().enumerate() {
            let path = FieldPath::root().key("cluster").index(index).key("name");
            let name: Option<ClusterName> = self.name(path.clone(), &cluster.name);
            if let Some(name) = &name {
                if !seen.insert(name.clone()) {
                    self.problem(path, format!("cluster `{name}` is defined twice"));
                }
            }
            names.push(name);
        }
        (names, seen)
    }

    /// Checks the cluster `raw`, at `path`, gathering its configuration.
    pub(super) fn cluster(
        &mut self,
        federation: &RawParams,
        raw: &RawCluster,
        name: ClusterName,
        path: FieldPath,
        known_clusters: &FxHashSet<ClusterName>,
    ) -> ClusterDraft {
        let forwarding = self.forwarding_params(federation, &raw.params, &path);
        let hosts = self.hosts(raw, &path);
        let address = self.address(raw, &path);
        let queues = self.queues(raw, &path, &hosts.groups, known_clusters);
        let params = self.scheduling_params(federation, raw, &path);
        let (users, user_groups) = self.users(raw, &path);
        let limits = resource_limits(raw, &hosts.groups);
        let mut config = ClusterConfig::new(name.clone());
        config.hosts = hosts.configs;
        config.queues = queues.configs;
        config.update_interval = forwarding.update_interval;
        config.params = params;
        config.users = users;
        config.user_groups = user_groups;
        config.limits = limits;
        config.advance_reservations = advance_reservations(raw, &hosts.groups);
        config.reservation_policies =
            self.reservation_policies(raw, &path, &hosts.groups, &config.hosts);
        ClusterDraft {
            path,
            host_entries: hosts.entries,
            own_params: raw.params.set_fields(),
            config,
            name,
            mode: forwarding.mode,
            max_forwards: forwarding.max_forwards,
            unreachable_updates: forwarding.unreachable_updates,
            reclaim_time: forwarding.reclaim_time,
            max_rsched_time: queues.max_rsched_time,
            address,
        }
    }

    /// The hosts of a cluster: each `[[cluster.host]]` is one host, or
    /// `count` of them named `name1`, `name2`, ….
    fn hosts<'r>(&mut self, raw: &'r RawCluster, path: &FieldPath) -> Hosts<'r> {
        let mut hosts = Hosts {
            configs: Vec::new(),
            entries: Vec::new(),
            groups: FxHashMap::default(),
        };
        for (index, host) in raw.host.iter().enumerate() {
            let host_path = path.key("host").index(index);
            if host.MXJ == 0 {
                self.problem(host_path.key("MXJ"), "MXJ must be at least 1");
            }
            if host.ngpus.is_some_and(|gpus| gpus > MAX_GPUS) {
                self.problem(
                    host_path.key("ngpus"),
                    format!("ngpus must be at most {MAX_GPUS}"),
                );
            }
            let names: Vec<String> = match host.count {
                None => vec![host.name.clone()],
                Some(0) => {
                    self.problem(host_path.key("count"), "count must be at least 1");
                    Vec::new()
                }
                Some(count) => (1..=count).map(|n| format!("{}{n}", host.name)).collect(),
            };
            for (key, name) in [("type", &host.host_type), ("model", &host.model)] {
                if let Some(name) = name.as_deref().filter(|name| {
                    name.is_empty() || !name.chars().all(mcfed_cluster::host_types::is_name_char)
                }) {
                    self.problem(
                        host_path.key(key),
                        format!("`{name}` is not a host {key} (letters, digits, `_`, `-`, `.`)"),
                    );
                }
            }
            if host.name.is_empty() || host.name.contains(char::is_whitespace) {
                self.problem(
                    host_path.key("name"),
                    format!("`{}` is not a host name", host.name),
                );
            }
            hosts.groups.insert(host.name.as_str(), names.clone());
            for name in names {
                let mut config = HostConfig::new(name, host.MXJ.max(1));
                config.resources = host.resources.clone();
                config.closed = host.closed;
                config.processors = host.ncpus;
                config.user_slot_limit = host.JL_U;
                config.memory_mb = host.memory_mb.unwrap_or(0);
                config.gpus = host.ngpus.unwrap_or(0).min(MAX_GPUS);
                config.host_type = host.host_type.clone();
                config.model = host.model.clone();
                hosts.configs.push(config);
                hosts.entries.push(index);
            }
        }
        hosts
    }

    /// Checks each cluster as its scheduler would: its errors are problems,
    /// its warnings are kept, each located in the scenario.
    pub(super) fn check_clusters(&mut self, drafts: &[ClusterDraft]) {
        for draft in drafts {
            match Cluster::new(draft.config.clone()) {
                Ok(cluster) => {
                    for warning in cluster.warnings() {
                        let path = draft.locate(&warning.location);
                        self.warning(path, warning.message.clone());
                    }
                }
                Err(error) => {
                    let path = draft.locate(&error.location);
                    self.problem(path, error.message);
                }
            }
        }
    }
}

/// The advance reservations of a cluster, a host entry's name standing for
/// all its hosts (the cluster checks names and values).
fn advance_reservations(
    raw: &RawCluster,
    host_groups: &FxHashMap<&str, Vec<String>>,
) -> Vec<AdvanceReservationConfig> {
    raw.reservation
        .iter()
        .map(|reservation| AdvanceReservationConfig {
            name: reservation.name.clone(),
            hosts: reservation
                .hosts
                .0
                .iter()
                .flat_map(|word| {
                    host_groups
                        .get(word.as_str())
                        .cloned()
                        .unwrap_or_else(|| vec![word.clone()])
                })
                .collect(),
            slots: reservation.slots,
            start: SimTime::from(reservation.start.0),
            end: SimTime::from(reservation.end.0),
            users: reservation.users.0.clone(),
            open: reservation.open,
        })
        .collect()
}

/// lsb.resources' Limit sections of a cluster, a host entry's name standing
/// for all its hosts (the cluster checks names and values).
fn resource_limits(
    raw: &RawCluster,
    host_groups: &FxHashMap<&str, Vec<String>>,
) -> Vec<LimitConfig> {
    let consumers =
        |words: &Option<WordList>| words.as_ref().map(|words| Consumers::from_words(&words.0));
    let hosts = |words: &Option<WordList>| {
        words.as_ref().map(|words| {
            let expanded: Vec<String> = words
                .0
                .iter()
                .flat_map(|word| {
                    let (prefix, name) = match word.strip_prefix('~') {
                        Some(name) => ("~", name),
                        None => ("", word.as_str()),
                    };
                    match host_groups.get(name) {
                        Some(group) => group.iter().map(|host| format!("{prefix}{host}")).collect(),
                        None => vec![word.clone()],
                    }
                })
                .collect();
            Consumers::from_words(&expanded)
        })
    };
    raw.limit
        .iter()
        .map(|limit| LimitConfig {
            name: limit.NAME.clone(),
            users: consumers(&limit.USERS),
            per_user: consumers(&limit.PER_USER),
            queues: consumers(&limit.QUEUES),
            per_queue: consumers(&limit.PER_QUEUE),
            hosts: hosts(&limit.HOSTS),
            per_host: hosts(&limit.PER_HOST),
            slots: limit.SLOTS,
            jobs: limit.JOBS,
        })
        .collect()
}
