//! The dialling side: one writer task per peer connects to it, says hello,
//! and writes the process's messages to it in order; when the connection
//! is lost (or the peer restarted) it reconnects with exponential backoff,
//! keeping what is sent meanwhile, counter updates coalesced to the newest.
//! A writer to a peer whose address is not known waits, keeping what is
//! sent likewise, until the peer's hello teaches it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, Envelope, Hello, Message, encode_frame};
use tokio::sync::{mpsc, watch};

use super::close::{self, close_connection, describe_close};
use super::config::Peer;
use super::events::{Direction, Event};
use super::hello::exchange_hello;
use super::shared::Shared;
use crate::tls;

/// What ended an outbound connection.
enum WriterEnd {
    /// The connection failed; reconnect.
    Lost(String),
    /// The peer closed it as it shut down cleanly; reconnect (it may come
    /// back), without alarm.
    PeerShutDown(String),
    /// The process is shutting down.
    Shutdown,
}

impl WriterEnd {
    /// What the end of a connection closed with `error` means: this
    /// process closing it is its own shutdown; the peer closing it with
    /// the shutdown code is a clean stop; anything else a loss.
    fn of_close(error: &quinn::ConnectionError) -> WriterEnd {
        match error {
            quinn::ConnectionError::LocallyClosed => WriterEnd::Shutdown,
            quinn::ConnectionError::ApplicationClosed(closed)
                if closed.error_code == quinn::VarInt::from_u32(close::SHUTDOWN) =>
            {
                WriterEnd::PeerShutDown(describe_close(error))
            }
            other => WriterEnd::Lost(describe_close(other)),
        }
    }
}

/// Why a connection to a peer was not made.
pub(super) enum DialError {
    /// Could not reach the peer (it may not be up yet).
    Failed(String),
    /// The peer was reached but the connection was refused.
    Refused(String),
    /// The endpoint is closing.
    Shutdown,
}

/// The writer task for `peer`: sends what arrives on `outgoing` until the
/// process shuts down, connecting and reconnecting as needed.
pub(super) async fn writer(
    shared: Arc<Shared>,
    peer: Peer,
    mut outgoing: mpsc::UnboundedReceiver<Envelope>,
) {
    let mut pending: VecDeque<Envelope> = VecDeque::new();
    let mut backoff = shared.timeouts.backoff_min;
    let Some(mut address) = shared
        .addresses
        .get(&peer.name)
        .map(watch::Sender::subscribe)
    else {
        return;
    };
    loop {
        let Some(current) =
            wait_address(&shared, &peer, &mut address, &mut outgoing, &mut pending).await
        else {
            return;
        };
        match dial(&shared, &peer, &current).await {
            Ok((connection, send, hello)) => {
                backoff = shared.timeouts.backoff_min;
                connected(&shared, &peer, &connection, hello);
                let end = write_loop(
                    &shared,
                    &peer.name,
                    &connection,
                    send,
                    &mut outgoing,
                    &mut pending,
                )
                .await;
                if !disconnected(&shared, &peer, &connection, end) {
                    return;
                }
            }
            Err(DialError::Shutdown) => return,
            Err(DialError::Failed(reason)) => {
                tracing::debug!(cluster = %shared.cluster, peer = %peer.name, %reason, "cannot connect");
                shared.update_status(&peer.name, |status| status.last_error = Some(reason));
            }
            Err(DialError::Refused(reason)) => {
                tracing::warn!(cluster = %shared.cluster, peer = %peer.name, %reason, "connection refused");
                shared.update_status(&peer.name, |status| status.last_error = Some(reason));
            }
        }
        if !wait_backoff(backoff, &mut outgoing, &mut pending).await {
            return;
        }
        backoff = (backoff * 2).min(shared.timeouts.backoff_max);
    }
}

