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
//! MCFED_LOAD_JOBS=100000 cargo test --release --test load -- --nocapture
//! ```

use crate::common;

use std::time::Duration;

use common::journaled::{Live, eventually};

const LOCAL: &str = r#"
name = "load, one cluster"
[[cluster]]
name = "Load"
[[cluster.host]]
name = "h"
count = 1000
MXJ = 100
[[cluster.queue]]
name = "normal"
"#;

const FORWARDED: &str = r#"
name = "load, three clusters"
[[cluster]]
name = "Cluster1"
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "high@Cluster2 high@Cluster3"

[[cluster]]
name = "Cluster2"
[[cluster.host]]
name = "c2h"
count = 100
MXJ = 100
[[cluster.queue]]
name = "high"
RCVJOBS_FROM = "Cluster1"
IMPT_JOBBKLG = "infinit"

[[cluster]]
name = "Cluster3"
[[cluster.host]]
name = "c3h"
count = 100
MXJ = 100
[[cluster.queue]]
name = "high"
RCVJOBS_FROM = "Cluster1"
IMPT_JOBBKLG = "infinit"
"#;

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
    let output = common::mcfed_within(
        &[
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
        ],
        Duration::from_secs(900),
    );
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
    let live = Live::new(dir.path(), LOCAL, &["Load"]);
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
    let live = Live::new(dir.path(), FORWARDED, &["Cluster1", "Cluster2", "Cluster3"]);
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
