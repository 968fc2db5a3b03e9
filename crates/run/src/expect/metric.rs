//! Checking a figure of the whole run against its bounds, and the figures
//! themselves ([`metric_value`]).

use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_scenario::expect::{Metric, MetricBounds};

use super::{Check, Found, Run};
use crate::output::RunOutput;

impl Check for MetricBounds {
    fn check(&self, run: Run<'_>) -> Found {
        let (metric, at_least, at_most) = (self.metric, self.at_least, self.at_most);
        let value = metric_value(run.output, metric);
        let bounds = match (at_least, at_most) {
            (Some(low), Some(high)) => format!("between {low} and {high}"),
            (Some(low), None) => format!("at least {low}"),
            (None, Some(high)) => format!("at most {high}"),
            (None, None) => "anything".to_owned(),
        };
        Found {
            expected: format!("{} is {bounds}", metric.name()),
            held: at_least.is_none_or(|low| value >= low)
                && at_most.is_none_or(|high| value <= high),
            actual: format!("{} = {value}", metric.name()),
            skipped: None,
        }
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
