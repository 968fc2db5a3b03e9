//! Turning a scenario file into a [`Scenario`], or into every problem found
//! in it, each with its file, line and field.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, ConfigLocation, DEFAULT_IMPT_JOBBKLG, DEFAULT_PRIORITY, HostConfig,
    HostSelection, JobState, Preemption, QueueConfig, ReceiveFrom,
};
use mcfed_forwarder::{DEFAULT_MAX_FORWARDS, ForwarderConfig, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, QueueRef, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::chaos::{ChaosConfig, DEFAULT_RETRANSMIT, LinkFaults, Outage, Partition};
use crate::format::{RawChaos, RawCluster, RawJob, RawLink, RawParams, RawScenario};
use crate::locate::{FieldPath, Locator, Problem, ScenarioError};
use crate::model::{ClusterSpec, ExpectKind, Expectation, InitialJobs, Scenario, Submission};
use crate::validate_expect::JobIndex;

/// MC_PLUGIN_UPDATE_INTERVAL when no `params` table sets it.
pub const DEFAULT_UPDATE_INTERVAL: Duration = Duration::from_secs(30);
/// A job's run time when the scenario gives none.
pub const DEFAULT_RUN_TIME: Duration = Duration::from_secs(3600);
/// A job's user when the scenario gives none.
pub const DEFAULT_USER: &str = "user1";

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        file: file.clone(),
        source,
    })?;
    parse(&file, &source)
}

/// Validates scenario text; `file` names it in errors.
pub fn parse(file: &str, source: &str) -> Result<Scenario, ScenarioError> {
    let locator = Locator::new(source);
    let invalid = |problems: Vec<Problem>| ScenarioError::Invalid {
        file: file.to_owned(),
        problems,
    };
    let deserializer = toml::de::Deserializer::parse(source).map_err(|error| {
        let (line, column) = error
            .span()
            .map_or((0, 0), |span| locator.line_column(span.start));
        invalid(vec![Problem {
            field: FieldPath::root(),
            line,
            column,
            message: format!("not valid TOML: {}", error.message()),
        }])
    })?;
    let raw: RawScenario = serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let field = FieldPath::from_serde(error.path());
        let inner = error.into_inner();
        let (line, column) = match inner.span() {
            Some(span) => locator.line_column(span.start),
            None => locator
                .span(&field)
                .map_or((0, 0), |span| locator.line_column(span.start)),
        };
        invalid(vec![Problem {
            field,
            line,
            column,
            message: inner.message().to_owned(),
        }])
    })?;
    let mut checker = Checker {
        locator: &locator,
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    let mut scenario = checker.scenario(raw);
    if checker.problems.is_empty() {
        scenario.warnings = checker.warnings;
        Ok(scenario)
    } else {
        Err(invalid(checker.problems))
    }
}

/// Collects every problem of a scenario file, each located.
pub(crate) struct Checker<'a> {
    locator: &'a Locator<'a>,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
}

/// What validation learns about each cluster before building it.
struct ClusterDraft {
    name: ClusterName,
    path: FieldPath,
    /// Host entry index of every expanded host.
    host_entries: Vec<usize>,
    /// Whether each lsb.params field the cluster may complain about was set
    /// by the cluster itself (else by the federation's `[params]`).
    own_params: Vec<&'static str>,
    config: ClusterConfig,
    mode: ScheduleMode,
    max_forwards: u32,
    /// MAX_RSCHED_TIME of its send queues.
    max_rsched_time: FxHashMap<QueueName, Duration>,
    /// Where its process listens.
    address: Option<String>,
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
        }
    }
}

