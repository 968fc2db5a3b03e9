//! Checking a run against its scenario's `[[expect]]` entries.

mod aps;

use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_protocol::SimTime;

use crate::output::RunOutput;
use crate::probe::ClusterSnapshot;
use mcfed_scenario::model::{ExpectKind, Expectation, Metric, QueueFigures, Scenario};

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
        ExpectKind::JobAps {
            cluster,
            job,
            at,
            value,
            kind,
            jpriority,
            tolerance,
        } => aps::job_aps(
            output,
            cluster.as_str(),
            job,
            *at,
            *value,
            kind.as_deref(),
            *jpriority,
            *tolerance,
        ),
        ExpectKind::DispatchOrder {
            cluster,
            queue,
            at,
            jobs,
        } => aps::dispatch_order(output, cluster.as_str(), queue.as_str(), *at, jobs),
        ExpectKind::Refused { message, .. } => (
            format!("the scenario is refused: \"{message}\""),
            false,
            "the scenario was accepted".to_owned(),
        ),
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
        ExpectKind::QueueSlots {
            cluster,
            queue,
            at,
            figures,
        } => {
            let expected = format!(
                "at {at} queue {queue}@{cluster} has {}",
                describe_figures(figures)
            );
            match cluster_at(output, *at, cluster.as_str()).and_then(|snapshot| {
                snapshot
                    .report
                    .queues
                    .iter()
                    .find(|report| report.queue == queue.as_str())
            }) {
                Some(report) => {
                    let deserved = report.slot_pool.as_ref().map(|pool| pool.deserved_slots);
                    let actual = QueueFigures {
                        running: Some(report.run),
                        pending: Some(report.pend),
                        suspended: Some(report.susp),
                        deserved,
                    };
                    let held = [
                        (figures.running, actual.running),
                        (figures.pending, actual.pending),
                        (figures.suspended, actual.suspended),
                        (figures.deserved, actual.deserved),
                    ]
                    .iter()
                    .all(|(want, got)| want.is_none() || want == got);
                    (expected, held, describe_figures(&actual))
                }
                None => (
                    expected,
                    false,
                    "no snapshot of the queue was taken".to_owned(),
                ),
            }
        }
        ExpectKind::UserPriority {
            cluster,
            queue,
            user,
            at,
            priority,
            tolerance,
        } => {
            let expected = format!(
                "at {at} user {user} has dynamic priority {priority} (±{tolerance}) in {queue}@{cluster}"
            );
            let row = cluster_at(output, *at, cluster.as_str()).and_then(|snapshot| {
                snapshot
                    .report
                    .queues
                    .iter()
                    .find(|report| report.queue == queue.as_str())?
                    .fairshare
                    .as_ref()?
                    .users
                    .iter()
                    .find(|row| row.answers_for(user))
                    .cloned()
            });
            match row {
                Some(row) => (
                    expected,
                    (row.priority - priority).abs() <= *tolerance,
                    format!(
                        "priority {:.4} (shares {}, started {}, cpu {:.1}s, run {:.0}s, adjust {:.3})",
                        row.priority,
                        row.shares,
                        row.started,
                        row.cpu_time,
                        row.run_time,
                        row.adjust
                    ),
                ),
                None => (
                    expected,
                    false,
                    "the user has no row in the queue's fairshare table".to_owned(),
                ),
            }
        }
        ExpectKind::JobState {
            cluster,
            job,
            at,
            state,
        } => {
            let expected = format!("at {at} job {job} is {}{reason_note}", state.as_str());
            match cluster_at(output, *at, cluster.as_str()) {
                Some(snapshot) => {
                    let found = snapshot.jobs.iter().find(|found| &found.name == job);
                    let (actual_state, reason) = match found {
                        Some(found) => (found.state.clone(), found.reason.clone()),
                        None => {
                            let submitted = scenario
                                .submissions
                                .iter()
                                .find(|submission| *submission.spec.name == **job)
                                .is_none_or(|submission| submission.at <= *at);
                            let state = if submitted { "DONE" } else { "not submitted" };
                            (state.to_owned(), None)
                        }
                    };
                    let reason_held = expectation.reason_contains.as_ref().is_none_or(|needle| {
                        reason
                            .as_deref()
                            .is_some_and(|reason| reason.contains(needle.as_str()))
                    });
                    let actual = match &reason {
                        Some(reason) => format!("{actual_state} ({reason})"),
                        None => actual_state.clone(),
                    };
                    (
                        expected,
                        actual_state == state.as_str() && reason_held,
                        actual,
                    )
                }
                None => (expected, false, "no snapshot was taken".to_owned()),
            }
        }
        ExpectKind::Preempted {
            cluster,
            job,
            preempted,
            by,
        } => {
            let records: Vec<_> = output
                .preemptions
                .iter()
                .filter(|record| record.cluster == cluster.as_str() && &record.victim == job)
                .collect();
            let expected = match (preempted, by) {
                (true, Some(by)) => format!("job {job} is preempted by {by}"),
                (true, None) => format!("job {job} is preempted"),
                (false, _) => format!("job {job} is never preempted"),
            };
            let held = match (preempted, by) {
                (true, Some(by)) => records.iter().any(|record| &record.preempted_by == by),
                (true, None) => !records.is_empty(),
                (false, _) => records.is_empty(),
            };
            let actual = if records.is_empty() {
                "never preempted".to_owned()
            } else {
                records
                    .iter()
                    .map(|record| {
                        format!(
                            "{} at {} by {}",
                            record.action,
                            SimTime::from_millis((record.time * 1000.0).round() as u64),
                            record.preempted_by
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            (expected, held, actual)
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
        Metric::UpdatesSent => stats.updates as f64,
        Metric::UpdatesLost => stats.updates_lost as f64,
        Metric::UpdatesIgnored => stats.updates_ignored as f64,
        Metric::UpdateRegressions => stats.update_regressions as f64,
        Metric::BacklogOverflows => stats.backlog_overflows as f64,
        Metric::Finished => stats.finished as f64,
        Metric::Submitted => stats.submitted as f64,
        Metric::Started => stats.started as f64,
        Metric::Refused => stats.refused as f64,
        Metric::Skipped => output
            .workloads
            .iter()
            .map(|workload| workload.skipped.total() as f64)
            .sum(),
        Metric::Killed => stats.jobs.killed.total() as f64,
        Metric::Restarts => stats.restarts as f64,
        Metric::Actions => stats.actions as f64,
        Metric::ActionsRefused => stats.actions_refused as f64,
    }
}

fn cluster_at<'a>(
    output: &'a RunOutput,
    at: SimTime,
    cluster: &str,
) -> Option<&'a ClusterSnapshot> {
    output.snapshot_at(at)?.cluster(cluster)
}

fn describe_figures(figures: &QueueFigures) -> String {
    let parts: Vec<String> = [
        ("running", figures.running),
        ("pending", figures.pending),
        ("suspended", figures.suspended),
        ("deserved", figures.deserved),
    ]
    .iter()
    .filter_map(|(name, value)| value.map(|value| format!("{value} {name}")))
    .collect();
    if parts.is_empty() {
        "no pool".to_owned()
    } else {
        format!("{} slots", parts.join(", "))
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
