//! The transport between mcfed cluster processes: QUIC (quinn) with mutual
//! TLS 1.3 (rustls on ring), a version handshake on every connection,
//! length-prefixed postcard frames, reconnection with backoff, and the
//! admin channel LSF-style commands use.
//!
//! - [`certs`]: the federation CA and per-cluster and admin certificates
//!   (rcgen), and the identity a certificate carries;
//! - [`tls`]: the rustls configurations and the verifiers that accept only
//!   certificates signed by the federation CA;
//! - [`endpoint`]: a cluster process's endpoint: dialling writers, the
//!   accept loop and readers, handing the process [`endpoint::Event`]s;
//! - [`admin`]: the administrator's side of the admin channel;
//! - [`faults`]: faults below QUIC, on the datagrams sent to peers;
//! - [`truth`]: oracle queries, on connections the faults do not touch.
//!
//! Nothing here knows about actors or scheduling: the process runtime
//! (`mcfed-process`) hands events to the actors and the actors' messages to
//! [`endpoint::Transport::send`].

/// How often one kind of warning caused from outside (a refused handshake,
/// a bad frame) is logged at most: one line per kind per interval, with
/// the count of those not logged (`suppressed`).
pub const WARNING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);

/// Logs a warning caused from outside through the [`mcfed_protocol::LogLimit`]
/// `$limit`: at most one line of `$kind` per [`WARNING_INTERVAL`], with a
/// `suppressed` field counting those not logged since the last line.
macro_rules! outside_warn {
    ($limit:expr, $kind:expr, $($rest:tt)*) => {
        if let Some(suppressed) = $limit.admit($kind) {
            tracing::warn!(suppressed, $($rest)*);
        }
    };
}

pub mod admin;
pub mod certs;
pub mod endpoint;
pub mod faults;
pub mod tls;
pub mod truth;

pub use admin::{AdminClient, AdminError};
pub use certs::{CertError, Identity, Role};
pub use endpoint::{
    AdminCall, Direction, Event, Peer, PeerStatus, Timeouts, Transport, TransportConfig,
    TransportError, TruthCall,
};
pub use faults::{DatagramFate, DatagramFaults};
pub use tls::{FederationTls, TlsError};
pub use truth::{TruthClient, TruthError};

/// A number that tells one run of a process from another: the wall clock
/// in nanoseconds mixed with the process id (never 0).
pub fn new_incarnation() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let mixed = nanos ^ (u64::from(std::process::id()) << 40);
    mixed.max(1)
}
