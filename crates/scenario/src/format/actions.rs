//! What a scenario does and checks while it runs: `[[action]]` (job
//! control commands and host failures at given times) and `[[expect]]`
//! (outcomes), as written.

use serde::Deserialize;

use super::DurationValue;

/// `[[action]]`: a job control command given at a time (docs/scenarios.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAction {
    /// When it is given.
    pub at: Option<DurationValue>,
    /// The cluster it is given at (a job's submission cluster reaches the
    /// cluster the job was forwarded to).
    pub cluster: Option<String>,
    /// `bkill`, `bstop`, `bresume`, `brequeue`, `bswitch`, `bmod`, `bmig`,
    /// `bresize`, `host_fail`, `host_recover`, `brsvadd` or `brsvdel`.
    pub command: Option<String>,
    /// The job, by name (not for the host commands).
    pub job: Option<String>,
    /// `bswitch`: the queue to move the job to.
    pub queue: Option<String>,
    /// `bmod -W`: the new run limit.
    pub run_limit: Option<DurationValue>,
    /// `bmod -Wn`: no run limit (`true`).
    pub no_run_limit: Option<bool>,
    /// `bmod -n`: the new slots.
    pub slots: Option<u32>,
    /// `bmod -sp`: the new user priority.
    pub priority: Option<u32>,
    /// `bmod -aps`: `"system=V"` or `"admin=V"`.
    pub aps: Option<String>,
    /// `bmod -apsn`: removes the job's system or admin value (`true`).
    pub apsn: Option<bool>,
    /// `bresize release`: `"all"` or `"N*host ..."`.
    pub release: Option<String>,
    /// `host_fail`, `host_recover`: the host.
    pub host: Option<String>,
    /// `brsvadd -N`, `brsvdel`: the advance reservation's name.
    pub reservation: Option<String>,
    /// `brsvadd -m`: its hosts (or host entries).
    pub hosts: Option<super::WordList>,
    /// `brsvadd -b`: when it starts.
    pub start: Option<DurationValue>,
    /// `brsvadd -e`: when it ends.
    pub end: Option<DurationValue>,
    /// `brsvadd -u`: the users whose jobs may use it (`all`: any).
    pub users: Option<super::WordList>,
    /// `brsvadd -o`: an open reservation (`true`).
    pub open: Option<bool>,
    /// `brsvadd`, `brsvdel`: the user asking (`--user`), whom the
    /// reservation policies bind; none: the cluster's administrator.
    pub user: Option<String>,
}

/// An expected outcome. Which keys are present says what kind of
/// expectation it is (docs/scenarios.md lists the combinations;
/// `crate::expect` has one file per kind). One table for every kind: the
/// kinds share keys, and an unknown key's error lists every key in this
/// order.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    /// The job (by name) the expectation is about.
    pub job: Option<String>,
    /// The job's APS value at `at` (as `bjobs -aps` shows it).
    pub aps: Option<f64>,
    /// The kind of the job's APS value at `at`: `system`, `calculated` or
    /// `none` (not in an APS queue).
    pub aps_kind: Option<String>,
    /// The job's JPRIORITY at `at`.
    pub jpriority: Option<u32>,
    /// The order in which the next dispatch pass tries the queue's pending
    /// jobs at `at` (job names, first first).
    pub dispatch_order: Option<Vec<String>>,
    /// The scenario is refused, with an error containing this text.
    pub refused: Option<String>,
    /// With `refused`: the line the error is at.
    pub line: Option<u32>,
    /// The job's first forward goes to this `queue@cluster`.
    pub forwarded_to: Option<String>,
    /// The job's first decision leaves it pending (`true`).
    pub pends: Option<bool>,
    /// The job's last decision leaves it pending (`true`).
    pub ends_pending: Option<bool>,
    /// A figure of the whole run (see `Metric`), bounded by `at_least` /
    /// `at_most`.
    pub metric: Option<String>,
    /// The metric is at least this.
    pub at_least: Option<f64>,
    /// The metric is at most this.
    pub at_most: Option<f64>,
    /// The decision's (or the pending job's) reason contains this text.
    pub reason_contains: Option<String>,
    /// When the state is looked at (after everything at that instant).
    pub at: Option<DurationValue>,
    /// The cluster looked at.
    pub cluster: Option<String>,
    /// The queue looked at.
    pub queue: Option<String>,
    /// The user looked at (with `priority`).
    pub user: Option<String>,
    /// The queue's running slots.
    pub running_slots: Option<u32>,
    /// The queue's pending slots.
    pub pending_slots: Option<u32>,
    /// The queue's suspended slots.
    pub suspended_slots: Option<u32>,
    /// The slots the queue deserves in its pool.
    pub deserved_slots: Option<u32>,
    /// The free slots its slot reservation holds (`bqueues` RSV).
    pub reserved_slots: Option<u32>,
    /// The user's dynamic priority in the queue.
    pub priority: Option<f64>,
    /// How far `priority` may be off (default 0.001).
    pub tolerance: Option<f64>,
    /// The job's state: `PEND`, `RUN`, `SSUSP` or `DONE`.
    pub state: Option<String>,
    /// The job was (`true`) or was never (`false`) preempted.
    pub preempted: Option<bool>,
    /// The job that preempted it.
    pub preempted_by: Option<String>,
}

impl RawExpect {
    /// Every key an entry may have, with whether it is present, in the
    /// order problems with them are reported.
    pub(crate) fn keys_present(&self) -> [(&'static str, bool); 28] {
        [
            ("job", self.job.is_some()),
            ("forwarded_to", self.forwarded_to.is_some()),
            ("pends", self.pends.is_some()),
            ("ends_pending", self.ends_pending.is_some()),
            ("reason_contains", self.reason_contains.is_some()),
            ("metric", self.metric.is_some()),
            ("at_least", self.at_least.is_some()),
            ("at_most", self.at_most.is_some()),
            ("at", self.at.is_some()),
            ("cluster", self.cluster.is_some()),
            ("queue", self.queue.is_some()),
            ("user", self.user.is_some()),
            ("running_slots", self.running_slots.is_some()),
            ("pending_slots", self.pending_slots.is_some()),
            ("suspended_slots", self.suspended_slots.is_some()),
            ("deserved_slots", self.deserved_slots.is_some()),
            ("reserved_slots", self.reserved_slots.is_some()),
            ("priority", self.priority.is_some()),
            ("tolerance", self.tolerance.is_some()),
            ("state", self.state.is_some()),
            ("preempted", self.preempted.is_some()),
            ("preempted_by", self.preempted_by.is_some()),
            ("aps", self.aps.is_some()),
            ("aps_kind", self.aps_kind.is_some()),
            ("jpriority", self.jpriority.is_some()),
            ("dispatch_order", self.dispatch_order.is_some()),
            ("refused", self.refused.is_some()),
            ("line", self.line.is_some()),
        ]
    }
}
