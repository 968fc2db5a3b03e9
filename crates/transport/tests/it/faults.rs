//! Faults below QUIC and oracle queries, endpoint to endpoint over
//! loopback: delayed datagrams delay messages, lost, duplicated and
//! reordered ones do not lose or reorder them (QUIC recovers), and oracle
//! queries get through even when every datagram of the link is dropped.

use crate::common;
use common::{federation, name, peer, start_with_faults};

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcfed_protocol::{ClusterName, CounterUpdate, Envelope, MAX_FRAME_SIZE, Message, SimTime};
use mcfed_transport::{
    DatagramFate, DatagramFaults, Event, FederationTls, Role, Transport, TruthClient, TruthError,
};
use tokio::sync::mpsc::UnboundedReceiver;

/// Nowhere: a peer this endpoint never reaches.
fn nowhere() -> SocketAddr {
    "127.0.0.1:9".parse().expect("address")
}

fn update(sender: &str, seq: u64) -> CounterUpdate {
    CounterUpdate {
        sender: name(sender),
        seq,
        taken_at: SimTime::from_secs(seq),
        queues: Vec::new(),
        forwards_received: Vec::new(),
    }
}

/// The same fate for every datagram.
#[derive(Debug)]
struct Always(DatagramFate);

impl DatagramFaults for Always {
    fn fate(&self, _: &ClusterName) -> DatagramFate {
        self.0.clone()
    }
}

/// A third of datagrams lost, a fifth duplicated, others held back up to
/// 30 ms (so they overtake each other), from a fixed xorshift sequence.
#[derive(Debug)]
struct Noisy(Mutex<u64>);

impl DatagramFaults for Noisy {
    fn fate(&self, _: &ClusterName) -> DatagramFate {
        let Ok(mut state) = self.0.lock() else {
            return DatagramFate::Deliver(vec![Duration::ZERO]);
        };
        let mut next = || {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            *state % 100
        };
        if next() < 33 {
            return DatagramFate::Lost;
        }
        let mut delays = vec![Duration::from_millis(next() * 30 / 100)];
        if next() < 20 {
            delays.push(Duration::from_millis(next() * 30 / 100));
        }
        DatagramFate::Deliver(delays)
    }
}

/// Waits up to `limit` for the next event matching `pick`.
async fn wait_for<T>(
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

async fn connected(events: &mut UnboundedReceiver<Event>) {
    wait_for(events, Duration::from_secs(10), |event| {
        matches!(event, Event::PeerUp { .. }).then_some(())
    })
    .await
    .expect("the peer connects");
}

/// How long a counter update from `two` takes to reach `one`.
async fn latency(two: &Transport, one_events: &mut UnboundedReceiver<Event>, seq: u64) -> Duration {
    let sent = Instant::now();
    two.send(Envelope {
        from: name("Cluster2"),
        to: name("Cluster1"),
        message: Message::CounterUpdate(update("Cluster2", seq)),
    })
    .expect("send");
    wait_for(one_events, Duration::from_secs(10), |event| match event {
        Event::Message(Envelope {
            message: Message::CounterUpdate(update),
            ..
        }) if update.seq == seq => Some(()),
        _ => None,
    })
    .await
    .expect("the update arrives");
    sent.elapsed()
}

#[tokio::test]
async fn delayed_datagrams_delay_messages_by_as_much() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, mut one_events) = start_with_faults(
        dir.path(),
        "Cluster1",
        vec![peer("Cluster2", nowhere())],
        None,
    );
    let delay = Duration::from_millis(500);
    let (slow, _slow_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
        Some(Arc::new(Always(DatagramFate::Deliver(vec![delay])))),
    );
    connected(&mut one_events).await;
    let slow_latency = latency(&slow, &mut one_events, 1).await;
    assert!(slow_latency >= delay, "{slow_latency:?}");
    assert!(slow_latency < delay * 4, "{slow_latency:?}");
    drop(slow);

    let (fast, _fast_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
        None,
    );
    connected(&mut one_events).await;
    let fast_latency = latency(&fast, &mut one_events, 2).await;
    assert!(fast_latency < delay, "{fast_latency:?}");
}

