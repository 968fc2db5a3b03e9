//! What the endpoint hands the process: [`Event`]s, among them the admin
//! requests ([`AdminCall`]) and oracle queries ([`TruthCall`]) it answers
//! through a reply channel.

use mcfed_protocol::{ClusterName, CounterUpdate, Envelope, FrameError, Hello};
use tokio::sync::oneshot;

/// Which way a connection goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// This process dialled the peer (it sends on it).
    Outbound,
    /// The peer dialled this process (it receives on it).
    Inbound,
}

/// A request from an administrator's connection, to be answered through
/// `reply`.
#[derive(Debug)]
pub struct AdminCall {
    /// The administrator's name (from its certificate).
    pub client: String,
    /// The request's bytes.
    pub request: Vec<u8>,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Vec<u8>>,
}

/// An oracle query from a peer ([`crate::truth`]): answer with the
/// counters this cluster would publish to `peer` now, numbered `seq`, or
/// `None` if it publishes none to it.
#[derive(Debug)]
pub struct TruthCall {
    /// The asking cluster (from its certificate).
    pub peer: ClusterName,
    /// The number the answer carries.
    pub seq: u64,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Option<CounterUpdate>>,
}

/// What the endpoint hands the process.
#[derive(Debug)]
pub enum Event {
    /// A message from a peer; `from` is the name in its certificate.
    Message(Envelope),
    /// A connection with a peer completed its hello exchange.
    PeerUp {
        /// The peer.
        peer: ClusterName,
        /// Its hello (its incarnation tells a restart).
        hello: Hello,
        /// Which connection.
        direction: Direction,
    },
    /// A connection with a peer ended.
    PeerDown {
        /// The peer.
        peer: ClusterName,
        /// Which connection.
        direction: Direction,
        /// Why, in words.
        reason: String,
    },
    /// An administrator's request.
    Admin(AdminCall),
    /// An oracle query from a peer.
    Truth(TruthCall),
    /// A message this process asked to send ([`super::Transport::send`])
    /// that cannot be sent — its frame would exceed the limit, or it does
    /// not encode — handed back rather than dropped: the process turns it
    /// into a refusal its job's owner sees. The link stays up and later
    /// messages go on.
    Unsendable {
        /// The message, as it was given.
        envelope: Envelope,
        /// Why it cannot be sent.
        error: FrameError,
    },
}
