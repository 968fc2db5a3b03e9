//! Job control (`bkill`, `bstop`, `bresume`, `brequeue`, `bswitch`,
//! `bmod`, `bmig`, `bresize`): done at the cluster, or sent to the job's
//! execution cluster.

use mcfed_federation::{ControlOutcome, Effects, JobRef, Member};
use mcfed_protocol::{JobAction, SimTime};
use serde::{Deserialize, Serialize};

use crate::AdminResponse;

/// What a job control command did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Controlled {
    /// The job's id.
    pub job_id: u64,
    /// The execution cluster the command was sent to, if it went there.
    pub sent_to: Option<String>,
    /// What the command prints (`Job <1> is being terminated`).
    pub message: String,
}

/// Gives `action` for `job` at `member`: done there, or sent to the job's
/// execution cluster.
pub fn apply(
    member: &mut Member,
    now: SimTime,
    job: &JobRef,
    action: &JobAction,
    effects: &mut Effects,
) -> AdminResponse {
    match member.control(now, job, action, effects) {
        Ok(outcome) => AdminResponse::Controlled(Controlled {
            job_id: outcome.job(),
            sent_to: match &outcome {
                ControlOutcome::Sent { cluster, .. } => Some(cluster.to_string()),
                ControlOutcome::Done { .. } => None,
            },
            message: outcome.message(action),
        }),
        Err(refused) => AdminResponse::Error(refused.to_string()),
    }
}
