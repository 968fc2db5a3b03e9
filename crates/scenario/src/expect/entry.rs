//! One `[[expect]]` entry being validated: its keys, where it was written,
//! what it may name (the scenario's jobs and clusters), and the checks
//! several kinds share (keys that do not belong, keys missing, a job's
//! cluster, a queue at a time).

use mcfed_cluster::QueueConfig;
use mcfed_protocol::{ClusterName, QueueName, SimTime};

use super::{ExpectKind, Kind};
use crate::check::Checker;
use crate::check::job_index::{JobIndex, JobRef};
use crate::format::RawExpect;
use crate::locate::FieldPath;
use crate::model::ClusterSpec;

/// An `[[expect]]` entry under validation; problems found in it are
/// recorded at its keys.
pub(crate) struct Entry<'e, 'c> {
    checker: &'e mut Checker<'c>,
    path: &'e FieldPath,
    /// Its keys, as written.
    pub(crate) raw: &'e RawExpect,
    /// Every job of the scenario, by name.
    pub(crate) jobs: &'e JobIndex<'e>,
    /// The scenario's clusters.
    pub(crate) specs: &'e [ClusterSpec],
    /// Its kind, in words, for messages (set by [`Entry::validate`]).
    kind: &'static str,
}

impl<'e, 'c> Entry<'e, 'c> {
    /// The entry at `path` whose keys are `raw`.
    pub(crate) fn new(
        checker: &'e mut Checker<'c>,
        path: &'e FieldPath,
        raw: &'e RawExpect,
        jobs: &'e JobIndex<'e>,
        specs: &'e [ClusterSpec],
    ) -> Self {
        Entry {
            checker,
            path,
            raw,
            jobs,
            specs,
            kind: "",
        }
    }

    /// The entry validated as a `K`, made an [`ExpectKind`] by `wrap`:
    /// first every key that is not one of `K`'s is a problem, then `K`
    /// checks its own.
    pub(crate) fn validate<K: Kind>(&mut self, wrap: fn(K) -> ExpectKind) -> Option<ExpectKind> {
        self.kind = K::NAME;
        self.only_keys(K::KEYS);
        K::validate(self).map(wrap)
    }

    /// Records a problem at the entry's `key`.
    pub(crate) fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.checker.problem(self.path.key(key), message);
    }

    /// Records a problem at the entry as a whole.
    pub(crate) fn problem_here(&mut self, message: impl Into<String>) {
        self.checker.problem(self.path.clone(), message);
    }

    /// Flags every present key not in `allowed`.
    fn only_keys(&mut self, allowed: &[&str]) {
        for (key, set) in self.raw.keys_present() {
            if set && !allowed.contains(&key) {
                let kind = self.kind;
                self.problem(
                    key,
                    format!("`{key}` does not belong in an [[expect]] on {kind}"),
                );
            }
        }
    }

    /// The value of `key`, or a problem saying the kind needs it.
    pub(crate) fn required<T>(&mut self, value: &'e Option<T>, key: &str) -> Option<&'e T> {
        if value.is_none() {
            let kind = self.kind;
            self.problem(key, format!("an [[expect]] on {kind} needs `{key}`"));
        }
        value.as_ref()
    }

    /// The time of `at`, which the kind needs.
    pub(crate) fn required_at(&mut self) -> Option<SimTime> {
        let raw = self.raw;
        self.required(&raw.at, "at").map(|at| SimTime::from(at.0))
    }

    /// The cluster named `name` (given as `cluster`).
    fn cluster(&mut self, name: &str) -> Option<&'e ClusterSpec> {
        let found = self.specs.iter().find(|spec| spec.config.name == name);
        if found.is_none() {
            self.problem("cluster", format!("unknown cluster `{name}`"));
        }
        found
    }

    /// The configuration of `queue` in `cluster`, and that cluster.
    pub(crate) fn queue_config(
        &self,
        cluster: &ClusterName,
        queue: &QueueName,
    ) -> Option<(&'e ClusterSpec, &'e QueueConfig)> {
        let spec = self
            .specs
            .iter()
            .find(|spec| spec.config.name == *cluster)?;
        let config = spec.config.queues.iter().find(|q| q.name == *queue)?;
        Some((spec, config))
    }

    /// The cluster an expectation on `job` looks in: `cluster` if given,
    /// else the one the job runs in when that is known without running.
    pub(crate) fn job_cluster(&mut self, job: &str) -> Option<ClusterName> {
        let found = match self.jobs.find(job) {
            Ok(found) => found,
            Err(message) => {
                self.problem("job", message);
                return None;
            }
        };
        if let Some(name) = &self.raw.cluster {
            return self.cluster(name).map(|spec| spec.config.name.clone());
        }
        match found {
            JobRef::Initial(cluster) => Some(cluster),
            JobRef::Submitted(submission) if !submission.forwarded => {
                Some(submission.cluster.clone())
            }
            JobRef::Workload(workload) if !workload.forwarded && !workload.mapped => {
                Some(workload.cluster.clone())
            }
            JobRef::Workload(workload) if !workload.forwarded => {
                self.problem(
                    "job",
                    format!("workload `{}` maps queues or partitions to clusters: give `cluster`, the cluster job `{job}` runs in", workload.name),
                );
                None
            }
            JobRef::Submitted(_) | JobRef::Workload(_) => {
                self.problem(
                    "job",
                    format!("job `{job}` is forwarded: give `cluster`, the cluster it runs in"),
                );
                None
            }
        }
    }

    /// `at`, `cluster` and `queue` of an expectation on a queue, checked.
    pub(crate) fn queue_at(&mut self) -> Option<(ClusterName, QueueName, SimTime)> {
        let raw = self.raw;
        let at = self.required_at();
        let cluster = self.required(&raw.cluster, "cluster").cloned();
        let queue = self.required(&raw.queue, "queue").cloned();
        let (at, cluster, queue) = (at?, cluster?, queue?);
        let spec = self.cluster(&cluster)?;
        let Some(config) = spec
            .config
            .queues
            .iter()
            .find(|config| config.name == queue.as_str())
        else {
            self.problem(
                "queue",
                format!("cluster `{cluster}` has no queue `{queue}`"),
            );
            return None;
        };
        Some((spec.config.name.clone(), config.name.clone(), at))
    }
}
