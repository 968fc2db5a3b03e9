//! [`Scenario`]: a validated scenario — its clusters, jobs, workloads,
//! actions, faults and expectations — and what runs ask of it.

use std::time::Duration;

use mcfed_protocol::SimTime;

use crate::expect::{ExpectKind, Expectation, Metric};
use crate::locate::Problem;
use crate::model::{Action, ClusterSpec, Submission};

/// The interval a run's default end and its slot-usage samples use when no
/// cluster sends counters (MC_PLUGIN_UPDATE_INTERVAL itself has no
/// default: unset, a cluster sends none).
pub const QUIET_INTERVAL: Duration = Duration::from_secs(30);

/// A scenario ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its title.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed for anything random.
    pub seed: u64,
    /// When the run stops (when it does not drain).
    pub end: SimTime,
    /// Whether the run goes on until nothing is left to do (`end =
    /// "drain"`, the default with a workload).
    pub drain: bool,
    /// The clusters.
    pub clusters: Vec<ClusterSpec>,
    /// Submissions during the run, in time order.
    pub submissions: Vec<Submission>,
    /// Workloads read from trace files during the run (`[[workload]]`).
    pub workloads: Vec<mcfed_trace::WorkloadSpec>,
    /// Job control commands given during the run (`[[action]]`), in time
    /// order.
    pub actions: Vec<Action>,
    /// Expected outcomes.
    pub expectations: Vec<Expectation>,
    /// Faults to inject (`[chaos]`), if any.
    pub chaos: Option<mcfed_chaos::ChaosConfig>,
    /// Settings the clusters accept with a warning, located in the file.
    pub warnings: Vec<Problem>,
    /// What it holds once built, and about how much memory that takes.
    pub footprint: crate::footprint::Footprint,
}

impl Scenario {
    /// The longest counter update interval of the federation (zero when no
    /// cluster sends counters): a draining run waits that long for a
    /// forwarder holding jobs before it counts the run as drained.
    pub fn longest_update_interval(&self) -> Duration {
        self.clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .max()
            .unwrap_or_default()
    }

    /// How often slot usage is sampled: the shortest update interval of
    /// the federation, or [`QUIET_INTERVAL`] when no
    /// cluster sends counters.
    pub fn sample_interval(&self) -> Duration {
        self.clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .min()
            .unwrap_or(QUIET_INTERVAL)
    }

    /// Whether runs of this scenario should compare decisions with the
    /// oracle: it has a `[chaos]` table, or expects something of stale
    /// decisions.
    pub fn wants_oracle(&self) -> bool {
        self.chaos.is_some()
            || self.expectations.iter().any(|expectation| {
                matches!(
                    &expectation.kind,
                    ExpectKind::Metric(bounds) if bounds.metric == Metric::StaleDecisions
                )
            })
    }

    /// The times at which expectations look at the clusters, sorted, without
    /// repeats.
    pub fn probe_times(&self) -> Vec<SimTime> {
        let mut times: Vec<SimTime> = self
            .expectations
            .iter()
            .filter_map(|expectation| expectation.kind.at())
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }
}
