//! The forwarding decisions of a job submitted to a send queue: its first
//! forward goes to `forwarded_to`, or its first decision leaves it pending
//! (`pends = true`), or its last one does (`ends_pending = true`); the
//! decision's reason contains `reason_contains`, if given.

use mcfed_protocol::{ClusterName, QueueRef};

use super::{Entry, Kind};
use crate::check::job_index::JobRef;
use crate::format::RawExpect;

/// A job's forwarding decision is the one expected.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The job's name.
    pub job: String,
    /// Which decision, and what it does.
    pub outcome: DecisionOutcome,
    /// If set, the decision's reason must contain this.
    pub reason_contains: Option<String>,
}

/// Which of a job's decisions is expected, and what it does.
#[derive(Clone, Debug, PartialEq)]
pub enum DecisionOutcome {
    /// The job's first forward goes to this `queue@cluster`.
    ForwardedTo(QueueRef),
    /// The job's first decision leaves it pending at its submission
    /// cluster.
    Pends,
    /// The job's last decision leaves it pending at its submission cluster.
    EndsPending,
}

impl Kind for Decision {
    const NAME: &'static str = "a forwarding decision";
    const KEYS: &'static [&'static str] = &[
        "job",
        "forwarded_to",
        "pends",
        "ends_pending",
        "reason_contains",
    ];

    fn claims(raw: &RawExpect) -> bool {
        raw.forwarded_to.is_some() || raw.pends.is_some() || raw.ends_pending.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let job = entry.required(&raw.job, "job")?;
        let (cluster, queue, forwarded) = match entry.jobs.find(job) {
            Ok(JobRef::Submitted(submission)) => (
                submission.cluster.clone(),
                submission.queue.to_string(),
                submission.forwarded,
            ),
            Ok(JobRef::Workload(workload)) => (
                workload.cluster.clone(),
                workload.queue.clone(),
                workload.forwarded,
            ),
            Ok(JobRef::Initial(_)) => {
                entry.problem("job", format!("no [[submit]] makes a job named `{job}`"));
                return None;
            }
            Err(message) => {
                entry.problem("job", message);
                return None;
            }
        };
        if !forwarded {
            entry.problem(
                "job",
                format!("job `{job}` goes to local queue `{queue}`, which forwards nothing"),
            );
            return None;
        }
        let outcome = match (&raw.forwarded_to, raw.pends, raw.ends_pending) {
            (None, None, Some(true)) => DecisionOutcome::EndsPending,
            (Some(target), None | Some(false), None) => {
                DecisionOutcome::ForwardedTo(forward_target(entry, target, &cluster, &queue)?)
            }
            (None, Some(true), None) => DecisionOutcome::Pends,
            _ => {
                entry.problem_here("an [[expect]] on a job needs exactly one of `forwarded_to = \"queue@cluster\"`, `pends = true` or `ends_pending = true`");
                return None;
            }
        };
        Some(Decision {
            job: job.clone(),
            outcome,
            reason_contains: raw.reason_contains.clone(),
        })
    }
}

/// `forwarded_to`, a queue that `queue@cluster` sends jobs to.
fn forward_target(
    entry: &mut Entry<'_, '_>,
    target: &str,
    cluster: &ClusterName,
    queue: &str,
) -> Option<QueueRef> {
    let target: QueueRef = match target.parse() {
        Ok(target) => target,
        Err(error) => {
            entry.problem("forwarded_to", error.to_string());
            return None;
        }
    };
    let listed = entry
        .specs
        .iter()
        .filter_map(|spec| spec.forwarder.as_ref())
        .filter(|forwarder| forwarder.cluster == *cluster)
        .flat_map(|forwarder| forwarder.send_queues.iter())
        .filter(|send| send.name == *queue)
        .any(|send| send.send_to.contains(&target));
    if !listed {
        entry.problem("forwarded_to", format!("{target} is not in the SNDJOBS_TO of `{queue}@{cluster}`, so the job can never go there"));
        return None;
    }
    Some(target)
}
