//! End-to-end: faults under `mcfed launch`, below QUIC, and the oracle of
//! launched runs. Three `mcfed cluster` processes talk QUIC; the faults act
//! on their UDP datagrams; the oracle asks each execution cluster for its
//! true counters before every forwarding session, on connections the
//! faults do not touch; `mcfed report` reads what `launch --report json`
//! prints.
//!
//! Every launch runs under a deadline (`common::mcfed` kills the launcher
//! after two minutes), and its cluster processes stop when the launcher's
//! end of their standard input closes, so a failing test leaves no
//! orphans.
//!
//! Timing. The processes run `SPEED` times faster than the wall clock, so
//! a millisecond of scheduling is `SPEED` ms of emulated time. In
//! `scenarios/chaos/launched-updates.toml` nothing happens within 10 s of
//! emulated time (500 ms of wall time at speed 20) of a counter update:
//! Cluster2's local jobs end at 45 s, between the updates taken at 30 s and
//! 60 s, and jobs are submitted at 70, 80, 100 and 110 s. So in the run
//! without faults the order of job ends, updates and decisions is the
//! in-process one even on a loaded machine, and every decision agrees with
//! the oracle's. (prompt-updates.toml would not do: there the local jobs
//! end at 60 s, the very instant of an update, and which of the two a
//! process handles first is up to the wall clock.) With `--delay 45s` each
//! datagram takes 2.25 s of wall time: the update taken at 30 s arrives at
//! 75 s, the one taken at 60 s at 105 s, and the decisions of 75, 80 and
//! 100 s are made on a view that still shows Cluster2 full — stale, by at
//! least 5 s of emulated time either way.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common;
use common::mcfed;

const SCENARIO: &str = "scenarios/chaos/launched-updates.toml";

/// Emulated seconds per wall second (see the module's comment).
const SPEED: &str = "20";

/// `mcfed launch FILE --report json` with `extra`, on ports the OS picks (`--base-port 0`).
fn launch(file: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "launch",
        file,
        "--report",
        "json",
        "--speed",
        SPEED,
        "--base-port",
        "0",
        "--connect-timeout",
        "20s",
    ];
    args.extend_from_slice(extra);
    mcfed(&args)
}

/// The decision records a launch printed, checked to have succeeded.
fn records(what: &str, output: &Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut records: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is a JSON object"))
        .collect();
    // The decisions, then the run's summary record (as `mcfed run`).
    let summary = records.pop().expect("a summary record");
    assert_eq!(summary["record"], "summary", "{what}: {summary}");
    assert!(
        records.iter().all(|record| record["record"] == "decision"),
        "{what}: {records:?}"
    );
    records
}

/// `mcfed report --format json` on a launch's output: its summary.
fn report(dir: &Path, what: &str, output: &Output) -> Value {
    records(what, output);
    let file = dir.join(format!("{what}.jsonl"));
    std::fs::write(&file, &output.stdout).expect("write the run's records");
    let reported = mcfed(&[
        "report",
        file.to_str().expect("utf-8 path"),
        "--format",
        "json",
    ]);
    assert!(
        reported.status.success(),
        "{}",
        String::from_utf8_lossy(&reported.stderr)
    );
    let value: Value = serde_json::from_slice(&reported.stdout).expect("the report is JSON");
    value["summary"].clone()
}

fn count(summary: &Value, field: &str) -> u64 {
    summary[field]
        .as_u64()
        .unwrap_or_else(|| panic!("summary.{field} in {summary}"))
}

/// Runs `launch(file, extra)` for each entry at once (they mostly sleep).
fn launches(runs: Vec<(String, Vec<&'static str>)>) -> Vec<Output> {
    let handles: Vec<_> = runs
        .into_iter()
        .map(|(file, extra)| std::thread::spawn(move || launch(&file, &extra)))
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().expect("launch thread"))
        .collect()
}

