//! Checking a run against its scenario's `[[expect]]` entries.

use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_protocol::SimTime;

use crate::engine::RunOutput;
use crate::model::{ExpectKind, Expectation, Metric, Scenario};

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
}

fn describe_decision(record: &DecisionRecord) -> String {
    let when = SimTime::from_millis((record.time * 1000.0).round() as u64);
    match record.outcome {
        OutcomeKind::Forwarded => format!(
            "at {when} forwarded to {} ({})",
            record.target.as_deref().unwrap_or("?"),
            record.reason
        ),
        OutcomeKind::Pending => format!("at {when} pending ({})", record.reason),
    }
}

fn reason_ok(expectation: &Expectation, record: &DecisionRecord) -> bool {
    expectation
        .reason_contains
        .as_ref()
        .is_none_or(|needle| record.reason.contains(needle.as_str()))
}

fn check_one(scenario: &Scenario, output: &RunOutput, expectation: &Expectation) -> CheckResult {
    let reason_note = expectation
        .reason_contains
        .as_ref()
        .map(|needle| format!(", reason containing \"{needle}\""))
        .unwrap_or_default();
    fn decisions_of<'a>(
        output: &'a RunOutput,
        job: &'a str,
    ) -> impl Iterator<Item = &'a DecisionRecord> {
        output
            .decisions
            .iter()
            .filter(move |record| record.job == job)
    }
    let (expected, held, actual) = match &expectation.kind {
        ExpectKind::ForwardedTo { job, target } => {
            let expected = format!("job {job} is forwarded to {target}{reason_note}");
            let target = target.to_string();
            match decisions_of(output, job).find(|r| r.outcome == OutcomeKind::Forwarded) {
                Some(record) => (
                    expected,
                    record.target.as_deref() == Some(target.as_str())
                        && reason_ok(expectation, record),
                    describe_decision(record),
                ),
                None => {
                    let last = decisions_of(output, job).last().map_or_else(
                        || "no decision was made for it".to_owned(),
                        |record| {
                            format!(
                                "never forwarded; last decision {}",
                                describe_decision(record)
                            )
                        },
                    );
                    (expected, false, last)
                }
            }
        }
        ExpectKind::Pends { job } => {
            let expected = format!("job {job} pends at its submission cluster{reason_note}");
            match decisions_of(output, job).next() {
                Some(record) => (
                    expected,
                    record.outcome == OutcomeKind::Pending && reason_ok(expectation, record),
                    describe_decision(record),
                ),
                None => (expected, false, "no decision was made for it".to_owned()),
            }
        }
        ExpectKind::EndsPending { job } => {
            let expected = format!("job {job}'s last decision leaves it pending{reason_note}");
            match decisions_of(output, job).last() {
                Some(record) => (
                    expected,
                    record.outcome == OutcomeKind::Pending && reason_ok(expectation, record),
                    describe_decision(record),
                ),
                None => (expected, false, "no decision was made for it".to_owned()),
            }
        }
        ExpectKind::Metric {
            metric,
            at_least,
            at_most,
        } => {
            let value = metric_value(output, *metric);
            let bounds = match (at_least, at_most) {
                (Some(low), Some(high)) => format!("between {low} and {high}"),
                (Some(low), None) => format!("at least {low}"),
                (None, Some(high)) => format!("at most {high}"),
                (None, None) => "anything".to_owned(),
            };
            (
                format!("{} is {bounds}", metric.name()),
                at_least.is_none_or(|low| value >= low) && at_most.is_none_or(|high| value <= high),
                format!("{} = {value}", metric.name()),
            )
        }
        ExpectKind::InitialState {
            cluster,
            group,
            state,
        } => {
            let expected = format!(
                "every job of this group is {} after the first dispatch",
                state.as_str()
            );
            let position = scenario
                .clusters
                .iter()
                .position(|spec| &spec.config.name == cluster);
            match position.and_then(|index| output.initial_states.get(index)?.get(*group)) {
                Some(found) => (
                    expected,
                    found.count(*state) == found.total(),
                    format!(
                        "{} running, {} pending, {} other, of {}",
                        found.running,
                        found.pending,
                        found.other,
                        found.total()
                    ),
                ),
                None => (expected, false, "the group was not built".to_owned()),
            }
        }
    };
    CheckResult {
        origin: expectation.origin.clone(),
        expected,
        held,
        actual,
    }
}

/// The value of `metric` in a run.
pub fn metric_value(output: &RunOutput, metric: Metric) -> f64 {
    let decisions = &output.decisions;
    let count = |keep: &dyn Fn(&DecisionRecord) -> bool| {
        decisions.iter().filter(|r| keep(r)).count() as f64
    };
    let stats = &output.stats;
    match metric {
        Metric::Decisions => decisions.len() as f64,
        Metric::Forwarded => count(&|r| r.outcome == OutcomeKind::Forwarded),
        Metric::Pending => count(&|r| r.outcome == OutcomeKind::Pending),
        Metric::StaleDecisions => count(&|r| r.oracle.as_ref().is_some_and(|oracle| oracle.stale)),
        Metric::Returned => count(&|r| r.note.is_some()),
        Metric::Reforwarded => count(&|r| r.outcome == OutcomeKind::Forwarded && r.attempt > 0),
        Metric::UpdatesLost => stats.updates_lost as f64,
        Metric::UpdatesIgnored => stats.updates_ignored as f64,
        Metric::UpdateRegressions => stats.update_regressions as f64,
        Metric::BacklogOverflows => stats.backlog_overflows as f64,
        Metric::Finished => stats.finished as f64,
    }
}

/// Checks every expectation of `scenario` against `output`.
pub fn check(scenario: &Scenario, output: &RunOutput) -> Vec<CheckResult> {
    scenario
        .expectations
        .iter()
        .map(|expectation| check_one(scenario, output, expectation))
        .collect()
}
