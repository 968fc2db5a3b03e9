//! Two cluster endpoints over loopback QUIC with mutual TLS, in one
//! process (each with its own UDP socket, as two processes would have):
//!
//! - **update latency**: from a counter change at an execution cluster
//!   (a job submitted, counters published) to the submission cluster's
//!   forwarder view holding the new figures: p50/p99/max with hdrhistogram,
//!   one update at a time (the interval's own wait is not included);
//! - **forward throughput**: job forwards sent from the submission cluster,
//!   taken by the execution cluster's node (accepted into a queue), and the
//!   accepts back at the submission cluster: forwards per second.
//!
//! Run: `cargo bench -p mcfed-transport --bench wire` (optional arguments
//! after `--`: the number of updates and of forwards).

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mcfed_cluster::{Cluster, ClusterConfig, ClusterNode, HostConfig, QueueConfig, ReceiveFrom};
use mcfed_forwarder::{ForwarderConfig, ForwarderNode, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{
    ClusterName, Envelope, JobForward, JobSpec, MAX_FRAME_SIZE, Message, QueueName, SimTime,
};
use mcfed_transport::{
    Event, FederationTls, Peer, Role, Timeouts, Transport, TransportConfig, certs,
};
use tokio::sync::mpsc::UnboundedReceiver;

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid name")
}

fn endpoint(
    dir: &std::path::Path,
    cluster: &str,
    peer: &str,
    peer_address: String,
    listen: &str,
) -> (Transport, UnboundedReceiver<Event>) {
    Transport::start(TransportConfig {
        cluster: name(cluster),
        queues: Vec::new(),
        incarnation: 1,
        listen: listen.parse().expect("address"),
        peers: vec![Peer {
            name: name(peer),
            address: Some(peer_address),
        }],
        tls: FederationTls::load(dir, Role::Cluster, cluster).expect("certificates"),
        max_frame: MAX_FRAME_SIZE,
        timeouts: Timeouts::default(),
        resume: None,
        faults: None,
    })
    .expect("endpoint")
}

fn execution_cluster() -> ClusterNode {
    let mut queue = QueueConfig::new(QueueName::new("high").expect("name"));
    queue.receive_from = Some(ReceiveFrom::Listed(vec![name("Cluster1")]));
    queue.impt_jobbklg = None;
    let mut config = ClusterConfig::new(name("Cluster2"));
    config.hosts = vec![HostConfig::new("host", 1)];
    config.queues = vec![queue];
    config.update_interval = Some(Duration::from_secs(30));
    let cluster = Cluster::new(config).expect("cluster");
    ClusterNode::new(cluster, [name("Cluster1")])
}