/// Records a connection to `peer` that completed its hello exchange and
/// tells the process.
fn connected(shared: &Shared, peer: &Peer, connection: &quinn::Connection, hello: Hello) {
    shared.update_status(&peer.name, |status| {
        status.outbound = true;
        status.incarnation = Some(hello.incarnation);
        status.connects += 1;
        status.last_error = None;
    });
    if let Some((incarnation, _)) = shared.outbound.get(&peer.name) {
        if let Ok(mut incarnation) = incarnation.lock() {
            *incarnation = Some(hello.incarnation);
        }
    }
    tracing::info!(cluster = %shared.cluster, peer = %peer.name, address = %connection.remote_address(), "connected");
    shared.emit(Event::PeerUp {
        peer: peer.name.clone(),
        hello,
        direction: Direction::Outbound,
    });
}

/// Records the end of the connection to `peer` and tells the process.
/// Returns whether to reconnect (not if the process is shutting down).
fn disconnected(
    shared: &Shared,
    peer: &Peer,
    connection: &quinn::Connection,
    end: WriterEnd,
) -> bool {
    shared.update_status(&peer.name, |status| status.outbound = false);
    let reason = match end {
        WriterEnd::Shutdown => {
            close_connection(connection, close::SHUTDOWN, "shutting down");
            return false;
        }
        WriterEnd::PeerShutDown(reason) => {
            tracing::info!(cluster = %shared.cluster, peer = %peer.name, %reason, "the peer shut down; redialling");
            reason
        }
        WriterEnd::Lost(reason) => {
            tracing::warn!(cluster = %shared.cluster, peer = %peer.name, %reason, "connection lost; reconnecting");
            reason
        }
    };
    shared.update_status(&peer.name, |status| {
        status.last_error = Some(reason.clone());
    });
    shared.emit(Event::PeerDown {
        peer: peer.name.clone(),
        direction: Direction::Outbound,
        reason,
    });
    true
}

/// Waits `backoff` before the next attempt, keeping what is sent
/// meanwhile. Returns false if the process shut down meanwhile.
async fn wait_backoff(
    backoff: Duration,
    outgoing: &mut mpsc::UnboundedReceiver<Envelope>,
    pending: &mut VecDeque<Envelope>,
) -> bool {
    let sleep = tokio::time::sleep(backoff);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return true,
            envelope = outgoing.recv() => match envelope {
                Some(envelope) => keep_pending(pending, envelope),
                None => return false,
            },
        }
    }
}

/// Waits until `peer`'s address is known (at once if it is), keeping what
/// is sent meanwhile. Returns `None` if the process shut down meanwhile.
async fn wait_address(
    shared: &Shared,
    peer: &Peer,
    address: &mut watch::Receiver<Option<String>>,
    outgoing: &mut mpsc::UnboundedReceiver<Envelope>,
    pending: &mut VecDeque<Envelope>,
) -> Option<String> {
    let mut waiting = false;
    loop {
        if let Some(known) = address.borrow_and_update().clone() {
            return Some(known);
        }
        if !waiting {
            waiting = true;
            tracing::debug!(cluster = %shared.cluster, peer = %peer.name, "waiting for the peer's hello to learn its address");
            shared.update_status(&peer.name, |status| {
                status.last_error =
                    Some("its address is not known until it connects and says hello".to_owned());
            });
        }
        tokio::select! {
            changed = address.changed() => {
                if changed.is_err() {
                    return None;
                }
            }
            envelope = outgoing.recv() => match envelope {
                Some(envelope) => keep_pending(pending, envelope),
                None => return None,
            },
        }
    }
}

/// Queues a message while disconnected; a counter update replaces older
/// ones (only the newest snapshot matters).
fn keep_pending(pending: &mut VecDeque<Envelope>, envelope: Envelope) {
    if matches!(envelope.message, Message::CounterUpdate(_)) {
        pending.retain(|queued| !matches!(queued.message, Message::CounterUpdate(_)));
    }
    pending.push_back(envelope);
}

