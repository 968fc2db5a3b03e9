//! The messages a [`crate::MemberActor`] takes and sends.

use actix::prelude::*;
use mcfed_federation::{ControlOutcome, ControlRefused, JobRef, Member, SubmitError, Submitted};
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

/// Asks what the member has left to do: when it next needs to be woken
/// ([`Member::next_wake`]), in emulated time, and its
/// [`Member::activity`] (a driver that runs until no work is left asks
/// it).
#[derive(Debug, Message)]
#[rtype(result = "MemberActivity")]
pub struct AskActivity;

/// The answer to [`AskActivity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberActivity {
    /// When the member next needs to be woken.
    pub next_wake: Option<SimTime>,
    /// What it has left to do.
    pub activity: mcfed_federation::Activity,
}

/// Publishes the member's counters if its schedule has a round due now,
/// for a driver that decides when within an instant
/// ([`crate::MemberActor::with_driven_updates`]); answers when the next
/// round is due.
#[derive(Debug, Message)]
#[rtype(result = "Option<SimTime>")]
pub struct Publish;
