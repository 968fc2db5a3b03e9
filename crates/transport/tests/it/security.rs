//! The transport's security and robustness, endpoint to endpoint over
//! loopback: only the federation CA's certificates get in, a cluster speaks
//! only under the name in its certificate, and a bad frame closes only the
//! connection it came on.

use crate::common;
use common::{cluster_tls, federation, name, peer, start};

use std::net::SocketAddr;
use std::time::Duration;

use mcfed_protocol::{CounterUpdate, Envelope, Hello, MAX_FRAME_SIZE, Message, encode_frame};
use mcfed_transport::endpoint::close;
use mcfed_transport::{Event, FederationTls, Role};
use tokio::sync::mpsc::UnboundedReceiver;

/// A raw QUIC client presenting `tls`'s certificate.
async fn dial(tls: &FederationTls, to: SocketAddr) -> Result<quinn::Connection, String> {
    dial_as(tls, to, "localhost").await
}

/// [`dial`], checking that the server's certificate names `host`.
async fn dial_as(
    tls: &FederationTls,
    to: SocketAddr,
    host: &str,
) -> Result<quinn::Connection, String> {
    let endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().expect("address"))
        .map_err(|error| error.to_string())?;
    let config = tls.client_config().map_err(|error| error.to_string())?;
    let connecting = endpoint
        .connect_with(config, to, host)
        .map_err(|error| error.to_string())?;
    tokio::time::timeout(Duration::from_secs(5), connecting)
        .await
        .map_err(|_| "timed out".to_owned())?
        .map_err(|error| error.to_string())
}

/// Opens the message stream and sends `hello`; returns the send half and
/// whether a hello came back.
async fn say_hello(
    connection: &quinn::Connection,
    hello: Hello,
) -> (quinn::SendStream, quinn::RecvStream) {
    let (mut send, recv) = connection.open_bi().await.expect("stream");
    let mut frame = Vec::new();
    encode_frame(&Message::Hello(hello), &mut frame, MAX_FRAME_SIZE).expect("encode");
    send.write_all(&frame).await.expect("write hello");
    (send, recv)
}

/// Waits for the connection to be closed by the peer; its code and reason.
async fn closed_with(connection: &quinn::Connection) -> (u64, String) {
    match tokio::time::timeout(Duration::from_secs(5), connection.closed()).await {
        Ok(quinn::ConnectionError::ApplicationClosed(close)) => (
            close.error_code.into_inner(),
            String::from_utf8_lossy(&close.reason).into_owned(),
        ),
        Ok(other) => panic!("closed otherwise: {other}"),
        Err(_) => panic!("the connection was not closed"),
    }
}

/// Waits (up to 5 s) for an event matching `pick`.
async fn wait_for<T>(
    events: &mut UnboundedReceiver<Event>,
    pick: impl FnMut(&Event) -> Option<T>,
) -> Option<T> {
    wait_within(events, Duration::from_secs(5), pick).await
}

/// Waits up to `limit` for an event matching `pick`.
async fn wait_within<T>(
    events: &mut UnboundedReceiver<Event>,
    limit: Duration,
    mut pick: impl FnMut(&Event) -> Option<T>,
) -> Option<T> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .ok()??;
        if let Some(found) = pick(&event) {
            return Some(found);
        }
    }
}

fn update_from(sender: &str) -> Message {
    Message::CounterUpdate(CounterUpdate {
        sender: name(sender),
        seq: 1,
        taken_at: mcfed_protocol::SimTime::from_secs(30),
        queues: Vec::new(),
        forwards_received: Vec::new(),
    })
}