impl Checker<'_> {
    pub(crate) fn problem(&mut self, path: FieldPath, message: impl Into<String>) {
        let problem = self.locator.problem(path, message);
        self.problems.push(problem);
    }

    fn name<T: FromStr<Err = mcfed_protocol::NameError>>(
        &mut self,
        path: FieldPath,
        text: &str,
    ) -> Option<T> {
        match text.parse() {
            Ok(name) => Some(name),
            Err(error) => {
                self.problem(path, error.to_string());
                None
            }
        }
    }

    fn scenario(&mut self, raw: RawScenario) -> Scenario {
        let root = FieldPath::root();
        if raw.cluster.is_empty() {
            self.problem(
                root.key("cluster"),
                "a scenario needs at least one [[cluster]]",
            );
        }
        // Cluster names first: queues refer to other clusters.
        let mut names: Vec<Option<ClusterName>> = Vec::new();
        let mut seen = FxHashSet::default();
        for (index, cluster) in raw.cluster.iter().enumerate() {
            let path = root.key("cluster").index(index).key("name");
            let name: Option<ClusterName> = self.name(path.clone(), &cluster.name);
            if let Some(name) = &name {
                if !seen.insert(name.clone()) {
                    self.problem(path, format!("cluster `{name}` is defined twice"));
                }
            }
            names.push(name);
        }
        let mut drafts: Vec<ClusterDraft> = Vec::new();
        for (index, (cluster, name)) in raw.cluster.iter().zip(&names).enumerate() {
            let Some(name) = name else { continue };
            let path = root.key("cluster").index(index);
            drafts.push(self.cluster(&raw.params, cluster, name.clone(), path, &seen));
        }
        self.check_send_targets(&drafts);

        // Check each cluster as its scheduler would.
        for draft in &drafts {
            match Cluster::new(draft.config.clone()) {
                Ok(cluster) => {
                    for warning in cluster.warnings() {
                        let path = draft.locate(&warning.location);
                        let located = self.locator.problem(path, warning.message.clone());
                        self.warnings.push(located);
                    }
                }
                Err(error) => {
                    let path = draft.locate(&error.location);
                    self.problem(path, error.message);
                }
            }
        }

        let mut specs: Vec<ClusterSpec> = drafts
            .iter()
            .map(|draft| {
                let send_queues: Vec<SendQueueConfig> = draft
                    .config
                    .queues
                    .iter()
                    .filter(|queue| !queue.send_to.is_empty())
                    .map(|queue| SendQueueConfig {
                        name: queue.name.clone(),
                        send_to: queue.send_to.clone(),
                        max_rsched_time: draft.max_rsched_time.get(&queue.name).copied(),
                    })
                    .collect();
                let forwarder = (!send_queues.is_empty()).then(|| ForwarderConfig {
                    cluster: draft.name.clone(),
                    mode: draft.mode,
                    send_queues,
                    max_forwards: draft.max_forwards,
                });
                ClusterSpec {
                    config: draft.config.clone(),
                    forwarder,
                    subscribers: Vec::new(),
                    initial_jobs: Vec::new(),
                    address: draft.address.clone(),
                }
            })
            .collect();
        // Subscribers: submission clusters that send to a cluster.
        for index in 0..specs.len() {
            let target = specs[index].config.name.clone();
            let subscribers: Vec<ClusterName> = specs
                .iter()
                .filter(|spec| {
                    spec.forwarder.as_ref().is_some_and(|forwarder| {
                        forwarder
                            .send_queues
                            .iter()
                            .any(|queue| queue.send_to.iter().any(|at| at.cluster == target))
                    })
                })
                .map(|spec| spec.config.name.clone())
                .collect();
            specs[index].subscribers = subscribers;
        }

        let mut expectations = Vec::new();
        let mut job_counter = 0usize;
        let mut initial_names: FxHashMap<String, Vec<ClusterName>> = FxHashMap::default();
        for (cluster_index, cluster) in raw.cluster.iter().enumerate() {
            let Some(spec_index) = specs
                .iter()
                .position(|spec| names[cluster_index].as_ref() == Some(&spec.config.name))
            else {
                continue;
            };
            for (group_index, job) in cluster.job.iter().enumerate() {
                let path = root
                    .key("cluster")
                    .index(cluster_index)
                    .key("job")
                    .index(group_index);
                let Some((queue, jobs)) =
                    self.jobs(&path, job, &specs[spec_index], false, &mut job_counter)
                else {
                    continue;
                };
                let group = specs[spec_index].initial_jobs.len();
                for spec in &jobs {
                    initial_names
                        .entry(spec.name.to_string())
                        .or_default()
                        .push(specs[spec_index].config.name.clone());
                }
                if let Some(state) = &job.state {
                    let state = match state.as_str() {
                        "running" | "RUN" => Some(JobState::Running),
                        "pending" | "PEND" => Some(JobState::Pending),
                        other => {
                            self.problem(
                                path.key("state"),
                                format!("state must be `running` or `pending`, not `{other}`"),
                            );
                            None
                        }
                    };
                    if let Some(state) = state {
                        expectations.push(Expectation {
                            kind: ExpectKind::InitialState {
                                cluster: specs[spec_index].config.name.clone(),
                                group,
                                state,
                            },
                            reason_contains: None,
                            origin: path.key("state").to_string(),
                        });
                    }
                }
                specs[spec_index]
                    .initial_jobs
                    .push(InitialJobs { queue, jobs });
            }
        }

        let mut submissions = Vec::new();
        let mut seen_names: FxHashSet<String> = FxHashSet::default();
        for (index, job) in raw.submit.iter().enumerate() {
            let path = root.key("submit").index(index);
            let Some(submitted) = self.submission(&path, job, &specs, &mut job_counter) else {
                continue;
            };
            for submission in submitted {
                if !seen_names.insert(submission.spec.name.to_string()) {
                    self.problem(
                        path.key("name"),
                        format!("job name `{}` is used twice", submission.spec.name),
                    );
                }
                submissions.push(submission);
            }
        }
        submissions.sort_by_key(|submission| submission.at);
        let jobs = JobIndex::new(&submissions, initial_names);

        for (index, expect) in raw.expect.iter().enumerate() {
            let path = root.key("expect").index(index);
            if let Some(expectation) = self.expectation(&path, expect, &jobs, &specs) {
                expectations.push(expectation);
            }
        }

        let end = match raw.end {
            Some(end) => SimTime::from(end.0),
            None => {
                let last = submissions.last().map_or(SimTime::ZERO, |s| s.at);
                let longest = specs
                    .iter()
                    .filter_map(|spec| spec.config.update_interval)
                    .max()
                    .unwrap_or(DEFAULT_UPDATE_INTERVAL);
                last + longest * 3
            }
        };
        let seed = raw.seed.unwrap_or(0);
        let chaos = raw.chaos.as_ref().map(|chaos| {
            let known: Vec<ClusterName> =
                specs.iter().map(|spec| spec.config.name.clone()).collect();
            self.chaos(&root.key("chaos"), chaos, seed, &known)
        });
        Scenario {
            name: raw.name.unwrap_or_else(|| "unnamed scenario".to_owned()),
            description: raw.description.unwrap_or_default(),
            seed,
            chaos,
            end,
            clusters: specs,
            submissions,
            expectations,
            warnings: Vec::new(),
        }
    }

    fn cluster(
        &mut self,
        federation: &RawParams,
        raw: &RawCluster,
        name: ClusterName,
        path: FieldPath,
        known_clusters: &FxHashSet<ClusterName>,
    ) -> ClusterDraft {
        // lsb.params: the cluster's own value wins over the federation's.
        let params_path = |own: bool| {
            if own {
                path.key("params")
            } else {
                FieldPath::root().key("params")
            }
        };
        let interval = match (
            &raw.params.MC_PLUGIN_UPDATE_INTERVAL,
            &federation.MC_PLUGIN_UPDATE_INTERVAL,
        ) {
            (Some(own), _) => Some((own.0, true)),
            (None, Some(shared)) => Some((shared.0, false)),
            (None, None) => None,
        };
        let update_interval = match interval {
            Some((interval, _)) if !interval.is_zero() => interval,
            Some((_, own)) => {
                self.problem(
                    params_path(own).key("MC_PLUGIN_UPDATE_INTERVAL"),
                    "MC_PLUGIN_UPDATE_INTERVAL must be longer than zero",
                );
                DEFAULT_UPDATE_INTERVAL
            }
            None => DEFAULT_UPDATE_INTERVAL,
        };
        let mode_text = match (
            &raw.params.MC_PLUGIN_SCHEDULE_ENHANCE,
            &federation.MC_PLUGIN_SCHEDULE_ENHANCE,
        ) {
            (Some(own), _) => Some((own.as_str(), true)),
            (None, Some(shared)) => Some((shared.as_str(), false)),
            (None, None) => None,
        };
        let mode = match mode_text {
            None => ScheduleMode::Default,
            Some((text, own)) => match text.parse::<ScheduleMode>() {
                Ok(mode) => mode,
                Err(error) => {
                    self.problem(
                        params_path(own).key("MC_PLUGIN_SCHEDULE_ENHANCE"),
                        error.to_string(),
                    );
                    ScheduleMode::Default
                }
            },
        };
        let max_forwards = raw
            .params
            .MAX_FORWARDS
            .or(federation.MAX_FORWARDS)
            .unwrap_or(DEFAULT_MAX_FORWARDS);

        let mut hosts = Vec::new();
        let mut host_entries = Vec::new();
        let mut host_groups: FxHashMap<&str, Vec<String>> = FxHashMap::default();
        for (index, host) in raw.host.iter().enumerate() {
            let host_path = path.key("host").index(index);
            if host.MXJ == 0 {
                self.problem(host_path.key("MXJ"), "MXJ must be at least 1");
            }
            let names: Vec<String> = match host.count {
                None => vec![host.name.clone()],
                Some(0) => {
                    self.problem(host_path.key("count"), "count must be at least 1");
                    Vec::new()
                }
                Some(count) => (1..=count).map(|n| format!("{}{n}", host.name)).collect(),
            };
            if host.name.is_empty() || host.name.contains(char::is_whitespace) {
                self.problem(
                    host_path.key("name"),
                    format!("`{}` is not a host name", host.name),
                );
            }
            host_groups.insert(host.name.as_str(), names.clone());
            for name in names {
                let mut config = HostConfig::new(name, host.MXJ.max(1));
                config.resources = host.resources.clone();
                config.closed = host.closed;
                config.processors = host.ncpus;
                config.user_slot_limit = host.JL_U;
                config.memory_mb = host.memory_mb.unwrap_or(0);
                hosts.push(config);
                host_entries.push(index);
            }
        }

        let address = raw.address.as_ref().and_then(|address| {
            let port = address
                .rsplit_once(':')
                .filter(|(host, _)| !host.is_empty())
                .and_then(|(_, port)| port.parse::<u16>().ok());
            match port {
                Some(_) => Some(address.clone()),
                None => {
                    self.problem(
                        path.key("address"),
                        format!("`{address}` is not an address of the form host:port"),
                    );
                    None
                }
            }
        });
        let mut max_rsched_time = FxHashMap::default();
        let mut queues = Vec::new();
        for (index, queue) in raw.queue.iter().enumerate() {
            let queue_path = path.key("queue").index(index);
            let Some(queue_name) = self.name::<QueueName>(queue_path.key("name"), &queue.name)
            else {
                continue;
            };
            let mut config = QueueConfig::new(queue_name);
            config.priority = queue.PRIORITY.unwrap_or(DEFAULT_PRIORITY);
            if let Some(text) = &queue.PREEMPTION {
                match text.parse::<Preemption>() {
                    Ok(preemption) => config.preemption = preemption,
                    Err(error) => self.problem(queue_path.key("PREEMPTION"), error.to_string()),
                }
            }
            config.job_limit = queue.QJOB_LIMIT;
            self.queue_policies(queue, &queue_path, &mut config);
            if let Some(hosts_list) = &queue.HOSTS {
                let words = &hosts_list.0;
                if !(words.len() == 1 && words[0] == "all") {
                    let mut listed = Vec::new();
                    for word in words {
                        match host_groups.get(word.as_str()) {
                            Some(group) => listed.extend(group.iter().cloned()),
                            None => listed.push(word.clone()),
                        }
                    }
                    config.hosts = HostSelection::Listed(listed);
                }
            }
            if let Some(from) = &queue.RCVJOBS_FROM {
                let words = &from.0;
                if words.iter().any(|word| word == "allclusters") {
                    config.receive_from = Some(ReceiveFrom::All);
                } else {
                    let mut clusters = Vec::new();
                    for (position, word) in words.iter().enumerate() {
                        let entry = queue_path.key("RCVJOBS_FROM").index(position);
                        let Some(cluster) = self.name::<ClusterName>(entry.clone(), word) else {
                            continue;
                        };
                        if !known_clusters.contains(&cluster) {
                            self.problem(
                                entry,
                                format!(
                                    "queue `{}` receives from unknown cluster `{cluster}`",
                                    queue.name
                                ),
                            );
                        }
                        clusters.push(cluster);
                    }
                    if clusters.is_empty() {
                        self.problem(
                            queue_path.key("RCVJOBS_FROM"),
                            "RCVJOBS_FROM lists no cluster",
                        );
                    }
                    config.receive_from = Some(ReceiveFrom::Listed(clusters));
                }
            }
            config.impt_jobbklg = match queue.IMPT_JOBBKLG {
                Some(backlog) => backlog.0,
                None => Some(DEFAULT_IMPT_JOBBKLG),
            };
            if let Some(targets) = &queue.SNDJOBS_TO {
                for (position, word) in targets.0.iter().enumerate() {
                    let entry = queue_path.key("SNDJOBS_TO").index(position);
                    match word.parse::<QueueRef>() {
                        Ok(at) => config.send_to.push(at),
                        Err(error) => self.problem(entry, error.to_string()),
                    }
                }
                if targets.0.is_empty() {
                    self.problem(queue_path.key("SNDJOBS_TO"), "SNDJOBS_TO lists no queue");
                }
            }
            if let Some(limit) = queue.MAX_RSCHED_TIME {
                if queue.SNDJOBS_TO.is_none() {
                    self.problem(
                        queue_path.key("MAX_RSCHED_TIME"),
                        "MAX_RSCHED_TIME applies to send queues (with SNDJOBS_TO)",
                    );
                } else if limit.0.is_zero() {
                    self.problem(
                        queue_path.key("MAX_RSCHED_TIME"),
                        "MAX_RSCHED_TIME must be longer than zero",
                    );
                } else {
                    max_rsched_time.insert(config.name.clone(), limit.0);
                }
            }
            queues.push(config);
        }
        let params = self.scheduling_params(federation, raw, &path);
        let (users, user_groups) = self.users(raw, &path);
        let mut config = ClusterConfig::new(name.clone());
        config.hosts = hosts;
        config.queues = queues;
        config.update_interval = Some(update_interval);
        config.params = params;
        config.users = users;
        config.user_groups = user_groups;
        ClusterDraft {
            path,
            host_entries,
            own_params: raw.params.set_fields(),
            config,
            name,
            mode,
            max_forwards,
            max_rsched_time,
            address,
        }
    }

    /// Every SNDJOBS_TO entry must name a queue of another cluster that
    /// receives from this one.
    fn check_send_targets(&mut self, drafts: &[ClusterDraft]) {
        for draft in drafts {
            for (queue_index, queue) in draft.config.queues.iter().enumerate() {
                for (position, at) in queue.send_to.iter().enumerate() {
                    let entry = draft
                        .path
                        .key("queue")
                        .index(queue_index)
                        .key("SNDJOBS_TO")
                        .index(position);
                    if at.cluster == draft.name {
                        self.problem(
                            entry,
                            format!("queue `{}` sends to its own cluster ({at})", queue.name),
                        );
                        continue;
                    }
                    let Some(target) = drafts.iter().find(|other| other.name == at.cluster) else {
                        self.problem(
                            entry,
                            format!(
                                "queue `{}` sends to unknown cluster `{}` ({at})",
                                queue.name, at.cluster
                            ),
                        );
                        continue;
                    };
                    let Some(receiver) = target.config.queues.iter().find(|q| q.name == at.queue)
                    else {
                        self.problem(
                            entry,
                            format!(
                                "cluster `{}` has no queue `{}` ({at})",
                                at.cluster, at.queue
                            ),
                        );
                        continue;
                    };
                    match &receiver.receive_from {
                        Some(from) if from.accepts(&draft.name) => {}
                        Some(_) => self.problem(
                            entry,
                            format!("{at} does not receive jobs from `{}`: add it to that queue's RCVJOBS_FROM", draft.name),
                        ),
                        None => self.problem(
                            entry,
                            format!("{at} is not a receive queue: set RCVJOBS_FROM on it"),
                        ),
                    }
                }
            }
        }
    }

    fn known_cluster(
        &mut self,
        path: FieldPath,
        text: &str,
        known: &[ClusterName],
    ) -> Option<ClusterName> {
        let name: ClusterName = self.name(path.clone(), text)?;
        if known.contains(&name) {
            Some(name)
        } else {
            self.problem(path, format!("unknown cluster `{name}`"));
            None
        }
    }

    fn probability(&mut self, path: FieldPath, value: Option<f64>) -> f64 {
        match value {
            None => 0.0,
            Some(p) if p.is_finite() && (0.0..=1.0).contains(&p) => p,
            Some(p) => {
                self.problem(
                    path,
                    format!("a probability must be between 0 and 1, not {p}"),
                );
                0.0
            }
        }
    }

    fn link_faults(&mut self, path: &FieldPath, raw: &RawLink) -> LinkFaults {
        let delay = raw.delay.map_or(Duration::ZERO, |d| d.0);
        LinkFaults {
            delay,
            jitter: raw.jitter.map_or(Duration::ZERO, |d| d.0),
            loss: self.probability(path.key("loss"), raw.loss),
            duplicate: self.probability(path.key("duplicate"), raw.duplicate),
            reorder: self.probability(path.key("reorder"), raw.reorder),
            reorder_delay: raw
                .reorder_delay
                .map_or(delay * 2 + Duration::from_secs(1), |d| d.0),
            retransmit: raw.retransmit.map_or(DEFAULT_RETRANSMIT, |d| d.0),
        }
    }

    fn chaos(
        &mut self,
        path: &FieldPath,
        raw: &RawChaos,
        seed: u64,
        known: &[ClusterName],
    ) -> ChaosConfig {
        let mut config = ChaosConfig {
            seed: raw.seed.unwrap_or(seed),
            ..ChaosConfig::default()
        };
        if let Some(links) = &raw.links {
            let links_path = path.key("links");
            if links.from.is_some() || links.to.is_some() {
                self.problem(links_path.clone(), "[chaos.links] applies to every link; name one link in a [[chaos.link]] with `from` and `to`");
            }
            config.default_link = self.link_faults(&links_path, links);
        }
        for (index, link) in raw.link.iter().enumerate() {
            let link_path = path.key("link").index(index);
            let faults = self.link_faults(&link_path, link);
            let ends = match (&link.from, &link.to) {
                (Some(from), Some(to)) => (
                    self.known_cluster(link_path.key("from"), from, known),
                    self.known_cluster(link_path.key("to"), to, known),
                ),
                _ => {
                    self.problem(link_path.clone(), "a [[chaos.link]] needs `from` and `to`");
                    (None, None)
                }
            };
            if let (Some(from), Some(to)) = ends {
                config.links.push((from, to, faults));
            }
        }
        for (index, partition) in raw.partition.iter().enumerate() {
            let entry = path.key("partition").index(index);
            if partition.between.len() != 2 {
                self.problem(entry.key("between"), "`between` names exactly two clusters");
                continue;
            }
            let a = self.known_cluster(entry.key("between").index(0), &partition.between[0], known);
            let b = self.known_cluster(entry.key("between").index(1), &partition.between[1], known);
            if partition.until.0 <= partition.from.0 {
                self.problem(entry.key("until"), "a partition must heal after it starts");
                continue;
            }
            if let (Some(a), Some(b)) = (a, b) {
                config.partitions.push(Partition {
                    a,
                    b,
                    from: SimTime::from(partition.from.0),
                    until: SimTime::from(partition.until.0),
                });
            }
        }
        for (index, outage) in raw.outage.iter().enumerate() {
            let entry = path.key("outage").index(index);
            if outage.down_for.0.is_zero() {
                self.problem(entry.key("down_for"), "an outage lasts longer than zero");
                continue;
            }
            if let Some(cluster) = self.known_cluster(entry.key("cluster"), &outage.cluster, known)
            {
                let at = SimTime::from(outage.at.0);
                config.outages.push(Outage {
                    cluster,
                    at,
                    until: at + outage.down_for.0,
                });
            }
        }
        for (index, skew) in raw.skew.iter().enumerate() {
            let entry = path.key("skew").index(index);
            let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
            let offset = match (skew.ahead, skew.behind) {
                (Some(ahead), None) => millis(ahead.0),
                (None, Some(behind)) => -millis(behind.0),
                _ => {
                    self.problem(
                        entry.clone(),
                        "a [[chaos.skew]] needs exactly one of `ahead` and `behind`",
                    );
                    continue;
                }
            };
            if let Some(cluster) = self.known_cluster(entry.key("cluster"), &skew.cluster, known) {
                config.skews.push((cluster, offset));
            }
        }
        config
    }

    /// Expands a job entry into job specs, checking its fields.
    fn jobs(
        &mut self,
        path: &FieldPath,
        raw: &RawJob,
        cluster: &ClusterSpec,
        submitted: bool,
        counter: &mut usize,
    ) -> Option<(String, Vec<JobSpec>)> {
        let mut ok = true;
        if !submitted {
            if raw.at.is_some() {
                self.problem(
                    path.key("at"),
                    "`at` belongs in [[submit]]; jobs under [[cluster.job]] are present at start",
                );
                ok = false;
            }
            if raw.cluster.is_some() {
                self.problem(
                    path.key("cluster"),
                    "`cluster` belongs in [[submit]]; this job is already inside its cluster",
                );
                ok = false;
            }
        } else if raw.state.is_some() {
            self.problem(
                path.key("state"),
                "`state` is only for jobs present at start ([[cluster.job]])",
            );
            ok = false;
        }
        let Some(queue) = cluster
            .config
            .queues
            .iter()
            .find(|q| q.name == raw.queue.as_str())
        else {
            self.problem(
                path.key("queue"),
                format!(
                    "cluster `{}` has no queue `{}`",
                    cluster.config.name, raw.queue
                ),
            );
            return None;
        };
        if !submitted && !queue.send_to.is_empty() {
            self.problem(
                path.key("queue"),
                format!(
                    "`{}` is a send queue; jobs present at start must be in local queues",
                    raw.queue
                ),
            );
            ok = false;
        }
        let slots = raw.slots.unwrap_or(1);
        if slots == 0 {
            self.problem(path.key("slots"), "a job needs at least one slot");
            ok = false;
        }
        let count = raw.count.unwrap_or(1);
        if count == 0 {
            self.problem(path.key("count"), "count must be at least 1");
            ok = false;
        }
        if let Some(cpu) = raw.cpu_utilisation {
            if !(cpu.is_finite() && (0.0..=1.0).contains(&cpu)) {
                self.problem(
                    path.key("cpu_utilisation"),
                    "cpu_utilisation must be between 0 and 1",
                );
                ok = false;
            }
        }
        if raw.every.is_some() && !submitted {
            self.problem(path.key("every"), "`every` belongs in [[submit]]");
            ok = false;
        }
        if queue.send_to.is_empty() {
            // A local queue: the job must be able to run there some day.
            let offered = |resource: &String| {
                cluster
                    .config
                    .hosts
                    .iter()
                    .any(|host| host.resources.contains(resource))
            };
            if let Some(missing) = raw.resources.iter().find(|r| !offered(r)) {
                self.problem(
                    path.key("resources"),
                    format!(
                        "no host of cluster `{}` offers resource `{missing}`",
                        cluster.config.name
                    ),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        let base = JobSpec {
            name: "".into(),
            user: raw.user.as_deref().unwrap_or(DEFAULT_USER).into(),
            slots,
            run_time: raw.run_time.map_or(DEFAULT_RUN_TIME, |d| d.0),
            run_limit: raw.run_limit.map(|d| d.0),
            resources: raw.resources.clone(),
            cpu_utilisation: raw.cpu_utilisation.unwrap_or(1.0),
            memory_mb: raw.memory_mb.unwrap_or(0),
        };
        let jobs = (1..=count)
            .map(|n| {
                *counter += 1;
                let name = match (&raw.name, count) {
                    (Some(name), 1) => name.clone(),
                    (Some(name), _) => format!("{name}-{n}"),
                    (None, _) => format!("job{counter}"),
                };
                JobSpec {
                    name: name.into(),
                    ..base.clone()
                }
            })
            .collect();
        Some((raw.queue.clone(), jobs))
    }

    fn submission(
        &mut self,
        path: &FieldPath,
        raw: &RawJob,
        specs: &[ClusterSpec],
        counter: &mut usize,
    ) -> Option<Vec<Submission>> {
        let Some(at) = raw.at else {
            self.problem(
                path.key("at"),
                "a [[submit]] needs `at` (when the job is submitted)",
            );
            return None;
        };
        let Some(cluster_name) = &raw.cluster else {
            self.problem(
                path.key("cluster"),
                "a [[submit]] needs `cluster` (where the job is submitted)",
            );
            return None;
        };
        let Some(cluster) = specs
            .iter()
            .find(|spec| spec.config.name == cluster_name.as_str())
        else {
            self.problem(
                path.key("cluster"),
                format!("unknown cluster `{cluster_name}`"),
            );
            return None;
        };
        let (queue, jobs) = self.jobs(path, raw, cluster, true, counter)?;
        let forwarded = cluster.forwarder.as_ref().is_some_and(|forwarder| {
            forwarder
                .send_queues
                .iter()
                .any(|q| q.name == queue.as_str())
        });
        let every = raw.every.map_or(Duration::ZERO, |d| d.0);
        let start = SimTime::from(at.0);
        Some(
            jobs.into_iter()
                .enumerate()
                .map(|(n, spec)| Submission {
                    at: start + every * u32::try_from(n).unwrap_or(u32::MAX),
                    cluster: cluster.config.name.clone(),
                    queue: queue.clone(),
                    forwarded,
                    spec,
                })
                .collect(),
        )
    }
}
