//! Chunk jobs (CHUNK_JOB_SIZE, seed 001 "Chunk jobs"): when a one-slot job
//! of a queue with CHUNK_JOB_SIZE above 1 starts, up to that many less one
//! more pending jobs of the same queue, user, resource requirement (the
//! boolean resources it selects and what its `rusage` asks for, compared
//! whole) and job priority join it — picked in the queue's order,
//! which in an APS queue is by APS value — and wait (WAIT) to run on its
//! slot one after another. When the running job finishes (or is killed),
//! the next one starts at once on the same slot.
//!
//! **Choices** (LSF's chunk scheduling has more rules than the seed): only
//! one-slot jobs with no GPUs and no `-n min,max` are chunked; a chunk's
//! jobs stay waiting while its running job is suspended; when the running
//! job is requeued, migrated or rerun, its host fails, or it is killed
//! while suspended by preemption (its preemptor holds the slot), the
//! waiting jobs pend again in their places (`Pended`); killed while
//! running or stopped by `bstop`, it is followed on its slot by the next. A waiting job can be killed; other
//! job control commands are refused while it waits.

use std::collections::VecDeque;

use mcfed_protocol::{JobEvent, SimTime};
use rustc_hash::FxHashMap;

use crate::job::{Job, JobId, JobState, PendingReason, QueueIndex};
use crate::scheduler::{Cluster, Transition};

/// The chunks of a cluster: each running job's waiting jobs, in the order
/// they will run.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChunkBook {
    waiting: FxHashMap<JobId, VecDeque<JobId>>,
    runner_of: FxHashMap<JobId, JobId>,
}

impl ChunkBook {
    /// Whether no chunk is formed.
    pub(crate) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The running job whose chunk `member` waits in.
    pub(crate) fn runner_of(&self, member: JobId) -> Option<JobId> {
        self.runner_of.get(&member).copied()
    }

    fn join(&mut self, runner: JobId, member: JobId) {
        self.waiting.entry(runner).or_default().push_back(member);
        self.runner_of.insert(member, runner);
    }

    /// Takes the chunk of `runner` apart: its waiting jobs, in order.
    fn take(&mut self, runner: JobId) -> VecDeque<JobId> {
        let members = self.waiting.remove(&runner).unwrap_or_default();
        for member in &members {
            self.runner_of.remove(member);
        }
        members
    }

    /// Takes waiting job `member` out of its chunk.
    fn leave(&mut self, member: JobId) {
        if let Some(runner) = self.runner_of.remove(&member) {
            if let Some(list) = self.waiting.get_mut(&runner) {
                list.retain(|&other| other != member);
                if list.is_empty() {
                    self.waiting.remove(&runner);
                }
            }
        }
    }
}

/// Whether `job` may be chunked at all: one slot, no GPUs, not resizable.
fn chunkable(job: &Job) -> bool {
    job.spec.slots == 1 && job.spec.gpus == 0 && job.spec.max_slots() == 1
}

/// A job's resource requirement, normalized: the boolean resources it
/// selects, as a set (`-R "a b"` and `-R "b a"` ask the same), and what its
/// `rusage` reserves (mem, swap). Seed 001: "The following job properties
/// must be the same for all chunk jobs: Submitting user, Resource
/// requirements, Host requirements, Queue or application profile, Job
/// priority" — so the whole requirement, not its boolean part alone.
fn requirement(job: &Job) -> (Vec<&str>, u64, u64) {
    let mut select: Vec<&str> = job.spec.resources.iter().map(String::as_str).collect();
    select.sort_unstable();
    select.dedup();
    (
        select,
        job.spec.mem_request_mb(),
        job.spec.swap_request_mb(),
    )
}