fn submission_side() -> ForwarderNode {
    ForwarderNode::new(ForwarderConfig {
        cluster: name("Cluster1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: QueueName::new("send").expect("name"),
            send_to: vec!["high@Cluster2".parse().expect("queue@cluster")],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 8,
        reachability: Default::default(),
    })
}

/// Waits for both endpoints to be connected both ways.
async fn connect(a: &Transport, b: &Transport) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(a.status().iter().all(|(_, s)| s.is_up()) && b.status().iter().all(|(_, s)| s.is_up()))
    {
        assert!(Instant::now() < deadline, "the endpoints did not connect");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn update_latency(dir: &std::path::Path, updates: usize) {
    let (exec, _exec_events) = endpoint(
        dir,
        "Cluster2",
        "Cluster1",
        "127.0.0.1:47311".into(),
        "127.0.0.1:47312",
    );
    let (submit, mut events) = endpoint(
        dir,
        "Cluster1",
        "Cluster2",
        exec.local_addr().to_string(),
        "127.0.0.1:47311",
    );
    connect(&exec, &submit).await;
    let mut node = execution_cluster();
    let mut forwarder = submission_side();
    let queue = forwarder
        .view()
        .queue_id(&"high@Cluster2".parse().expect("ref"))
        .expect("queue");
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
    let mut out = Vec::new();
    let mut transitions = Vec::new();
    let warmup = 200;
    for round in 0..updates + warmup {
        let now = SimTime::from_millis(round as u64 + 1);
        let started = Instant::now();
        // A counter change: a job arrives and pends; counters published.
        node.submit(
            now,
            "high",
            JobSpec::simple("j", "u", Duration::from_secs(3600)),
        )
        .expect("submit");
        node.advance(now, &mut out, &mut transitions);
        node.publish_counters(now, now, &mut out);
        for envelope in out.drain(..) {
            exec.send(envelope).expect("send");
        }
        loop {
            match events.recv().await.expect("event") {
                Event::Message(envelope) => {
                    forwarder.handle(now, &envelope.from, envelope.message);
                    break;
                }
                _ => continue,
            }
        }
        let pending = forwarder
            .view()
            .figures(queue)
            .map(|figures| figures.pending);
        assert!(pending.is_some(), "the view holds the update");
        if round >= warmup {
            histogram
                .record(started.elapsed().as_micros() as u64)
                .expect("record");
        }
    }
    println!(
        "update latency ({updates} updates, one at a time): p50 {} us, p99 {} us, max {} us",
        histogram.value_at_quantile(0.50),
        histogram.value_at_quantile(0.99),
        histogram.max()
    );
    exec.close();
    submit.close();
}

async fn forward_throughput(dir: &std::path::Path, forwards: u64) {
    let (exec, mut exec_events) = endpoint(
        dir,
        "Cluster2",
        "Cluster1",
        "127.0.0.1:47321".into(),
        "127.0.0.1:47322",
    );
    let (submit, mut events) = endpoint(
        dir,
        "Cluster1",
        "Cluster2",
        exec.local_addr().to_string(),
        "127.0.0.1:47321",
    );
    connect(&exec, &submit).await;
    let exec = std::sync::Arc::new(exec);
    let replier = exec.clone();
    // The execution side: every forward taken by the node, its accept sent.
    tokio::spawn(async move {
        let mut node = execution_cluster();
        let mut out = Vec::new();
        while let Some(event) = exec_events.recv().await {
            if let Event::Message(envelope) = event {
                node.handle(SimTime::ZERO, &envelope.from, envelope.message, &mut out);
                for reply in out.drain(..) {
                    let _ = replier.send(reply);
                }
            }
        }
    });
    let spec = JobSpec::simple("job", "user1", Duration::from_secs(3600));
    let started = Instant::now();
    for seq in 1..=forwards {
        submit
            .send(Envelope {
                from: name("Cluster1"),
                to: name("Cluster2"),
                message: Message::JobForward(JobForward {
                    forward_seq: seq,
                    source_job: seq,
                    queue: QueueName::new("high").expect("name"),
                    send_queue: mcfed_protocol::QueueName::new("send").expect("a queue name"),
                    spec: spec.clone(),
                    submitted_at: SimTime::ZERO,
                    attempt: 0,
                }),
            })
            .expect("send");
    }
    let mut accepted = 0u64;
    while accepted < forwards {
        match events.recv().await.expect("event") {
            Event::Message(Envelope {
                message: Message::JobAccept(_),
                ..
            }) => accepted += 1,
            Event::Message(other) => panic!("unexpected {}", other.message.kind()),
            _ => {}
        }
    }
    let elapsed = started.elapsed();
    println!(
        "forward throughput: {forwards} forwards accepted in {:.3} s: {:.0} forwards/s",
        elapsed.as_secs_f64(),
        forwards as f64 / elapsed.as_secs_f64()
    );
    exec.close();
    submit.close();
}

fn main() {
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let updates = numbers.first().copied().unwrap_or(5_000) as usize;
    let forwards = numbers.get(1).copied().unwrap_or(200_000);
    let dir = std::env::temp_dir().join(format!("mcfed-bench-{}", std::process::id()));
    certs::init(&dir, &["Cluster1".to_owned(), "Cluster2".to_owned()]).expect("certs");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        update_latency(&dir, updates).await;
        forward_throughput(&dir, forwards).await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
