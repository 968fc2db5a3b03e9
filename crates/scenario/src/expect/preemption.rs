//! Whether a job is preempted (`preempted`, `true` unless given), and by
//! which job (`preempted_by`), in `cluster` when the job may run elsewhere
//! than where it was submitted.

use mcfed_protocol::ClusterName;

use super::{Entry, Kind};
use crate::format::RawExpect;

/// A job of `cluster` was (or was never) preempted, by `by` if given.
#[derive(Clone, Debug, PartialEq)]
pub struct Preemption {
    /// The cluster it runs in.
    pub cluster: ClusterName,
    /// The job's name.
    pub job: String,
    /// Whether it was preempted.
    pub preempted: bool,
    /// The job that preempted it.
    pub by: Option<String>,
}

impl Kind for Preemption {
    const NAME: &'static str = "a preemption";
    const KEYS: &'static [&'static str] = &["job", "preempted", "preempted_by", "cluster"];

    fn claims(raw: &RawExpect) -> bool {
        raw.preempted.is_some() || raw.preempted_by.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let job = entry.required(&raw.job, "job")?.clone();
        let cluster = entry.job_cluster(&job)?;
        if let Some(by) = &raw.preempted_by {
            if raw.preempted == Some(false) {
                entry.problem(
                    "preempted_by",
                    "`preempted_by` with `preempted = false` can never hold",
                );
                return None;
            }
            if let Err(message) = entry.jobs.find(by) {
                entry.problem("preempted_by", message);
                return None;
            }
        }
        Some(Preemption {
            cluster,
            job,
            preempted: raw.preempted.unwrap_or(true),
            by: raw.preempted_by.clone(),
        })
    }
}
