//! A job's state at a time: `job`, `at`, `state` (`PEND`, `RUN`, `SSUSP`,
//! `USUSP`, `PSUSP`, `DONE`, `EXIT`, or `pending`, `running`, `suspended`,
//! `done`), in `cluster` when the job may run elsewhere than where it was
//! submitted; a pending job's reason contains `reason_contains`, if given.

use mcfed_cluster::JobState;
use mcfed_protocol::{ClusterName, SimTime};

use super::{Entry, Kind};
use crate::check::job_index::JobRef;
use crate::format::RawExpect;

/// At `at`, a job of `cluster` is in `state`.
#[derive(Clone, Debug, PartialEq)]
pub struct JobStateAt {
    /// The cluster it runs in.
    pub cluster: ClusterName,
    /// The job's name.
    pub job: String,
    /// When.
    pub at: SimTime,
    /// The expected state.
    pub state: JobState,
    /// If set, the job's reason (why it pends) must contain this.
    pub reason_contains: Option<String>,
}

impl Kind for JobStateAt {
    const NAME: &'static str = "a job's state";
    const KEYS: &'static [&'static str] = &["job", "at", "state", "cluster", "reason_contains"];

    fn claims(raw: &RawExpect) -> bool {
        raw.state.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let state = raw.state.as_deref()?;
        let job = entry.required(&raw.job, "job")?.clone();
        let at = entry.required_at()?;
        let Some(state) = parse_state(state) else {
            entry.problem(
                "state",
                format!(
                    "state must be PEND, RUN, SSUSP, USUSP, PSUSP, DONE or EXIT, not `{state}`"
                ),
            );
            return None;
        };
        if state == JobState::Done && matches!(entry.jobs.find(&job), Ok(JobRef::Workload(_))) {
            entry.problem(
                "state",
                format!("job `{job}` is a workload's: a finished job and one not yet read from its trace look alike, so DONE cannot be checked (expect PEND, RUN or SSUSP, or a metric such as `finished`)"),
            );
            return None;
        }
        let cluster = entry.job_cluster(&job)?;
        Some(JobStateAt {
            cluster,
            job,
            at,
            state,
            reason_contains: raw.reason_contains.clone(),
        })
    }
}

fn parse_state(text: &str) -> Option<JobState> {
    match text {
        "pending" => Some(JobState::Pending),
        "running" => Some(JobState::Running),
        "suspended" => Some(JobState::Suspended),
        "done" => Some(JobState::Done),
        other => JobState::from_lsf(other),
    }
}
