//! Job control: what an administrator's `bkill`, `bstop`, `bresume`,
//! `brequeue`, `bswitch` and `bmod` ask of a job ([`JobAction`]), and the
//! messages that carry such a request from a job's submission cluster to
//! the execution cluster it was forwarded to ([`JobControl`]) and its
//! answer ([`JobControlReply`]): as in LSF, a command given at the
//! submission cluster reaches the cluster where the job is.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::names::QueueName;

/// What a job control command asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobAction {
    /// `bkill`: the job ends with status EXIT (a running job is killed, a
    /// pending one removed).
    Kill,
    /// `bstop`: a running job is suspended (USUSP, keeping its slots), a
    /// pending one held (PSUSP).
    Stop,
    /// `bresume`: a USUSP job runs again, a PSUSP one pends again.
    Resume,
    /// `brequeue`: a running or suspended job is killed and requeued, to
    /// pend again from the start with the same id, behind the jobs already
    /// pending (it is dispatched by its requeue time).
    Requeue,
    /// `bswitch QUEUE`: a pending job moves to another queue.
    Switch(QueueName),
    /// `bmod`: change the run limit, the slots or the priority.
    Modify(JobChanges),
}

impl JobAction {
    /// The LSF command that asks it.
    pub fn command(&self) -> &'static str {
        match self {
            JobAction::Kill => "bkill",
            JobAction::Stop => "bstop",
            JobAction::Resume => "bresume",
            JobAction::Requeue => "brequeue",
            JobAction::Switch(_) => "bswitch",
            JobAction::Modify(_) => "bmod",
        }
    }
}

impl fmt::Display for JobAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobAction::Switch(queue) => write!(f, "bswitch {queue}"),
            JobAction::Modify(changes) => write!(f, "bmod {changes}"),
            other => f.write_str(other.command()),
        }
    }
}

/// What `bmod` changes; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobChanges {
    /// `-W LIMIT` (`Some(Some(limit))`) or `-Wn` (`Some(None)`: no limit).
    pub run_limit: Option<Option<Duration>>,
    /// `-n SLOTS` (pending jobs only).
    pub slots: Option<u32>,
    /// `-sp PRIORITY`: the user-assigned job priority.
    pub user_priority: Option<u32>,
}

impl JobChanges {
    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        *self == JobChanges::default()
    }

    /// `spec` with these changes made (whether they are allowed is the
    /// caller's to check).
    pub fn apply_to(&self, spec: &mut crate::job::JobSpec) {
        if let Some(slots) = self.slots {
            spec.slots = slots;
        }
        if let Some(limit) = self.run_limit {
            spec.run_limit = limit;
        }
        if let Some(priority) = self.user_priority {
            let mut options = spec.options();
            options.user_priority = Some(priority);
            spec.set_options(options);
        }
    }
}

impl fmt::Display for JobChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match self.run_limit {
            Some(Some(limit)) => parts.push(format!("-W {}m", limit.as_secs().div_ceil(60))),
            Some(None) => parts.push("-Wn".to_owned()),
            None => {}
        }
        if let Some(slots) = self.slots {
            parts.push(format!("-n {slots}"));
        }
        if let Some(priority) = self.user_priority {
            parts.push(format!("-sp {priority}"));
        }
        f.write_str(&parts.join(" "))
    }
}

/// A submission cluster asks the execution cluster holding one of its
/// forwarded jobs to act on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobControl {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// What to do.
    pub action: JobAction,
}

/// The execution cluster's answer to a [`JobControl`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobControlReply {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// Its id at the execution cluster, if it holds it.
    pub dest_job: Option<u64>,
    /// What was asked.
    pub action: JobAction,
    /// `Ok` with what was done, or why it was refused.
    pub outcome: Result<String, String>,
}
