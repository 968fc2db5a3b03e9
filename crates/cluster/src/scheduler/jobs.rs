//! The job book: every job that has not finished, by id, the numbering of
//! jobs and of their arrivals, the jobs' finish events and the counts of
//! finished and killed jobs.
//!
//! Jobs live in slots of one vector (a finished job's slot is reused), found
//! by id through a small map: the book's memory follows the most jobs held
//! at once, with no table of whole jobs to rehash (a replay with half a
//! million jobs pending once held two such tables while one grew).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use mcfed_protocol::{JobSpec, SimTime};
use rustc_hash::FxHashMap;

use crate::job::{Job, JobId, JobOrigin, JobState, PendingReason, QueueIndex, UserId, order_key};

/// How a job leaves the book, for its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leaving {
    /// It ran its time.
    Finished,
    /// It was killed.
    Exited,
    /// It was taken out (recalled, withdrawn, parked): not counted.
    Removed,
}

/// The cluster's jobs.
#[derive(Clone, Debug)]
pub(crate) struct JobBook {
    /// The jobs, each in a slot; `None` for a free slot.
    slots: Vec<Option<Job>>,
    /// Free slots, reused last freed first.
    free: Vec<u32>,
    /// Each job's slot.
    slot_of: FxHashMap<JobId, u32>,
    next_id: u64,
    next_arrival: u64,
    /// When running jobs finish: (time, job, the run it is for). A job that
    /// stopped running since leaves a stale event behind, recognised by its
    /// run epoch.
    finish_events: BinaryHeap<Reverse<(SimTime, JobId, u32)>>,
    finished: u64,
    exited: u64,
}

impl Default for JobBook {
    fn default() -> Self {
        JobBook {
            slots: Vec::new(),
            free: Vec::new(),
            slot_of: FxHashMap::default(),
            next_id: 1,
            next_arrival: 0,
            finish_events: BinaryHeap::new(),
            finished: 0,
            exited: 0,
        }
    }
}

impl JobBook {
    /// The job with id `id`, unless it has finished.
    pub(crate) fn get(&self, id: JobId) -> Option<&Job> {
        let slot = *self.slot_of.get(&id)?;
        self.slots[slot as usize].as_ref()
    }

    /// The job with id `id`, to change its own fields.
    pub(crate) fn get_mut(&mut self, id: JobId) -> Option<&mut Job> {
        let slot = *self.slot_of.get(&id)?;
        self.slots[slot as usize].as_mut()
    }

