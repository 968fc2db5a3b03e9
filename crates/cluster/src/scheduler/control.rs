//! Job control, as an administrator's commands ask it: `bkill`, `bstop`,
//! `bresume`, `brequeue`, `bswitch` and `bmod` ([`JobAction`]), applied by
//! [`Cluster::control`] at a given time. Each one checks the job's state as
//! LSF does, changes the job and its hold on slots (through
//! `Cluster::account`), reports a [`Transition`] and makes a dispatch pass
//! due.
//!
//! One implementation serves every driver: scenario actions in the
//! in-process engines, live processes' admin requests, and control
//! messages from a submission cluster about a job it forwarded here.
//! `brequeue` is the one place a job re-enters its queue as a new
//! submission ([`Job::queued_at`]): what depends on a job's time in the
//! queue (absolute priority scheduling's grace periods, for one) restarts
//! from there.

use mcfed_protocol::{ApsChange, JobAction, JobChanges, JobEvent, SimTime};

use crate::job::{
    ARRIVAL_MASK, ApsSet, JobAps, JobId, JobOrigin, JobState, PendingReason, order_key,
};

use super::accounting::Holding;
use super::lifecycle::reset_priority;
use super::{Cluster, Leaving, Transition};

/// Why a job control command was refused, in LSF's words where LSF has
/// them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// No such job (or it has finished).
    #[error("no matching job found")]
    NoSuchJob,
    /// The job's state does not allow it.
    #[error("the job is {state}: {why}")]
    WrongState {
        /// The job's state (`PEND`, `RUN`, ...).
        state: &'static str,
        /// What the command needs.
        why: &'static str,
    },
    /// `bswitch` to a queue that does not exist or cannot take the job.
    #[error("{0}")]
    BadQueue(String),
    /// `bmod` asked for something the job cannot have.
    #[error("{0}")]
    BadChange(String),
}

impl Cluster {
    /// Applies `action` to job `id` at `now` and appends what happened to
    /// `transitions`; a dispatch pass is due after it.
    pub fn control(
        &mut self,
        now: SimTime,
        id: JobId,
        action: &JobAction,
        transitions: &mut Vec<Transition>,
    ) -> Result<(), ControlError> {
        self.cycle.now = self.cycle.now.max(now);
        let state = self.jobs.get(id).ok_or(ControlError::NoSuchJob)?.state;
        if state == JobState::ChunkWaiting && *action != JobAction::Kill {
            return Err(ControlError::WrongState {
                state: state.as_str(),
                why: "it waits in a chunk (CHUNK_JOB_SIZE) to run after the job ahead of it; only bkill applies",
            });
        }
        let event = match action {
            JobAction::Kill => {
                self.kill(id, now, JobEvent::Killed, transitions);
                return Ok(());
            }
            JobAction::Release(release) => {
                return self.release_slots(id, release, now, transitions);
            }
            JobAction::Stop => self.stop(id, state, now)?,
            JobAction::Resume => self.resume_stopped(id, state, now)?,
            JobAction::Requeue => self.requeue(id, state, now)?,
            JobAction::Switch(queue) => self.switch(id, state, queue.as_str())?,
            JobAction::Modify(changes) => self.modify(id, state, changes)?,
            JobAction::Migrate => self.migrate(id, state, now)?,
        };
        self.cycle.dirty = true;
        if let Some(job) = self.jobs.get(id) {
            transitions.push(Transition::of(job, event, now, None, &self.queues));
        }
        if matches!(event, JobEvent::Requeued | JobEvent::Migrated) {
            self.break_chunk(id, now, transitions);
        }
        Ok(())
    }

    /// `bkill`: the job leaves with status EXIT, whatever its state; its
    /// use counts in fairshare up to `now`. A chunk's running job — or one
    /// stopped by `bstop`, which keeps its slot — is followed on its slot by
    /// the next job of the chunk; one suspended by preemption, whose slot
    /// its preemptor holds, leaves its chunk's waiting jobs to pend again.
    /// `event` says why: `Killed` for bkill, `ReservationEnded` when its
    /// closed advance reservation ends.
    pub(crate) fn kill(
        &mut self,
        id: JobId,
        now: SimTime,
        event: JobEvent,
        transitions: &mut Vec<Transition>,
    ) {
        let (placement, breaks_chunk) = match self.jobs.get(id) {
            Some(job) if !self.chunks.is_empty() => match job.state {
                JobState::Running | JobState::UserSuspended => (job.placement.clone(), false),
                JobState::Suspended => (Vec::new(), true),
                _ => (Vec::new(), false),
            },
            _ => (Vec::new(), false),
        };
        self.release(id, now);
        let queues = &self.queues;
        let ended = self.jobs.end(id, Leaving::Exited, |job| {
            Transition::ended(job, event, now, queues)
        });
        transitions.extend(ended);
        self.cycle.dirty = true;
        if !placement.is_empty() {
            self.chunk_runner_gone(id, placement, now, transitions);
        } else if breaks_chunk {
            self.break_chunk(id, now, transitions);
        }
    }

