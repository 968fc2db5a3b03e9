//! A job's life in the cluster: it arrives and pends, starts, is suspended
//! or terminated and requeued by preemption, resumes, and finishes or is
//! taken out. Each step sets the job's own fields and reports a
//! [`Transition`]; its hold on slots changes through `Cluster::account`.

use mcfed_protocol::{JobEvent, JobSpec, SimTime};

use crate::job::{Job, JobId, JobOrigin, JobState, Placement, QueueIndex};

use super::accounting::Holding;
use super::queues::QueueBook;
use super::{Cluster, Leaving, Transition};

impl Transition {
    /// `event` happened to `job` at `at`.
    pub(crate) fn of(
        job: &Job,
        event: JobEvent,
        at: SimTime,
        preempted_by: Option<JobId>,
        queues: &QueueBook,
    ) -> Self {
        Transition::with_origin(job, job.origin.clone(), event, at, preempted_by, queues)
    }

    /// `event` ended `job`, leaving the cluster, at `at`: its origin moves
    /// to the transition (the job is dropped next).
    #[inline(always)]
    pub(crate) fn ended(job: &mut Job, event: JobEvent, at: SimTime, queues: &QueueBook) -> Self {
        let origin = std::mem::replace(&mut job.origin, JobOrigin::Local);
        Transition::with_origin(job, origin, event, at, None, queues)
    }

    /// `event` happened to `job`, from `origin`, at `at`.
    #[inline(always)]
    fn with_origin(
        job: &Job,
        origin: JobOrigin,
        event: JobEvent,
        at: SimTime,
        preempted_by: Option<JobId>,
        queues: &QueueBook,
    ) -> Self {
        Transition {
            job: job.id,
            event,
            at,
            origin,
            preempted_by,
            name: job.spec.name.clone(),
            queue: queues[job.queue].config.name.clone(),
            submitted_at: job.submitted_at,
            first_submitted_at: job.first_submitted_at,
            started_at: job.started_at,
            slots: job.spec.slots,
            first_start: false,
        }
    }
}

/// A requeued job is a new submission for absolute priority scheduling
/// (seed 001, "Job re-queuing"): its JPRIORITY (escalation, and the one it
/// was forwarded with), system and ADMIN values are reset and its grace
/// periods start again.
pub(crate) fn reset_priority(job: &mut Job) {
    job.aps = None;
    job.pend_clock = 0;
    if job.spec.carried_job_priority().is_some() {
        let mut options = job.spec.options();
        options.job_priority = None;
        job.spec.set_options(options);
    }
}

impl Cluster {
    /// Files a new job in `queue` at `now`; it pends until the next pass.
    /// `first_submitted_at` is when the job was first submitted anywhere
    /// (for a forwarded job, at its submission cluster). A job without a
    /// run limit or run-time estimate takes its queue's RUNLIMIT and
    /// RUNTIME.
    pub(crate) fn enqueue(
        &mut self,
        now: SimTime,
        queue: QueueIndex,
        spec: JobSpec,
        origin: JobOrigin,
        first_submitted_at: SimTime,
    ) -> JobId {
        let mut spec = spec;
        let config = &self.queues[queue].config;
        spec.run_limit = spec.run_limit.or(config.run_limit);
        spec.run_estimate = spec.run_estimate.or(config.run_estimate);
        self.cycle.now = self.cycle.now.max(now);
        let (user, new) = self.users.intern(&spec.user);
        if new && !self.limit_book.is_empty() {
            self.limit_book
                .note_user(user, &spec.user, self.users.directory());
        }
        let priority = self.effective_priority(&spec);
        let id = self
            .jobs
            .insert_new(queue, spec, origin, user, (now, priority));
        if let Some(job) = self.jobs.get_mut(id) {
            job.first_submitted_at = first_submitted_at.min(now);
        }
        self.add_pending(id);
        self.cycle.dirty = true;
        self.note_change(id);
        id
    }

    /// Puts pending job `id` in its queue's pending lists; its pending
    /// clock runs again from what it had pended.
    pub(crate) fn add_pending(&mut self, id: JobId) {
        let now = self.cycle.now.as_millis();
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.pend_clock = now.saturating_sub(job.pend_clock);
        let queue = &mut self.queues[job.queue];
        job.bucket = queue.pending.insert(job, self.cycle.pass);
        let job = &*job;
        queue.pending_slots += job.spec.slots;
        if matches!(job.origin, JobOrigin::Forwarded { .. }) {
            queue.imported_pending_jobs += 1;
        }
        if queue.fairshare.is_some() {
            let name = &self.users[job.user].name;
            let leaf = queue
                .user_entry(job.user, name, self.users.directory())
                .leaf;
            if let (Some(leaf), Some(fairshare)) = (leaf, queue.fairshare.as_mut()) {
                fairshare.tree.add_pending(leaf, job.arrival, id);
            }
        }
    }

