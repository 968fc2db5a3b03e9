//! The load benchmark: many `bsub`s against live cluster processes over
//! QUIC, with and without the journal — the submission rate, the
//! acknowledgement latency (p50, p99, max), and every job accounted (each
//! acknowledged job is in the cluster's `bjobs`). Two federations: one
//! cluster submitting to a local queue, and three clusters submitting to a
//! send queue (the forwarder journals each job, and each forward).
//!
//! The suite runs it small, without timing thresholds (the figures depend
//! on the machine). docs/performance.md has the figures of the full run:
//!
//! ```sh
//! MCFED_LOAD_JOBS=100000 cargo test --release --test it load::submissions -- --nocapture
//! ```

use crate::common;

use std::time::Duration;

use common::federation::{Cluster, Queue, Scenario};
use common::journaled::Live;
use common::{Mcfed, eventually};

/// One cluster of 1,000 hosts of 100 slots.
fn local() -> String {
    Scenario::new("load, one cluster")
        .cluster(
            Cluster::new("Load")
                .hosts("h", 1000, 100)
                .queue(Queue::new("normal")),
        )
        .text()
}

/// Cluster1 sends to `high` on Cluster2 and Cluster3, each of 100 hosts of
/// 100 slots, whose queues take any backlog.
fn forwarded() -> String {
    let execution = |name: &str, host: &str| {
        Cluster::new(name)
            .hosts(host, 100, 100)
            .queue(Queue::receiving("high", "Cluster1").key("IMPT_JOBBKLG", "infinit"))
    };
    Scenario::new("load, three clusters")
        .cluster(
            Cluster::new("Cluster1").queue(Queue::sending("send", "high@Cluster2 high@Cluster3")),
        )
        .cluster(execution("Cluster2", "c2h"))
        .cluster(execution("Cluster3", "c3h"))
        .text()
}

fn jobs() -> usize {
    std::env::var("MCFED_LOAD_JOBS")
        .ok()
        .and_then(|jobs| jobs.parse().ok())
        .unwrap_or(2000)
}

/// Submits `count` jobs to `queue` of `cluster` with `mcfed bsub --from`,
/// and returns its statistics line.
fn submit(live: &Live, cluster: &str, queue: &str, count: usize) -> String {
    let file = live.dir.join("jobs.txt");
    let lines: Vec<String> = (0..count)
        .map(|n| format!("-J load{n} --run-time 10h"))
        .collect();
    std::fs::write(&file, lines.join("\n")).expect("jobs file");
    let address = live.address(cluster);
    let output = Mcfed::new(&[
        "bsub",
        "--cluster",
        cluster,
        "--address",
        &address,
        "--certs",
        live.certs.to_str().expect("utf-8"),
        "-q",
        queue,
        "--from",
        file.to_str().expect("utf-8"),
        "--stats",
        "-o",
        "json",
    ])
    .within(Duration::from_secs(900))
    .run();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let acknowledged: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line per job"))
        .collect();
    assert_eq!(acknowledged.len(), count, "every job acknowledged");
    let mut ids: Vec<u64> = acknowledged
        .iter()
        .map(|job| job["job_id"].as_u64().expect("id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "no id given twice");
    stderr
        .lines()
        .find(|line| line.starts_with("submitted "))
        .expect("the statistics line")
        .to_owned()
}

/// Every acknowledged job is known to `cluster`.
fn accounted(live: &Live, cluster: &str, count: usize) {
    eventually(Duration::from_secs(120), "every job is accounted", || {
        live.try_ask("bjobs", cluster, &[])
            .is_ok_and(|jobs| jobs.as_array().is_some_and(|rows| rows.len() == count))
    });
}

fn one_cluster(journal: bool) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), &local(), &["Load"]);
    let _process = if journal {
        live.start("Load", &[])
    } else {
        live.start_plain("Load", &[])
    };
    let count = jobs();
    let stats = submit(&live, "Load", "normal", count);
    accounted(&live, "Load", count);
    stats
}

fn three_clusters(journal: bool) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(
        dir.path(),
        &forwarded(),
        &["Cluster1", "Cluster2", "Cluster3"],
    );
    let _processes: Vec<_> = ["Cluster1", "Cluster2", "Cluster3"]
        .iter()
        .map(|name| {
            if journal {
                live.start(name, &[])
            } else {
                live.start_plain(name, &[])
            }
        })
        .collect();
    let count = jobs();
    let stats = submit(&live, "Cluster1", "send", count);
    accounted(&live, "Cluster1", count);
    stats
}

#[test]
fn submissions_over_quic_with_and_without_the_journal() {
    let runs = [
        ("one cluster, local queue, no journal", one_cluster(false)),
        ("one cluster, local queue, journal", one_cluster(true)),
        (
            "three clusters, send queue, no journal",
            three_clusters(false),
        ),
        ("three clusters, send queue, journals", three_clusters(true)),
    ];
    for (what, stats) in runs {
        eprintln!("{what}: {stats}");
    }
}
