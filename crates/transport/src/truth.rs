//! Oracle queries: a submission cluster asks an execution cluster for the
//! counters it would publish to it if it published now — the true counters
//! the oracle judges decisions by — on a path the injected faults do not
//! touch.
//!
//! The query runs on QUIC connections of their own, with the application
//! protocol [`TRUTH_ALPN`] instead of [`crate::tls::ALPN`], from a client
//! endpoint of its own ([`TruthClient`]) on a plain UDP socket. The
//! execution cluster's answers go to that endpoint's address, which is no
//! peer's address, so its [`crate::faults`] let them through; the queries
//! themselves never pass through the asking process's faulty socket. Both
//! sides present their cluster certificates, as on the cluster-to-cluster
//! links; an execution cluster answers only a cluster that is its peer, and
//! only with that cluster's own counters.
//!
//! One bidirectional stream per query: the client writes the query number
//! (8 bytes, big-endian) and finishes; the execution cluster answers with
//! one frame, a [`Message::CounterUpdate`] numbered with it, or with
//! nothing if it publishes no counters to the asker.

use std::net::SocketAddr;
use std::time::Duration;

use mcfed_protocol::{ClusterName, CounterUpdate, FrameDecoder, Message};
use rustc_hash::FxHashMap;
use tokio::sync::Mutex;

use crate::certs::Role;
use crate::endpoint::{Peer, Timeouts, check_message, transport_settings};
use crate::tls::{self, FederationTls, TlsError};

/// The ALPN protocol name of oracle queries.
pub const TRUTH_ALPN: &[u8] = b"mcfed-truth/1";

/// The size of a query: its number.
pub(crate) const QUERY_SIZE: usize = 8;