    /// Takes pending job `id` out of its queue's pending lists; its
    /// pending clock keeps what it has pended, and it keeps the reason the
    /// last pass gave it (it may pend on, switched to another queue).
    pub(crate) fn remove_pending(&mut self, id: JobId) {
        let pass = self.cycle.pass;
        // A job leaves with the reason the last pass gave it, though that
        // pass gave it only through its bucket, its user or its queue.
        let reason = match self.jobs.get(id) {
            Some(job) if job.reason_pass != pass => self.last_pass_reason(job),
            _ => return self.leave_pending(id),
        };
        if let Some(job) = self.jobs.get_mut(id) {
            job.pending_reason = reason;
            job.reason_pass = pass;
        }
        self.leave_pending(id);
    }

    /// Takes pending job `id` out of its queue's pending lists without
    /// its last pass's reason: for a job that starts now, whose reason
    /// nothing reads again (`Cluster::pending_reason` answers only for
    /// pending jobs, and every way back to pending starts it over).
    fn leave_pending(&mut self, id: JobId) {
        let now = self.cycle.now.as_millis();
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.pend_clock = now.saturating_sub(job.pend_clock);
        let queue = &mut self.queues[job.queue];
        queue.pending.remove(job, job.bucket);
        let job = &*job;
        queue.pending_slots -= job.spec.slots;
        if matches!(job.origin, JobOrigin::Forwarded { .. }) {
            queue.imported_pending_jobs -= 1;
        }
        // Only a fairshare queue looks its user up (a lookup per job).
        if let Some(fairshare) = queue.fairshare.as_mut() {
            if let Some(leaf) = queue.users.get(&job.user).and_then(|user| user.leaf) {
                fairshare.tree.remove_pending(leaf, job.arrival);
            }
        }
    }

    /// Starts pending job `id` on `placement` at `now`.
    pub(crate) fn start(
        &mut self,
        id: JobId,
        placement: Vec<Placement>,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        self.leave_pending(id);
        self.start_placed(id, placement, now, transitions);
    }

    /// Starts job `id`, out of its queue's pending lists already (pending,
    /// or waiting in a chunk), on `placement` at `now`.
    pub(crate) fn start_placed(
        &mut self,
        id: JobId,
        placement: Vec<Placement>,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        if let Some(aps) = job.aps.as_mut() {
            aps.migrated = false;
        }
        let first_start = job.started_at.is_none();
        job.state = JobState::Running;
        job.started_at = Some(now);
        job.running_since = now;
        job.placement = placement;
        let finish = (now + job.time_to_end(), job.run_epoch);
        let mut transition = Transition::of(job, JobEvent::Started, now, None, &self.queues);
        transition.first_start = first_start;
        let queue = job.queue;
        self.account(id, Holding::Nothing, Holding::Running, now);
        if !self.reservations.is_empty() {
            self.drop_reservation_of(id);
        }
        self.now_running(queue, finish, transition, transitions);
    }

    /// Resumes suspended job `id` on its hosts at `now`.
    pub(crate) fn resume(&mut self, id: JobId, now: SimTime, transitions: &mut Vec<Transition>) {
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.state = JobState::Running;
        job.running_since = now;
        let finish = (now + job.time_to_end(), job.run_epoch);
        let transition = Transition::of(job, JobEvent::Resumed, now, None, &self.queues);
        let queue = job.queue;
        self.account(id, Holding::Suspended, Holding::Running, now);
        self.now_running(queue, finish, transition, transitions);
    }

    /// What follows a job's start or resumption: its finish event (at
    /// `finish.0`, for run `finish.1`), another pass if a higher queue may
    /// preempt it, and the transition.
    pub(crate) fn now_running(
        &mut self,
        queue: QueueIndex,
        (at, epoch): (SimTime, u32),
        transition: Transition,
        transitions: &mut Vec<Transition>,
    ) {
        if !self.queues[queue].preemptors.is_empty() {
            self.cycle.pass_again = true;
        }
        self.jobs.schedule_finish(at, transition.job, epoch);
        transitions.push(transition);
    }

