//! A launched run counts what `mcfed run` counts: the summary record of
//! `mcfed launch` equals the in-process one on bundled scenarios that both
//! can run (jobs present at start, forwarding, reconciliation, job control
//! actions, a workload to drain), decisions and stale decisions included.
//! Only the figures measured on the wall clock may differ — waits,
//! slowdowns, utilization, makespan, and the end of a drained run (the
//! launcher notices the drain by polling): a process's emulated clock runs
//! on real timers, so each step lands a little after its instant.

use crate::common;

use std::time::Duration;

use serde_json::Value;

use common::{Mcfed, mcfed, succeeded};

/// The last JSON line of `text` (the summary record).
fn summary(text: &str) -> Value {
    let line = text.lines().last().expect("a summary line");
    let value: Value = serde_json::from_str(line).expect("JSON");
    assert_eq!(value["record"], "summary", "{line}");
    value
}

/// `summary` without the figures a launched run measures on real timers.
fn counted(mut summary: Value, drained: bool) -> Value {
    let metrics = summary["metrics"].as_object_mut().expect("metrics");
    metrics.remove("makespan");
    for group in ["clusters", "queues"] {
        for entry in metrics[group].as_array_mut().expect("groups") {
            let entry = entry.as_object_mut().expect("group");
            for timed in ["wait", "mean_bounded_slowdown", "utilization"] {
                entry.remove(timed);
            }
        }
    }
    if drained {
        summary.as_object_mut().expect("summary").remove("end");
    }
    // How far the processes fell behind is a launched run's alone.
    summary.as_object_mut().expect("summary").remove("lag");
    summary
}

fn compare(scenario: &str, speed: &str, drained: bool) {
    let path = format!("scenarios/{scenario}");
    let emulated = summary(&succeeded(&mcfed(&["run", &path, "--report", "json"])));
    // With --check: what a launched run cannot check (it takes no
    // snapshots) is skipped, and does not fail the run.
    let output = Mcfed::new(&[
        "launch",
        &path,
        "--report",
        "json",
        "--check",
        "--base-port",
        "0",
        "--speed",
        speed,
    ])
    .within(Duration::from_secs(180))
    .run();
    let checked = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        checked.contains("expectations held"),
        "{scenario}: {checked}"
    );
    assert!(!checked.contains("FAIL"), "{scenario}: {checked}");
    let launched = summary(&succeeded(&output));
    assert!(
        emulated["submitted"].as_u64().unwrap_or(0) + emulated["bundled"].as_u64().unwrap_or(0) > 0,
        "{scenario}: a run with no jobs shows nothing"
    );
    assert_eq!(
        counted(launched, drained),
        counted(emulated, drained),
        "{scenario}: launched (left) and in-process (right) summaries differ"
    );
}

/// One test, the scenarios one after the other: each launch is three
/// processes, and several at once on a busy machine would make their
/// emulated clocks lag.
#[test]
fn launched_summaries_equal_the_in_process_ones() {
    // Jobs present at start, one job forwarded.
    compare(
        "forwarding/example2-preemptable-queue-priority.toml",
        "100",
        false,
    );
    // Decisions made before the first counter update, then corrected.
    compare("forwarding/reconciliation.toml", "100", false);
    compare("forwarding/before-first-update.toml", "100", false);
    // `[[action]]`s played by the launcher: done and refused ones; its
    // expectations of job states at set times are skipped, not failed.
    compare("control/job-control.toml", "400", false);
    // A workload replayed to drain.
    compare("traces/small-trace.toml", "100", true);
}

/// A small federation with long update intervals (the faithful bound is
/// 2 % of 5 minutes: 6 s), one job forwarded.
const SLOW_UPDATES: &str = "tests/fixtures/slow-updates.toml";

/// A launched run at an absurd speed says its processes fell behind
/// emulated time and which speed would keep up; at a modest one it says
/// nothing (the bound, 6 s of emulated time, is 300 ms of wall time at
/// `--speed 20`: far above the timers' lateness even on a busy machine).
#[test]
fn a_launched_run_says_when_it_falls_behind() {
    let launch = |speed: &str| {
        let output = mcfed(&["launch", SLOW_UPDATES, "--base-port", "0", "--speed", speed]);
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let said = launch("100000");
    assert!(
        said.contains("fell behind emulated time") && said.contains("try --speed"),
        "{said}"
    );
    let said = launch("20");
    assert!(!said.contains("fell behind"), "{said}");
}

/// Every decision of `records`, as (job, target) in order.
fn decisions(records: &str) -> Vec<(String, String)> {
    records
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["record"] == "decision")
        .map(|record| (record["job"].to_string(), record["target"].to_string()))
        .collect()
}

/// At a speed the run itself says is faithful, a launched federation fed
/// by a trace of 100 jobs forwards every job where `mcfed run` does. The
/// trace keeps 2.5 s between any two events at different clusters (a
/// submission every 10 s at x5.0, ends at x7.5, counter updates at x0), so
/// a run whose processes stay within the faithful bound (0.6 s) takes them
/// in the same order; a run that warns is played again slower.
#[test]
fn a_faithful_launched_run_decides_as_mcfed_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = dir.path().join("spaced.swf");
    let lines: String = (0..100)
        .map(|k| {
            let submit = 10 * k + 5;
            let run = 10 * (k % 6) + 12;
            format!(
                "{} {submit}.0 -1 {run}.5 1 -1 -1 1 120 -1 1 {} 1 -1 1 1 -1 -1\n",
                k + 1,
                k % 5 + 1
            )
        })
        .collect();
    std::fs::write(&trace, lines).expect("write trace");
    let trace = trace.to_str().expect("utf-8");
    let scenario = succeeded(&mcfed(&[
        "replay",
        trace,
        "--hosts",
        "2",
        "--mxj",
        "2",
        "--clusters",
        "3",
        "--print-scenario",
    ]));
    let path = dir.path().join("spaced.toml");
    std::fs::write(&path, scenario).expect("write scenario");
    let path = path.to_str().expect("utf-8");
    let emulated = decisions(&succeeded(&mcfed(&["run", path, "--report", "json"])));
    assert_eq!(emulated.len(), 100);
    for speed in ["20", "10", "5"] {
        let output = Mcfed::new(&[
            "launch",
            path,
            "--report",
            "json",
            "--base-port",
            "0",
            "--speed",
            speed,
        ])
        .within(Duration::from_secs(600))
        .run();
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        if said.contains("fell behind") {
            continue;
        }
        let launched = decisions(&succeeded(&output));
        assert_eq!(
            launched, emulated,
            "at --speed {speed}, faithful by its own account"
        );
        return;
    }
    panic!("no speed down to 5 kept up with emulated time on this machine");
}