/// Connects to `peer` at `address`, checks that its certificate names it,
/// and exchanges hellos.
async fn dial(
    shared: &Shared,
    peer: &Peer,
    address: &str,
) -> Result<(quinn::Connection, quinn::SendStream, Hello), DialError> {
    let server_name = tls::server_name(address);
    let address = tokio::net::lookup_host(address)
        .await
        .map_err(|error| DialError::Failed(format!("cannot resolve {address}: {error}")))?
        .next()
        .ok_or_else(|| DialError::Failed(format!("{address} resolves to no address")))?;
    let connecting = shared
        .endpoint
        .connect_with(shared.client_config.clone(), address, server_name)
        .map_err(|error| match error {
            quinn::ConnectError::EndpointStopping => DialError::Shutdown,
            other => DialError::Failed(other.to_string()),
        })?;
    let connection = connecting.await.map_err(|error| match error {
        quinn::ConnectionError::TransportError(ref transport)
            if transport.code.to_string().contains("TLS") || transport.reason.contains("cert") =>
        {
            DialError::Refused(format!("TLS handshake with {address} failed: {error}"))
        }
        quinn::ConnectionError::LocallyClosed => DialError::Shutdown,
        other => DialError::Failed(format!("cannot connect to {address}: {other}")),
    })?;
    let identity = tls::peer_identity(&connection).map_err(|error| {
        close_connection(&connection, close::IDENTITY, &error.to_string());
        DialError::Refused(error.to_string())
    })?;
    if identity.name != peer.name.as_str() {
        let reason = format!(
            "{address} should be cluster `{}` but its certificate names {identity}",
            peer.name
        );
        close_connection(&connection, close::IDENTITY, &reason);
        return Err(DialError::Refused(reason));
    }
    let (mut send, hello) = exchange_hello(shared, peer, &connection).await?;
    let resume = shared.resume.lock().ok().and_then(|resume| *resume);
    if let Some(resume) = resume {
        let mut frame = Vec::new();
        encode_frame(&Message::Resume(resume), &mut frame, shared.max_frame)
            .map_err(|error| DialError::Failed(error.to_string()))?;
        send.write_all(&frame)
            .await
            .map_err(|error| DialError::Failed(error.to_string()))?;
    }
    Ok((connection, send, hello))
}

/// Writes what is pending and what arrives on `outgoing` to the peer, in
/// batches, until the connection is lost, the peer restarted (this
/// process's connection then goes to a dead process) or the process shuts
/// down.
async fn write_loop(
    shared: &Shared,
    peer: &ClusterName,
    connection: &quinn::Connection,
    mut send: quinn::SendStream,
    outgoing: &mut mpsc::UnboundedReceiver<Envelope>,
    pending: &mut VecDeque<Envelope>,
) -> WriterEnd {
    const BATCH: usize = 1024;
    let mut buffer = Vec::with_capacity(64 * 1024);
    let restarted = shared.outbound.get(peer).map(|(_, notify)| notify);
    loop {
        if pending.is_empty() {
            tokio::select! {
                () = async {
                    match restarted {
                        Some(notify) => notify.notified().await,
                        None => std::future::pending().await,
                    }
                } => {
                    close_connection(connection, close::SHUTDOWN, "you restarted");
                    return WriterEnd::Lost("the peer restarted".to_owned());
                }
                envelope = outgoing.recv() => match envelope {
                    Some(envelope) => pending.push_back(envelope),
                    None => {
                        let _ = send.finish();
                        return WriterEnd::Shutdown;
                    }
                },
                error = connection.closed() => return WriterEnd::of_close(&error),
            }
        }
        while pending.len() < BATCH {
            match outgoing.try_recv() {
                Ok(envelope) => pending.push_back(envelope),
                Err(_) => break,
            }
        }
        buffer.clear();
        let mut count = 0usize;
        while let Some(envelope) = pending.pop_front() {
            if let Err(error) = encode_frame(&envelope.message, &mut buffer, shared.max_frame) {
                tracing::error!(cluster = %shared.cluster, to = %envelope.to, kind = envelope.message.kind(), %error, "message not sent: handed back to the process");
                shared.emit(Event::Unsendable { envelope, error });
                continue;
            }
            count += 1;
            if count >= BATCH {
                break;
            }
        }
        if let Err(error) = send.write_all(&buffer).await {
            tracing::warn!(cluster = %shared.cluster, messages = count, %error, "messages lost with the connection");
            return WriterEnd::Lost(error.to_string());
        }
    }
}
