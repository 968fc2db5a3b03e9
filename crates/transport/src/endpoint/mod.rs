//! One cluster process's QUIC endpoint: the accept loop, one dialling
//! writer task per peer, one reader task per accepted connection, and the
//! admin channel. The tasks run on tokio beside the actors and hand them
//! what arrives as [`Event`]s, in order; the actors' outbox calls
//! [`Transport::send`].
//!
//! Each process dials every peer and sends on its own connection; it
//! receives on the connections its peers dialled. So a pair of clusters
//! has two connections, one per direction, and there is never a question
//! of which of two crossing connections to keep.
//!
//! A connection opens with a version handshake: the dialler opens a stream
//! and sends a [`Hello`](mcfed_protocol::Hello); the listener checks that
//! the hello's version is its own, that the hello names the cluster its
//! certificate names, and that this cluster is a peer, and answers with its
//! own hello. After that the dialler writes length-prefixed postcard frames
//! ([`mcfed_protocol::frame`]) on that stream: counter updates every
//! MC_PLUGIN_UPDATE_INTERVAL, job forwards, replies and returns, all on one
//! reliable ordered stream. A frame over the size limit, one that does not
//! decode, a second hello, or a message under another cluster's name closes
//! that connection with a logged reason and a QUIC close reason; the
//! process and its other connections go on.
//!
//! A dialler that loses its connection (the peer restarted) reconnects with
//! exponential backoff; messages sent meanwhile wait, counter updates
//! coalesced to the newest.
//!
//! A peer may be configured without an address (it listens on a port the
//! OS picked): its dialler waits likewise until the peer connects to this
//! process, whose hello carries the port it listens on; the peer's address
//! is then the connection's remote IP and that port, for the dialler and
//! for the faults.
//!
//! The parts:
//!
//! - `transport`: the [`Transport`] handle: binding, sending, status, closing;
//! - `config`: what the endpoint needs ([`TransportConfig`], [`Timeouts`],
//!   [`Peer`]), why it fails ([`TransportError`]), [`PeerStatus`];
//! - `events`: what it hands the process ([`Event`], [`AdminCall`],
//!   [`TruthCall`], [`Direction`]);
//! - [`close`]: the QUIC close codes;
//! - `shared`: the state the handle and the tasks share;
//! - `dial`: the writer task per peer, with reconnection and backoff;
//! - `accept`: the accept loop, routing each connection by its certificate's
//!   role and its application protocol;
//! - `hello`: the hello exchange and the checks that bind a connection and
//!   its messages to the name in the peer's certificate;
//! - `reader`: the reader task per accepted peer connection;
//! - `oracle`: answering peers' oracle queries ([`crate::truth`]).

mod accept;
pub mod close;
mod config;
mod dial;
mod events;
mod hello;
mod oracle;
mod reader;
mod shared;
mod transport;

pub(crate) use config::transport_settings;
pub use config::{Peer, PeerStatus, Timeouts, TransportConfig, TransportError};
pub use events::{AdminCall, Direction, Event, TruthCall};
pub(crate) use hello::check_message;
pub use transport::Transport;