/// The "done when": a launched three-process run with injected
/// delay shows stale decisions in its report, and one without shows none.
#[test]
fn a_launched_run_with_delayed_updates_shows_stale_decisions_and_one_without_none() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outputs = launches(vec![
        (SCENARIO.to_owned(), vec![]),
        (SCENARIO.to_owned(), vec!["--delay", "45s"]),
    ]);
    let prompt = report(dir.path(), "prompt", &outputs[0]);
    let delayed = report(dir.path(), "delayed", &outputs[1]);
    // Both judged by the oracle (the scenario's empty [chaos] turns it on).
    assert!(count(&prompt, "oracle_decisions") >= 4, "{prompt}");
    assert_eq!(count(&prompt, "stale_decisions"), 0, "{prompt}");
    assert!(count(&delayed, "oracle_decisions") >= 4, "{delayed}");
    assert!(count(&delayed, "stale_decisions") >= 2, "{delayed}");
    // Stale for the reason the scenario gives: Cluster2 was free.
    let stale: Vec<Value> = records("delayed", &outputs[1])
        .into_iter()
        .filter(|record| record["oracle"]["stale"] == Value::Bool(true))
        .collect();
    assert!(
        stale.iter().all(|record| {
            record["oracle"]["target"] == "normal@Cluster2" && record["target"] != "normal@Cluster2"
        }),
        "{stale:?}"
    );
}

/// `[chaos]` tables written into a copy of the scenario.
fn with_chaos(dir: &Path, name: &str, tables: &str) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SCENARIO))
        .expect("read the scenario");
    assert!(text.contains("\n[chaos]\n"));
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        text.replace("\n[chaos]\n", &format!("\n[chaos]\n{tables}\n")),
    )
    .expect("write the scenario");
    file
}

/// A partition drops every datagram between two processes (QUIC
/// retransmits what it can once it heals); an outage is the launcher
/// killing a process and starting it again.
#[test]
fn launched_partitions_drop_datagrams_and_outages_restart_processes() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Cluster2's updates of 60 s do not reach Cluster1 before 95 s: the
    // jobs of 70 s and 80 s go to Cluster3 on an old view.
    let partition = with_chaos(
        dir.path(),
        "partition",
        "[[chaos.partition]]\nbetween = [\"Cluster1\", \"Cluster2\"]\nfrom = \"50s\"\nuntil = \"95s\"",
    );
    // Cluster2, holding the jobs of 70 s and 80 s, is killed at 85 s and
    // started again at 95 s; Cluster1, which made every decision, is
    // killed at 115 s and started again at 118 s.
    let outage = with_chaos(
        dir.path(),
        "outage",
        "[[chaos.outage]]\ncluster = \"Cluster2\"\nat = \"85s\"\ndown_for = \"10s\"\n\n\
         [[chaos.outage]]\ncluster = \"Cluster1\"\nat = \"115s\"\ndown_for = \"3s\"",
    );
    let outputs = launches(vec![
        (partition.display().to_string(), vec![]),
        (outage.display().to_string(), vec![]),
    ]);

    let partitioned = report(dir.path(), "partition", &outputs[0]);
    assert!(count(&partitioned, "stale_decisions") >= 2, "{partitioned}");

    let decisions = records("outage", &outputs[1]);
    let of = |job: &str| -> Vec<&Value> {
        decisions
            .iter()
            .filter(|record| record["job"] == job)
            .collect()
    };
    for job in ["early-1", "early-2"] {
        let steps = of(job);
        assert!(steps.len() >= 2, "{job}: {steps:?}");
        assert!(steps[0]["time"].as_f64().expect("time") < 85.0, "{steps:?}");
        assert_eq!(steps[0]["target"], "normal@Cluster2");
        // Decided again once the restarted Cluster2 said it does not hold
        // the job.
        let again = steps[1];
        assert!(again["time"].as_f64().expect("time") >= 95.0, "{again}");
        assert!(
            again["note"]
                .as_str()
                .is_some_and(|note| note.starts_with("lost by normal@Cluster2")),
            "{again}"
        );
        assert!(again["target"].is_string(), "forwarded again: {again}");
    }
    // Every decision was Cluster1's first process's, killed at 115 s: the
    // launcher kept its records before the kill.
    for job in ["late-1", "late-2"] {
        assert!(
            of(job).iter().any(|record| record["target"].is_string()),
            "{job} is forwarded: {decisions:?}"
        );
    }
    assert!(
        decisions
            .iter()
            .all(|record| record["time"].as_f64().expect("time") < 115.0),
        "{decisions:?}"
    );
}

#[test]
fn bad_fault_flags_on_launch_and_cluster_are_refused() {
    let output = mcfed(&["launch", SCENARIO, "--loss", "1.5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("between 0 and 1"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = mcfed(&[
        "cluster",
        "--scenario",
        SCENARIO,
        "--name",
        "Cluster1",
        "--delay",
        "soon",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--delay"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
