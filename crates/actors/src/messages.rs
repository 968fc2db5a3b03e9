//! The messages a [`crate::MemberActor`] takes and sends.

use actix::prelude::*;
use mcfed_cluster::{PreemptionNote, Transition};
use mcfed_federation::{
    ControlOutcome, ControlRefused, JobNotice, JobRef, Member, Origin, SubmitError, Submitted,
    UpdateTally,
};
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{ClusterName, CounterUpdate, Envelope, JobAction, JobSpec, SimTime};

/// An envelope to deliver: to a member actor from its peers, or from a
/// member actor to whatever carries it (a router, the transport).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Deliver(pub Envelope);

/// Submits a job to a queue of the member (a local queue or a send queue).
#[derive(Debug, Message)]
#[rtype(result = "Result<Submitted, SubmitError>")]
pub struct Submit {
    /// The queue.
    pub queue: String,
    /// The job.
    pub spec: JobSpec,
}

/// Submits many jobs at once (a batched `bsub`): each is answered in
/// order, and all are acknowledged together once durable.
#[derive(Debug, Message)]
#[rtype(result = "Vec<Result<Submitted, String>>")]
pub struct SubmitMany {
    /// The jobs: queue and spec.
    pub jobs: Vec<(String, JobSpec)>,
}

/// The link to a peer went down or came up (a process's transport says
/// so).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Link {
    /// The peer.
    pub peer: ClusterName,
    /// Whether it is up (connected both ways).
    pub up: bool,
}

/// A job control command for the member ([`Member::control`]).
#[derive(Debug, Message)]
#[rtype(result = "Result<ControlOutcome, ControlRefused>")]
pub struct Control {
    /// The job.
    pub job: JobRef,
    /// What to do.
    pub action: JobAction,
}

/// A host of the member's cluster fails or recovers
/// ([`Member::host_event`]).
#[derive(Debug, Message)]
#[rtype(result = "Result<String, String>")]
pub struct HostControl {
    /// The host.
    pub host: String,
    /// What happens to it.
    pub event: mcfed_cluster::HostEvent,
}

/// What a member's step produced, for an observer (reports, a process's
/// collector).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Happened {
    /// The member's cluster.
    pub cluster: ClusterName,
    /// Job transitions at its scheduler.
    pub transitions: Vec<Transition>,
    /// Where the job of each transition came from (same order).
    pub origins: Vec<Origin>,
    /// The preemptions among them.
    pub preemptions: Vec<PreemptionNote>,
    /// Forwarding decisions, rendered.
    pub decisions: Vec<DecisionRecord>,
    /// What its forwarder heard about its jobs, at `at`.
    pub notices: Vec<JobNotice>,
    /// Counter updates sent and received.
    pub updates: UpdateTally,
    /// A slot-usage sample (slots running jobs, slots in all), on the
    /// sampling timer ([`crate::MemberActor::with_usage_samples`]).
    pub usage: Option<(u64, u64)>,
    /// When, in emulated time.
    pub at: SimTime,
}

impl Happened {
    /// Whether there is nothing in it.
    pub fn is_empty(&self) -> bool {
        self.transitions.is_empty()
            && self.decisions.is_empty()
            && self.notices.is_empty()
            && self.updates == UpdateTally::default()
            && self.usage.is_none()
    }
}

/// Runs `f` with the member and the current emulated time (inspection
/// commands, the oracle's truth).
#[derive(Message)]
#[rtype(result = "R")]
pub struct Inspect<R: 'static, F: FnOnce(&Member, SimTime) -> R + Send + 'static>(pub F);

/// Asks for the true counters of these execution clusters, right before a
/// forwarding session (the oracle's refresh in a cluster process).
#[derive(Debug, Message)]
#[rtype(result = "TruthFetched")]
pub struct FetchTruth {
    /// The execution clusters.
    pub clusters: Vec<ClusterName>,
}

/// The answer to [`FetchTruth`].
#[derive(Debug, Default)]
pub struct TruthFetched {
    /// The true counters that came, one update per cluster.
    pub updates: Vec<CounterUpdate>,
    /// Whether every cluster's came.
    pub complete: bool,
}

/// Asks when the member next needs to be woken ([`Member::next_wake`]), in
/// emulated time; a driver that runs until no work is left asks it.
#[derive(Debug, Message)]
#[rtype(result = "Option<SimTime>")]
pub struct NextWake;

/// Publishes the member's counters now (for a driver that keeps the
/// publishing schedule itself: [`crate::MemberActor::with_driven_updates`]).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Publish;
