//! End-to-end: seeded faults in in-process runs.

use crate::common;
use common::{mcfed, succeeded};

const REORDERED: &str = "scenarios/chaos/reordered-updates.toml";

#[test]
fn chaos_runs_are_reproducible_bit_for_bit() {
    let args = ["run", REORDERED, "--report", "json", "--events"];
    let first = succeeded(&mcfed(&args));
    let second = succeeded(&mcfed(&args));
    assert!(first.lines().count() > 100, "a substantial run");
    assert_eq!(first, second, "same seed, same run");
    let other = succeeded(&mcfed(&[&args[..], &["--chaos-seed", "6"]].concat()));
    assert_ne!(first, other, "another seed, another run");
}

#[test]
fn command_line_faults_make_decisions_stale() {
    let scenario = "scenarios/chaos/prompt-updates.toml";
    let clean = succeeded(&mcfed(&["run", scenario, "--report", "json"]));
    assert!(
        clean
            .lines()
            .filter(|line| line.contains("\"record\":\"decision\""))
            .all(|line| line.contains("\"stale\":false")),
        "{clean}"
    );
    let delayed = succeeded(&mcfed(&[
        "run", scenario, "--report", "json", "--delay", "45s",
    ]));
    assert!(
        delayed.lines().any(|line| line.contains("\"stale\":true")),
        "{delayed}"
    );
}

#[test]
fn chaos_needs_the_event_loop() {
    let output = mcfed(&["run", REORDERED, "--engine", "actors"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("events engine"));
}

#[test]
fn bad_fault_arguments_are_refused() {
    let output = mcfed(&["run", REORDERED, "--loss", "1.5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("between 0 and 1"));
}
