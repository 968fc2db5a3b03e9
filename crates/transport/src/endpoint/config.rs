//! What a cluster process's endpoint needs ([`TransportConfig`],
//! [`Timeouts`], [`Peer`]), why it may fail ([`TransportError`]), the state
//! of the links it reports ([`PeerStatus`]), and the QUIC settings the
//! timeouts make.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, Resume};

use crate::faults::DatagramFaults;
use crate::tls::{FederationTls, TlsError};

/// How long to wait for things, and how to back off.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// A connection with no traffic for this long is closed.
    pub idle: Duration,
    /// Keep-alive pings, so an idle link stays open and a dead one is seen.
    pub keep_alive: Duration,
    /// The hello exchange must finish within this.
    pub handshake: Duration,
    /// The first reconnection delay.
    pub backoff_min: Duration,
    /// The longest reconnection delay.
    pub backoff_max: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            idle: Duration::from_secs(3),
            keep_alive: Duration::from_millis(500),
            handshake: Duration::from_secs(5),
            backoff_min: Duration::from_millis(50),
            backoff_max: Duration::from_secs(2),
        }
    }
}

/// The transport's QUIC settings.
pub(crate) fn transport_settings(timeouts: &Timeouts) -> Arc<quinn::TransportConfig> {
    let mut settings = quinn::TransportConfig::default();
    if let Ok(idle) = quinn::IdleTimeout::try_from(timeouts.idle) {
        settings.max_idle_timeout(Some(idle));
    }
    settings.keep_alive_interval(Some(timeouts.keep_alive));
    Arc::new(settings)
}

/// A peer cluster and where to reach it.
#[derive(Clone, Debug)]
pub struct Peer {
    /// Its name.
    pub name: ClusterName,
    /// `host:port`, resolved at every connection attempt; `None`: not
    /// known yet, learned from the peer's hello when it connects (its
    /// remote IP and the port it announces). Until then the writer to it
    /// keeps what is sent, as while disconnected.
    pub address: Option<String>,
}

impl Peer {
    /// `name` at `address`.
    pub fn at(name: ClusterName, address: impl Into<String>) -> Peer {
        Peer {
            name,
            address: Some(address.into()),
        }
    }

    /// `name`, whose address is learned from its hello.
    pub fn unknown(name: ClusterName) -> Peer {
        Peer {
            name,
            address: None,
        }
    }
}

/// What a cluster process's endpoint needs.
#[derive(Clone, Debug)]
pub struct TransportConfig {
    /// This cluster.
    pub cluster: ClusterName,
    /// This run of the process (sent in every hello).
    pub incarnation: u64,
    /// The static facts of this cluster's receive queues (sent in every
    /// hello, so submission clusters can forward before the first counter
    /// update).
    pub queues: Vec<mcfed_protocol::QueueFacts>,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The clusters this one exchanges messages with.
    pub peers: Vec<Peer>,
    /// Certificates.
    pub tls: FederationTls,
    /// The largest frame accepted or sent.
    pub max_frame: usize,
    /// Timeouts and backoff.
    pub timeouts: Timeouts,
    /// Faults on the datagrams sent to peers ([`crate::faults`]); `None`:
    /// a plain socket.
    pub faults: Option<Arc<dyn DatagramFaults>>,
    /// What this process carries over from its earlier runs, and its
    /// clock: sent right after the hello on every connection it dials,
    /// before anything else (`None`: nothing is sent).
    pub resume: Option<Resume>,
}

/// Why the endpoint could not start or a message could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The UDP socket could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The certificate is not a cluster's certificate for this cluster.
    #[error("this process is cluster `{cluster}` but its certificate names {identity}")]
    NotThisCluster {
        /// The cluster the process runs.
        cluster: ClusterName,
        /// Who the certificate names.
        identity: crate::certs::Identity,
    },
    /// A message is addressed to a cluster that is not a peer.
    #[error("no connection to cluster `{0}`: it is not a peer of this cluster")]
    UnknownPeer(ClusterName),
    /// The endpoint has shut down.
    #[error("the transport has shut down")]
    Closed,
}

/// The state of the links with one peer, as
/// [`Transport::status`](super::Transport::status) reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStatus {
    /// Whether this process's connection to the peer is up.
    pub outbound: bool,
    /// How many of the peer's connections to this process are up.
    pub inbound: u32,
    /// The peer's incarnation, from its last hello.
    pub incarnation: Option<u64>,
    /// How many times the outbound connection was made.
    pub connects: u64,
    /// Why the last connection attempt or connection failed, if one did.
    pub last_error: Option<String>,
}

impl PeerStatus {
    /// Whether messages flow both ways.
    pub fn is_up(&self) -> bool {
        self.outbound && self.inbound > 0
    }
}
