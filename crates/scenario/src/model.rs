//! A validated scenario: typed configurations ready to build clusters from,
//! the submissions in time order, and the expectations to check.

use std::time::Duration;

use mcfed_cluster::{ClusterConfig, JobState};
use mcfed_forwarder::ForwarderConfig;
use mcfed_protocol::{ClusterName, QueueName, QueueRef, SimTime};

use crate::locate::Problem;

/// A scenario ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its title.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed for anything random.
    pub seed: u64,
    /// When the run stops (when it does not drain).
    pub end: SimTime,
    /// Whether the run goes on until nothing is left to do (`end =
    /// "drain"`, the default with a workload).
    pub drain: bool,
    /// The clusters.
    pub clusters: Vec<ClusterSpec>,
    /// Submissions during the run, in time order.
    pub submissions: Vec<Submission>,
    /// Workloads read from trace files during the run (`[[workload]]`).
    pub workloads: Vec<mcfed_trace::WorkloadSpec>,
    /// Job control commands given during the run (`[[action]]`), in time
    /// order.
    pub actions: Vec<Action>,
    /// Expected outcomes.
    pub expectations: Vec<Expectation>,
    /// Faults to inject (`[chaos]`), if any.
    pub chaos: Option<mcfed_chaos::ChaosConfig>,
    /// Settings the clusters accept with a warning, located in the file.
    pub warnings: Vec<Problem>,
    /// What it holds once built, and about how much memory that takes.
    pub footprint: crate::validate::Footprint,
}

impl Scenario {
    /// The longest counter update interval of the federation (zero when no
    /// cluster sends counters): a draining run waits that long for a
    /// forwarder holding jobs before it counts the run as drained.
    pub fn longest_update_interval(&self) -> Duration {
        self.clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .max()
            .unwrap_or_default()
    }

    /// How often slot usage is sampled: the shortest update interval of
    /// the federation, or [`crate::validate::QUIET_INTERVAL`] when no
    /// cluster sends counters.
    pub fn sample_interval(&self) -> Duration {
        self.clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .min()
            .unwrap_or(crate::validate::QUIET_INTERVAL)
    }

    /// Whether runs of this scenario should compare decisions with the
    /// oracle: it has a `[chaos]` table, or expects something of stale
    /// decisions.
    pub fn wants_oracle(&self) -> bool {
        self.chaos.is_some()
            || self.expectations.iter().any(|expectation| {
                matches!(
                    expectation.kind,
                    ExpectKind::Metric {
                        metric: Metric::StaleDecisions,
                        ..
                    }
                )
            })
    }

    /// The times at which expectations look at the clusters, sorted, without
    /// repeats.
    pub fn probe_times(&self) -> Vec<SimTime> {
        let mut times: Vec<SimTime> = self
            .expectations
            .iter()
            .filter_map(|expectation| expectation.kind.at())
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }
}

/// One cluster of a scenario.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// Hosts, queues and MC_PLUGIN_UPDATE_INTERVAL.
    pub config: ClusterConfig,
    /// Its submission side, when it has send queues.
    pub forwarder: Option<ForwarderConfig>,
    /// Submission clusters that forward to it.
    pub subscribers: Vec<ClusterName>,
    /// Those of them that collect its counters (their
    /// MC_PLUGIN_SCHEDULE_ENHANCE is set).
    pub collectors: Vec<ClusterName>,
    /// Jobs present at start.
    pub initial_jobs: Vec<InitialJobs>,
    /// Where its process listens (`host:port`), if the scenario says.
    pub address: Option<String>,
}

pub use mcfed_federation::InitialJobs;

impl ClusterSpec {
    /// What its federation member is built from, owned (a cluster
    /// process keeps it).
    pub fn member_config(&self) -> mcfed_federation::MemberConfig {
        mcfed_federation::MemberConfig {
            cluster: self.config.clone(),
            forwarder: self.forwarder.clone(),
            subscribers: self.subscribers.clone(),
            collectors: self.collectors.clone(),
        }
    }

