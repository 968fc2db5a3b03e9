//! A figure of the whole run within bounds: `metric` (one of
//! [`Metric::ALL`]), `at_least` and/or `at_most`, both inclusive.

use super::{Entry, Kind};
use crate::format::RawExpect;

/// A figure of the whole run lies within bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricBounds {
    /// Which figure.
    pub metric: Metric,
    /// Lower bound, inclusive.
    pub at_least: Option<f64>,
    /// Upper bound, inclusive.
    pub at_most: Option<f64>,
}

impl Kind for MetricBounds {
    const NAME: &'static str = "a figure of the run";
    const KEYS: &'static [&'static str] = &["metric", "at_least", "at_most"];

    fn claims(raw: &RawExpect) -> bool {
        raw.metric.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let metric = raw.metric.as_deref()?;
        let Some(known) = Metric::from_name(metric) else {
            let names: Vec<&str> = Metric::ALL.iter().map(|(_, name)| *name).collect();
            entry.problem(
                "metric",
                format!("unknown metric `{metric}` (known: {})", names.join(", ")),
            );
            return None;
        };
        if raw.at_least.is_none() && raw.at_most.is_none() {
            entry.problem_here("a metric [[expect]] needs `at_least`, `at_most` or both");
            return None;
        }
        Some(MetricBounds {
            metric: known,
            at_least: raw.at_least,
            at_most: raw.at_most,
        })
    }
}

/// A figure of a whole run that an `[[expect]]` can bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Decision records.
    Decisions,
    /// Decisions that forwarded a job.
    Forwarded,
    /// Decisions that left a job pending.
    Pending,
    /// Decisions the oracle marked stale.
    StaleDecisions,
    /// Decisions made again after a refusal or a return.
    Returned,
    /// Forward decisions for jobs forwarded before.
    Reforwarded,
    /// Counter updates sent (seed 004: only by clusters with
    /// MC_PLUGIN_UPDATE_INTERVAL, to submission clusters that collect them).
    UpdatesSent,
    /// Counter updates lost on the way.
    UpdatesLost,
    /// Counter updates ignored as not newer than one applied.
    UpdatesIgnored,
    /// Counter updates applied although older than one applied (never).
    UpdateRegressions,
    /// Samples with a receive queue over its IMPT_JOBBKLG (never).
    BacklogOverflows,
    /// Jobs finished.
    Finished,
    /// Jobs submitted (scenario submissions and workloads).
    Submitted,
    /// Jobs that started (each once, local and forwarded).
    Started,
    /// Submissions refused.
    Refused,
    /// Workload jobs skipped (no run time, no processors, malformed).
    Skipped,
    /// Jobs killed (EXIT).
    Killed,
    /// Starts of jobs that had started before (requeued).
    Restarts,
    /// `[[action]]`s given.
    Actions,
    /// `[[action]]`s refused.
    ActionsRefused,
}

impl Metric {
    /// Every metric with its scenario name.
    pub const ALL: [(Metric, &'static str); 20] = [
        (Metric::Decisions, "decisions"),
        (Metric::Forwarded, "forwarded"),
        (Metric::Pending, "pending"),
        (Metric::StaleDecisions, "stale_decisions"),
        (Metric::Returned, "returned"),
        (Metric::Reforwarded, "reforwarded"),
        (Metric::UpdatesSent, "updates_sent"),
        (Metric::UpdatesLost, "updates_lost"),
        (Metric::UpdatesIgnored, "updates_ignored"),
        (Metric::UpdateRegressions, "update_regressions"),
        (Metric::BacklogOverflows, "backlog_overflows"),
        (Metric::Finished, "finished"),
        (Metric::Submitted, "submitted"),
        (Metric::Started, "started"),
        (Metric::Refused, "refused"),
        (Metric::Skipped, "skipped"),
        (Metric::Killed, "killed"),
        (Metric::Restarts, "restarts"),
        (Metric::Actions, "actions"),
        (Metric::ActionsRefused, "actions_refused"),
    ];

    /// The metric's scenario name.
    pub fn name(self) -> &'static str {
        Metric::ALL
            .iter()
            .find(|(metric, _)| *metric == self)
            .map_or("?", |(_, name)| name)
    }

    /// The metric named `name`.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(metric, _)| *metric)
    }
}
