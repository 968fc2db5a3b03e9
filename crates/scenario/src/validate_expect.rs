//! Validating `[[expect]]` entries. The keys present say which kind an
//! entry is:
//!
//! | kind | keys |
//! |---|---|
//! | first forwarding decision | `job`, `forwarded_to` or `pends = true`, `reason_contains` |
//! | last forwarding decision | `job`, `ends_pending = true`, `reason_contains` |
//! | a figure of the whole run | `metric`, `at_least` and/or `at_most` |
//! | a queue's slots at a time | `at`, `cluster`, `queue`, any of `running_slots`, `pending_slots`, `suspended_slots`, `deserved_slots` |
//! | a user's dynamic priority | `at`, `cluster`, `queue`, `user`, `priority`, `tolerance` |
//! | a job's state at a time | `job`, `at`, `state`, `cluster`, `reason_contains` |
//! | preemption of a job | `job`, `preempted`, `preempted_by`, `cluster` |
//! | a job's APS value at a time | `job`, `at`, any of `aps`, `aps_kind`, `jpriority`; `tolerance`, `cluster` |
//! | a queue's dispatch order at a time | `at`, `cluster`, `queue`, `dispatch_order` |
//! | a refused scenario | `refused`, `line` |
//!
//! A key that does not belong to the entry's kind is a problem at that key.

use mcfed_cluster::JobState;
use mcfed_protocol::{ClusterName, QueueName, QueueRef, SimTime};
use rustc_hash::FxHashMap;

use crate::format::RawExpect;
use crate::locate::FieldPath;
use crate::model::{ClusterSpec, ExpectKind, Expectation, Metric, QueueFigures, Submission};
use crate::validate::Checker;

mod aps;

/// How far a priority may be off when `tolerance` is not given.
pub(crate) const DEFAULT_PRIORITY_TOLERANCE: f64 = 0.001;

/// Every job of a scenario by name.
pub(crate) struct JobIndex<'a> {
    submissions: &'a [Submission],
    submitted: FxHashMap<String, usize>,
    initial: FxHashMap<String, Vec<ClusterName>>,
    workloads: Vec<WorkloadJobs>,
}

/// The jobs of a `[[workload]]`, named `NAME-JOBNUMBER` (the trace is not
/// read at validation: any job number is taken).
pub(crate) struct WorkloadJobs {
    /// The workload's name.
    pub(crate) name: String,
    /// Its cluster.
    pub(crate) cluster: ClusterName,
    /// Its queue.
    pub(crate) queue: String,
    /// Whether that queue is a send queue.
    pub(crate) forwarded: bool,
    /// Whether `queue_map` or `partition_map` may send a job elsewhere.
    pub(crate) mapped: bool,
}

/// What a job name refers to.
pub(crate) enum JobRef<'a> {
    Submitted(&'a Submission),
    Initial(ClusterName),
    Workload(&'a WorkloadJobs),
}

impl<'a> JobIndex<'a> {
    /// Indexes `submissions` (in their final order), the jobs present at
    /// start and the workloads' jobs.
    pub(crate) fn new(
        submissions: &'a [Submission],
        initial: FxHashMap<String, Vec<ClusterName>>,
        workloads: Vec<WorkloadJobs>,
    ) -> Self {
        let submitted = submissions
            .iter()
            .enumerate()
            .map(|(index, submission)| (submission.spec.name.to_string(), index))
            .collect();
        JobIndex {
            submissions,
            submitted,
            initial,
            workloads,
        }
    }

    /// The job named `name`, or why there is not exactly one.
    pub(crate) fn find(&self, name: &str) -> Result<JobRef<'_>, String> {
        let initial = self.initial.get(name).map_or(&[][..], Vec::as_slice);
        match (self.submitted.get(name), initial) {
            (Some(&index), []) => Ok(JobRef::Submitted(&self.submissions[index])),
            (None, [cluster]) => Ok(JobRef::Initial(cluster.clone())),
            (None, []) => self
                .workload_job(name)
                .map(JobRef::Workload)
                .ok_or_else(|| format!("no job is named `{name}`")),
            _ => Err(format!(
                "job name `{name}` is used by more than one job; name the job uniquely"
            )),
        }
    }

    /// The workload whose jobs are named like `name` (`NAME-JOBNUMBER`).
    fn workload_job(&self, name: &str) -> Option<&WorkloadJobs> {
        let (prefix, number) = name.rsplit_once('-')?;
        if number.is_empty() || !number.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        self.workloads
            .iter()
            .find(|workload| workload.name == prefix)
    }
}

