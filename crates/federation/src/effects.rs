//! What a member's inputs produce: the [`Effects`] a driver acts on.

use std::sync::Arc;

use mcfed_cluster::{PreemptionNote, Transition};
use mcfed_forwarder::{CameBack, DecisionEntry};
use mcfed_protocol::{ClusterName, Envelope, JobEvent};

/// Everything a member's inputs produced, for the driver to act on. A
/// driver keeps one and calls [`Effects::clear`] (or takes the parts it
/// consumed) between calls, so the vectors are reused.
#[derive(Debug, Default)]
pub struct Effects {
    /// Envelopes to send (a member may send to itself: a cluster that is
    /// both submission and execution cluster).
    pub envelopes: Vec<Envelope>,
    /// Job transitions at the scheduler, in order.
    pub transitions: Vec<Transition>,
    /// The preemptions among the transitions, with the jobs' names.
    pub preemptions: Vec<PreemptionNote>,
    /// Forwarding decisions, unrendered ([`crate::Member::render`] turns
    /// one into a record).
    pub decisions: Vec<DecisionEntry>,
    /// What the forwarder heard about its jobs.
    pub notices: Vec<JobNotice>,
    /// The fate of counter updates sent and received.
    pub updates: UpdateTally,
}

impl Effects {
    /// Empties every part, keeping the allocations.
    pub fn clear(&mut self) {
        self.envelopes.clear();
        self.transitions.clear();
        self.preemptions.clear();
        self.decisions.clear();
        self.notices.clear();
        self.updates = UpdateTally::default();
    }

    /// Whether nothing was produced.
    pub fn is_empty(&self) -> bool {
        self.envelopes.is_empty()
            && self.transitions.is_empty()
            && self.preemptions.is_empty()
            && self.decisions.is_empty()
            && self.notices.is_empty()
            && self.updates == UpdateTally::default()
    }
}

/// Counts of counter updates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateTally {
    /// Updates sent to subscribing submission clusters.
    pub sent: u64,
    /// Updates received and applied.
    pub applied: u64,
    /// Updates received and ignored as not newer than one applied.
    pub ignored: u64,
    /// Updates received and applied although older than one already
    /// applied (checked independently of the view; must stay zero).
    pub regressions: u64,
}

impl std::ops::AddAssign for UpdateTally {
    fn add_assign(&mut self, other: UpdateTally) {
        self.sent += other.sent;
        self.applied += other.applied;
        self.ignored += other.ignored;
        self.regressions += other.regressions;
    }
}

/// What a submission cluster's forwarder heard about one of its jobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobNotice {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The job's name.
    pub name: Arc<str>,
    /// The execution cluster that sent it.
    pub from: ClusterName,
    /// What happened.
    pub kind: NoticeKind,
    /// The execution cluster's reason, for a job that came back.
    pub reason: Option<String>,
}

/// What a [`JobNotice`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// The execution cluster accepted the job.
    Accepted,
    /// The job came back to be decided again.
    CameBack(CameBack),
    /// A job control command acted on the job at its submission cluster,
    /// where it still was (held, released, switched, modified, killed).
    Control(JobEvent),
    /// The execution cluster answered a job control command sent there
    /// (the reason says what it did, or why not).
    ControlReply {
        /// Whether it was done.
        done: bool,
    },
}

impl NoticeKind {
    /// The word reports use: `accepted`, `refused`, `returned`, `lost`,
    /// a job control event (`killed`, `held`, ...), or `control` /
    /// `control refused` for an execution cluster's answer.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Accepted => "accepted",
            NoticeKind::CameBack(how) => how.as_str(),
            NoticeKind::Control(event) => event.as_str(),
            NoticeKind::ControlReply { done: true } => "control",
            NoticeKind::ControlReply { done: false } => "control refused",
        }
    }
}