#[tokio::test]
async fn lost_duplicated_and_reordered_datagrams_lose_and_reorder_no_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, mut one_events) = start_with_faults(
        dir.path(),
        "Cluster1",
        vec![peer("Cluster2", nowhere())],
        None,
    );
    let (two, _two_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
        Some(Arc::new(Noisy(Mutex::new(0x9e37_79b9_7f4a_7c15)))),
    );
    connected(&mut one_events).await;
    for seq in 1..=200 {
        two.send(Envelope {
            from: name("Cluster2"),
            to: name("Cluster1"),
            message: Message::CounterUpdate(update("Cluster2", seq)),
        })
        .expect("send");
    }
    let mut received = Vec::new();
    while received.len() < 200 {
        let seq = wait_for(
            &mut one_events,
            Duration::from_secs(20),
            |event| match event {
                Event::Message(Envelope {
                    message: Message::CounterUpdate(update),
                    ..
                }) => Some(update.seq),
                _ => None,
            },
        )
        .await
        .unwrap_or_else(|| panic!("only {} of 200 updates arrived", received.len()));
        received.push(seq);
    }
    assert_eq!(
        received,
        (1..=200).collect::<Vec<u64>>(),
        "all, once, in order"
    );
}

/// Answers every oracle query of `events` with counters numbered as asked.
fn answer_truths(mut events: UnboundedReceiver<Event>, sender: &'static str) {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let Event::Truth(call) = event {
                let _ = call.reply.send(Some(update(sender, call.seq)));
            }
        }
    });
}

#[tokio::test]
async fn oracle_queries_get_through_when_every_datagram_of_the_link_is_lost() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, mut one_events) = start_with_faults(
        dir.path(),
        "Cluster1",
        vec![peer("Cluster2", nowhere())],
        None,
    );
    // Cluster2 drops every datagram it sends to Cluster1's endpoint.
    let (two, two_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
        Some(Arc::new(Always(DatagramFate::Lost))),
    );
    answer_truths(two_events, "Cluster2");
    let asker = FederationTls::load(dir.path(), Role::Cluster, "Cluster1").expect("certificates");
    let client = TruthClient::new(
        &asker,
        &[peer("Cluster2", two.local_addr())],
        "127.0.0.1:0".parse().expect("address"),
        MAX_FRAME_SIZE,
    )
    .expect("client");
    for seq in [5, 6] {
        let truth = client
            .ask(&name("Cluster2"), seq, Duration::from_secs(5))
            .await
            .expect("the query gets through");
        assert_eq!((truth.sender.as_str(), truth.seq), ("Cluster2", seq));
    }
    // Meanwhile the link itself cannot even say hello.
    assert!(
        wait_for(&mut one_events, Duration::from_millis(500), |event| {
            matches!(event, Event::PeerUp { .. }).then_some(())
        })
        .await
        .is_none(),
        "the faulty link stays down"
    );
    client.close().await;
}

#[tokio::test]
async fn only_peer_clusters_get_true_counters() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (two, two_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", nowhere())],
        None,
    );
    answer_truths(two_events, "Cluster2");
    let stranger =
        FederationTls::load(dir.path(), Role::Cluster, "Cluster3").expect("certificates");
    let client = TruthClient::new(
        &stranger,
        &[peer("Cluster2", two.local_addr())],
        "127.0.0.1:0".parse().expect("address"),
        MAX_FRAME_SIZE,
    )
    .expect("client");
    let error = client
        .ask(&name("Cluster2"), 1, Duration::from_secs(5))
        .await
        .expect_err("Cluster3 is not a peer of Cluster2");
    assert!(error.to_string().contains("not a peer"), "{error}");
    let error = client
        .ask(&name("Cluster1"), 1, Duration::from_secs(5))
        .await
        .expect_err("nor is Cluster1 one of the client's");
    assert!(matches!(error, TruthError::UnknownPeer(_)), "{error}");
    let admin = FederationTls::load(dir.path(), Role::Admin, "admin").expect("certificates");
    let refused = TruthClient::new(
        &admin,
        &[],
        "127.0.0.1:0".parse().expect("address"),
        MAX_FRAME_SIZE,
    )
    .expect_err("an administrator does not ask for counters");
    assert!(matches!(refused, TruthError::NotACluster(_)), "{refused}");
}