/// Why an oracle query failed.
#[derive(Debug, thiserror::Error)]
pub enum TruthError {
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The certificate is not a cluster's.
    #[error("oracle queries need a cluster's certificate, not {0}")]
    NotACluster(crate::certs::Identity),
    /// A local UDP socket could not be bound.
    #[error("cannot open a socket for oracle queries: {0}")]
    Bind(#[source] std::io::Error),
    /// The cluster is not one this client may ask.
    #[error("cluster `{0}` is not a peer of this cluster")]
    UnknownPeer(ClusterName),
    /// The execution cluster could not be reached.
    #[error("cannot reach cluster `{peer}` for its true counters: {reason}")]
    Connect {
        /// The cluster.
        peer: ClusterName,
        /// Why.
        reason: String,
    },
    /// The query failed on the way.
    #[error("the oracle query to cluster `{peer}` failed: {reason}")]
    Call {
        /// The cluster.
        peer: ClusterName,
        /// Why.
        reason: String,
    },
    /// The answer is not the counters asked for.
    #[error("cluster `{peer}` answered the oracle query with {what}")]
    BadAnswer {
        /// The cluster.
        peer: ClusterName,
        /// What came instead.
        what: String,
    },
}

struct Target {
    /// Configured, or learned from the peer's hello ([`TruthClient::learn_address`]).
    address: std::sync::Mutex<Option<String>>,
    connection: Mutex<Option<quinn::Connection>>,
}

/// A submission cluster's side of oracle queries: a client endpoint of its
/// own, one connection per execution cluster, made when first needed and
/// again after it breaks.
pub struct TruthClient {
    cluster: ClusterName,
    endpoint: quinn::Endpoint,
    config: quinn::ClientConfig,
    targets: FxHashMap<ClusterName, Target>,
    max_frame: usize,
}

impl std::fmt::Debug for TruthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TruthClient")
            .field("cluster", &self.cluster)
            .field("targets", &self.targets.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TruthClient {
    /// A client for cluster `tls`'s holder, asking `peers`. Binds a UDP
    /// socket of its own (`local`: IPv4 or IPv6 as the peers are). Must be
    /// called inside a tokio runtime.
    pub fn new(
        tls: &FederationTls,
        peers: &[Peer],
        local: SocketAddr,
        max_frame: usize,
    ) -> Result<TruthClient, TruthError> {
        let identity = tls.identity();
        if identity.role != Role::Cluster {
            return Err(TruthError::NotACluster(identity.clone()));
        }
        let cluster = ClusterName::new(&identity.name)
            .map_err(|_| TruthError::NotACluster(identity.clone()))?;
        let mut config = tls.client_config_for(TRUTH_ALPN)?;
        config.transport_config(transport_settings(&Timeouts::default()));
        let endpoint = quinn::Endpoint::client(local).map_err(TruthError::Bind)?;
        Ok(TruthClient {
            cluster,
            endpoint,
            config,
            targets: peers
                .iter()
                .map(|peer| {
                    (
                        peer.name.clone(),
                        Target {
                            address: std::sync::Mutex::new(peer.address.clone()),
                            connection: Mutex::new(None),
                        },
                    )
                })
                .collect(),
            max_frame,
        })
    }

    /// Asks `peer` for its true counters now, numbered `seq`, waiting at
    /// most `timeout` (connecting included). After a failure the
    /// connection is made again at the next query: a peer that was killed
    /// and restarted answers on a new one.
    pub async fn ask(
        &self,
        peer: &ClusterName,
        seq: u64,
        timeout: Duration,
    ) -> Result<CounterUpdate, TruthError> {
        let target = self
            .targets
            .get(peer)
            .ok_or_else(|| TruthError::UnknownPeer(peer.clone()))?;
        let mut slot = target.connection.lock().await;
        let attempt = async {
            let connection = match slot.as_ref().filter(|open| open.close_reason().is_none()) {
                Some(open) => open.clone(),
                None => {
                    let address = target
                        .address
                        .lock()
                        .ok()
                        .and_then(|address| address.clone())
                        .ok_or_else(|| TruthError::Connect {
                            peer: peer.clone(),
                            reason: "its address is not known yet".to_owned(),
                        })?;
                    let made = self.connect(peer, &address).await?;
                    *slot = Some(made.clone());
                    made
                }
            };
            self.query(&connection, peer, seq).await
        };
        let result = tokio::time::timeout(timeout, attempt)
            .await
            .unwrap_or_else(|_| {
                Err(TruthError::Call {
                    peer: peer.clone(),
                    reason: format!(
                        "no answer within {}",
                        mcfed_protocol::words::duration(timeout)
                    ),
                })
            });
        if result.is_err() {
            if let Some(connection) = slot.take() {
                connection.close(
                    quinn::VarInt::from_u32(crate::endpoint::close::SHUTDOWN),
                    b"no answer",
                );
            }
        }
        result
    }

    /// Sets where `peer` is (learned from its hello by the endpoint,
    /// [`crate::Transport::peer_address`]); the next connection goes there.
    pub fn learn_address(&self, peer: &ClusterName, address: String) {
        if let Some(target) = self.targets.get(peer) {
            if let Ok(mut known) = target.address.lock() {
                *known = Some(address);
            }
        }
    }

    /// Forgets the connection to `peer` (it restarted): the next query
    /// makes a new one.
    pub async fn forget(&self, peer: &ClusterName) {
        if let Some(target) = self.targets.get(peer) {
            if let Some(connection) = target.connection.lock().await.take() {
                connection.close(
                    quinn::VarInt::from_u32(crate::endpoint::close::SHUTDOWN),
                    b"you restarted",
                );
            }
        }
    }

    async fn connect(
        &self,
        peer: &ClusterName,
        address: &str,
    ) -> Result<quinn::Connection, TruthError> {
        let failed = |reason: String| TruthError::Connect {
            peer: peer.clone(),
            reason,
        };
        let resolved = tokio::net::lookup_host(address)
            .await
            .map_err(|error| failed(format!("cannot resolve {address}: {error}")))?
            .next()
            .ok_or_else(|| failed(format!("{address} resolves to no address")))?;
        let connection = self
            .endpoint
            .connect_with(self.config.clone(), resolved, tls::server_name(address))
            .map_err(|error| failed(error.to_string()))?
            .await
            .map_err(|error| failed(error.to_string()))?;
        let identity =
            tls::peer_identity(&connection).map_err(|error| failed(error.to_string()))?;
        if identity.role != Role::Cluster || identity.name != peer.as_str() {
            connection.close(
                quinn::VarInt::from_u32(crate::endpoint::close::IDENTITY),
                b"wrong cluster",
            );
            return Err(failed(format!(
                "{resolved} should be cluster `{peer}` but its certificate names {identity}"
            )));
        }
        Ok(connection)
    }

    async fn query(
        &self,
        connection: &quinn::Connection,
        peer: &ClusterName,
        seq: u64,
    ) -> Result<CounterUpdate, TruthError> {
        // A refusal says why in the connection's close reason.
        let failed = |reason: String| TruthError::Call {
            peer: peer.clone(),
            reason: match connection.close_reason() {
                Some(quinn::ConnectionError::ApplicationClosed(close)) => {
                    format!("refused: {}", String::from_utf8_lossy(&close.reason))
                }
                _ => reason,
            },
        };
        let (mut send, mut recv) = connection
            .open_bi()
            .await
            .map_err(|error| failed(error.to_string()))?;
        send.write_all(&seq.to_be_bytes())
            .await
            .map_err(|error| failed(error.to_string()))?;
        send.finish().map_err(|error| failed(error.to_string()))?;
        let bytes = recv
            .read_to_end(self.max_frame + 16)
            .await
            .map_err(|error| failed(error.to_string()))?;
        let bad = |what: String| TruthError::BadAnswer {
            peer: peer.clone(),
            what,
        };
        if bytes.is_empty() {
            return Err(bad(format!(
                "nothing: it publishes no counters to cluster `{}`",
                self.cluster
            )));
        }
        let mut decoder = FrameDecoder::new(self.max_frame);
        decoder.extend(&bytes);
        let message = decoder
            .next_message()
            .map_err(|error| bad(format!("a bad frame: {error}")))?
            .ok_or_else(|| bad("an incomplete frame".to_owned()))?;
        if let Err((_, reason)) = check_message(peer, &message) {
            return Err(bad(reason));
        }
        match message {
            Message::CounterUpdate(update) if update.seq == seq => Ok(update),
            Message::CounterUpdate(update) => Err(bad(format!(
                "counters numbered {} (asked for {seq})",
                update.seq
            ))),
            other => Err(bad(format!("a {}", other.kind()))),
        }
    }

    /// Closes every connection.
    pub async fn close(&self) {
        self.endpoint.close(
            quinn::VarInt::from_u32(crate::endpoint::close::SHUTDOWN),
            b"done",
        );
        let _ = tokio::time::timeout(Duration::from_millis(200), self.endpoint.wait_idle()).await;
    }
}
