//! Absolute priority scheduling at the submission side (issue 11, item 8):
//! the APS value of a job waiting in a send queue with APS_PRIORITY (or in
//! a send queue of its QUEUE_GROUP), the JPRIORITY a job carries when it is
//! forwarded, and which `bmod -aps` values a queue takes. The forwarder
//! holds the waiting jobs; this cluster holds the send queues' settings
//! (APS_PRIORITY, PRIORITY, FAIRSHARE, MAX_USER_PRIORITY,
//! JOB_PRIORITY_OVER_TIME), so the value comes from here, through the same
//! figures (`order::inputs_of`) and formula as a pending job's.

use std::time::Duration;

use mcfed_protocol::{ApsChange, JobSpec};

use super::ApsTerm;
use super::config::APS_MAX;
use super::formula::aps_value;
use super::order::{ApsEntry, shown_of};
use crate::job::{ApsSet, JobId, QueueIndex};
use crate::scheduler::{Cluster, ControlError};

/// A job waiting in a send queue, as APS reads it.
#[derive(Clone, Copy, Debug)]
pub struct WaitingJob<'a> {
    /// Its id (this cluster numbers the jobs of its send queues too).
    pub id: u64,
    /// What it asks for.
    pub spec: &'a JobSpec,
    /// How long it has pended at the submission cluster.
    pub pended: Duration,
    /// Its user's dynamic priority in the send queue
    /// ([`Cluster::forwarding_priority`], the user's forwarded slots
    /// counted), read only where APS_PRIORITY weighs FS; `None`: the user
    /// has no shares there, or the queue has no FAIRSHARE.
    pub fs: Option<f64>,
    /// The system or ADMIN value `bmod -aps` gave it.
    pub set: Option<ApsSet>,
}

impl Cluster {
    /// The APS value of `job`, waiting in send queue `queue`, with the
    /// formula's parts, as `bjobs -aps` would show it: `None` when the
    /// queue is no send queue of an APS group. A system value is shown as
    /// such (it goes ahead of every calculated value); PROC is the job's
    /// most slots, QPRIORITY its own send queue's PRIORITY.
    pub fn send_queue_aps(&self, queue: &str, job: &WaitingJob<'_>) -> Option<ApsEntry> {
        let index = self.queue_index(queue)?;
        if self.queues[index].config.send_to.is_empty() {
            return None;
        }
        let group = self.aps_group_of(index)?;
        let inputs = self.inputs_of(
            job.spec,
            index,
            group,
            (job.pended, job.spec.max_slots()),
            job.fs,
            job.set,
        );
        let breakdown = aps_value(&group.aps, &inputs);
        let (_, shown) = shown_of(job.set, breakdown.value);
        Some(ApsEntry {
            job: JobId(job.id),
            queue: index,
            shown,
            breakdown: Some(breakdown),
            jpriority: breakdown.figures[ApsTerm::JPriority.index()] as u32,
            migrated: false,
            resize: false,
        })
    }

    /// The JPRIORITY a job with `spec` has here after pending `pended`
    /// (its `-sp`, or MAX_USER_PRIORITY/2, escalated by
    /// JOB_PRIORITY_OVER_TIME): what it carries when forwarded, so that it
    /// keeps it at its execution cluster. `None` without
    /// MAX_USER_PRIORITY: jobs have no priority here, and the execution
    /// cluster gives the job its own default.
    pub fn forwarded_job_priority(&self, spec: &JobSpec, pended: Duration) -> Option<u32> {
        self.policy.max_user_priority?;
        Some(self.escalated(self.base_job_priority(spec), pended))
    }

    /// Whether `bmod -aps` (`change`) may be given to a pending job of the
    /// queue named `queue` (a send queue's job waiting at this cluster
    /// included): the queue is ordered by APS, and a value is non-zero and
    /// within APS_PRIORITY's maximum.
    pub fn check_queue_aps_change(
        &self,
        queue: &str,
        change: ApsChange,
    ) -> Result<(), ControlError> {
        let index = self
            .queue_index(queue)
            .ok_or_else(|| ControlError::BadQueue(format!("no queue named `{queue}`")))?;
        self.check_aps_change_in(index, change)
    }

    /// [`Cluster::check_queue_aps_change`] for queue `queue`.
    pub(crate) fn check_aps_change_in(
        &self,
        queue: QueueIndex,
        change: ApsChange,
    ) -> Result<(), ControlError> {
        if self.aps_group_of(queue).is_none() {
            return Err(ControlError::BadChange(format!(
                "queue `{}` has no APS_PRIORITY: bmod -aps applies to jobs of absolute priority scheduling queues",
                self.queues[queue].config.name
            )));
        }
        if let ApsChange::System(value) | ApsChange::Admin(value) = change {
            if value.0 == 0.0 {
                return Err(ControlError::BadChange(
                    "a bmod -aps value cannot be zero (bmod -apsn removes one)".into(),
                ));
            }
            if value.0.abs() > APS_MAX {
                return Err(ControlError::BadChange(format!(
                    "a bmod -aps value is at most 1000000 (APS_PRIORITY's maximum), not {}",
                    value.0
                )));
            }
        }
        Ok(())
    }
}
