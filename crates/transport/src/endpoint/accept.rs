//! The accept loop, and the routing of each accepted connection by the
//! role its certificate carries and the application protocol it chose: a
//! peer's message link ([`super::reader`]), a peer's oracle queries
//! ([`super::oracle`]) or an administrator's requests ([`crate::admin`]).

use std::sync::Arc;

use super::close::{self, close_connection};
use super::oracle::serve_truth;
use super::reader::serve_peer;
use super::shared::Shared;
use crate::admin::{self, AdminContext};
use crate::certs::Role;
use crate::tls;
use crate::truth::TRUTH_ALPN;

/// Accepts connections until the endpoint closes, each served by a task of
/// its own.
pub(super) async fn accept_loop(shared: Arc<Shared>) {
    while let Some(incoming) = shared.endpoint.accept().await {
        tokio::spawn(accept_one(shared.clone(), incoming));
    }
}

/// Completes the TLS handshake of one incoming connection and serves it as
/// what its certificate and protocol say it is.
async fn accept_one(shared: Arc<Shared>, incoming: quinn::Incoming) {
    let remote = incoming.remote_address();
    let connection = match incoming.await {
        Ok(connection) => connection,
        Err(error) => {
            outside_warn!(shared.warnings, "handshake", cluster = %shared.cluster, %remote, %error, "connection refused in the TLS handshake");
            return;
        }
    };
    let identity = match tls::peer_identity(&connection) {
        Ok(identity) => identity,
        Err(error) => {
            outside_warn!(shared.warnings, "identity", cluster = %shared.cluster, %remote, %error, "connection refused");
            close_connection(&connection, close::IDENTITY, &error.to_string());
            return;
        }
    };
    let truth = connection
        .handshake_data()
        .and_then(|data| data.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|data| data.protocol)
        .is_some_and(|protocol| protocol == TRUTH_ALPN);
    match (identity.role, truth) {
        (Role::Admin, false) => {
            admin::serve(admin_context(&shared), connection, identity.name).await
        }
        (Role::Cluster, false) => serve_peer(&shared, connection, identity.name).await,
        (Role::Cluster, true) => serve_truth(&shared, connection, identity.name).await,
        (Role::Admin, true) => {
            outside_warn!(shared.warnings, "admin oracle", cluster = %shared.cluster, %remote, "oracle query from an administrator refused");
            close_connection(
                &connection,
                close::IDENTITY,
                "only clusters ask for true counters",
            );
        }
    }
}

/// What the admin channel needs of the endpoint.
fn admin_context(shared: &Shared) -> AdminContext {
    AdminContext {
        cluster: shared.cluster.clone(),
        events: shared.events.clone(),
        warnings: shared.warnings.clone(),
    }
}
