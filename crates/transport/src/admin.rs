//! The admin channel: LSF-style commands (`bsub`, `bjobs`, ...) and the
//! launcher reach a running cluster process over the same authenticated
//! QUIC, with the administrator's certificate.
//!
//! Each request is one bidirectional stream: the client writes the
//! request's bytes and finishes its side; the process answers with the
//! response's bytes and finishes its side. What the bytes mean is up to the
//! process (`mcfed-process` encodes its requests with postcard); the transport
//! only carries them, bounded by [`MAX_ADMIN_MESSAGE`].

use std::net::SocketAddr;
use std::time::Duration;

use mcfed_protocol::ClusterName;
use tokio::sync::{mpsc, oneshot};

use crate::certs::Role;
use crate::endpoint::{AdminCall, Event, Timeouts, close, transport_settings};
use crate::tls::{self, FederationTls, TlsError};

/// The largest admin request or response, in bytes (64 MiB: a report of a
/// long run's decisions).
pub const MAX_ADMIN_MESSAGE: usize = 64 << 20;

/// Why an admin call failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The certificate is not the administrator's.
    #[error("admin commands need an administrator's certificate, not {0}")]
    NotAdmin(crate::certs::Identity),
    /// A local UDP socket could not be bound.
    #[error("cannot open a local socket: {0}")]
    Bind(#[source] std::io::Error),
    /// The address does not resolve.
    #[error("cannot resolve `{address}`: {reason}")]
    Resolve {
        /// The address.
        address: String,
        /// Why.
        reason: String,
    },
    /// The process could not be reached or refused the connection.
    #[error("cannot reach cluster {target} at {address}: {reason}")]
    Connect {
        /// Who was dialled.
        target: String,
        /// Where.
        address: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The process answering is not the cluster that was meant.
    #[error("{address} is {found}, not cluster `{expected}`")]
    WrongCluster {
        /// Where.
        address: SocketAddr,
        /// Who answered.
        found: crate::certs::Identity,
        /// Who was meant.
        expected: ClusterName,
    },
    /// The request failed on the way.
    #[error("the request to cluster {target} failed: {reason}")]
    Call {
        /// Who was asked.
        target: String,
        /// Why.
        reason: String,
    },
}

/// What the endpoint needs to serve admin connections.
pub(crate) struct AdminContext {
    pub(crate) cluster: ClusterName,
    pub(crate) events: mpsc::UnboundedSender<Event>,
    /// Warnings caused from outside, one line per kind per interval.
    pub(crate) warnings: std::sync::Arc<mcfed_protocol::LogLimit>,
}

/// Serves an administrator's connection until it closes.
pub(crate) async fn serve(context: AdminContext, connection: quinn::Connection, client: String) {
    tracing::debug!(cluster = %context.cluster, %client, "admin connected");
    loop {
        let (mut send, mut recv) = match connection.accept_bi().await {
            Ok(streams) => streams,
            Err(_) => return,
        };
        let warnings = context.warnings.clone();
        let events = context.events.clone();
        let client = client.clone();
        let connection = connection.clone();
        tokio::spawn(async move {
            let request = match recv.read_to_end(MAX_ADMIN_MESSAGE).await {
                Ok(request) => request,
                Err(error) => {
                    let reason = format!("bad admin request: {error}");
                    outside_warn!(warnings, "admin request", %client, %reason, "closing the admin connection");
                    connection.close(quinn::VarInt::from_u32(close::PROTOCOL), reason.as_bytes());
                    return;
                }
            };
            let (reply, answer) = oneshot::channel();
            if events
                .send(Event::Admin(AdminCall {
                    client,
                    request,
                    reply,
                }))
                .is_err()
            {
                return;
            }
            if let Ok(response) = answer.await {
                let _ = send.write_all(&response).await;
                let _ = send.finish();
                // Let the response reach the client before the stream goes.
                let _ = send.stopped().await;
            }
        });
    }
}

/// A connection from an administrator to one cluster process.
#[derive(Debug)]
pub struct AdminClient {
    endpoint: quinn::Endpoint,
    connection: quinn::Connection,
    target: String,
}

impl AdminClient {
    /// Connects to the process at `address` (`host:port`) with the
    /// administrator's certificate in `tls`; with `expected`, the process's
    /// certificate must name that cluster.
    pub async fn connect(
        tls: &FederationTls,
        address: &str,
        expected: Option<&ClusterName>,
        timeout: Duration,
    ) -> Result<AdminClient, AdminError> {
        if tls.identity().role != Role::Admin {
            return Err(AdminError::NotAdmin(tls.identity().clone()));
        }
        let target = expected.map_or_else(|| address.to_owned(), |name| format!("`{name}`"));
        let resolved = tokio::net::lookup_host(address)
            .await
            .map_err(|error| AdminError::Resolve {
                address: address.to_owned(),
                reason: error.to_string(),
            })?
            .next()
            .ok_or_else(|| AdminError::Resolve {
                address: address.to_owned(),
                reason: "no address".to_owned(),
            })?;
        let local: SocketAddr = if resolved.is_ipv6() {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        };
        let endpoint = quinn::Endpoint::client(local).map_err(AdminError::Bind)?;
        let mut config = tls.client_config()?;
        config.transport_config(transport_settings(&Timeouts::default()));
        let connect_error = |reason: String| AdminError::Connect {
            target: target.clone(),
            address: resolved,
            reason,
        };
        let connecting = endpoint
            .connect_with(config, resolved, tls::server_name(address))
            .map_err(|error| connect_error(error.to_string()))?;
        let connection = tokio::time::timeout(timeout, connecting)
            .await
            .map_err(|_| {
                connect_error(format!(
                    "no answer within {}",
                    mcfed_protocol::words::duration(timeout)
                ))
            })?
            .map_err(|error| connect_error(error.to_string()))?;
        let identity =
            tls::peer_identity(&connection).map_err(|error| connect_error(error.to_string()))?;
        if let Some(expected) = expected {
            if identity.name != expected.as_str() {
                connection.close(quinn::VarInt::from_u32(close::IDENTITY), b"wrong cluster");
                return Err(AdminError::WrongCluster {
                    address: resolved,
                    found: identity,
                    expected: expected.clone(),
                });
            }
        }
        Ok(AdminClient {
            endpoint,
            connection,
            target,
        })
    }

    /// Sends one request and waits for its response.
    pub async fn call(&self, request: &[u8]) -> Result<Vec<u8>, AdminError> {
        let failed = |reason: String| AdminError::Call {
            target: self.target.clone(),
            reason,
        };
        let (mut send, mut recv) = self
            .connection
            .open_bi()
            .await
            .map_err(|error| failed(error.to_string()))?;
        send.write_all(request)
            .await
            .map_err(|error| failed(error.to_string()))?;
        send.finish().map_err(|error| failed(error.to_string()))?;
        recv.read_to_end(MAX_ADMIN_MESSAGE)
            .await
            .map_err(|error| failed(error.to_string()))
    }

    /// Closes the connection.
    pub async fn close(self) {
        self.connection
            .close(quinn::VarInt::from_u32(close::SHUTDOWN), b"done");
        let _ = tokio::time::timeout(Duration::from_millis(200), self.endpoint.wait_idle()).await;
    }
}
