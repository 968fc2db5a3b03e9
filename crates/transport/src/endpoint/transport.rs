//! The [`Transport`] handle: binds a cluster process's endpoint, starts its
//! tasks, queues messages for the peers' writers, reports the links and
//! closes them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, Envelope, Resume};
use rustc_hash::FxHashMap;
use tokio::sync::mpsc;

use super::config::{PeerStatus, TransportConfig, TransportError, transport_settings};
use super::events::Event;
use super::shared::Shared;
use super::{accept, close, dial};
use crate::certs::Role;
use crate::faults::{FaultySocket, PeerAddresses};

/// A running endpoint.
pub struct Transport {
    shared: Arc<Shared>,
    senders: FxHashMap<ClusterName, mpsc::UnboundedSender<Envelope>>,
    local_addr: SocketAddr,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("cluster", &self.shared.cluster)
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

impl Transport {
    /// Binds the endpoint and starts the accept loop and a writer per peer.
    /// Must be called inside a tokio runtime. Returns the transport and the
    /// stream of events for the process.
    pub fn start(
        config: TransportConfig,
    ) -> Result<(Transport, mpsc::UnboundedReceiver<Event>), TransportError> {
        let identity = config.tls.identity();
        if identity.role != Role::Cluster || identity.name != config.cluster.as_str() {
            return Err(TransportError::NotThisCluster {
                cluster: config.cluster.clone(),
                identity: identity.clone(),
            });
        }
        let mut server_config = config.tls.server_config()?;
        server_config.transport_config(transport_settings(&config.timeouts));
        let mut client_config = config.tls.client_config()?;
        client_config.transport_config(transport_settings(&config.timeouts));
        let addresses = PeerAddresses::new(peer_addresses(&config.peers));
        let endpoint = bind(&config, server_config, &addresses)?;
        let local_addr = endpoint
            .local_addr()
            .map_err(|source| TransportError::Bind {
                address: config.listen,
                source,
            })?;
        let (shared, receiver) =
            Shared::new(&config, endpoint, client_config, local_addr, addresses);
        let shared = Arc::new(shared);
        let mut senders = FxHashMap::default();
        for peer in &config.peers {
            let (sender, outgoing) = mpsc::unbounded_channel();
            senders.insert(peer.name.clone(), sender);
            tokio::spawn(dial::writer(shared.clone(), peer.clone(), outgoing));
        }
        tokio::spawn(accept::accept_loop(shared.clone()));
        tracing::info!(cluster = %config.cluster, address = %local_addr, peers = config.peers.len(), "listening");
        Ok((
            Transport {
                shared,
                senders,
                local_addr,
            },
            receiver,
        ))
    }

    /// Where the endpoint listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where `peer` is dialled: its configured address, or the one learned
    /// from its hello; `None` if not known (yet) or not a peer.
    pub fn peer_address(&self, peer: &ClusterName) -> Option<String> {
        self.shared
            .addresses
            .get(peer)
            .and_then(|address| address.borrow().clone())
    }

    /// Queues `envelope` for its peer. Returns at once; the peer's writer
    /// sends it when connected (and, for a peer whose address is not
    /// known, once its hello taught it).
    pub fn send(&self, envelope: Envelope) -> Result<(), TransportError> {
        let sender = self
            .senders
            .get(&envelope.to)
            .ok_or_else(|| TransportError::UnknownPeer(envelope.to.clone()))?;
        sender.send(envelope).map_err(|_| TransportError::Closed)
    }

    /// The links with every peer.
    pub fn status(&self) -> Vec<(ClusterName, PeerStatus)> {
        let mut peers: Vec<(ClusterName, PeerStatus)> = self
            .shared
            .status
            .lock()
            .map(|status| {
                status
                    .iter()
                    .map(|(name, state)| (name.clone(), state.clone()))
                    .collect()
            })
            .unwrap_or_default();
        peers.sort_by(|a, b| a.0.cmp(&b.0));
        peers
    }

    /// Changes what is sent after the hello on connections dialled from
    /// now on (a process that took its clock from a peer).
    pub fn set_resume(&self, resume: Resume) {
        if let Ok(mut current) = self.shared.resume.lock() {
            *current = Some(resume);
        }
    }

    /// Closes every connection (peers see a clean shutdown) and stops the
    /// tasks.
    pub fn close(&self) {
        self.shared
            .endpoint
            .close(quinn::VarInt::from_u32(close::SHUTDOWN), b"shutting down");
    }

    /// Waits until every connection has closed (after [`Transport::close`]),
    /// at most `limit`.
    pub async fn wait_closed(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.shared.endpoint.wait_idle()).await;
    }
}

/// Binds the quinn endpoint on `config.listen`: on a plain UDP socket, or
/// with faults on one that applies them ([`FaultySocket`]).
fn bind(
    config: &TransportConfig,
    server_config: quinn::ServerConfig,
    addresses: &PeerAddresses,
) -> Result<quinn::Endpoint, TransportError> {
    let bind_error = |source| TransportError::Bind {
        address: config.listen,
        source,
    };
    let endpoint = match &config.faults {
        None => quinn::Endpoint::server(server_config, config.listen).map_err(bind_error)?,
        Some(faults) => {
            let runtime = Arc::new(quinn::TokioRuntime);
            let socket = std::net::UdpSocket::bind(config.listen).map_err(bind_error)?;
            let socket =
                quinn::Runtime::wrap_udp_socket(runtime.as_ref(), socket).map_err(bind_error)?;
            let socket = FaultySocket::new(socket, addresses.clone(), faults.clone());
            quinn::Endpoint::new_with_abstract_socket(
                quinn::EndpointConfig::default(),
                Some(server_config),
                socket,
                runtime,
            )
            .map_err(bind_error)?
        }
    };
    Ok(endpoint)
}

/// Every address of every peer, for the faults to know whom a datagram
/// goes to. A peer whose address does not resolve now gets no faults (and
/// a warning); one whose address is not known yet is added when its hello
/// teaches it.
fn peer_addresses(peers: &[super::Peer]) -> FxHashMap<SocketAddr, ClusterName> {
    use std::net::ToSocketAddrs as _;
    let mut addresses = FxHashMap::default();
    for peer in peers {
        let Some(address) = &peer.address else {
            continue;
        };
        match address.to_socket_addrs() {
            Ok(resolved) => {
                for address in resolved {
                    addresses.insert(address, peer.name.clone());
                }
            }
            Err(error) => {
                tracing::warn!(peer = %peer.name, %address, %error, "cannot resolve the peer's address: no faults on the link to it");
            }
        }
    }
    addresses
}
