//! Cluster processes that keep a journal (`--state`), killed with SIGKILL
//! and restarted: a submission cluster keeps its jobs and their ids, an
//! execution cluster keeps the jobs it ran and its update numbering, jobs
//! that ended while their submission cluster was down are reported when
//! it returns, jobs at a dead cluster show UNKWN, and a restarted process
//! agrees with its peers on emulated time.

use crate::common;

use std::time::Duration;

use common::eventually;
use common::federation::three_clusters;
use common::journaled::Live;
use serde_json::Value;

/// Cluster1 sends to `high` on Cluster2 (16 slots) and Cluster3 (5 slots),
/// counters every 10 s, at speed 10 (one update a second).
fn scenario() -> String {
    three_clusters("restart").text()
}

const CLUSTERS: [&str; 3] = ["Cluster1", "Cluster2", "Cluster3"];

fn rows(value: &Value) -> &Vec<Value> {
    value.as_array().expect("an array")
}

fn connected_with_updates(live: &Live) -> bool {
    live.try_ask("bclusters", "Cluster1", &[])
        .is_ok_and(|links| {
            rows(&links)
                .iter()
                .all(|row| row["status"] == "ok" && !row["last_update_seq"].is_null())
        })
}

/// The jobs Cluster1 forwarded, by id: (state, execution cluster, id there).
fn forwarded(live: &Live) -> Vec<(u64, String, String, u64)> {
    let jobs = live.ask("bjobs", "Cluster1", &["-fwd"]);
    let mut rows: Vec<_> = rows(&jobs)
        .iter()
        .map(|job| {
            (
                job["job_id"].as_u64().expect("id"),
                job["stat"].as_str().expect("stat").to_owned(),
                job["forwarded_to"]["cluster"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
                job["forwarded_to"]["dest_job"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn submit(live: &Live, name: &str, run_time: &str) -> u64 {
    let submitted = live.ask(
        "bsub",
        "Cluster1",
        &["-q", "send", "-J", name, "--run-time", run_time],
    );
    submitted["job_id"].as_u64().expect("job id")
}

#[test]
fn journaled_clusters_keep_their_jobs_across_kill_9() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut live = Live::new(dir.path(), &scenario(), &CLUSTERS);
    live.extra = ["--speed", "10"].map(str::to_owned).to_vec();
    let mut one = live.start("Cluster1", &[]);
    let mut two = live.start("Cluster2", &[]);
    let _three = live.start("Cluster3", &[]);
    eventually(Duration::from_secs(60), "Cluster1 has counters", || {
        connected_with_updates(&live)
    });
    for n in 1..=4 {
        assert_eq!(submit(&live, &format!("long{n}"), "10h"), n);
    }
    eventually(Duration::from_secs(30), "the four run at Cluster2", || {
        let jobs = forwarded(&live);
        jobs.len() == 4
            && jobs
                .iter()
                .all(|(_, stat, at, _)| stat == "RUN" && at == "Cluster2")
    });
    let before = forwarded(&live);

    // The submission cluster dies and comes back: nothing is withdrawn,
    // it knows its jobs where they are, and numbers on.
    one.kill();
    live.restart(&mut one);
    eventually(Duration::from_secs(30), "Cluster1 is back", || {
        connected_with_updates(&live)
    });
    assert_eq!(
        forwarded(&live),
        before,
        "Cluster1 kept its jobs and their ids there"
    );
    let at_two = live.ask("bjobs", "Cluster2", &[]);
    assert_eq!(
        rows(&at_two).len(),
        4,
        "Cluster2 withdrew nothing: {at_two}"
    );
    assert_eq!(submit(&live, "next", "10h"), 5, "no job id is reused");

    // The execution cluster dies: its running jobs show UNKWN at Cluster1
    // while it is down; it comes back with them, and its updates number on.
    let seq_before = live.ask("bclusters", "Cluster1", &[])[0]["last_update_seq"]
        .as_u64()
        .expect("seq");
    two.kill();
    eventually(Duration::from_secs(30), "Cluster1 shows UNKWN", || {
        forwarded(&live)
            .iter()
            .filter(|(_, _, at, _)| at == "Cluster2")
            .all(|(_, stat, _, _)| stat == "UNKWN")
    });
    live.restart(&mut two);
    eventually(Duration::from_secs(30), "Cluster2's jobs run again", || {
        forwarded(&live)
            .iter()
            .filter(|(_, _, at, _)| at == "Cluster2")
            .all(|(_, stat, _, _)| stat == "RUN")
    });
    let after = forwarded(&live);
    for job in &before {
        assert!(after.contains(job), "{job:?} in {after:?}");
    }
    // Its history tells what it restored: each job runs, forwarded by
    // Cluster1, started before the restart, and says it was restored.
    let history = live.ask("bhist", "Cluster2", &["-a"]);
    for (_, _, _, dest) in &before {
        let row = rows(&history)
            .iter()
            .find(|row| row["job_id"].as_u64() == Some(*dest))
            .unwrap_or_else(|| panic!("job {dest} in {history}"));
        assert_eq!(row["stat"], "RUN", "{row}");
        assert_eq!(row["origin"], "forwarded_in", "{row}");
        assert!(row["start_time"].is_number(), "{row}");
        let events = row["events"].as_array().expect("events");
        assert!(
            events.iter().any(|event| event["event"]
                .as_str()
                .is_some_and(|text| text.starts_with("Restored from the state directory"))),
            "{row}"
        );
    }
    let at_two = live.ask("bjobs", "Cluster2", &[]);
    assert_eq!(
        rows(&at_two).len(),
        4 + usize::from(after.iter().any(|j| j.0 == 5 && j.2 == "Cluster2"))
    );
    eventually(
        Duration::from_secs(30),
        "Cluster2's updates resume, numbered on",
        || {
            live.ask("bclusters", "Cluster1", &[])[0]["last_update_seq"]
                .as_u64()
                .is_some_and(|seq| seq > seq_before)
        },
    );
}

#[test]
fn ends_while_the_submission_cluster_is_down_are_reported_when_it_returns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut live = Live::new(dir.path(), &scenario(), &CLUSTERS);
    live.extra = ["--speed", "10"].map(str::to_owned).to_vec();
    let mut one = live.start("Cluster1", &[]);
    let _two = live.start("Cluster2", &[]);
    let _three = live.start("Cluster3", &[]);
    eventually(Duration::from_secs(60), "Cluster1 has counters", || {
        connected_with_updates(&live)
    });
    // A job of 30 emulated seconds (3 s here).
    let id = submit(&live, "short", "30s");
    eventually(Duration::from_secs(20), "it runs", || {
        forwarded(&live)
            .iter()
            .any(|(job, stat, _, _)| *job == id && stat == "RUN")
    });
    let at = forwarded(&live)[0].2.clone();
    one.kill();
    eventually(
        Duration::from_secs(30),
        "it ends while Cluster1 is down",
        || rows(&live.ask("bjobs", &at, &[])).is_empty(),
    );
    live.restart(&mut one);
    eventually(Duration::from_secs(30), "Cluster1 hears it ended", || {
        live.try_ask("bjobs", "Cluster1", &[])
            .is_ok_and(|jobs| rows(&jobs).is_empty())
    });
}

/// When Cluster2's last update was taken, in Cluster1's emulated seconds,
/// and Cluster1's emulated time now (from a job submitted now).
fn update_age(live: &Live) -> f64 {
    let links = live.ask("bclusters", "Cluster1", &[]);
    let last = links[0]["last_update_at"].as_f64().expect("an update");
    let id = submit(live, "clock", "10h");
    let jobs = live.ask("bjobs", "Cluster1", &[]);
    let now = rows(&jobs)
        .iter()
        .find(|job| job["job_id"] == id)
        .and_then(|job| job["submit_time"].as_f64())
        .expect("submit time");
    now - last
}

#[test]
fn a_restarted_process_agrees_with_its_peers_on_emulated_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut live = Live::new(dir.path(), &scenario(), &CLUSTERS);
    live.extra = ["--speed", "10"].map(str::to_owned).to_vec();
    // No --epoch-ms anywhere: the first process's start is the federation's
    // time zero, the others take it from its resume.
    let _one = live.start("Cluster1", &[]);
    std::thread::sleep(Duration::from_secs(3));
    let mut two = live.start("Cluster2", &[]);
    let _three = live.start("Cluster3", &[]);
    eventually(Duration::from_secs(60), "Cluster1 has counters", || {
        connected_with_updates(&live)
    });
    let age = update_age(&live);
    assert!((-2.0..25.0).contains(&age), "update {age} s old");
    // Restarted from its journal.
    std::thread::sleep(Duration::from_secs(2));
    two.kill();
    live.restart(&mut two);
    std::thread::sleep(Duration::from_secs(3));
    let age = update_age(&live);
    assert!(
        (-2.0..25.0).contains(&age),
        "after a restart from the journal: {age} s old"
    );
    // Restarted without a journal and without --epoch-ms: its peers' time.
    two.kill();
    let _ = std::fs::remove_dir_all(live.state("Cluster2"));
    let mut plain = live.start_plain("Cluster2", &[]);
    std::thread::sleep(Duration::from_secs(4));
    let age = update_age(&live);
    assert!(
        (-2.0..25.0).contains(&age),
        "after a plain restart: {age} s old"
    );
    plain.kill();
}