/// The kinds of entries, for messages.
const KINDS: &str = "`forwarded_to`, `pends`, `ends_pending`, `metric`, `state`, `preempted`, `priority`, `aps`, `aps_kind`, `jpriority`, `dispatch_order`, `refused`, or a queue figure (`running_slots`, `pending_slots`, `suspended_slots`, `deserved_slots`)";

fn parse_state(text: &str) -> Option<JobState> {
    match text {
        "pending" => Some(JobState::Pending),
        "running" => Some(JobState::Running),
        "suspended" => Some(JobState::Suspended),
        "done" => Some(JobState::Done),
        other => JobState::from_lsf(other),
    }
}

impl Checker<'_> {
    /// Flags every present key not in `allowed`.
    pub(crate) fn only_keys(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        allowed: &[&str],
        kind: &str,
    ) {
        let present = [
            ("job", raw.job.is_some()),
            ("forwarded_to", raw.forwarded_to.is_some()),
            ("pends", raw.pends.is_some()),
            ("ends_pending", raw.ends_pending.is_some()),
            ("reason_contains", raw.reason_contains.is_some()),
            ("metric", raw.metric.is_some()),
            ("at_least", raw.at_least.is_some()),
            ("at_most", raw.at_most.is_some()),
            ("at", raw.at.is_some()),
            ("cluster", raw.cluster.is_some()),
            ("queue", raw.queue.is_some()),
            ("user", raw.user.is_some()),
            ("running_slots", raw.running_slots.is_some()),
            ("pending_slots", raw.pending_slots.is_some()),
            ("suspended_slots", raw.suspended_slots.is_some()),
            ("deserved_slots", raw.deserved_slots.is_some()),
            ("priority", raw.priority.is_some()),
            ("tolerance", raw.tolerance.is_some()),
            ("state", raw.state.is_some()),
            ("preempted", raw.preempted.is_some()),
            ("preempted_by", raw.preempted_by.is_some()),
            ("aps", raw.aps.is_some()),
            ("aps_kind", raw.aps_kind.is_some()),
            ("jpriority", raw.jpriority.is_some()),
            ("dispatch_order", raw.dispatch_order.is_some()),
            ("refused", raw.refused.is_some()),
            ("line", raw.line.is_some()),
        ];
        for (key, set) in present {
            if set && !allowed.contains(&key) {
                self.problem(
                    path.key(key),
                    format!("`{key}` does not belong in an [[expect]] on {kind}"),
                );
            }
        }
    }

    pub(crate) fn required<'v, T>(
        &mut self,
        path: &FieldPath,
        value: &'v Option<T>,
        key: &str,
        kind: &str,
    ) -> Option<&'v T> {
        if value.is_none() {
            self.problem(
                path.key(key),
                format!("an [[expect]] on {kind} needs `{key}`"),
            );
        }
        value.as_ref()
    }

    fn expect_cluster<'s>(
        &mut self,
        path: &FieldPath,
        name: &str,
        specs: &'s [ClusterSpec],
    ) -> Option<&'s ClusterSpec> {
        let found = specs.iter().find(|spec| spec.config.name == name);
        if found.is_none() {
            self.problem(path.key("cluster"), format!("unknown cluster `{name}`"));
        }
        found
    }

    /// The cluster a job-state or preemption expectation looks in.
    pub(crate) fn job_cluster(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        job: &str,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<ClusterName> {
        let found = match jobs.find(job) {
            Ok(found) => found,
            Err(message) => {
                self.problem(path.key("job"), message);
                return None;
            }
        };
        if let Some(name) = &raw.cluster {
            return self
                .expect_cluster(path, name, specs)
                .map(|spec| spec.config.name.clone());
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
                    path.key("job"),
                    format!("workload `{}` maps queues or partitions to clusters: give `cluster`, the cluster job `{job}` runs in", workload.name),
                );
                None
            }
            JobRef::Submitted(_) | JobRef::Workload(_) => {
                self.problem(
                    path.key("job"),
                    format!("job `{job}` is forwarded: give `cluster`, the cluster it runs in"),
                );
                None
            }
        }
    }

    /// Checks an `[[expect]]` entry; its keys say which kind it is.
    pub(crate) fn expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<Expectation> {
        let kind = if let Some(message) = &raw.refused {
            self.only_keys(path, raw, &["refused", "line"], "a refused scenario");
            ExpectKind::Refused {
                message: message.clone(),
                line: raw.line,
            }
        } else if raw.dispatch_order.is_some() {
            self.order_expectation(path, raw, specs)?
        } else if raw.aps.is_some() || raw.aps_kind.is_some() || raw.jpriority.is_some() {
            self.aps_expectation(path, raw, jobs, specs)?
        } else if let Some(metric) = &raw.metric {
            self.metric_expectation(path, raw, metric)?
        } else if raw.forwarded_to.is_some() || raw.pends.is_some() || raw.ends_pending.is_some() {
            self.decision_expectation(path, raw, jobs, specs)?
        } else if raw.preempted.is_some() || raw.preempted_by.is_some() {
            self.preemption_expectation(path, raw, jobs, specs)?
        } else if let Some(state) = &raw.state {
            self.state_expectation(path, raw, state, jobs, specs)?
        } else if raw.priority.is_some() {
            self.priority_expectation(path, raw, specs)?
        } else if raw.running_slots.is_some()
            || raw.pending_slots.is_some()
            || raw.suspended_slots.is_some()
            || raw.deserved_slots.is_some()
        {
            self.slots_expectation(path, raw, specs)?
        } else {
            self.problem(path.clone(), format!("an [[expect]] needs one of {KINDS}"));
            return None;
        };
        Some(Expectation {
            kind,
            reason_contains: raw.reason_contains.clone(),
            origin: path.to_string(),
        })
    }

    /// A figure of the whole run, `metric`, within bounds.
    fn metric_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        metric: &str,
    ) -> Option<ExpectKind> {
        const KIND: &str = "a figure of the run";
        self.only_keys(path, raw, &["metric", "at_least", "at_most"], KIND);
        let Some(known) = Metric::from_name(metric) else {
            let names: Vec<&str> = Metric::ALL.iter().map(|(_, name)| *name).collect();
            self.problem(
                path.key("metric"),
                format!("unknown metric `{metric}` (known: {})", names.join(", ")),
            );
            return None;
        };
        if raw.at_least.is_none() && raw.at_most.is_none() {
            self.problem(
                path.clone(),
                "a metric [[expect]] needs `at_least`, `at_most` or both",
            );
            return None;
        }
        Some(ExpectKind::Metric {
            metric: known,
            at_least: raw.at_least,
            at_most: raw.at_most,
        })
    }

    /// Whether a job is preempted, and by which job.
    fn preemption_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a preemption";
        self.only_keys(
            path,
            raw,
            &["job", "preempted", "preempted_by", "cluster"],
            KIND,
        );
        let job = self.required(path, &raw.job, "job", KIND)?.clone();
        let cluster = self.job_cluster(path, raw, &job, jobs, specs)?;
        if let Some(by) = &raw.preempted_by {
            if raw.preempted == Some(false) {
                self.problem(
                    path.key("preempted_by"),
                    "`preempted_by` with `preempted = false` can never hold",
                );
                return None;
            }
            if let Err(message) = jobs.find(by) {
                self.problem(path.key("preempted_by"), message);
                return None;
            }
        }
        Some(ExpectKind::Preempted {
            cluster,
            job,
            preempted: raw.preempted.unwrap_or(true),
            by: raw.preempted_by.clone(),
        })
    }

    /// A job's state, `state`, at a time.
    fn state_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        state: &str,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a job's state";
        self.only_keys(
            path,
            raw,
            &["job", "at", "state", "cluster", "reason_contains"],
            KIND,
        );
        let job = self.required(path, &raw.job, "job", KIND)?.clone();
        let at = self.required(path, &raw.at, "at", KIND)?;
        let at = SimTime::from(at.0);
        let Some(state) = parse_state(state) else {
            self.problem(
                path.key("state"),
                format!(
                    "state must be PEND, RUN, SSUSP, USUSP, PSUSP, DONE or EXIT, not `{state}`"
                ),
            );
            return None;
        };
        if state == JobState::Done && matches!(jobs.find(&job), Ok(JobRef::Workload(_))) {
            self.problem(
                path.key("state"),
                format!("job `{job}` is a workload's: a finished job and one not yet read from its trace look alike, so DONE cannot be checked (expect PEND, RUN or SSUSP, or a metric such as `finished`)"),
            );
            return None;
        }
        let cluster = self.job_cluster(path, raw, &job, jobs, specs)?;
        Some(ExpectKind::JobState {
            cluster,
            job,
            at,
            state,
        })
    }

    /// A user's dynamic priority in a fairshare queue at a time.
    fn priority_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a user's dynamic priority";
        self.only_keys(
            path,
            raw,
            &["at", "cluster", "queue", "user", "priority", "tolerance"],
            KIND,
        );
        let (cluster, queue, at) = self.queue_at(path, raw, specs, KIND)?;
        let user = self.required(path, &raw.user, "user", KIND)?.clone();
        let priority = raw.priority.unwrap_or_default();
        let tolerance = raw.tolerance.unwrap_or(DEFAULT_PRIORITY_TOLERANCE);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            self.problem(
                path.key("tolerance"),
                "tolerance must be a number of at least 0",
            );
            return None;
        }
        let spec = specs.iter().find(|spec| spec.config.name == cluster)?;
        let fairshare = spec
            .config
            .queues
            .iter()
            .find(|config| config.name == queue)
            .and_then(|config| config.fairshare.as_ref());
        match fairshare {
            None => {
                self.problem(
                    path.key("queue"),
                    format!("queue `{queue}` has no FAIRSHARE, so no user priorities"),
                );
                return None;
            }
            Some(shares) if !has_account(shares, &spec.config.user_groups, &user) => {
                self.problem(
                    path.key("user"),
                    format!("user `{user}` has no shares in queue `{queue}`"),
                );
                return None;
            }
            Some(_) => {}
        }
        Some(ExpectKind::UserPriority {
            cluster,
            queue,
            user,
            at,
            priority,
            tolerance,
        })
    }

    /// A queue's slot figures at a time.
    fn slots_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a queue's slots";
        self.only_keys(
            path,
            raw,
            &[
                "at",
                "cluster",
                "queue",
                "running_slots",
                "pending_slots",
                "suspended_slots",
                "deserved_slots",
            ],
            KIND,
        );
        let (cluster, queue, at) = self.queue_at(path, raw, specs, KIND)?;
        if raw.deserved_slots.is_some() {
            let pooled = specs
                .iter()
                .find(|spec| spec.config.name == cluster)
                .and_then(|spec| spec.config.queues.iter().find(|q| q.name == queue))
                .is_some_and(|config| config.slot_pool.is_some());
            if !pooled {
                self.problem(
                    path.key("deserved_slots"),
                    format!("queue `{queue}` is in no SLOT_POOL, so it deserves no slots"),
                );
                return None;
            }
        }
        Some(ExpectKind::QueueSlots {
            cluster,
            queue,
            at,
            figures: QueueFigures {
                running: raw.running_slots,
                pending: raw.pending_slots,
                suspended: raw.suspended_slots,
                deserved: raw.deserved_slots,
            },
        })
    }

    /// `at`, `cluster` and `queue` of a queue expectation, checked.
    pub(crate) fn queue_at(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        specs: &[ClusterSpec],
        kind: &str,
    ) -> Option<(ClusterName, QueueName, SimTime)> {
        let at = self
            .required(path, &raw.at, "at", kind)
            .map(|at| SimTime::from(at.0));
        let cluster = self.required(path, &raw.cluster, "cluster", kind).cloned();
        let queue = self.required(path, &raw.queue, "queue", kind).cloned();
        let (at, cluster, queue) = (at?, cluster?, queue?);
        let spec = self.expect_cluster(path, &cluster, specs)?;
        let Some(config) = spec
            .config
            .queues
            .iter()
            .find(|config| config.name == queue.as_str())
        else {
            self.problem(
                path.key("queue"),
                format!("cluster `{cluster}` has no queue `{queue}`"),
            );
            return None;
        };
        Some((spec.config.name.clone(), config.name.clone(), at))
    }

    /// The first forwarding decision of a job submitted to a send queue.
    fn decision_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a forwarding decision";
        self.only_keys(
            path,
            raw,
            &[
                "job",
                "forwarded_to",
                "pends",
                "ends_pending",
                "reason_contains",
            ],
            KIND,
        );
        let job = self.required(path, &raw.job, "job", KIND)?;
        let (cluster, queue, forwarded) = match jobs.find(job) {
            Ok(JobRef::Submitted(submission)) => (
                submission.cluster.clone(),
                submission.queue.to_string(),
                submission.forwarded,
            ),
            Ok(JobRef::Workload(workload)) => (
                workload.cluster.clone(),
                workload.queue.clone(),
                workload.forwarded,
            ),
            Ok(JobRef::Initial(_)) => {
                self.problem(
                    path.key("job"),
                    format!("no [[submit]] makes a job named `{job}`"),
                );
                return None;
            }
            Err(message) => {
                self.problem(path.key("job"), message);
                return None;
            }
        };
        if !forwarded {
            self.problem(
                path.key("job"),
                format!("job `{job}` goes to local queue `{queue}`, which forwards nothing"),
            );
            return None;
        }
        match (&raw.forwarded_to, raw.pends, raw.ends_pending) {
            (None, None, Some(true)) => Some(ExpectKind::EndsPending { job: job.clone() }),
            (Some(target), None | Some(false), None) => {
                let target: QueueRef = match target.parse() {
                    Ok(target) => target,
                    Err(error) => {
                        self.problem(path.key("forwarded_to"), error.to_string());
                        return None;
                    }
                };
                let listed = specs
                    .iter()
                    .filter_map(|spec| spec.forwarder.as_ref())
                    .filter(|forwarder| forwarder.cluster == cluster)
                    .flat_map(|forwarder| forwarder.send_queues.iter())
                    .filter(|send| send.name == *queue)
                    .any(|send| send.send_to.contains(&target));
                if !listed {
                    self.problem(path.key("forwarded_to"), format!("{target} is not in the SNDJOBS_TO of `{queue}@{cluster}`, so the job can never go there"));
                    return None;
                }
                Some(ExpectKind::ForwardedTo {
                    job: job.clone(),
                    target,
                })
            }
            (None, Some(true), None) => Some(ExpectKind::Pends { job: job.clone() }),
            _ => {
                self.problem(path.clone(), "an [[expect]] on a job needs exactly one of `forwarded_to = \"queue@cluster\"`, `pends = true` or `ends_pending = true`");
                None
            }
        }
    }
}

/// Whether `name` (a user, or a group named in the shares) has a share
/// account in a queue with `shares`, with lsb.users' `groups` (a directory
/// that does not build is refused elsewhere; its groups are then unknown).
fn has_account(
    shares: &mcfed_cluster::UserShares,
    groups: &[mcfed_cluster::UserGroupConfig],
    name: &str,
) -> bool {
    use mcfed_cluster::fairshare::{GroupDirectory, ShareTree};
    let directory = GroupDirectory::build(groups).unwrap_or_default();
    ShareTree::new(shares.clone(), &directory).has_account(name, &directory)
}