#[tokio::test]
async fn peers_of_one_federation_connect_and_messages_carry_the_certified_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, mut one_events) = start(dir.path(), "Cluster1", vec![]);
    let (two, _two_events) = start(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
    );
    // Cluster1 does not list Cluster2 as a peer yet: refused.
    let refused = wait_within(
        &mut one_events,
        Duration::from_secs(1),
        |event| match event {
            Event::PeerUp { .. } => Some(true),
            _ => None,
        },
    )
    .await;
    assert_eq!(refused, None, "an unlisted cluster is not let in");
    drop(two);
    let (one, mut one_events) = start(
        dir.path(),
        "Cluster1",
        vec![peer("Cluster2", "127.0.0.1:9".parse().expect("address"))],
    );
    let (two, _two_events) = start(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
    );
    let hello = wait_for(&mut one_events, |event| match event {
        Event::PeerUp { hello, .. } => Some(hello.clone()),
        _ => None,
    })
    .await
    .expect("Cluster2 connects");
    assert_eq!(hello.cluster, "Cluster2");
    assert_eq!(hello.incarnation, 7);
    two.send(Envelope {
        from: name("Cluster2"),
        to: name("Cluster1"),
        message: update_from("Cluster2"),
    })
    .expect("send");
    let from = wait_for(&mut one_events, |event| match event {
        Event::Message(envelope) => Some(envelope.from.clone()),
        _ => None,
    })
    .await
    .expect("the update arrives");
    assert_eq!(from, "Cluster2");
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_refused_both_ways() {
    let ours = tempfile::tempdir().expect("temp dir");
    let theirs = tempfile::tempdir().expect("temp dir");
    federation(ours.path());
    federation(theirs.path());
    let (one, mut events) = start(
        ours.path(),
        "Cluster1",
        vec![peer("Cluster2", "127.0.0.1:9".parse().expect("address"))],
    );
    // A stranger with a certificate for "Cluster2" signed by another CA.
    let stranger = cluster_tls(theirs.path(), "Cluster2");
    let result = dial(&stranger, one.local_addr()).await;
    let error = match result {
        Err(error) => error,
        // The server may finish its side before the refusal lands.
        Ok(connection) => {
            let reason = connection.closed().await;
            reason.to_string()
        }
    };
    assert!(
        error.contains("certificate") || error.contains("TLS") || error.contains("crypto"),
        "refused in the TLS handshake: {error}"
    );
    assert!(
        wait_within(&mut events, Duration::from_secs(1), |event| match event {
            Event::PeerUp { .. } | Event::Message(_) => Some(()),
            _ => None,
        })
        .await
        .is_none(),
        "nothing from the stranger reaches the process"
    );
    // And our cluster will not talk to a server from another CA.
    let (stranger_server, _stranger_events) = start(theirs.path(), "Cluster2", vec![]);
    let ours_tls = cluster_tls(ours.path(), "Cluster1");
    let error = dial(&ours_tls, stranger_server.local_addr())
        .await
        .expect_err("a server from another CA is refused");
    assert!(
        error.contains("certificate") || error.contains("UnknownIssuer"),
        "{error}"
    );
    drop(one);
}

#[tokio::test]
async fn a_certificate_for_another_host_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, _events) = start(dir.path(), "Cluster1", vec![]);
    let two = cluster_tls(dir.path(), "Cluster2");
    // Cluster1's certificate names this machine: reached by one of its
    // loopback names it is accepted, by any other host it is refused.
    for host in ["localhost", "127.0.0.1"] {
        assert!(
            dial_as(&two, one.local_addr(), host).await.is_ok(),
            "{host}"
        );
    }
    for host in ["node1.example.org", "127.0.0.2"] {
        let error = dial_as(&two, one.local_addr(), host)
            .await
            .expect_err("another host is refused");
        assert!(
            error.contains(&format!(
                "cluster `Cluster1` was reached at {host}, but its certificate is for localhost, 127.0.0.1, ::1"
            )),
            "{host}: {error}"
        );
    }
}

