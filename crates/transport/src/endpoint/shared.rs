//! The state the [`Transport`](super::Transport) handle and its tasks
//! share: who this cluster is, the quinn endpoint, the peers, the event
//! channel to the process and the status of the links.

use std::sync::Mutex;

use mcfed_protocol::{ClusterName, Hello};
use rustc_hash::FxHashMap;
use tokio::sync::{Notify, mpsc};

use super::config::{Peer, PeerStatus, Timeouts, TransportConfig};
use super::events::Event;

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
    pub(super) max_frame: usize,
    pub(super) timeouts: Timeouts,
}

impl Shared {
    /// The state for `config`'s endpoint, and the stream of events for the
    /// process.
    pub(super) fn new(
        config: &TransportConfig,
        endpoint: quinn::Endpoint,
        client_config: quinn::ClientConfig,
    ) -> (Shared, mpsc::UnboundedReceiver<Event>) {
        let (events, receiver) = mpsc::unbounded_channel();
        let shared = Shared {
            hello: Hello::with_incarnation(config.cluster.clone(), config.incarnation),
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
            max_frame: config.max_frame,
            timeouts: config.timeouts,
        };
        (shared, receiver)
    }

    pub(super) fn update_status(&self, peer: &ClusterName, f: impl FnOnce(&mut PeerStatus)) {
        if let Ok(mut status) = self.status.lock() {
            f(status.entry(peer.clone()).or_default());
        }
    }

    pub(super) fn emit(&self, event: Event) {
        // The receiver is gone only when the process is shutting down.
        let _ = self.events.send(event);
    }
}