    /// Completes the suspension of a victim whose slots were already
    /// accounted as suspended.
    pub(crate) fn finish_suspension(
        &mut self,
        id: JobId,
        by: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.remaining = job
            .remaining
            .saturating_sub(now.saturating_since(job.running_since));
        job.state = JobState::Suspended;
        job.run_epoch += 1;
        transitions.push(Transition::of(
            job,
            JobEvent::Suspended,
            now,
            Some(by),
            &self.queues,
        ));
    }

    /// Completes the termination of a victim (TERMINATE_WHEN=PREEMPT) whose
    /// slots were already released: it is requeued, to run again from the
    /// start, ahead of the jobs that arrived after it.
    pub(crate) fn finish_termination(
        &mut self,
        id: JobId,
        by: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let to_bottom = self.policy.requeue_to_bottom;
        let arrival = if to_bottom {
            let priority = self
                .jobs
                .get(id)
                .map(|job| self.effective_priority(&job.spec))
                .unwrap_or_default();
            Some(self.jobs.next_order(priority))
        } else {
            None
        };
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.unplace();
        if let Some(arrival) = arrival {
            job.arrival = arrival;
        }
        reset_priority(job);
        let transition = Transition::of(job, JobEvent::Requeued, now, Some(by), &self.queues);
        self.add_pending(id);
        self.cycle.dirty = true;
        transitions.push(transition);
        self.break_chunk(id, now, transitions);
    }

    /// Job `id` has run its time, or reached its run limit first (then it
    /// is killed: EXIT): it leaves the cluster at `at` (and the next job of
    /// its chunk, if any, starts on its slot).
    pub(crate) fn finish(&mut self, id: JobId, at: SimTime, transitions: &mut Vec<Transition>) {
        let Some(job) = self.jobs.get(id) else {
            return;
        };
        let ran = job.ran_before() + at.saturating_since(job.running_since);
        let (event, leaving) = if ran < job.spec.run_time {
            (JobEvent::RunLimit, Leaving::Exited)
        } else {
            (JobEvent::Finished, Leaving::Finished)
        };
        self.account(id, Holding::Running, Holding::Nothing, at);
        let (queues, chunked) = (&self.queues, !self.chunks.is_empty());
        // The transition is pushed from within: returned, it was copied
        // twice more.
        let ended = self.jobs.end(id, leaving, |job| {
            transitions.push(Transition::ended(job, event, at, queues));
            if chunked {
                std::mem::take(&mut job.placement)
            } else {
                Vec::new()
            }
        });
        let Some(placement) = ended else {
            return;
        };
        self.cycle.dirty = true;
        if !placement.is_empty() {
            self.chunk_runner_gone(id, placement, at, transitions);
        }
    }

    /// Takes job `id` out of the cluster, whatever its state, and returns it
    /// (`bkill`; used when a submission cluster recalls or withdraws a job
    /// it forwarded). A pending job leaves its queue; a running or suspended
    /// one frees its slots. No transition is reported; a dispatch pass is
    /// due. Its use counts in fairshare up to the latest time the cluster
    /// was given.
    pub fn remove_job(&mut self, id: JobId) -> Option<Job> {
        let job = self.remove_job_quietly(id)?;
        self.note_change(id);
        Some(job)
    }

    /// [`Cluster::remove_job`] without noting the change for a journal (a
    /// job parked, to be put back unchanged).
    pub(crate) fn remove_job_quietly(&mut self, id: JobId) -> Option<Job> {
        let now = self.cycle.now;
        self.release(id, now);
        self.held_ends.remove(&id);
        if !self.chunks.is_empty() {
            // Its chunk's waiting jobs pend again (nothing reports it: the
            // caller reports the job itself gone).
            self.break_chunk(id, now, &mut Vec::new());
        }
        self.cycle.dirty = true;
        self.jobs.remove(id)
    }

    /// Takes job `id` out of its queue's lists and frees whatever it holds
    /// at `now`, whatever its state; its own fields are left as they are.
    pub(crate) fn release(&mut self, id: JobId, now: SimTime) {
        let Some((state, holding)) = self.jobs.get(id).map(|job| (job.state, Holding::of(job)))
        else {
            return;
        };
        match holding {
            Some(holding) => self.account(id, holding, Holding::Nothing, now),
            None if state == JobState::Pending => self.remove_pending(id),
            None if state == JobState::ChunkWaiting => self.leave_chunk(id),
            None => {}
        }
        self.drop_reservation_of(id);
    }
}