#[tokio::test]
async fn a_cluster_claiming_another_name_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, mut events) = start(
        dir.path(),
        "Cluster1",
        vec![
            peer("Cluster2", "127.0.0.1:9".parse().expect("address")),
            peer("Cluster3", "127.0.0.1:9".parse().expect("address")),
        ],
    );
    let two = cluster_tls(dir.path(), "Cluster2");

    // Hello as Cluster3 with Cluster2's certificate.
    let connection = dial(&two, one.local_addr()).await.expect("TLS succeeds");
    let _streams = say_hello(&connection, Hello::with_incarnation(name("Cluster3"), 1)).await;
    let (code, reason) = closed_with(&connection).await;
    assert_eq!(code, u64::from(close::IDENTITY), "{reason}");
    assert!(
        reason.contains("`Cluster3`") && reason.contains("`Cluster2`"),
        "{reason}"
    );

    // Hello as itself, then counters under Cluster3's name.
    let connection = dial(&two, one.local_addr()).await.expect("TLS succeeds");
    let (mut send, _recv) =
        say_hello(&connection, Hello::with_incarnation(name("Cluster2"), 1)).await;
    let mut frame = Vec::new();
    encode_frame(&update_from("Cluster3"), &mut frame, MAX_FRAME_SIZE).expect("encode");
    send.write_all(&frame).await.expect("write");
    let (code, reason) = closed_with(&connection).await;
    assert_eq!(code, u64::from(close::IDENTITY), "{reason}");
    assert!(reason.contains("sent as `Cluster3`"), "{reason}");
    let delivered = wait_within(
        &mut events,
        Duration::from_millis(300),
        |event| match event {
            Event::Message(envelope) => Some(envelope.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(delivered, None, "the forged update is not handed on");

    // An admin certificate cannot pose as a cluster either: its requests go
    // to the admin channel, never to the actors.
    assert!(FederationTls::load(dir.path(), Role::Admin, "admin").is_ok());
}

#[tokio::test]
async fn garbage_and_oversized_frames_close_only_their_connection() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, mut events) = start(
        dir.path(),
        "Cluster1",
        vec![
            peer("Cluster2", "127.0.0.1:9".parse().expect("address")),
            peer("Cluster3", "127.0.0.1:9".parse().expect("address")),
        ],
    );
    // A well-behaved Cluster3.
    let three = cluster_tls(dir.path(), "Cluster3");
    let good = dial(&three, one.local_addr()).await.expect("connects");
    let (mut good_send, _good_recv) =
        say_hello(&good, Hello::with_incarnation(name("Cluster3"), 1)).await;

    // Raw UDP garbage at the port.
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("socket");
    for size in [1usize, 40, 1200] {
        socket
            .send_to(&vec![0xAB; size], one.local_addr())
            .expect("send garbage");
    }

    let two = cluster_tls(dir.path(), "Cluster2");
    // A frame that does not decode.
    let connection = dial(&two, one.local_addr()).await.expect("connects");
    let (mut send, _recv) =
        say_hello(&connection, Hello::with_incarnation(name("Cluster2"), 1)).await;
    let mut garbage = 3u32.to_be_bytes().to_vec();
    garbage.extend_from_slice(&[0xff, 0xff, 0xff]);
    send.write_all(&garbage).await.expect("write");
    let (code, reason) = closed_with(&connection).await;
    assert_eq!(code, u64::from(close::BAD_FRAME), "{reason}");
    assert!(reason.contains("does not decode"), "{reason}");

    // A frame over the size limit: refused from its length prefix.
    let connection = dial(&two, one.local_addr()).await.expect("connects");
    let (mut send, _recv) =
        say_hello(&connection, Hello::with_incarnation(name("Cluster2"), 1)).await;
    let prefix = (u32::try_from(MAX_FRAME_SIZE).expect("fits") + 1).to_be_bytes();
    send.write_all(&prefix).await.expect("write");
    let (code, reason) = closed_with(&connection).await;
    assert_eq!(code, u64::from(close::BAD_FRAME), "{reason}");
    assert!(reason.contains("exceeds the limit"), "{reason}");

    // Garbage instead of a hello.
    let connection = dial(&two, one.local_addr()).await.expect("connects");
    let (mut send, _recv) = connection.open_bi().await.expect("stream");
    send.write_all(&garbage).await.expect("write");
    let (code, reason) = closed_with(&connection).await;
    assert_eq!(code, u64::from(close::PROTOCOL), "{reason}");

    // Cluster3 is still served.
    let mut frame = Vec::new();
    encode_frame(&update_from("Cluster3"), &mut frame, MAX_FRAME_SIZE).expect("encode");
    good_send.write_all(&frame).await.expect("write");
    let from = wait_for(&mut events, |event| match event {
        Event::Message(envelope) => Some(envelope.from.clone()),
        _ => None,
    })
    .await
    .expect("Cluster3's update still arrives");
    assert_eq!(from, "Cluster3");
    assert!(
        good.close_reason().is_none(),
        "Cluster3's connection stays open"
    );
}