    /// What its federation member is built from.
    pub fn member_spec(&self) -> mcfed_federation::MemberSpec<'_> {
        mcfed_federation::MemberSpec {
            config: &self.config,
            forwarder: self.forwarder.as_ref(),
            subscribers: &self.subscribers,
            collectors: &self.collectors,
            initial_jobs: &self.initial_jobs,
        }
    }
}

/// A job control command, or a host failure, given during the run
/// (`[[action]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// When.
    pub at: SimTime,
    /// At which cluster.
    pub cluster: ClusterName,
    /// The job, by name; for a host action, the host.
    pub job: String,
    /// What is asked.
    pub action: ActionKind,
    /// Where it was written (`action[0]`).
    pub origin: String,
}

/// What an `[[action]]` asks.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// A job control command on the job [`Action::job`] names.
    Job(mcfed_protocol::JobAction),
    /// Host [`Action::job`] fails or recovers.
    Host(mcfed_cluster::HostEvent),
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionKind::Job(action) => action.fmt(f),
            ActionKind::Host(event) => event.fmt(f),
        }
    }
}

pub use mcfed_trace::Submission;

/// What an expectation checks.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectKind {
    /// The job's first forward goes to `target`.
    ForwardedTo {
        /// The job's name.
        job: String,
        /// The expected `queue@cluster`.
        target: QueueRef,
    },
    /// The job's first decision leaves it pending at its submission cluster.
    Pends {
        /// The job's name.
        job: String,
    },
    /// The job's last decision leaves it pending at its submission cluster.
    EndsPending {
        /// The job's name.
        job: String,
    },
    /// A figure of the whole run lies within bounds.
    Metric {
        /// Which figure.
        metric: Metric,
        /// Lower bound, inclusive.
        at_least: Option<f64>,
        /// Upper bound, inclusive.
        at_most: Option<f64>,
    },
    /// After the first dispatch pass, the jobs of an initial group are all in
    /// `state`.
    InitialState {
        /// The cluster.
        cluster: ClusterName,
        /// Index of the group in the cluster's initial jobs.
        group: usize,
        /// The expected state.
        state: JobState,
    },
    /// At `at`, a queue's slot figures are these (each one given).
    QueueSlots {
        /// The cluster.
        cluster: ClusterName,
        /// The queue.
        queue: QueueName,
        /// When.
        at: SimTime,
        /// The figures.
        figures: QueueFigures,
    },
    /// At `at`, a user's dynamic priority in a fairshare queue is
    /// `priority`, within `tolerance`.
    UserPriority {
        /// The cluster.
        cluster: ClusterName,
        /// The queue.
        queue: QueueName,
        /// The user.
        user: String,
        /// When.
        at: SimTime,
        /// The expected priority.
        priority: f64,
        /// How far off it may be.
        tolerance: f64,
    },
    /// At `at`, a job of `cluster` is in `state`.
    JobState {
        /// The cluster it runs in.
        cluster: ClusterName,
        /// The job's name.
        job: String,
        /// When.
        at: SimTime,
        /// The expected state.
        state: JobState,
    },
    /// A job of `cluster` was (or was never) preempted, by `by` if given.
    Preempted {
        /// The cluster it runs in.
        cluster: ClusterName,
        /// The job's name.
        job: String,
        /// Whether it was preempted.
        preempted: bool,
        /// The job that preempted it.
        by: Option<String>,
    },
    /// At `at`, a pending job's APS value (as `bjobs -aps` shows it),
    /// its kind and its JPRIORITY are these (each one given).
    JobAps {
        /// The cluster it is in.
        cluster: ClusterName,
        /// The job's name.
        job: String,
        /// When.
        at: SimTime,
        /// The expected value (system or calculated).
        value: Option<f64>,
        /// The expected kind: `system`, `calculated` or `none`.
        kind: Option<String>,
        /// The expected JPRIORITY.
        jpriority: Option<u32>,
        /// How far `value` may be off.
        tolerance: f64,
    },
    /// At `at`, the next dispatch pass would try the pending jobs of a
    /// queue in this order.
    DispatchOrder {
        /// The cluster.
        cluster: ClusterName,
        /// The queue.
        queue: QueueName,
        /// When.
        at: SimTime,
        /// The jobs, by name, first first.
        jobs: Vec<String>,
    },
    /// The scenario is refused with an error containing `message` (at
    /// `line`, if given): a scenario accepted fails this expectation.
    Refused {
        /// Text the error contains.
        message: String,
        /// The line the error is at.
        line: Option<u32>,
    },
}

