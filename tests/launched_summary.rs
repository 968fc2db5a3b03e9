//! A launched run counts what `mcfed run` counts: the summary record of
//! `mcfed launch` equals the in-process one on bundled scenarios that both
//! can run (jobs present at start, forwarding, reconciliation, job control
//! actions, a workload to drain), decisions and stale decisions included.
//! Only the figures measured on the wall clock may differ — waits,
//! slowdowns, utilization, makespan, and the end of a drained run (the
//! launcher notices the drain by polling): a process's emulated clock runs
//! on real timers, so each step lands a little after its instant.

mod common;

use std::time::Duration;

use serde_json::Value;

use common::{mcfed_within, succeeded};

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
    summary
}

fn compare(scenario: &str, speed: &str, drained: bool) {
    let path = format!("scenarios/{scenario}");
    let emulated = summary(&succeeded(&mcfed_within(
        &["run", &path, "--report", "json"],
        Duration::from_secs(60),
    )));
    // With --check: what a launched run cannot check (it takes no
    // snapshots) is skipped, and does not fail the run.
    let output = mcfed_within(
        &[
            "launch",
            &path,
            "--report",
            "json",
            "--check",
            "--base-port",
            "0",
            "--speed",
            speed,
        ],
        Duration::from_secs(180),
    );
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
