//! A cluster process's state: its emulated time and its links.

use serde::{Deserialize, Serialize};

/// A process's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusReply {
    /// The cluster.
    pub cluster: String,
    /// Its incarnation.
    pub incarnation: u64,
    /// Its emulated time, seconds.
    pub now: f64,
    /// Its peers: name, whether connected both ways, incarnation.
    pub peers: Vec<PeerRow>,
    /// The lineage of its state (it stays the same across restarts from
    /// its journal).
    #[serde(default)]
    pub lineage: u64,
    /// Its state directory, if it keeps a journal.
    #[serde(default)]
    pub state: Option<String>,
}

/// One peer in a [`StatusReply`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerRow {
    /// The peer.
    pub cluster: String,
    /// This process's connection to it is up.
    pub outbound: bool,
    /// Its connections to this process that are up.
    pub inbound: u32,
    /// Its incarnation.
    pub incarnation: Option<u64>,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
}

impl StatusReply {
    /// Whether every peer is connected both ways.
    pub fn all_connected(&self) -> bool {
        self.peers
            .iter()
            .all(|peer| peer.outbound && peer.inbound > 0)
    }
}
