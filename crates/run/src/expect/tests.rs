//! Each kind's check, and what it asks the run to watch.

use super::*;

/// One expectation of every kind.
const SCENARIO: &str = r#"
[[cluster]]
name = "C1"

[[cluster.host]]
name = "h1"
MXJ = 2

[[cluster.queue]]
name = "send"
SNDJOBS_TO = ["high@C2"]

[[cluster.queue]]
name = "fs"
FAIRSHARE = "USER_SHARES[[alice, 1]]"

[[cluster.queue]]
name = "apsq"
APS_PRIORITY = "WEIGHT[[JPRIORITY, 1]]"

[[cluster.job]]
queue = "apsq"
name = "init"
state = "running"

[[cluster]]
name = "C2"

[[cluster.host]]
name = "h2"
MXJ = 1

[[cluster.queue]]
name = "high"
RCVJOBS_FROM = "C1"

[[submit]]
at = "10s"
cluster = "C1"
queue = "send"
name = "away"

[[submit]]
at = "10s"
cluster = "C1"
queue = "apsq"
name = "a"

[[expect]]
job = "away"
forwarded_to = "high@C2"
reason_contains = "free"

[[expect]]
job = "away"
pends = true

[[expect]]
job = "away"
ends_pending = true

[[expect]]
metric = "decisions"
at_least = 1

[[expect]]
at = "1m"
cluster = "C2"
queue = "high"
running_slots = 1

[[expect]]
at = "1m"
cluster = "C1"
queue = "fs"
user = "alice"
priority = 1.0

[[expect]]
job = "a"
at = "2m"
state = "RUN"

[[expect]]
job = "a"
preempted = false

[[expect]]
job = "a"
at = "3m"
cluster = "C1"
aps = 50

[[expect]]
at = "4m"
cluster = "C1"
queue = "apsq"
dispatch_order = ["a"]

[[expect]]
refused = "no such thing"
"#;

const NO_SNAPSHOT: &str = "no snapshot was taken";

/// What each expectation of [`SCENARIO`] finds in a run where nothing
/// happened: (origin, expected, held, actual).
const EXPECTED: [(&str, &str, bool, &str); 12] = [
    (
        "cluster[0].job[0].state",
        "every job of this group is RUN after the first dispatch",
        false,
        "the group was not built",
    ),
    (
        "expect[0]",
        "job away is forwarded to high@C2, reason containing \"free\"",
        false,
        "no decision was made for it",
    ),
    (
        "expect[1]",
        "job away pends at its submission cluster",
        false,
        "no decision was made for it",
    ),
    (
        "expect[2]",
        "job away's last decision leaves it pending",
        false,
        "no decision was made for it",
    ),
    (
        "expect[3]",
        "decisions is at least 1",
        false,
        "decisions = 0",
    ),
    (
        "expect[4]",
        "at 00:01:00 queue high@C2 has 1 running slots",
        false,
        "no snapshot of the queue was taken",
    ),
    (
        "expect[5]",
        "at 00:01:00 user alice has dynamic priority 1 (±0.001) in fs@C1",
        false,
        "the user has no row in the queue's fairshare table",
    ),
    ("expect[6]", "at 00:02:00 job a is RUN", false, NO_SNAPSHOT),
    (
        "expect[7]",
        "job a is never preempted",
        true,
        "never preempted",
    ),
    (
        "expect[8]",
        "at 00:03:00 job a has APS 50 (±0.001)",
        false,
        NO_SNAPSHOT,
    ),
    (
        "expect[9]",
        "at 00:04:00 queue apsq@C1 tries its pending jobs in the order a",
        false,
        NO_SNAPSHOT,
    ),
    (
        "expect[10]",
        "the scenario is refused: \"no such thing\"",
        false,
        "the scenario was accepted",
    ),
];

/// Every kind's words, and that none holds of a run where nothing
/// happened (a preemption that never happened does).
#[test]
fn each_kind_is_checked_by_its_own_check() {
    let scenario = mcfed_scenario::parse("every-kind.toml", SCENARIO).expect("valid");
    let in_process = RunOutput {
        snapshots_taken: true,
        ..RunOutput::default()
    };
    let results = check(&scenario, &in_process);
    let found: Vec<(&str, &str, bool, &str)> = results
        .iter()
        .map(|result| {
            let CheckResult {
                origin,
                expected,
                held,
                actual,
                skipped,
            } = result;
            assert_eq!(skipped, &None, "{origin}");
            (origin.as_str(), expected.as_str(), *held, actual.as_str())
        })
        .collect();
    assert_eq!(found, EXPECTED);
}

/// In a run that takes no snapshots (a launched one), what needs one is
/// skipped with the reason, not failed; everything else is checked.
#[test]
fn a_launched_run_skips_what_needs_a_snapshot() {
    let scenario = mcfed_scenario::parse("every-kind.toml", SCENARIO).expect("valid");
    let results = check(&scenario, &RunOutput::default());
    let skipped: Vec<&str> = results
        .iter()
        .filter(|result| result.skipped.is_some())
        .map(|result| result.actual.as_str())
        .collect();
    assert!(!skipped.is_empty());
    assert!(
        skipped
            .iter()
            .all(|actual| actual.starts_with("no snapshot")),
        "{skipped:?}"
    );
    let needs_snapshot = EXPECTED
        .iter()
        .filter(|(_, _, _, actual)| actual.starts_with("no snapshot"))
        .count();
    assert_eq!(skipped.len(), needs_snapshot);
    assert!(
        results.iter().any(CheckResult::failed),
        "the others still fail"
    );
}

/// The jobs and queues each kind asks the run to watch, per cluster.
#[test]
fn the_kinds_that_look_at_jobs_or_queues_have_them_watched() {
    let scenario = mcfed_scenario::parse("every-kind.toml", SCENARIO).expect("valid");
    let name = |name: &str| name.parse().expect("a cluster name");
    let c1 = super::watched(&scenario, &name("C1"));
    assert_eq!(c1.jobs, ["a", "a"], "the job state and the APS value");
    assert_eq!(c1.queues, ["apsq"], "the dispatch order");
    assert_eq!(super::watched(&scenario, &name("C2")), Watched::default());
}
