//! A peer whose address is not configured (it listens on a port the OS
//! picked): its writer keeps what is sent to it until the peer connects and
//! says hello, then learns its address (remote IP and announced port) and
//! delivers everything in order; the faults learn the address too.

use crate::common;
use common::{federation, name, peer, start_resuming, start_with_faults};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcfed_protocol::{ClusterName, Envelope, JobRecall, Message, Resume};
use mcfed_transport::{DatagramFate, DatagramFaults, Event, Peer, PeerStatus};
use tokio::sync::mpsc::UnboundedReceiver;

/// Delivers every datagram at once, counting those to Cluster2.
#[derive(Debug, Default)]
struct Counting(AtomicU64);

impl DatagramFaults for Counting {
    fn fate(&self, peer: &ClusterName) -> DatagramFate {
        if peer == "Cluster2" {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        DatagramFate::Deliver(vec![Duration::ZERO])
    }
}

fn recall(job: u64) -> Envelope {
    Envelope {
        from: name("Cluster1"),
        to: name("Cluster2"),
        message: Message::JobRecall(JobRecall {
            source_job: job,
            dest_job: job,
            reason: format!("recall {job}"),
        }),
    }
}

/// The recalled jobs that arrive, until `count` have or 10 s pass.
async fn recalls(events: &mut UnboundedReceiver<Event>, count: usize) -> Vec<u64> {
    let mut jobs = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while jobs.len() < count {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Event::Message(Envelope {
                message: Message::JobRecall(recall),
                ..
            }))) => jobs.push(recall.source_job),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    jobs
}

#[tokio::test]
async fn a_peer_with_an_unknown_address_is_learned_from_its_hello_and_gets_what_was_sent_before() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let counting = Arc::new(Counting::default());
    // Cluster1 does not know where Cluster2 is.
    let (one, _one_events) = start_with_faults(
        dir.path(),
        "Cluster1",
        vec![Peer::unknown(name("Cluster2"))],
        Some(counting.clone()),
    );
    assert_eq!(one.peer_address(&name("Cluster2")), None);
    for job in 1..=3 {
        one.send(recall(job)).expect("queued");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status: Vec<(ClusterName, PeerStatus)> = one.status();
    assert!(!status[0].1.outbound, "{status:?}");
    assert!(
        status[0]
            .1
            .last_error
            .as_deref()
            .is_some_and(|error| error.contains("not known")),
        "{status:?}"
    );
    // Cluster2 starts on a port of its own and dials Cluster1: its hello
    // says where it listens.
    let (two, mut two_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
        None,
    );
    one.send(recall(4)).expect("queued");
    assert_eq!(recalls(&mut two_events, 4).await, vec![1, 2, 3, 4]);
    assert_eq!(
        one.peer_address(&name("Cluster2")),
        Some(two.local_addr().to_string())
    );
    assert!(
        counting.0.load(Ordering::Relaxed) > 0,
        "the faults see the datagrams to the learned address"
    );
    // Both ways up.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !one.status()[0].1.is_up() || !two.status()[0].1.is_up() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?} {:?}",
            one.status(),
            two.status()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_resume_comes_first_on_every_connection_dialled() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let resume = Resume {
        lineage: 9,
        epoch_unix_ms: 5,
    };
    let (one, _one_events) = start_resuming(
        dir.path(),
        "Cluster1",
        vec![Peer::unknown(name("Cluster2"))],
        None,
        Some(resume),
    );
    for job in 1..=2 {
        one.send(recall(job)).expect("queued");
    }
    let (_two, mut two_events) = start_with_faults(
        dir.path(),
        "Cluster2",
        vec![peer("Cluster1", one.local_addr())],
        None,
    );
    let mut from_one = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while from_one.len() < 3 {
        match tokio::time::timeout_at(deadline, two_events.recv()).await {
            Ok(Some(Event::Message(envelope))) => from_one.push(envelope.message),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    assert_eq!(
        from_one.first(),
        Some(&Message::Resume(resume)),
        "{from_one:?}"
    );
    assert!(matches!(from_one[1], Message::JobRecall(_)), "{from_one:?}");
}
