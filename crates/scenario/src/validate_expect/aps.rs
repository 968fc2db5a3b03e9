//! Validating the `[[expect]]` kinds of absolute priority scheduling: a
//! job's APS value (and kind, and JPRIORITY) at a time, and a queue's
//! dispatch order at a time.

use mcfed_protocol::SimTime;

use super::{DEFAULT_PRIORITY_TOLERANCE, JobIndex};
use crate::format::RawExpect;
use crate::locate::FieldPath;
use crate::model::{ClusterSpec, ExpectKind};
use crate::validate::Checker;

/// The kinds of APS value `aps_kind` takes.
const APS_KINDS: [&str; 3] = ["system", "calculated", "none"];

impl Checker<'_> {
    /// A job's APS value at a time.
    pub(super) fn aps_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a job's APS value";
        self.only_keys(
            path,
            raw,
            &[
                "job",
                "at",
                "cluster",
                "aps",
                "aps_kind",
                "jpriority",
                "tolerance",
            ],
            KIND,
        );
        let at = self
            .required(path, &raw.at, "at", KIND)
            .map(|at| SimTime::from(at.0));
        let job = self.required(path, &raw.job, "job", KIND).cloned();
        if let Some(kind) = &raw.aps_kind {
            if !APS_KINDS.contains(&kind.as_str()) {
                self.problem(
                    path.key("aps_kind"),
                    format!("aps_kind is one of {}, not `{kind}`", APS_KINDS.join(", ")),
                );
                return None;
            }
        }
        let tolerance = raw.tolerance.unwrap_or(DEFAULT_PRIORITY_TOLERANCE);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            self.problem(path.key("tolerance"), "tolerance must be at least 0");
            return None;
        }
        let (at, job) = (at?, job?);
        let cluster = self.job_cluster(path, raw, &job, jobs, specs)?;
        Some(ExpectKind::JobAps {
            cluster,
            job,
            at,
            value: raw.aps,
            kind: raw.aps_kind.clone(),
            jpriority: raw.jpriority,
            tolerance,
        })
    }

    /// A queue's dispatch order at a time: an APS queue (or a queue of an
    /// APS group), or a first-come, first-served one.
    pub(super) fn order_expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        specs: &[ClusterSpec],
    ) -> Option<ExpectKind> {
        const KIND: &str = "a queue's dispatch order";
        self.only_keys(
            path,
            raw,
            &["at", "cluster", "queue", "dispatch_order"],
            KIND,
        );
        let (cluster, queue, at) = self.queue_at(path, raw, specs, KIND)?;
        let config = specs
            .iter()
            .find(|spec| spec.config.name == cluster)
            .and_then(|spec| spec.config.queues.iter().find(|q| q.name == queue))?;
        let in_group = specs
            .iter()
            .filter(|spec| spec.config.name == cluster)
            .flat_map(|spec| spec.config.queues.iter())
            .any(|other| other.queue_group.contains(&queue));
        if config.fairshare.is_some() && config.aps_priority.is_none() && !in_group {
            self.problem(
                path.key("dispatch_order"),
                format!(
                    "queue `{queue}` is a fairshare queue without APS: it picks its jobs by user priority as it goes, so it has no order to check"
                ),
            );
            return None;
        }
        Some(ExpectKind::DispatchOrder {
            cluster,
            queue,
            at,
            jobs: raw.dispatch_order.clone().unwrap_or_default(),
        })
    }
}
