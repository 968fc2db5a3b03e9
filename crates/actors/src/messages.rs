//! The messages a [`crate::MemberActor`] takes and sends.

use actix::prelude::*;
use mcfed_federation::{Effects, Member};
use mcfed_protocol::{ClusterName, CounterUpdate, Envelope, SimTime};

/// An envelope to deliver: to a member actor from its peers, or from a
/// member actor to whatever carries it (the actor engine's mail, the
/// transport).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Deliver(pub Envelope);

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

/// Runs `apply` with the member, the current emulated time and the effects
/// to fill (an admin command). One that `changes` the member is answered
/// once what it changed is durable ([`NotDurable`] if the journal
/// stopped first); what it produced is recorded and sent as any input's.
#[derive(Message)]
#[rtype(result = "Result<R, NotDurable>")]
pub struct Apply<R: 'static, F: FnOnce(&mut Member, SimTime, &mut Effects) -> R + Send + 'static> {
    /// Whether it may change the member.
    pub changes: bool,
    /// What it does.
    pub apply: F,
}

/// The journal stopped before what a command changed was durable: it is
/// not acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the journal could not be written; the command is not acknowledged")]
pub struct NotDurable;

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
/// ([`crate::MemberActor::driven`]); answers when the next round is due.
#[derive(Debug, Message)]
#[rtype(result = "Option<SimTime>")]
pub struct Publish;

/// One call of a member's step, for a driver that orders every instant
/// itself ([`crate::MemberActor::driven`]), as
/// [`mcfed_federation::instant`] says; answers when the member next needs
/// waking ([`Member::next_wake`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Message)]
#[rtype(result = "Option<SimTime>")]
pub enum Drive {
    /// Advance the scheduler ([`Member::advance`]).
    Advance,
    /// Run the forwarding session if one is due ([`Member::session`]).
    Session,
}