impl Cluster {
    /// Job `runner` of `queue` has just started: if the queue chunks jobs,
    /// up to CHUNK_JOB_SIZE − 1 like pending jobs join it, in the queue's
    /// order (by APS value in an APS queue).
    pub(crate) fn form_chunk(
        &mut self,
        queue: QueueIndex,
        runner: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let size = self.queues[queue].config.chunk_job_size.unwrap_or(1);
        let Some(first) = self.jobs.get(runner) else {
            return;
        };
        if size <= 1 || !chunkable(first) {
            return;
        }
        let priority = self.job_priority(first, now);
        let needs = requirement(first);
        let same = |job: &Job| {
            job.user == first.user
                && chunkable(job)
                && requirement(job) == needs
                && self.job_priority(job, now) == priority
        };
        let members: Vec<JobId> = self
            .queue_order(queue, now)
            .into_iter()
            .filter(|&id| id != runner)
            .filter(|&id| {
                self.jobs.get(id).is_some_and(|job| {
                    job.state == JobState::Pending && job.queue == queue && same(job)
                })
            })
            .take(size as usize - 1)
            .collect();
        let placement = first.placement.clone();
        for id in members {
            self.remove_pending(id);
            self.drop_reservation_of(id);
            let Some(job) = self.jobs.get_mut(id) else {
                continue;
            };
            job.state = JobState::ChunkWaiting;
            job.placement = placement.clone();
            let transition = Transition::of(job, JobEvent::Waiting, now, None, &self.queues);
            self.chunks.join(runner, id);
            transitions.push(transition);
        }
    }

    /// The pending jobs of `queue` in the order its turn tries them: by
    /// APS rank in an APS group, else by arrival.
    fn queue_order(&self, queue: QueueIndex, now: SimTime) -> Vec<JobId> {
        match self.aps_group_of(queue) {
            Some(group) => {
                let mut cache = crate::aps::order_cache();
                let mut ranked: Vec<_> = self.queues[queue]
                    .pending
                    .unordered()
                    .filter_map(|(_, id)| {
                        let job = self.jobs.get(id)?;
                        Some((self.aps_rank(job, group, now, &mut cache, None).0, id))
                    })
                    .collect();
                ranked.sort_by(|a, b| a.0.dispatch_cmp(&b.0));
                ranked.into_iter().map(|(_, id)| id).collect()
            }
            None => self.queues[queue].pending.values().collect(),
        }
    }

    /// `runner` has finished (or was killed) at `at`: the next job of its
    /// chunk starts on its slot and takes the rest of the chunk.
    pub(crate) fn chunk_runner_gone(
        &mut self,
        runner: JobId,
        placement: Vec<crate::job::Placement>,
        at: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        if self.chunks.is_empty() {
            return;
        }
        let mut members = self.chunks.take(runner);
        let Some(next) = members.pop_front() else {
            return;
        };
        for member in members {
            self.chunks.join(next, member);
        }
        if let Some(job) = self.jobs.get_mut(next) {
            job.placement.clear();
        }
        // Straight to running on the chunk's slot: it was dispatched with
        // the chunk.
        self.start_placed(next, placement, at, transitions);
    }

    /// `runner` stops holding its slot other than by finishing (requeued,
    /// migrated, rerun, terminated): its chunk's waiting jobs pend again.
    pub(crate) fn break_chunk(
        &mut self,
        runner: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        if self.chunks.is_empty() {
            return;
        }
        for member in self.chunks.take(runner) {
            let Some(job) = self.jobs.get_mut(member) else {
                continue;
            };
            job.state = JobState::Pending;
            job.placement.clear();
            job.pending_reason = PendingReason::NewJob;
            job.reason_pass = 0;
            let transition = Transition::of(job, JobEvent::Pended, now, None, &self.queues);
            self.add_pending(member);
            transitions.push(transition);
        }
        self.cycle.dirty = true;
    }

    /// Waiting job `member` leaves its chunk (it is killed or taken out).
    pub(crate) fn leave_chunk(&mut self, member: JobId) {
        self.chunks.leave(member);
        if let Some(job) = self.jobs.get_mut(member) {
            job.placement.clear();
        }
    }
}
