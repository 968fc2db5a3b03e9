//! Checking a job's state (and why it pends) at a time, in the snapshot of
//! its cluster taken then: a watched job that is not there is done, or not
//! submitted yet.

use mcfed_protocol::ClusterName;
use mcfed_scenario::expect::JobStateAt;

use super::{Check, Found, Run, reason_note};
use crate::probe::Watched;

impl Check for JobStateAt {
    fn check(&self, run: Run<'_>) -> Found {
        let JobStateAt {
            cluster,
            job,
            at,
            state,
            reason_contains,
        } = self;
        let note = reason_note(reason_contains.as_deref());
        let expected = format!("at {at} job {job} is {}{note}", state.as_str());
        let Some(snapshot) = run.cluster_at(*at, cluster.as_str()) else {
            return run.no_snapshot(expected, "no snapshot was taken");
        };
        let found = snapshot.jobs.iter().find(|found| &found.name == job);
        let (actual_state, reason) = match found {
            Some(found) => (found.state.clone(), found.reason.clone()),
            None => {
                let submitted = run
                    .scenario
                    .submissions
                    .iter()
                    .find(|submission| *submission.spec.name == **job)
                    .is_none_or(|submission| submission.at <= *at);
                let state = if submitted { "DONE" } else { "not submitted" };
                (state.to_owned(), None)
            }
        };
        let reason_held = reason_contains.as_ref().is_none_or(|needle| {
            reason
                .as_deref()
                .is_some_and(|reason| reason.contains(needle.as_str()))
        });
        let actual = match &reason {
            Some(reason) => format!("{actual_state} ({reason})"),
            None => actual_state.clone(),
        };
        Found {
            expected,
            held: actual_state == state.as_str() && reason_held,
            actual,
            skipped: None,
        }
    }

    fn watch(&self, cluster: &ClusterName, watched: &mut Watched) {
        if self.cluster == *cluster {
            watched.jobs.push(self.job.clone());
        }
    }
}
