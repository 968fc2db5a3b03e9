//! What the submission cluster's scheduler tells its forwarder about the
//! order of the jobs waiting in its send queues ([`SendOrder`]): users'
//! dynamic priorities (FAIRSHARE send queues), jobs' APS values (send
//! queues with APS_PRIORITY, and those of their QUEUE_GROUP), and the
//! JPRIORITY a job carries when it is forwarded. The scheduler knows the
//! queues' settings; the forwarder knows the jobs. Both sides compute
//! nothing twice: the forwarder asks, the scheduler answers with the same
//! formulas it schedules its own queues by.

use std::cmp::Ordering;
use std::time::Duration;

use mcfed_protocol::{ApsChange, JobSpec, QueueName};

/// The order of the jobs waiting in send queues, as the submission
/// cluster's scheduler computes it.
pub trait SendOrder {
    /// `user`'s dynamic priority in send queue `queue` with
    /// `fwd_job_slots` forwarded slots; `None` when the user has no shares.
    fn priority(&self, queue: &QueueName, user: &str, fwd_job_slots: u32) -> Option<f64>;

    /// The APS value of a job waiting in a send queue of an APS group;
    /// `None` when the scheduler orders the queue by no APS_PRIORITY.
    fn aps_value(&self, job: &ApsQuery<'_>) -> Option<ApsValue> {
        let _ = job;
        None
    }

    /// The JPRIORITY a job with `spec` has after pending `pended` at the
    /// submission cluster: what it carries when forwarded, so that it
    /// keeps it at the execution cluster. `None`: the submission cluster
    /// gives jobs no priority (no MAX_USER_PRIORITY).
    fn job_priority(&self, spec: &JobSpec, pended: Duration) -> Option<u32> {
        let _ = (spec, pended);
        None
    }
}

/// No scheduler behind the forwarder: every waiting job in submission
/// order, no APS values, no JPRIORITY carried.
pub struct SubmissionOrder;

impl SendOrder for SubmissionOrder {
    fn priority(&self, _: &QueueName, _: &str, _: u32) -> Option<f64> {
        None
    }
}

/// A job waiting in a send queue, as its APS value is asked for.
#[derive(Clone, Copy, Debug)]
pub struct ApsQuery<'a> {
    /// Its id.
    pub id: u64,
    /// Its own send queue (its QPRIORITY is that queue's PRIORITY).
    pub queue: &'a QueueName,
    /// What it asks for.
    pub spec: &'a JobSpec,
    /// How long it has pended: since it was submitted.
    pub pended: Duration,
    /// Its user's dynamic priority in the send queue
    /// ([`SendOrder::priority`], with the user's forwarded slots); `None`
    /// outside FAIRSHARE send queues or for a user without shares.
    pub fs: Option<f64>,
    /// The system or ADMIN value `bmod -aps` gave it here (never
    /// [`ApsChange::Clear`]).
    pub set: Option<ApsChange>,
}

/// A waiting job's APS value in its send queue's order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ApsValue {
    /// `bmod -aps "system=V"`: ahead of every calculated value.
    System(f64),
    /// APS_PRIORITY's formula (ADMIN included).
    Calculated(f64),
}

impl ApsValue {
    /// The value itself.
    pub fn value(self) -> f64 {
        match self {
            ApsValue::System(value) | ApsValue::Calculated(value) => value,
        }
    }

    /// `system` or `calculated` (the words `bjobs -aps -o json` uses).
    pub fn kind(self) -> &'static str {
        match self {
            ApsValue::System(_) => "system",
            ApsValue::Calculated(_) => "calculated",
        }
    }

    /// As `bjobs -aps` prints it: `(10)` for a system value, `109.00` for
    /// a calculated one.
    pub fn render(self) -> String {
        match self {
            ApsValue::System(value) => format!("({value})"),
            ApsValue::Calculated(value) => format!("{value:.2}"),
        }
    }

    /// The order of an APS group, as the execution side dispatches: system
    /// values first, then calculated values, each highest first (`Less`
    /// goes first; ties are the caller's: the earlier submission).
    pub fn order(self, other: Self) -> Ordering {
        let tier = |value: Self| matches!(value, ApsValue::Calculated(_));
        tier(self)
            .cmp(&tier(other))
            .then_with(|| other.value().total_cmp(&self.value()))
    }
}

/// Where APS put a job when its send queue's waiting jobs were decided:
/// what its decision record cites.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApsStanding {
    /// Its APS value in the session.
    pub value: ApsValue,
    /// How many jobs of its APS group submitted before it were still
    /// waiting for their turn: those its value put it ahead of.
    pub ahead_of: u32,
}
