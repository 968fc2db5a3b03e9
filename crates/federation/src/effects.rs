//! What a member's inputs produce: the [`Effects`] a driver acts on.

use std::sync::Arc;

use mcfed_cluster::{PreemptionNote, Transition};
use mcfed_forwarder::{CameBack, DecisionEntry};
use mcfed_protocol::{ClusterName, Envelope, JobEvent, SimTime};

use crate::{Member, Submitted};

/// Everything a member's inputs produced, for the driver to act on. A
/// driver keeps one and calls [`Effects::clear`] (or takes the parts it
/// consumed) between calls, so the vectors are reused.
#[derive(Debug, Default)]
pub struct Effects {
    /// Envelopes to send (a member may send to itself: a cluster that is
    /// both submission and execution cluster).
    pub envelopes: Vec<Envelope>,
    /// Submissions taken or refused (and, at start, the jobs present at
    /// start), in order.
    pub submissions: Vec<SubmissionNote>,
    /// Jobs forwarded here and accepted (each acceptance once).
    pub forwarded_in: Vec<ForwardedIn>,
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
    /// The longest a message stamped with its sender's time took to come
    /// (counter updates, job statuses).
    pub delivery_delay: std::time::Duration,
}

impl Effects {
    /// Empties every part, keeping the allocations.
    pub fn clear(&mut self) {
        // Cleared after every input, and most hold nothing but counter
        // updates: an empty part costs a length test, not a drop loop.
        fn clear<T>(part: &mut Vec<T>) {
            if !part.is_empty() {
                part.clear();
            }
        }
        clear(&mut self.envelopes);
        clear(&mut self.submissions);
        clear(&mut self.forwarded_in);
        clear(&mut self.transitions);
        clear(&mut self.preemptions);
        clear(&mut self.decisions);
        clear(&mut self.notices);
        self.updates = UpdateTally::default();
        self.delivery_delay = std::time::Duration::ZERO;
    }

    /// Whether nothing was produced.
    pub fn is_empty(&self) -> bool {
        self.envelopes.is_empty()
            && self.submissions.is_empty()
            && self.forwarded_in.is_empty()
            && self.transitions.is_empty()
            && self.preemptions.is_empty()
            && self.decisions.is_empty()
            && self.notices.is_empty()
            && self.updates == UpdateTally::default()
    }
}

/// Whatever a driver reports a member's effects to (a run's recorder):
/// every driver calls it with the member, the time and what one input
/// produced, before it sends the envelopes on, so that statistics and
/// records are made in one place whichever driver runs the member.
pub trait Observer {
    /// What `member`'s input at `at` produced.
    fn observe(&mut self, member: &Member, at: SimTime, effects: &Effects);

    /// The driver's sampling timer: `member` as it stands at `at` (the
    /// slots it has in use, for a run's usage plot).
    fn sample(&mut self, member: &Member, at: SimTime) {
        let _ = (member, at);
    }

    /// A driver on real time woke `member` `by` later (in emulated time)
    /// than the member asked: how far it falls behind emulated time.
    fn late(&mut self, member: &Member, by: std::time::Duration) {
        let _ = (member, by);
    }
}

/// A submission to a member: taken or refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmissionNote {
    /// The job's name.
    pub name: Arc<str>,
    /// The queue it was submitted to.
    pub queue: Arc<str>,
    /// Whether it is a job present at start (submitted at time zero when
    /// the member was built).
    pub bundled: bool,
    /// Its id and route, or why it was refused.
    pub outcome: Result<Submitted, String>,
}

/// A job forwarded to this cluster that it accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardedIn {
    /// Its id here.
    pub job_id: u64,
    /// The receive queue it went to.
    pub queue: mcfed_protocol::QueueName,
    /// The submission cluster that forwarded it.
    pub from: ClusterName,
    /// The send queue it left there.
    pub send_queue: mcfed_protocol::QueueName,
    /// Its id there.
    pub source_job: u64,
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
    /// Receive queues holding more imported pending jobs than their
    /// IMPT_JOBBKLG when an update was sent (must stay zero).
    pub backlog_overflows: u64,
}

impl std::ops::AddAssign for UpdateTally {
    fn add_assign(&mut self, other: UpdateTally) {
        self.sent += other.sent;
        self.applied += other.applied;
        self.ignored += other.ignored;
        self.regressions += other.regressions;
        self.backlog_overflows += other.backlog_overflows;
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