    /// `bstop`: a running job is stopped (USUSP, keeping its slots), a
    /// pending one held (PSUSP). One suspended by preemption (SSUSP) is
    /// stopped too, as LSF does: USUSP, it no longer resumes on its own
    /// when its preemptor ends, but waits for `bresume`.
    fn stop(&mut self, id: JobId, state: JobState, now: SimTime) -> Result<JobEvent, ControlError> {
        match state {
            JobState::Suspended => {
                self.account(id, Holding::Suspended, Holding::StoppedSuspended, now);
                if let Some(job) = self.jobs.get_mut(id) {
                    job.state = JobState::UserSuspended;
                    job.stopped_while_suspended = true;
                }
                Ok(JobEvent::Stopped)
            }
            JobState::Running => {
                self.account(id, Holding::Running, Holding::Stopped, now);
                if let Some(job) = self.jobs.get_mut(id) {
                    job.remaining = job
                        .remaining
                        .saturating_sub(now.saturating_since(job.running_since));
                    job.state = JobState::UserSuspended;
                    job.run_epoch += 1;
                }
                Ok(JobEvent::Stopped)
            }
            JobState::Pending => {
                self.remove_pending(id);
                self.drop_reservation_of(id);
                if let Some(job) = self.jobs.get_mut(id) {
                    job.state = JobState::PendingSuspended;
                }
                Ok(JobEvent::Held)
            }
            _ => Err(ControlError::WrongState {
                state: state.as_str(),
                why: "the job has already been suspended",
            }),
        }
    }

