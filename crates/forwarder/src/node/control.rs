//! Job control of the jobs submitted to this cluster's send queues
//! ([`ForwarderNode::control`]): a job still here (waiting to be decided,
//! held, or given up on) is acted on here; a job at an execution cluster
//! is acted on there, through a [`JobControl`] message, as LSF does for a
//! command given at the submission cluster. `bmod -aps` on a job still
//! here sets the system or ADMIN value its APS send queue orders it by
//! (the value's bounds are the scheduler's to check: the member asks it
//! first); on a forwarded job it goes to the execution cluster, whose
//! queue's APS it then concerns.

use mcfed_protocol::{
    ApsChange, ClusterName, Envelope, JobAction, JobControl, JobEvent, Message, SimTime,
};

use super::{ForwarderNode, SourceState};

/// What [`ForwarderNode::control`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Controlled {
    /// Applied here: the job was still at the submission cluster.
    Here(JobEvent),
    /// The job is at `cluster`: the request was sent there (a killed job
    /// is gone from here at once).
    Sent {
        /// The execution cluster.
        cluster: ClusterName,
    },
}

impl ForwarderNode {
    /// Applies `action` to job `id` of a send queue at `now`: here while
    /// the job is here, else by a [`JobControl`] to the execution cluster
    /// that has it, appended to `out`. `Err` says why it was refused.
    pub fn control(
        &mut self,
        now: SimTime,
        id: u64,
        action: &JobAction,
        out: &mut Vec<Envelope>,
    ) -> Result<Controlled, String> {
        let job = self.jobs.get(&id).ok_or("no matching job found")?;
        let Some(to) = job.remote_queue() else {
            let event = self.control_here(id, action)?;
            // A journal keeps the job as it stands now.
            self.note_change(id);
            return Ok(Controlled::Here(event));
        };
        let cluster = self.view.cluster_of(to).clone();
        match action {
            JobAction::Kill => {
                let forward_seq = job.forward_seq;
                self.remember_killed(id, &cluster);
                self.forget_forward(&cluster, forward_seq);
                self.count_forwarded(id, true);
                self.forget_job(id);
            }
            JobAction::Modify(changes) => {
                if let Some(job) = self.jobs.get_mut(&id) {
                    changes.apply_to(&mut job.spec);
                    job.request.slots = job.spec.slots;
                }
                self.note_change(id);
            }
            _ => {}
        }
        tracing::debug!(cluster = %self.cluster, job = id, to = %cluster, %action, at = %now, "job control sent to the execution cluster");
        out.push(Envelope {
            from: self.cluster.clone(),
            to: cluster.clone(),
            message: Message::JobControl(JobControl {
                source_job: id,
                action: action.clone(),
            }),
        });
        Ok(Controlled::Sent { cluster })
    }

    /// `action` on job `id`, which is at the submission cluster.
    fn control_here(&mut self, id: u64, action: &JobAction) -> Result<JobEvent, String> {
        let state = self
            .jobs
            .get(&id)
            .map(|job| job.state)
            .ok_or("no matching job found")?;
        let waiting = state == SourceState::Waiting;
        let event = match (action, state) {
            (JobAction::Kill, _) => {
                self.unwait(id);
                self.forget_job(id);
                return Ok(JobEvent::Killed);
            }
            (JobAction::Stop, SourceState::Waiting | SourceState::GaveUp) => {
                self.unwait(id);
                self.set_state(id, SourceState::Held);
                JobEvent::Held
            }
            (JobAction::Resume, SourceState::Held) => {
                self.enqueue_waiting(id);
                JobEvent::Released
            }
            (JobAction::Switch(queue), _) => {
                let &index = self.send_queue_by_name.get(queue).ok_or_else(|| {
                    format!(
                        "`{queue}` is not a send queue of {}: a job of a send queue moves only to another send queue",
                        self.cluster
                    )
                })?;
                if self
                    .jobs
                    .get(&id)
                    .is_some_and(|job| job.send_queue == index)
                {
                    return Err(format!("the job is already in queue `{queue}`"));
                }
                // Its shape changes: decided again in its place.
                self.unpark(id);
                let job = self.jobs.get_mut(&id).ok_or("no matching job found")?;
                job.send_queue = index;
                job.last_pend = None;
                self.session_due |= waiting;
                JobEvent::Switched
            }
            (JobAction::Modify(changes), _) => {
                if changes.slots == Some(0) {
                    return Err("a job needs at least one slot".into());
                }
                let job = self.jobs.get(&id).ok_or("no matching job found")?;
                if changes.aps.is_some() && self.send_queues[job.send_queue].aps_group.is_none() {
                    return Err(format!(
                        "send queue `{}` is ordered by no APS_PRIORITY",
                        self.send_queues[job.send_queue].name
                    ));
                }
                // Its shape may change: decided again in its place.
                self.unpark(id);
                let job = self.jobs.get_mut(&id).ok_or("no matching job found")?;
                changes.apply_to(&mut job.spec);
                match changes.aps {
                    Some(ApsChange::Clear) => job.aps = None,
                    Some(set) => job.aps = Some(set),
                    None => {}
                }
                job.request.slots = job.spec.slots;
                job.last_pend = None;
                self.session_due |= waiting;
                JobEvent::Modified
            }
            (JobAction::Stop, _) => {
                return Err(format!(
                    "the job is {}: it has already been suspended",
                    state.as_str()
                ));
            }
            (JobAction::Resume, _) => {
                return Err(format!(
                    "the job is {}: it has not been suspended by bstop",
                    state.as_str()
                ));
            }
            (JobAction::Requeue, _) => {
                return Err(format!(
                    "the job is {}: brequeue takes running or suspended jobs",
                    state.as_str()
                ));
            }
            (JobAction::Migrate, _) => {
                return Err(format!(
                    "the job is {}: bmig takes running or suspended jobs",
                    state.as_str()
                ));
            }
            (JobAction::Release(_), _) => {
                return Err(format!(
                    "the job is {}: bresize release takes running jobs",
                    state.as_str()
                ));
            }
        };
        Ok(event)
    }

    /// Takes job `id` off the list of jobs waiting to be decided.
    fn unwait(&mut self, id: u64) {
        self.leave_waiting(id);
    }

    /// The job of a send queue named `name` (the lowest id of those so
    /// named), if one is still known here.
    pub fn job_named(&self, name: &str) -> Option<u64> {
        self.jobs
            .values()
            .filter(|job| *job.spec.name == *name)
            .map(|job| job.id)
            .min()
    }
}