    /// Every job that has not finished, in no particular order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Job> {
        self.slots.iter().flatten()
    }

    /// How many jobs have not finished.
    pub(crate) fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// How many slots there are, some free.
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The jobs in slots `slots` (those past the last slot are none).
    pub(crate) fn in_slots(&self, slots: std::ops::Range<usize>) -> impl Iterator<Item = &Job> {
        let end = slots.end.min(self.slots.len());
        let start = slots.start.min(end);
        self.slots[start..end].iter().flatten()
    }

    /// Every job with its id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&JobId, &Job)> {
        self.values().map(|job| (&job.id, job))
    }

    /// A free slot for job `id` (its job is written in place by the
    /// caller).
    fn slot_for(&mut self, id: JobId) -> usize {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        if let Some(old) = self.slot_of.insert(id, slot) {
            // An id filed twice replaces the job it named.
            self.slots[old as usize] = None;
            self.free.push(old);
        }
        slot as usize
    }

    /// Frees job `id`'s slot, counting the job as `leaving` says, and
    /// gives the slot (the job is still in it).
    #[inline(always)]
    fn leave(&mut self, id: JobId, leaving: Leaving) -> Option<usize> {
        let slot = self.slot_of.remove(&id)?;
        self.free.push(slot);
        match leaving {
            Leaving::Finished => self.finished += 1,
            Leaving::Exited => self.exited += 1,
            Leaving::Removed => {}
        }
        Some(slot as usize)
    }

    /// Takes job `id` out of its slot, counting it as `leaving` says. The
    /// job is moved last, straight to the caller (a job moved before a
    /// call that may unwind is copied once more).
    fn take(&mut self, id: JobId, leaving: Leaving) -> Option<Job> {
        let slot = self.leave(id, leaving)?;
        self.slots[slot].take()
    }

    /// Ends job `id`, counting it as `leaving` says (finished or killed):
    /// `ended` reads it in its slot (and may take fields it keeps), then
    /// the job is dropped there. One call for every ending, and the job is
    /// never moved: moved out of its slot, a job (some 330 bytes) was
    /// copied to the caller once or twice (issue 23). Always inlined, so
    /// that `ended` is too.
    #[inline(always)]
    pub(crate) fn end<R>(
        &mut self,
        id: JobId,
        leaving: Leaving,
        ended: impl FnOnce(&mut Job) -> R,
    ) -> Option<R> {
        let slot = self.leave(id, leaving)?;
        let result = self.slots[slot].as_mut().map(ended);
        self.slots[slot] = None;
        result
    }

    /// The next job id, taken (the forwarder numbers the jobs of send
    /// queues from the same sequence, so a cluster's ids are unique).
    pub(crate) fn take_id(&mut self) -> JobId {
        let id = JobId(self.next_id);
        self.next_id += 1;
        id
    }

    /// The next place in arrival order for a job of effective user
    /// priority `priority`.
    pub(crate) fn next_order(&mut self, priority: u32) -> u64 {
        let seq = self.next_arrival;
        self.next_arrival += 1;
        order_key(priority, seq)
    }

    /// Files a new pending job of `user` in `queue`, with the next id and
    /// the next place in arrival order among the jobs of its priority.
    pub(crate) fn insert_new(
        &mut self,
        queue: QueueIndex,
        spec: JobSpec,
        origin: JobOrigin,
        user: UserId,
        (now, priority): (SimTime, u32),
    ) -> JobId {
        let id = self.take_id();
        let arrival = self.next_order(priority);
        let remaining = spec.run_time;
        let slot = self.slot_for(id);
        self.slots[slot] = Some(Job {
            id,
            queue,
            spec,
            origin,
            user,
            state: JobState::Pending,
            submitted_at: now,
            first_submitted_at: now,
            started_at: None,
            remaining,
            running_since: now,
            placement: Vec::new(),
            pending_reason: PendingReason::NewJob,
            reason_pass: 0,
            bucket: 0,
            arrival,
            queued_at: now,
            run_epoch: 0,
            stopped_while_suspended: false,
            pend_clock: 0,
            aps: None,
        });
        id
    }

    /// Files a pending job under a given id (a job restored from a
    /// journal); later ids follow it.
    pub(crate) fn insert_with_id(
        &mut self,
        id: JobId,
        queue: QueueIndex,
        spec: JobSpec,
        origin: JobOrigin,
        user: UserId,
        now_and_priority: (SimTime, u32),
    ) {
        let next = std::mem::replace(&mut self.next_id, id.0);
        self.insert_new(queue, spec, origin, user, now_and_priority);
        self.next_id = next.max(id.0.saturating_add(1));
    }

    /// The id the next job gets.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Makes the next id at least `next`.
    pub(crate) fn reserve_ids(&mut self, next: u64) {
        self.next_id = self.next_id.max(next);
    }

    /// Takes job `id` out of the book, uncounted (recalled, withdrawn,
    /// parked).
    pub(crate) fn remove(&mut self, id: JobId) -> Option<Job> {
        self.take(id, Leaving::Removed)
    }

    /// How many jobs have finished.
    pub(crate) fn finished(&self) -> u64 {
        self.finished
    }

    /// How many jobs were killed.
    pub(crate) fn exited(&self) -> u64 {
        self.exited
    }

    /// Job `id`, in run `epoch`, finishes at `at` unless it stops first.
    pub(crate) fn schedule_finish(&mut self, at: SimTime, id: JobId, epoch: u32) {
        self.finish_events.push(Reverse((at, id, epoch)));
    }

    /// When the next running job finishes, dropping stale events.
    pub(crate) fn next_finish(&mut self) -> Option<SimTime> {
        while let Some(Reverse((at, job, epoch))) = self.finish_events.peek().copied() {
            if self.is_current_finish(job, epoch) {
                return Some(at);
            }
            self.finish_events.pop();
        }
        None
    }

    /// The next job to finish by `now`, and when, taking its event (and
    /// any stale one before it).
    pub(crate) fn pop_finish_due(&mut self, now: SimTime) -> Option<(SimTime, JobId)> {
        while let Some(Reverse((at, job, epoch))) = self.finish_events.peek().copied() {
            if at > now {
                return None;
            }
            self.finish_events.pop();
            if self.is_current_finish(job, epoch) {
                return Some((at, job));
            }
        }
        None
    }

    fn is_current_finish(&self, job: JobId, epoch: u32) -> bool {
        self.get(job)
            .is_some_and(|job| job.state == JobState::Running && job.run_epoch == epoch)
    }
}
