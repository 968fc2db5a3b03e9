//! The state the [`Transport`](super::Transport) handle and its tasks
//! share: who this cluster is, the quinn endpoint, the peers, the event
//! channel to the process and the status of the links.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcfed_protocol::{ClusterName, Hello, LogLimit, Resume};
use rustc_hash::FxHashMap;
use tokio::sync::{Notify, mpsc, watch};

use super::config::{Peer, PeerStatus, Timeouts, TransportConfig};
use super::events::Event;
use crate::faults::PeerAddresses;

pub(super) struct Shared {
    pub(super) cluster: ClusterName,
    pub(super) hello: Hello,
    pub(super) endpoint: quinn::Endpoint,
    pub(super) client_config: quinn::ClientConfig,
    pub(super) peers: FxHashMap<ClusterName, Peer>,
    pub(super) events: mpsc::UnboundedSender<Event>,
    pub(super) status: Mutex<FxHashMap<ClusterName, PeerStatus>>,
    /// Per peer: the incarnation this process's connection to it reached,
    /// and how to tell its writer to reconnect (the peer restarted).
    pub(super) outbound: FxHashMap<ClusterName, (Mutex<Option<u64>>, Notify)>,
    /// Per peer: where to dial it, configured or learned from its hello
    /// (`None` until then); its writer waits on it.
    pub(super) addresses: FxHashMap<ClusterName, watch::Sender<Option<String>>>,
    /// Which peer each address is, for the faults.
    pub(super) fault_addresses: PeerAddresses,
    pub(super) max_frame: usize,
    pub(super) timeouts: Timeouts,
    /// Sent after the hello on every connection dialled.
    pub(super) resume: Mutex<Option<Resume>>,
    /// Warnings caused from outside, one line per kind per interval.
    pub(super) warnings: Arc<LogLimit>,
}

impl Shared {
    /// The state for `config`'s endpoint, and the stream of events for the
    /// process.
    pub(super) fn new(
        config: &TransportConfig,
        endpoint: quinn::Endpoint,
        client_config: quinn::ClientConfig,
        local_addr: SocketAddr,
        fault_addresses: PeerAddresses,
    ) -> (Shared, mpsc::UnboundedReceiver<Event>) {
        let (events, receiver) = mpsc::unbounded_channel();
        let shared = Shared {
            hello: Hello::with_incarnation(config.cluster.clone(), config.incarnation)
                .listening_on(local_addr.port())
                .with_queues(config.queues.clone()),
            cluster: config.cluster.clone(),
            endpoint,
            client_config,
            peers: config
                .peers
                .iter()
                .map(|peer| (peer.name.clone(), peer.clone()))
                .collect(),
            events,
            status: Mutex::new(
                config
                    .peers
                    .iter()
                    .map(|peer| (peer.name.clone(), PeerStatus::default()))
                    .collect(),
            ),
            outbound: config
                .peers
                .iter()
                .map(|peer| (peer.name.clone(), (Mutex::new(None), Notify::new())))
                .collect(),
            addresses: config
                .peers
                .iter()
                .map(|peer| (peer.name.clone(), watch::Sender::new(peer.address.clone())))
                .collect(),
            fault_addresses,
            max_frame: config.max_frame,
            timeouts: config.timeouts,
            resume: Mutex::new(config.resume),
            warnings: Arc::new(LogLimit::new(crate::WARNING_INTERVAL)),
        };
        (shared, receiver)
    }

    pub(super) fn update_status(&self, peer: &ClusterName, f: impl FnOnce(&mut PeerStatus)) {
        if let Ok(mut status) = self.status.lock() {
            f(status.entry(peer.clone()).or_default());
        }
    }

    /// Learns where `peer`, whose address was not configured, listens: the
    /// IP its connection comes from and the port its hello announces (or
    /// the connection's port, if it announces none).
    pub(super) fn learn_address(&self, peer: &ClusterName, remote: SocketAddr, port: u16) {
        let configured = self
            .peers
            .get(peer)
            .is_some_and(|peer| peer.address.is_some());
        let Some(address) = self.addresses.get(peer) else {
            return;
        };
        if configured {
            return;
        }
        let port = if port == 0 { remote.port() } else { port };
        let learned = SocketAddr::new(remote.ip().to_canonical(), port);
        self.fault_addresses.learn(learned, peer);
        let text = learned.to_string();
        let changed = address.send_if_modified(|known| {
            if known.as_deref() == Some(text.as_str()) {
                return false;
            }
            *known = Some(text.clone());
            true
        });
        if changed {
            tracing::info!(cluster = %self.cluster, %peer, address = %learned, "learned the peer's address from its hello");
        }
    }

    pub(super) fn emit(&self, event: Event) {
        // The receiver is gone only when the process is shutting down.
        let _ = self.events.send(event);
    }
}
