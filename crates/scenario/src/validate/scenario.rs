//! The whole pass over a scenario: the order in which its parts are checked
//! (problems are reported in that order) and the [`Scenario`] they make.

use mcfed_protocol::{ClusterName, SimTime};

use super::QUIET_INTERVAL;
use crate::check::Checker;
use crate::check::job_index::{JobIndex, WorkloadJobs};
use crate::format::{EndValue, RawScenario};
use crate::locate::FieldPath;
use crate::model::{Action, ClusterSpec, Submission};
use crate::scenario::Scenario;
use mcfed_trace::workload::WorkloadSpec;

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
        self.explain_send_receive(&drafts);
        self.check_addresses(&drafts);
        self.check_clusters(&drafts);
        let mut specs = super::clusters::specs(&drafts);

        self.added_reservations = raw
            .action
            .iter()
            .filter(|action| action.command.as_deref() == Some("brsvadd"))
            .filter_map(|action| {
                Some((
                    action.cluster.clone()?,
                    action.reservation.clone()?,
                    action.users.as_ref()?.0.clone(),
                ))
            })
            .collect();
        let mut job_counter = 0usize;
        let (mut expectations, initial_names) =
            self.initial_jobs(&raw.cluster, &names, &mut specs, &mut job_counter);
        let submissions = self.submissions(&raw.submit, &specs, &mut job_counter);
        let workloads = self.workloads(&raw.workload, &specs);
        let jobs = JobIndex::new(
            &submissions,
            initial_names,
            workload_jobs(&workloads, &specs),
        );
        let actions = self.actions(&raw.action, &specs, &jobs);
        for (index, expect) in raw.expect.iter().enumerate() {
            let path = root.key("expect").index(index);
            if let Some(expectation) = self.expectation(&path, expect, &jobs, &specs) {
                expectations.push(expectation);
            }
        }

        let drain = match raw.end {
            Some(EndValue::Drain) => true,
            Some(EndValue::At(_)) => false,
            None => !workloads.is_empty(),
        };
        self.check_end(raw.end, &submissions, &actions);
        let last_look = actions
            .iter()
            .map(|action| action.at)
            .chain(expectations.iter().filter_map(|e| e.kind.at()))
            .max();
        let end = end(raw.end, &submissions, last_look, &specs);
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
            actions,
            expectations,
            warnings: Vec::new(),
            footprint: Default::default(),
        }
    }
}

/// The jobs each workload makes, for expectations that name them.
fn workload_jobs(workloads: &[WorkloadSpec], specs: &[ClusterSpec]) -> Vec<WorkloadJobs> {
    workloads
        .iter()
        .map(|workload| WorkloadJobs {
            name: workload.name.clone(),
            cluster: workload.cluster.clone(),
            queue: workload.queue.clone(),
            forwarded: specs
                .iter()
                .find(|spec| spec.config.name == workload.cluster)
                .is_some_and(|spec| {
                    spec.member_spec().route(&workload.queue) == mcfed_federation::Route::Forward
                }),
            mapped: !workload.queue_map.is_empty() || !workload.partition_map.is_empty(),
        })
        .collect()
}

impl Checker<'_> {
    /// An `end` before the first submission runs nothing of what is
    /// submitted: refused. Submissions and actions after `end` never
    /// happen: a warning says how many.
    fn check_end(&mut self, end: Option<EndValue>, submissions: &[Submission], actions: &[Action]) {
        let Some(EndValue::At(end)) = end else {
            return;
        };
        let end = SimTime::from(end);
        let field = FieldPath::root().key("end");
        if let Some(first) = submissions.first().filter(|first| first.at > end) {
            self.problem(
                field,
                format!(
                    "the run ends at {end}, before the first submission ({} at {}): nothing submitted would run",
                    first.spec.name, first.at
                ),
            );
            return;
        }
        let late = submissions.iter().filter(|s| s.at > end).count();
        let late_actions = actions.iter().filter(|a| a.at > end).count();
        if late + late_actions > 0 {
            self.warning(
                field,
                format!(
                    "the run ends at {end}: {late} submission(s) and {late_actions} action(s) come after it and never happen"
                ),
            );
        }
    }
}

/// When the run stops: `end` if given, else three of the longest update
/// intervals (or of [`QUIET_INTERVAL`] when no cluster sends counters)
/// after the last submission, action or time an expectation looks at
/// (`last_look`).
fn end(
    end: Option<EndValue>,
    submissions: &[Submission],
    last_look: Option<SimTime>,
    specs: &[ClusterSpec],
) -> SimTime {
    match end {
        Some(EndValue::At(end)) => SimTime::from(end),
        _ => {
            let last = submissions
                .last()
                .map(|s| s.at)
                .max(last_look)
                .unwrap_or(SimTime::ZERO);
            let longest = specs
                .iter()
                .filter_map(|spec| spec.config.update_interval)
                .max()
                .unwrap_or(QUIET_INTERVAL);
            last + longest * 3
        }
    }
}