impl ExpectKind {
    /// When the expectation looks at the clusters, for those that do.
    pub fn at(&self) -> Option<SimTime> {
        match self {
            ExpectKind::QueueSlots { at, .. }
            | ExpectKind::UserPriority { at, .. }
            | ExpectKind::JobState { at, .. }
            | ExpectKind::JobAps { at, .. }
            | ExpectKind::DispatchOrder { at, .. } => Some(*at),
            _ => None,
        }
    }
}

/// A queue's slot figures an expectation checks; unset ones are not
/// checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueFigures {
    /// Running slots.
    pub running: Option<u32>,
    /// Pending slots.
    pub pending: Option<u32>,
    /// Suspended slots.
    pub suspended: Option<u32>,
    /// Deserved slots in the queue's pool.
    pub deserved: Option<u32>,
}

/// An expected outcome, with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// What it checks.
    pub kind: ExpectKind,
    /// If set, the decision's reason must contain this.
    pub reason_contains: Option<String>,
    /// Where it was written (`expect[2]`, `cluster[1].job[0].state`).
    pub origin: String,
}

/// A figure of a whole run that an `[[expect]]` can bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Decision records.
    Decisions,
    /// Decisions that forwarded a job.
    Forwarded,
    /// Decisions that left a job pending.
    Pending,
    /// Decisions the oracle marked stale.
    StaleDecisions,
    /// Decisions made again after a refusal or a return.
    Returned,
    /// Forward decisions for jobs forwarded before.
    Reforwarded,
    /// Counter updates sent (seed 004: only by clusters with
    /// MC_PLUGIN_UPDATE_INTERVAL, to submission clusters that collect them).
    UpdatesSent,
    /// Counter updates lost on the way.
    UpdatesLost,
    /// Counter updates ignored as not newer than one applied.
    UpdatesIgnored,
    /// Counter updates applied although older than one applied (never).
    UpdateRegressions,
    /// Samples with a receive queue over its IMPT_JOBBKLG (never).
    BacklogOverflows,
    /// Jobs finished.
    Finished,
    /// Jobs submitted (scenario submissions and workloads).
    Submitted,
    /// Jobs that started (each once, local and forwarded).
    Started,
    /// Submissions refused.
    Refused,
    /// Workload jobs skipped (no run time, no processors, malformed).
    Skipped,
    /// Jobs killed (EXIT).
    Killed,
    /// Starts of jobs that had started before (requeued).
    Restarts,
    /// `[[action]]`s given.
    Actions,
    /// `[[action]]`s refused.
    ActionsRefused,
}

impl Metric {
    /// Every metric with its scenario name.
    pub const ALL: [(Metric, &'static str); 20] = [
        (Metric::Decisions, "decisions"),
        (Metric::Forwarded, "forwarded"),
        (Metric::Pending, "pending"),
        (Metric::StaleDecisions, "stale_decisions"),
        (Metric::Returned, "returned"),
        (Metric::Reforwarded, "reforwarded"),
        (Metric::UpdatesSent, "updates_sent"),
        (Metric::UpdatesLost, "updates_lost"),
        (Metric::UpdatesIgnored, "updates_ignored"),
        (Metric::UpdateRegressions, "update_regressions"),
        (Metric::BacklogOverflows, "backlog_overflows"),
        (Metric::Finished, "finished"),
        (Metric::Submitted, "submitted"),
        (Metric::Started, "started"),
        (Metric::Refused, "refused"),
        (Metric::Skipped, "skipped"),
        (Metric::Killed, "killed"),
        (Metric::Restarts, "restarts"),
        (Metric::Actions, "actions"),
        (Metric::ActionsRefused, "actions_refused"),
    ];

    /// The metric's scenario name.
    pub fn name(self) -> &'static str {
        Metric::ALL
            .iter()
            .find(|(metric, _)| *metric == self)
            .map_or("?", |(_, name)| name)
    }

    /// The metric named `name`.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(metric, _)| *metric)
    }
}
