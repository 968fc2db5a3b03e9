//! The whole pass over a scenario: the order in which its parts are checked
//! (problems are reported in that order) and the [`Scenario`] they make.

use mcfed_protocol::{ClusterName, SimTime};

use super::{Checker, QUIET_INTERVAL};
use crate::format::{EndValue, RawScenario};
use crate::locate::FieldPath;
use crate::model::{ClusterSpec, Scenario, Submission};
use crate::validate_expect::JobIndex;

impl Checker<'_> {
    /// Checks every part of `raw`; the scenario returned is meaningful only
    /// if no problem was found.
    pub(super) fn scenario(&mut self, raw: RawScenario) -> Scenario {
        let root = FieldPath::root();
        if raw.cluster.is_empty() {
            self.problem(
                root.key("cluster"),
                "a scenario needs at least one [[cluster]]",
            );
        }
        // Cluster names first: queues refer to other clusters.
        let (names, seen) = self.cluster_names(&raw.cluster);
        let mut drafts = Vec::new();
        for (index, (cluster, name)) in raw.cluster.iter().zip(&names).enumerate() {
            let Some(name) = name else { continue };
            let path = root.key("cluster").index(index);
            drafts.push(self.cluster(&raw.params, cluster, name.clone(), path, &seen));
        }
        self.check_send_targets(&drafts);
        self.check_clusters(&drafts);
        let mut specs = super::clusters::specs(&drafts);

        let mut job_counter = 0usize;
        let (mut expectations, initial_names) =
            self.initial_jobs(&raw.cluster, &names, &mut specs, &mut job_counter);
        let submissions = self.submissions(&raw.submit, &specs, &mut job_counter);
        let jobs = JobIndex::new(&submissions, initial_names);
        for (index, expect) in raw.expect.iter().enumerate() {
            let path = root.key("expect").index(index);
            if let Some(expectation) = self.expectation(&path, expect, &jobs, &specs) {
                expectations.push(expectation);
            }
        }

        let workloads = self.workloads(&raw.workload, &specs);
        let drain = match raw.end {
            Some(EndValue::Drain) => true,
            Some(EndValue::At(_)) => false,
            None => !workloads.is_empty(),
        };
        let end = end(raw.end, &submissions, &specs);
        let seed = raw.seed.unwrap_or(0);
        let chaos = raw.chaos.as_ref().map(|chaos| {
            let known: Vec<ClusterName> =
                specs.iter().map(|spec| spec.config.name.clone()).collect();
            self.chaos(&root.key("chaos"), chaos, seed, &known)
        });
        Scenario {
            name: raw.name.unwrap_or_else(|| "unnamed scenario".to_owned()),
            description: raw.description.unwrap_or_default(),
            seed,
            chaos,
            end,
            drain,
            clusters: specs,
            submissions,
            workloads,
            expectations,
            warnings: Vec::new(),
        }
    }
}

/// When the run stops: `end` if given, else three of the longest update
/// intervals (or of [`QUIET_INTERVAL`] when no cluster sends counters)
/// after the last submission.
fn end(end: Option<EndValue>, submissions: &[Submission], specs: &[ClusterSpec]) -> SimTime {
    match end {
        Some(EndValue::At(end)) => SimTime::from(end),
        _ => {
            let last = submissions.last().map_or(SimTime::ZERO, |s| s.at);
            let longest = specs
                .iter()
                .filter_map(|spec| spec.config.update_interval)
                .max()
                .unwrap_or(QUIET_INTERVAL);
            last + longest * 3
        }
    }
}
