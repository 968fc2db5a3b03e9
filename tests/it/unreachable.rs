//! An execution cluster that stays down: in-process (`[[chaos.outage]]`,
//! the event loop) and launched (`mcfed launch --state`, the launcher
//! kills the process and restarts it from its journal), its queue stops
//! being a candidate, its jobs that had not started come back and run
//! elsewhere, its running jobs finish there — and every job runs once.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Mcfed, mcfed};
use serde_json::Value;

const SCENARIO: &str = "scenarios/chaos/unreachable-outage.toml";

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Each job's (cluster, event) history from the event records, by name.
fn histories(records: &[Value]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut histories: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for record in records.iter().filter(|r| r["record"] == "event") {
        let job = record["job"].as_str().unwrap_or_default().to_owned();
        histories.entry(job).or_default().push((
            record["cluster"].as_str().unwrap_or_default().to_owned(),
            record["event"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    histories
}

fn finished_at(history: &[(String, String)]) -> Vec<&str> {
    history
        .iter()
        .filter(|(_, event)| event == "finished")
        .map(|(cluster, _)| cluster.as_str())
        .collect()
}

/// The checks both engines must pass.
fn check(records: &[Value]) {
    let histories = histories(records);
    for n in 1..=4 {
        let job = format!("early-{n}");
        let history = &histories[&job];
        let expected = if n <= 2 { "Cluster2" } else { "Cluster3" };
        assert_eq!(finished_at(history), vec![expected], "{job}: {history:?}");
        if n > 2 {
            assert!(
                !history
                    .iter()
                    .any(|(cluster, event)| cluster == "Cluster2" && event == "started"),
                "{job} never started at Cluster2: {history:?}"
            );
        }
    }
    assert_eq!(finished_at(&histories["late"]), vec!["Cluster3"]);
    let taken_back = records
        .iter()
        .filter(|r| r["record"] == "decision")
        .filter(|r| {
            r["note"]
                .as_str()
                .is_some_and(|note| note.starts_with("taken back from normal@Cluster2"))
        })
        .count();
    assert_eq!(taken_back, 1, "early-3 came back");
}

#[test]
fn in_process_an_unreachable_cluster_loses_its_pending_jobs_and_keeps_its_running_ones() {
    let output = mcfed(&["run", SCENARIO, "--check", "--report", "json", "--events"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("6 of 6 expectations held"), "{stderr}");
    let records = lines(&output.stdout);
    check(&records);
    let late = records
        .iter()
        .find(|r| r["record"] == "decision" && r["job"] == "late")
        .expect("late's decision");
    let cluster2 = late["candidates"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["queue"] == "normal@Cluster2"))
        .expect("Cluster2 a candidate");
    assert_eq!(cluster2["verdict"], "ineligible");
    assert!(
        cluster2["why"]
            .as_str()
            .is_some_and(|why| why.starts_with("remote cluster unreachable")),
        "{cluster2}"
    );
}

#[test]
fn launched_with_journals_the_same_holds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    let output = Mcfed::new(&[
        "launch",
        SCENARIO,
        "--report",
        "json",
        "--events",
        "--speed",
        "150",
        "--base-port",
        "0",
        "--state",
        state.to_str().expect("utf-8"),
    ])
    .within(Duration::from_secs(300))
    .run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // (Launched runs check no states at a time: the events say it.)
    check(&lines(&output.stdout));
    assert!(state.join("Cluster2").join("snapshot").exists());
}
