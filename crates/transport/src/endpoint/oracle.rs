//! Answering peers' oracle queries ([`crate::truth`]): on a connection with
//! the truth protocol from a peer, each stream carries one query number;
//! the process is asked ([`Event::Truth`]) and its counters for that peer,
//! if any, go back as one frame.

use std::sync::Arc;

use mcfed_protocol::{ClusterName, Message, encode_frame};
use tokio::sync::oneshot;

use super::close::{self, close_connection};
use super::events::{Event, TruthCall};
use super::shared::Shared;
use crate::truth::QUERY_SIZE;

/// Answers a peer's oracle queries ([`crate::truth`]) until it closes the
/// connection: one stream per query.
pub(super) async fn serve_truth(shared: &Arc<Shared>, connection: quinn::Connection, name: String) {
    let peer = match ClusterName::new(&name) {
        Ok(peer) if shared.peers.contains_key(&peer) => peer,
        _ => {
            let reason = format!(
                "cluster `{name}` is not a peer of cluster `{}`",
                shared.cluster
            );
            outside_warn!(shared.warnings, "oracle peer", cluster = %shared.cluster, %reason, "oracle query refused");
            close_connection(&connection, close::UNKNOWN_PEER, &reason);
            return;
        }
    };
    while let Ok((send, recv)) = connection.accept_bi().await {
        tokio::spawn(answer_query(
            shared.clone(),
            peer.clone(),
            connection.clone(),
            send,
            recv,
        ));
    }
}

/// Reads one query, asks the process, and writes its answer: the counter
/// update, or nothing.
async fn answer_query(
    shared: Arc<Shared>,
    peer: ClusterName,
    connection: quinn::Connection,
    mut send: quinn::SendStream,
    mut recv: quinn::RecvStream,
) {
    let seq = match recv
        .read_to_end(QUERY_SIZE)
        .await
        .map(|bytes| <[u8; QUERY_SIZE]>::try_from(bytes.as_slice()).map(u64::from_be_bytes))
    {
        Ok(Ok(seq)) => seq,
        Ok(Err(_)) | Err(_) => {
            let reason = "a bad oracle query";
            outside_warn!(shared.warnings, "oracle query", cluster = %shared.cluster, %peer, reason, "closing the connection");
            close_connection(&connection, close::BAD_FRAME, reason);
            return;
        }
    };
    let (reply, answer) = oneshot::channel();
    shared.emit(Event::Truth(TruthCall {
        peer: peer.clone(),
        seq,
        reply,
    }));
    let mut bytes = Vec::new();
    if let Ok(Some(update)) = answer.await {
        if let Err(error) = encode_frame(
            &Message::CounterUpdate(update),
            &mut bytes,
            shared.max_frame,
        ) {
            tracing::error!(cluster = %shared.cluster, %peer, %error, "oracle answer not sent");
            bytes.clear();
        }
    }
    let _ = send.write_all(&bytes).await;
    let _ = send.finish();
    let _ = send.stopped().await;
}
