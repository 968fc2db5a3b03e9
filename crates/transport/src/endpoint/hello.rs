//! The hello exchange that opens every peer connection, on both sides, and
//! the checks that bind a connection and its messages to the cluster its
//! certificate names: same protocol version, the hello under the
//! certificate's name, a peer of this cluster, one hello only, and no
//! message speaking for another cluster.

use mcfed_protocol::{
    ClusterName, FrameDecoder, FrameError, Hello, Message, PROTOCOL_VERSION, encode_frame,
};

use super::close::{self, close_connection};
use super::config::Peer;
use super::dial::DialError;
use super::shared::Shared;

/// An accepted connection's stream after a good hello from the peer.
pub(super) struct Opened {
    /// Where this process's hello goes (then nothing: the peer sends).
    pub(super) send: quinn::SendStream,
    /// The peer's frames.
    pub(super) recv: quinn::RecvStream,
    /// The decoder, holding whatever arrived after the hello.
    pub(super) decoder: FrameDecoder,
    /// The peer's hello.
    pub(super) hello: Hello,
}

/// Reads one message (the hello) from a stream, within the decoder's limit.
pub(super) async fn read_message(
    recv: &mut quinn::RecvStream,
    decoder: &mut FrameDecoder,
) -> Result<Message, String> {
    let mut buffer = [0u8; 4096];
    loop {
        match decoder.next_message() {
            Ok(Some(message)) => return Ok(message),
            Ok(None) => {}
            Err(error) => return Err(error.to_string()),
        }
        match recv.read(&mut buffer).await {
            Ok(Some(read)) => decoder.extend(&buffer[..read]),
            Ok(None) => return Err("the stream ended before a whole message".to_owned()),
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// Encodes one message as a frame.
pub(super) fn frame(message: &Message, max: usize) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_frame(message, &mut out, max)?;
    Ok(out)
}

/// Checks a message from peer `name` before it is handed on: nothing may
/// speak for another cluster, and a hello comes only once.
pub(crate) fn check_message(name: &ClusterName, message: &Message) -> Result<(), (u32, String)> {
    match message {
        Message::Hello(_) => Err((
            close::PROTOCOL,
            "a second hello on an open connection".to_owned(),
        )),
        Message::CounterUpdate(update) => {
            if &update.sender != name {
                return Err((
                    close::IDENTITY,
                    format!(
                        "counter update sent as `{}` by cluster `{name}` (its certificate)",
                        update.sender
                    ),
                ));
            }
            match update.queues.iter().find(|queue| &queue.cluster != name) {
                Some(queue) => Err((
                    close::IDENTITY,
                    format!(
                        "counters of queue `{}@{}` sent by cluster `{name}` (its certificate)",
                        queue.queue, queue.cluster
                    ),
                )),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------- accepted

/// Waits, within the handshake timeout, for the hello that opens a
/// connection from cluster `name` (its certificate) and checks it. On
/// refusal, the close code and the reason.
pub(super) async fn receive_hello(
    shared: &Shared,
    connection: &quinn::Connection,
    name: &str,
) -> Result<Opened, (u32, String)> {
    let handshake = async {
        let (send, mut recv) = connection.accept_bi().await.map_err(|e| e.to_string())?;
        let mut decoder = FrameDecoder::new(shared.max_frame);
        let message = read_message(&mut recv, &mut decoder).await?;
        Ok::<_, String>((send, recv, decoder, message))
    };
    let (send, recv, decoder, first) =
        match tokio::time::timeout(shared.timeouts.handshake, handshake).await {
            Ok(Ok(opened)) => opened,
            Ok(Err(reason)) => return Err((close::PROTOCOL, format!("no hello: {reason}"))),
            Err(_) => return Err((close::PROTOCOL, "no hello in time".to_owned())),
        };
    let hello = check_hello(shared, name, first)?;
    Ok(Opened {
        send,
        recv,
        decoder,
        hello,
    })
}

/// Checks the first message of a connection from cluster `name` (its
/// certificate): a hello, at this protocol version, under that name, from
/// a peer of this cluster.
fn check_hello(shared: &Shared, name: &str, first: Message) -> Result<Hello, (u32, String)> {
    let Message::Hello(hello) = first else {
        return Err((
            close::PROTOCOL,
            format!("the connection opened with a {}, not a hello", first.kind()),
        ));
    };
    if hello.version != PROTOCOL_VERSION {
        return Err((
            close::VERSION,
            format!(
                "protocol version {} is not this cluster's ({PROTOCOL_VERSION})",
                hello.version
            ),
        ));
    }
    if hello.cluster.as_str() != name {
        return Err((
            close::IDENTITY,
            format!(
                "says hello as cluster `{}` but its certificate names cluster `{name}`",
                hello.cluster
            ),
        ));
    }
    if !shared.peers.contains_key(&hello.cluster) {
        return Err((
            close::UNKNOWN_PEER,
            format!(
                "cluster `{}` is not a peer of cluster `{}`",
                hello.cluster, shared.cluster
            ),
        ));
    }
    Ok(hello)
}

// ---------------------------------------------------------------- dialled

/// Sends this process's hello on a new stream of a connection it dialled
/// to `peer` and checks the answer, within the handshake timeout. Returns
/// the stream to write on and the peer's hello.
pub(super) async fn exchange_hello(
    shared: &Shared,
    peer: &Peer,
    connection: &quinn::Connection,
) -> Result<(quinn::SendStream, Hello), DialError> {
    let handshake = async {
        let (mut send, mut recv) = connection
            .open_bi()
            .await
            .map_err(|error| DialError::Failed(error.to_string()))?;
        let hello = frame(&Message::Hello(shared.hello.clone()), shared.max_frame)
            .map_err(|error| DialError::Failed(error.to_string()))?;
        send.write_all(&hello)
            .await
            .map_err(|error| DialError::Failed(error.to_string()))?;
        let mut decoder = FrameDecoder::new(shared.max_frame);
        let reply =
            read_message(&mut recv, &mut decoder)
                .await
                .map_err(|error| match connection.close_reason() {
                    Some(quinn::ConnectionError::ApplicationClosed(close)) => DialError::Refused(
                        format!("refused: {}", String::from_utf8_lossy(&close.reason)),
                    ),
                    _ => DialError::Failed(format!("no hello from the peer: {error}")),
                })?;
        Ok::<_, DialError>((send, reply))
    };
    let (send, reply) = tokio::time::timeout(shared.timeouts.handshake, handshake)
        .await
        .map_err(|_| DialError::Failed("the hello exchange timed out".to_owned()))??;
    let Message::Hello(hello) = reply else {
        close_connection(connection, close::PROTOCOL, "expected a hello");
        return Err(DialError::Refused(format!(
            "the peer answered the hello with a {}",
            reply.kind()
        )));
    };
    if hello.version != PROTOCOL_VERSION || hello.cluster != peer.name {
        let reason = format!(
            "the peer says hello as `{}` at protocol version {} (expected `{}` at {PROTOCOL_VERSION})",
            hello.cluster, hello.version, peer.name
        );
        close_connection(connection, close::VERSION, &reason);
        return Err(DialError::Refused(reason));
    }
    Ok((send, hello))
}
