//! Helpers shared by the transport's endpoint-to-endpoint tests: a
//! three-cluster federation's certificates and endpoints over loopback.

#![allow(dead_code)] // Each test file uses its own subset.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, MAX_FRAME_SIZE};
use mcfed_transport::{
    DatagramFaults, Event, FederationTls, Peer, Role, Timeouts, Transport, TransportConfig, certs,
};
use tokio::sync::mpsc::UnboundedReceiver;

pub(crate) fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid name")
}

/// Certificates for Cluster1, Cluster2 and Cluster3 in `dir`.
pub(crate) fn federation(dir: &Path) {
    certs::init(
        dir,
        &[
            "Cluster1".to_owned(),
            "Cluster2".to_owned(),
            "Cluster3".to_owned(),
        ],
    )
    .expect("certs init");
}

/// `cluster`'s certificates from `dir`.
pub(crate) fn cluster_tls(dir: &Path, cluster: &str) -> FederationTls {
    FederationTls::load(dir, Role::Cluster, cluster).expect("load certificates")
}

/// An endpoint for `cluster` on a free loopback port, dialling `peers`,
/// with `faults` on its datagrams.
pub(crate) fn start_with_faults(
    dir: &Path,
    cluster: &str,
    peers: Vec<Peer>,
    faults: Option<Arc<dyn DatagramFaults>>,
) -> (Transport, UnboundedReceiver<Event>) {
    start_resuming(dir, cluster, peers, faults, None)
}

/// [`start_with_faults`], sending `resume` after the hello on every
/// connection it dials.
pub(crate) fn start_resuming(
    dir: &Path,
    cluster: &str,
    peers: Vec<Peer>,
    faults: Option<Arc<dyn DatagramFaults>>,
    resume: Option<mcfed_protocol::Resume>,
) -> (Transport, UnboundedReceiver<Event>) {
    Transport::start(TransportConfig {
        cluster: name(cluster),
        queues: Vec::new(),
        incarnation: 7,
        listen: "127.0.0.1:0".parse().expect("address"),
        peers,
        tls: cluster_tls(dir, cluster),
        max_frame: MAX_FRAME_SIZE,
        timeouts: Timeouts {
            backoff_max: Duration::from_millis(200),
            ..Timeouts::default()
        },
        faults,
        resume,
    })
    .expect("transport starts")
}

/// [`start_with_faults`] without faults.
pub(crate) fn start(
    dir: &Path,
    cluster: &str,
    peers: Vec<Peer>,
) -> (Transport, UnboundedReceiver<Event>) {
    start_with_faults(dir, cluster, peers, None)
}

/// `cluster` at `address`.
pub(crate) fn peer(cluster: &str, address: SocketAddr) -> Peer {
    Peer {
        name: name(cluster),
        address: Some(address.to_string()),
    }
}
