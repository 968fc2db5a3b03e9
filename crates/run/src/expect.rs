//! Checking a run against its scenario's `[[expect]]` entries. Each kind
//! of expectation is checked in its own file here, as each is validated in
//! its own file of `mcfed_scenario::expect`; `check_of` chooses the file
//! for a kind (adding a kind: its file, and its line there).

mod decision;
mod dispatch_order;
mod initial_state;
mod job_aps;
mod job_state;
mod metric;
mod preemption;
mod queue_slots;
pub mod refused;
mod user_priority;

use mcfed_protocol::{ClusterName, SimTime};
use mcfed_scenario::Scenario;
use mcfed_scenario::expect::ExpectKind;

use crate::output::RunOutput;
use crate::probe::{ClusterSnapshot, Watched};

pub use metric::metric_value;

/// Whether one expectation held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    /// Where the expectation was written (`expect[0]`).
    pub origin: String,
    /// What it expects, in words.
    pub expected: String,
    /// Whether it held.
    pub held: bool,
    /// What actually happened.
    pub actual: String,
    /// Why it could not be checked, if it could not (it neither held nor
    /// failed: a launched run takes no snapshots of its clusters).
    pub skipped: Option<String>,
}

impl CheckResult {
    /// Whether it failed (held not, and was not skipped).
    pub fn failed(&self) -> bool {
        !self.held && self.skipped.is_none()
    }
}

/// Why expectations that look at the clusters at a time cannot be checked
/// in a launched run.
pub const NO_SNAPSHOTS: &str =
    "a launched run takes no snapshots of its clusters; check it with `mcfed run`";

/// A run to check: the scenario, and what its run produced.
#[derive(Clone, Copy)]
pub(crate) struct Run<'a> {
    /// The scenario.
    pub(crate) scenario: &'a Scenario,
    /// What the run produced.
    pub(crate) output: &'a RunOutput,
}

impl<'a> Run<'a> {
    /// The snapshot of `cluster` taken at `at`, if one was.
    pub(crate) fn cluster_at(&self, at: SimTime, cluster: &str) -> Option<&'a ClusterSnapshot> {
        self.output.snapshot_at(at)?.cluster(cluster)
    }

    /// What a check that needs a snapshot finds when there is none: a
    /// failure (`actual`) in a run that takes snapshots, else a skip.
    pub(crate) fn no_snapshot(&self, expected: String, actual: &str) -> Found {
        if self.output.snapshots_taken {
            Found::failed(expected, actual)
        } else {
            Found {
                expected,
                held: false,
                actual: actual.to_owned(),
                skipped: Some(NO_SNAPSHOTS.to_owned()),
            }
        }
    }
}

/// What one check found.
pub(crate) struct Found {
    /// What was expected, in words.
    pub(crate) expected: String,
    /// Whether it held.
    pub(crate) held: bool,
    /// What was, in words.
    pub(crate) actual: String,
    /// Why it could not be checked, if it could not.
    pub(crate) skipped: Option<String>,
}

impl Found {
    /// An expectation that failed because of `actual`.
    pub(crate) fn failed(expected: String, actual: impl Into<String>) -> Self {
        Found {
            expected,
            held: false,
            actual: actual.into(),
            skipped: None,
        }
    }
}

/// How one kind of expectation is checked against a run.
pub(crate) trait Check {
    /// Whether the expectation held in `run`.
    fn check(&self, run: Run<'_>) -> Found;

    /// Adds to `watched` the jobs and queues of `cluster` the check needs
    /// snapshots of (most kinds need none).
    fn watch(&self, _cluster: &ClusterName, _watched: &mut Watched) {}
}

/// The check of an expectation of kind `kind`.
pub(crate) fn check_of(kind: &ExpectKind) -> &dyn Check {
    match kind {
        ExpectKind::Decision(decision) => decision,
        ExpectKind::Metric(bounds) => bounds,
        ExpectKind::InitialState(initial) => initial,
        ExpectKind::QueueSlots(slots) => slots,
        ExpectKind::UserPriority(priority) => priority,
        ExpectKind::JobState(state) => state,
        ExpectKind::Preempted(preemption) => preemption,
        ExpectKind::JobAps(aps) => aps,
        ExpectKind::DispatchOrder(order) => order,
        ExpectKind::Refused(refused) => refused,
    }
}

/// `, reason containing "NEEDLE"` when a reason is expected, for the words
/// of an expectation.
pub(crate) fn reason_note(reason_contains: Option<&str>) -> String {
    reason_contains
        .map(|needle| format!(", reason containing \"{needle}\""))
        .unwrap_or_default()
}

/// Checks every expectation of `scenario` against `output`.
pub fn check(scenario: &Scenario, output: &RunOutput) -> Vec<CheckResult> {
    let run = Run { scenario, output };
    scenario
        .expectations
        .iter()
        .map(|expectation| {
            let found = check_of(&expectation.kind).check(run);
            CheckResult {
                origin: expectation.origin.clone(),
                expected: found.expected,
                held: found.held,
                actual: found.actual,
                skipped: found.skipped,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;

/// The jobs of `cluster` whose state or APS value `scenario`'s
/// expectations look at, and the queues whose dispatch order they look at:
/// what a run's snapshots of `cluster` watch.
pub fn watched(scenario: &Scenario, cluster: &ClusterName) -> Watched {
    let mut watched = Watched::default();
    for expectation in &scenario.expectations {
        check_of(&expectation.kind).watch(cluster, &mut watched);
    }
    watched
}
