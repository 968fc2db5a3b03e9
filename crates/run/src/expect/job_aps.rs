//! Checking a job's APS value, its kind and its JPRIORITY at a time, in
//! the snapshot of its cluster taken then.

use mcfed_protocol::ClusterName;
use mcfed_scenario::expect::JobAps;

use super::{Check, Found, Run};
use crate::probe::Watched;

impl Check for JobAps {
    fn check(&self, run: Run<'_>) -> Found {
        let JobAps {
            cluster,
            job,
            at,
            value,
            kind,
            jpriority,
            tolerance,
        } = self;
        let mut wanted = Vec::new();
        if let Some(value) = value {
            wanted.push(format!("APS {value} (±{tolerance})"));
        }
        if let Some(kind) = kind {
            wanted.push(format!("a {kind} value"));
        }
        if let Some(jpriority) = jpriority {
            wanted.push(format!("JPRIORITY {jpriority}"));
        }
        let expected = format!("at {at} job {job} has {}", wanted.join(", "));
        let Some(snapshot) = run.cluster_at(*at, cluster.as_str()) else {
            return run.no_snapshot(expected, "no snapshot was taken");
        };
        let Some(found) = snapshot.jobs.iter().find(|found| found.name == *job) else {
            return Found::failed(expected, "the job is not in the cluster");
        };
        let Some(aps) = &found.aps else {
            let actual = format!("the job is {}, with no APS value", found.state);
            return Found::failed(expected, actual);
        };
        let held = value.is_none_or(|value| {
            aps.value
                .is_some_and(|actual| (actual - value).abs() <= *tolerance)
        }) && kind.as_ref().is_none_or(|kind| aps.kind == *kind)
            && jpriority.is_none_or(|jpriority| aps.jpriority == jpriority);
        Found {
            expected,
            held,
            actual: format!(
                "APS {} ({}), JPRIORITY {}",
                aps.shown, aps.kind, aps.jpriority
            ),
            skipped: None,
        }
    }

    fn watch(&self, cluster: &ClusterName, watched: &mut Watched) {
        if self.cluster == *cluster {
            watched.jobs.push(self.job.clone());
        }
    }
}
