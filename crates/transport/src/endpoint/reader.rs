//! The reader side: one task per accepted peer connection receives its
//! hello ([`super::hello`]), answers it, then hands the process every
//! message that arrives, checked against the peer's certificate, until the
//! connection ends or a bad frame closes it.

use std::net::SocketAddr;

use mcfed_protocol::{ClusterName, Envelope, FrameDecoder, Hello, Message};

use super::close::{self, close_connection};
use super::events::{Direction, Event};
use super::hello::{Opened, check_message, frame, receive_hello};
use super::shared::Shared;

/// Serves a connection from cluster `name` (its certificate): the hello
/// exchange, then its messages until it ends.
pub(super) async fn serve_peer(shared: &Shared, connection: quinn::Connection, name: String) {
    let remote = connection.remote_address();
    let refuse = |code: u32, reason: String| {
        outside_warn!(shared.warnings, "peer refused", cluster = %shared.cluster, %remote, peer = %name, %reason, "connection closed");
        close_connection(&connection, code, &reason);
    };
    let Opened {
        mut send,
        mut recv,
        mut decoder,
        hello,
    } = match receive_hello(shared, &connection, &name).await {
        Ok(opened) => opened,
        Err((code, reason)) => return refuse(code, reason),
    };
    let peer = hello.cluster.clone();
    let reply = match frame(&Message::Hello(shared.hello.clone()), shared.max_frame) {
        Ok(reply) => reply,
        Err(error) => return refuse(close::PROTOCOL, error.to_string()),
    };
    if let Err(error) = send.write_all(&reply).await {
        tracing::debug!(cluster = %shared.cluster, peer = %peer, %error, "hello reply not sent");
        return;
    }
    let _ = send.finish();
    peer_up(shared, &peer, hello, remote);
    let reason = read_loop(shared, &connection, &peer, &mut recv, &mut decoder).await;
    shared.update_status(&peer, |status| {
        status.inbound = status.inbound.saturating_sub(1)
    });
    shared.emit(Event::PeerDown {
        peer,
        direction: Direction::Inbound,
        reason,
    });
}

/// Records an inbound connection from `peer` that completed its hello
/// exchange, learns its address if it was not known, makes this process's own connection to it again if the peer
/// restarted, and tells the process.
fn peer_up(shared: &Shared, peer: &ClusterName, hello: Hello, remote: SocketAddr) {
    shared.learn_address(peer, remote, hello.port);
    shared.update_status(peer, |status| {
        status.inbound += 1;
        status.incarnation = Some(hello.incarnation);
    });
    // A new incarnation means the peer restarted: this process's own
    // connection to it is to a dead process; make it again now rather than
    // when it times out.
    if let Some((incarnation, notify)) = shared.outbound.get(peer) {
        let stale = incarnation
            .lock()
            .map(|known| known.is_some_and(|known| known != hello.incarnation))
            .unwrap_or(false);
        if stale {
            notify.notify_one();
        }
    }
    tracing::info!(cluster = %shared.cluster, peer = %peer, %remote, "peer connected");
    shared.emit(Event::PeerUp {
        peer: peer.clone(),
        hello,
        direction: Direction::Inbound,
    });
}

/// Hands the process every message from `peer` until the connection ends;
/// returns why it did.
async fn read_loop(
    shared: &Shared,
    connection: &quinn::Connection,
    peer: &ClusterName,
    recv: &mut quinn::RecvStream,
    decoder: &mut FrameDecoder,
) -> String {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        loop {
            match decoder.next_message() {
                Ok(Some(message)) => {
                    if let Err((code, reason)) = check_message(peer, &message) {
                        outside_warn!(shared.warnings, "peer message", cluster = %shared.cluster, peer = %peer, %reason, "closing the connection");
                        close_connection(connection, code, &reason);
                        return reason;
                    }
                    shared.emit(Event::Message(Envelope {
                        from: peer.clone(),
                        to: shared.cluster.clone(),
                        message,
                    }));
                }
                Ok(None) => break,
                Err(error) => {
                    let reason = format!("bad frame: {error}");
                    outside_warn!(shared.warnings, "peer frame", cluster = %shared.cluster, peer = %peer, %reason, "closing the connection");
                    close_connection(connection, close::BAD_FRAME, &reason);
                    return reason;
                }
            }
        }
        match recv.read(&mut buffer).await {
            Ok(Some(read)) => decoder.extend(&buffer[..read]),
            Ok(None) => return "the peer finished its stream".to_owned(),
            Err(error) => return error.to_string(),
        }
    }
}
