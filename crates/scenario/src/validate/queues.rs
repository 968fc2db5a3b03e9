//! A cluster's queues (`[[cluster.queue]]`) and their LSF parameters:
//! name, PRIORITY, PREEMPTION, QJOB_LIMIT, HOSTS, IMPT_JOBBKLG and
//! MAX_RSCHED_TIME. The scheduling-policy keys of a queue are checked in
//! `super::policies`, its forwarding keys (RCVJOBS_FROM, SNDJOBS_TO) in
//! `links`.

use std::time::Duration;

use mcfed_cluster::{
    DEFAULT_IMPT_JOBBKLG, DEFAULT_PRIORITY, HostSelection, Preemption, QueueConfig,
};
use mcfed_protocol::{ClusterName, QueueName};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::check::Checker;
use crate::format::{RawCluster, RawQueue};
use crate::locate::FieldPath;

/// The queues of a cluster.
pub(super) struct Queues {
    /// Every queue whose name is valid, in order.
    pub(super) configs: Vec<QueueConfig>,
    /// MAX_RSCHED_TIME of the send queues that set it.
    pub(super) max_rsched_time: FxHashMap<QueueName, Duration>,
}

impl Checker<'_> {
    /// The queues of the cluster `raw`, at `path`. `host_groups` are the
    /// hosts of each host entry by its name; `known_clusters` those a queue
    /// may receive from.
    pub(super) fn queues(
        &mut self,
        raw: &RawCluster,
        path: &FieldPath,
        host_groups: &FxHashMap<&str, Vec<String>>,
        known_clusters: &FxHashSet<ClusterName>,
    ) -> Queues {
        let mut queues = Queues {
            configs: Vec::new(),
            max_rsched_time: FxHashMap::default(),
        };
        for (index, queue) in raw.queue.iter().enumerate() {
            let queue_path = path.key("queue").index(index);
            let Some(config) = self.queue(queue, &queue_path, host_groups, known_clusters) else {
                continue;
            };
            if let Some(limit) = self.max_rsched_time(queue, &queue_path) {
                queues.max_rsched_time.insert(config.name.clone(), limit);
            }
            queues.configs.push(config);
        }
        queues
    }

    /// One queue, or `None` if its name is not a queue name.
    fn queue(
        &mut self,
        queue: &RawQueue,
        queue_path: &FieldPath,
        host_groups: &FxHashMap<&str, Vec<String>>,
        known_clusters: &FxHashSet<ClusterName>,
    ) -> Option<QueueConfig> {
        let queue_name = self.name::<QueueName>(queue_path.key("name"), &queue.name)?;
        let mut config = QueueConfig::new(queue_name);
        config.priority = queue.PRIORITY.unwrap_or(DEFAULT_PRIORITY);
        if let Some(text) = &queue.PREEMPTION {
            match text.parse::<Preemption>() {
                Ok(preemption) => config.preemption = preemption,
                Err(error) => self.problem(queue_path.key("PREEMPTION"), error.to_string()),
            }
        }
        config.job_limit = queue.QJOB_LIMIT;
        self.queue_policies(queue, queue_path, &mut config);
        if let Some(hosts) = &queue.HOSTS {
            if let Some(listed) = listed_hosts(&hosts.0, host_groups) {
                config.hosts = listed;
            }
        }
        if let Some(from) = self.receive_from(queue, queue_path, known_clusters) {
            config.receive_from = Some(from);
        }
        config.impt_jobbklg = match queue.IMPT_JOBBKLG {
            Some(backlog) => backlog.0,
            None => Some(DEFAULT_IMPT_JOBBKLG),
        };
        let send_to = self.send_to(queue, queue_path);
        config.send_to.extend(send_to);
        Some(config)
    }

    /// MAX_RSCHED_TIME, which only a send queue may set, longer than zero.
    fn max_rsched_time(&mut self, queue: &RawQueue, queue_path: &FieldPath) -> Option<Duration> {
        let limit = queue.MAX_RSCHED_TIME?;
        if queue.SNDJOBS_TO.is_none() {
            self.problem(
                queue_path.key("MAX_RSCHED_TIME"),
                "MAX_RSCHED_TIME applies to send queues (with SNDJOBS_TO)",
            );
            None
        } else if limit.0.is_zero() {
            self.problem(
                queue_path.key("MAX_RSCHED_TIME"),
                "MAX_RSCHED_TIME must be longer than zero",
            );
            None
        } else {
            Some(limit.0)
        }
    }
}

/// The hosts a queue's HOSTS lists, a host entry's name standing for all
/// its hosts; `None` for `all`, which leaves every host.
fn listed_hosts(
    words: &[String],
    host_groups: &FxHashMap<&str, Vec<String>>,
) -> Option<HostSelection> {
    if words.len() == 1 && words[0] == "all" {
        return None;
    }
    let mut listed = Vec::new();
    for word in words {
        match host_groups.get(word.as_str()) {
            Some(group) => listed.extend(group.iter().cloned()),
            None => listed.push(word.clone()),
        }
    }
    Some(HostSelection::Listed(listed))
}