    /// `bresume`: a USUSP job runs again on its slots, a PSUSP job pends
    /// again in its place. As in LSF, the resumed job passes through SSUSP:
    /// if it does not fit back on its slots — its preemptor still runs
    /// there (it was suspended by preemption when it was stopped), or an
    /// advance reservation holds them (it was stopped before the
    /// reservation's start, or would now run into it) — it stays
    /// suspended (SSUSP) and the scheduler resumes it once it fits.
    fn resume_stopped(
        &mut self,
        id: JobId,
        state: JobState,
        now: SimTime,
    ) -> Result<JobEvent, ControlError> {
        match state {
            JobState::UserSuspended => {
                let from = match self.jobs.get(id) {
                    Some(job) if job.stopped_while_suspended => Holding::StoppedSuspended,
                    Some(_) => Holding::Stopped,
                    None => return Err(ControlError::NoSuchJob),
                };
                self.account(id, from, Holding::Suspended, now);
                if let Some(job) = self.jobs.get_mut(id) {
                    job.state = JobState::Suspended;
                    job.stopped_while_suspended = false;
                }
                if self.can_resume(id) {
                    return self.run_again(id, Holding::Suspended, now);
                }
                Ok(JobEvent::Suspended)
            }
            JobState::PendingSuspended => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.state = JobState::Pending;
                    job.pending_reason = PendingReason::NewJob;
                    job.reason_pass = 0;
                }
                self.add_pending(id);
                Ok(JobEvent::Released)
            }
            _ => Err(ControlError::WrongState {
                state: state.as_str(),
                why: "the job has not been suspended by bstop",
            }),
        }
    }

    /// Stopped or suspended job `id` (holding `from`) runs again on its
    /// slots at `now`.
    fn run_again(
        &mut self,
        id: JobId,
        from: Holding,
        now: SimTime,
    ) -> Result<JobEvent, ControlError> {
        // The job's new run starts now: the books (its place among
        // victims, its fairshare account) read that.
        let Some(job) = self.jobs.get_mut(id) else {
            return Err(ControlError::NoSuchJob);
        };
        job.state = JobState::Running;
        job.running_since = now;
        let (queue, finish) = (job.queue, (now + job.time_to_end(), job.run_epoch));
        self.account(id, from, Holding::Running, now);
        if !self.queues[queue].preemptors.is_empty() {
            self.cycle.pass_again = true;
        }
        self.jobs.schedule_finish(finish.0, id, finish.1);
        Ok(JobEvent::Resumed)
    }

    /// `brequeue`: a running or suspended job is killed and pends again
    /// from the start, with its id, behind the jobs already pending (a new
    /// submission as far as its queue's order goes).
    fn requeue(
        &mut self,
        id: JobId,
        state: JobState,
        now: SimTime,
    ) -> Result<JobEvent, ControlError> {
        let Some(holding) = self.jobs.get(id).and_then(Holding::of) else {
            return Err(ControlError::WrongState {
                state: state.as_str(),
                why: "brequeue takes running or suspended jobs",
            });
        };
        self.account(id, holding, Holding::Nothing, now);
        self.drop_reservation_of(id);
        let priority = self
            .jobs
            .get(id)
            .map(|job| self.effective_priority(&job.spec))
            .unwrap_or_default();
        let arrival = self.jobs.next_order(priority);
        if let Some(job) = self.jobs.get_mut(id) {
            job.unplace();
            job.arrival = arrival;
            job.queued_at = now;
            reset_priority(job);
        }
        self.add_pending(id);
        Ok(JobEvent::Requeued)
    }

    /// `bmig`: a running or suspended job of a RERUNNABLE queue is killed
    /// on its hosts and pends again to run from the start, keeping its
    /// priority — JPRIORITY, system and ADMIN values, its pending time
    /// (seed 001, "Job migration") — and goes before the pending jobs of
    /// its queue. With LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND it goes to
    /// the bottom instead, and in an APS queue competes by APS value.
    fn migrate(
        &mut self,
        id: JobId,
        state: JobState,
        now: SimTime,
    ) -> Result<JobEvent, ControlError> {
        let Some(holding) = self.jobs.get(id).and_then(Holding::of) else {
            return Err(ControlError::WrongState {
                state: state.as_str(),
                why: "bmig takes running or suspended jobs",
            });
        };
        let Some(job) = self.jobs.get(id) else {
            return Err(ControlError::NoSuchJob);
        };
        if !self.queues[job.queue].config.rerunnable {
            return Err(ControlError::BadChange(format!(
                "queue `{}` is not RERUNNABLE: only rerunnable jobs can be migrated (mcfed has no checkpointing)",
                self.queues[job.queue].config.name
            )));
        }
        let to_bottom = self.policy.requeue_to_bottom && self.policy.mig2pend;
        let arrival = if to_bottom {
            self.jobs.next_order(self.effective_priority(&job.spec))
        } else {
            // Ahead of every pending job of the queue, in migration order.
            let seq = self.jobs.next_order(0) & ARRIVAL_MASK;
            order_key(u32::from(u16::MAX), seq)
        };
        self.account(id, holding, Holding::Nothing, now);
        self.drop_reservation_of(id);
        if let Some(job) = self.jobs.get_mut(id) {
            let seq = job.arrival & ARRIVAL_MASK;
            job.unplace();
            // The APS tie-break keeps its submission order unless it goes
            // to the bottom.
            job.arrival = if to_bottom {
                arrival
            } else {
                (arrival & !ARRIVAL_MASK) | seq
            };
            job.aps.get_or_insert_with(Box::default).migrated = !to_bottom;
        }
        self.add_pending(id);
        Ok(JobEvent::Migrated)
    }

    /// `bswitch`: a pending (or held) job moves to queue `to`, keeping its
    /// place in arrival order; the new queue must be able to run it, and,
    /// for a job forwarded here, take jobs from its submission cluster.
    fn switch(&mut self, id: JobId, state: JobState, to: &str) -> Result<JobEvent, ControlError> {
        if !matches!(state, JobState::Pending | JobState::PendingSuspended) {
            return Err(ControlError::WrongState {
                state: state.as_str(),
                why: "mcfed switches pending jobs only",
            });
        }
        let target = self
            .queue_index(to)
            .ok_or_else(|| ControlError::BadQueue(format!("no queue named `{to}`")))?;
        let Some(job) = self.jobs.get(id) else {
            return Err(ControlError::NoSuchJob);
        };
        let config = &self.queues[target].config;
        if target == job.queue {
            return Err(ControlError::BadQueue(format!(
                "the job is already in queue `{to}`"
            )));
        }
        if !config.send_to.is_empty() {
            return Err(ControlError::BadQueue(format!(
                "`{to}` is a send queue: a job already in this cluster's queues is not forwarded"
            )));
        }
        if let JobOrigin::Forwarded { from, .. } = &job.origin {
            if !config
                .receive_from
                .as_ref()
                .is_some_and(|rcv| rcv.accepts(from))
            {
                return Err(ControlError::BadQueue(format!(
                    "queue `{to}` does not receive jobs from `{from}` (RCVJOBS_FROM)"
                )));
            }
        }
        self.check_runnable(target, &job.spec)
            .map_err(|reason| ControlError::BadQueue(format!("queue `{to}`: {reason}")))?;
        let pending = state == JobState::Pending;
        if pending {
            self.remove_pending(id);
            self.drop_reservation_of(id);
        }
        if let Some(job) = self.jobs.get_mut(id) {
            job.queue = target;
        }
        if pending {
            self.add_pending(id);
        }
        Ok(JobEvent::Switched)
    }

    /// `bmod`: the run limit of any job; the slots of a pending (or held)
    /// job; the user priority (re-ordering a pending job among its queue's).
    fn modify(
        &mut self,
        id: JobId,
        state: JobState,
        changes: &JobChanges,
    ) -> Result<JobEvent, ControlError> {
        if changes.is_empty() {
            return Err(ControlError::BadChange("nothing to change".into()));
        }
        let waiting = matches!(state, JobState::Pending | JobState::PendingSuspended);
        if let Some(aps) = changes.aps {
            self.check_aps_change(id, waiting, state, aps)?;
        }
        if changes.slots.is_some() && !waiting {
            return Err(ControlError::WrongState {
                state: state.as_str(),
                why: "the slots of a job that has started cannot change",
            });
        }
        if let Some(Some(limit)) = changes.run_limit {
            if limit.is_zero() {
                return Err(ControlError::BadChange(
                    "a run limit must be longer than zero".into(),
                ));
            }
        }
        if let Some(priority) = changes.user_priority {
            self.check_user_priority(priority)
                .map_err(ControlError::BadChange)?;
        }
        let Some(job) = self.jobs.get(id) else {
            return Err(ControlError::NoSuchJob);
        };
        if changes.slots == Some(0) {
            return Err(ControlError::BadChange(
                "a job needs at least one slot".into(),
            ));
        }
        let mut spec = job.spec.clone();
        changes.apply_to(&mut spec);
        if changes.slots.is_some() {
            self.check_runnable(job.queue, &spec)
                .map_err(|reason| ControlError::BadChange(reason.to_string()))?;
        }
        let arrival = order_key(self.effective_priority(&spec), job.arrival & ARRIVAL_MASK);
        let pending = state == JobState::Pending;
        if pending {
            self.remove_pending(id);
            self.drop_reservation_of(id);
        }
        let mut new_end = None;
        if let Some(job) = self.jobs.get_mut(id) {
            job.spec = spec;
            if waiting && changes.user_priority.is_some() {
                job.arrival = arrival;
            }
            match changes.aps {
                Some(ApsChange::System(value)) => {
                    job.aps.get_or_insert_with(Box::default).set = Some(ApsSet::System(value.0));
                }
                Some(ApsChange::Admin(value)) => {
                    job.aps.get_or_insert_with(Box::default).set = Some(ApsSet::Admin(value.0));
                }
                Some(ApsChange::Clear) => {
                    if let Some(aps) = job.aps.as_mut() {
                        aps.set = None;
                    }
                    if job.aps.as_deref() == Some(&JobAps::default()) {
                        job.aps = None;
                    }
                }
                None => {}
            }
            if state == JobState::Running && changes.run_limit.is_some() {
                // A new run limit moves the running job's end (to now, if
                // it has already run past the new limit).
                job.run_epoch += 1;
                let end = (job.running_since + job.time_to_end()).max(self.cycle.now);
                new_end = Some((end, job.run_epoch));
            }
        }
        if let Some((end, epoch)) = new_end {
            self.jobs.schedule_finish(end, id, epoch);
        }
        if pending {
            self.add_pending(id);
        }
        Ok(JobEvent::Modified)
    }

    /// Whether `bmod -aps` (`aps`) may be given to job `id`: a pending job
    /// of a queue ordered by APS, with a non-zero value within
    /// APS_PRIORITY's maximum.
    fn check_aps_change(
        &self,
        id: JobId,
        waiting: bool,
        state: JobState,
        aps: ApsChange,
    ) -> Result<(), ControlError> {
        if !waiting {
            return Err(ControlError::WrongState {
                state: state.as_str(),
                why: "bmod -aps and -apsn take pending jobs",
            });
        }
        let Some(job) = self.jobs.get(id) else {
            return Err(ControlError::NoSuchJob);
        };
        self.check_aps_change_in(job.queue, aps)
    }
}
