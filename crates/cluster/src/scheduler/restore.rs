//! Jobs as a journal keeps them ([`JobImage`]), and putting them back: a
//! cluster process that restarts from its journal rebuilds its cluster
//! from the configuration, then restores every job that had not finished
//! with its id, its state, its placement and the run time it has left
//! ([`Cluster::restore_jobs`]). The same pair takes a job out and puts it
//! back unchanged (a forwarded job parked while its submission cluster is
//! out of reach).
//!
//! A job's changes that are not transitions (it arrived, it was taken
//! out) are noted for a journal when the cluster is asked to
//! ([`Cluster::track_changes`]); transitions are reported by
//! [`Cluster::advance`] as always.

use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::job::{JobAps, JobId, JobOrigin, JobState, Placement};

use super::Cluster;
use super::accounting::Holding;

/// Where a job stands, as a journal keeps it (a finished job is not kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImageState {
    /// Waiting to be dispatched.
    Pending,
    /// Running on its placement.
    Running,
    /// Suspended by preemption, keeping its placement.
    Suspended,
    /// Stopped by `bstop` (USUSP), keeping its placement and its hosts'
    /// slots.
    Stopped,
    /// Held by `bstop` while pending (PSUSP): out of its queue's pending
    /// lists until `bresume`.
    Held,
    /// Stopped by `bstop` while suspended by preemption (USUSP), keeping
    /// its placement but not its hosts' slots, which its preemptor holds.
    StoppedSuspended,
}

/// Everything needed to put a job back as it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobImage {
    /// Its id in the cluster.
    pub id: u64,
    /// Its queue.
    pub queue: QueueName,
    /// What it asks for.
    pub spec: JobSpec,
    /// The submission cluster and its id there, for a forwarded job.
    pub forwarded_from: Option<(ClusterName, u64)>,
    /// Where it stands.
    pub state: ImageState,
    /// When it entered this cluster.
    pub submitted_at: SimTime,
    /// When it last entered its queue's pending list.
    pub queued_at: SimTime,
    /// When it was first submitted anywhere.
    pub first_submitted_at: SimTime,
    /// When it first started, if it has.
    pub started_at: Option<SimTime>,
    /// Run time still to go when it last started, resumed or stopped.
    pub remaining: Duration,
    /// When it last started or resumed.
    pub running_since: SimTime,
    /// Its hosts (by name) and slots on each, while running or suspended.
    pub placement: Vec<(Arc<str>, u32)>,
    /// Its pending clock for absolute priority scheduling, as the job
    /// keeps it: while it pends, when its pending time began counting
    /// (emulated ms); otherwise how long it has pended. Grace periods and
    /// JOB_PRIORITY_OVER_TIME go on where they were.
    pub pend_clock: u64,
    /// What `bmod -aps` set for it, and whether it was migrated.
    pub aps: Option<JobAps>,
}

/// What [`Cluster::restore_jobs`] could not put back as it was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Jobs restored.
    pub restored: usize,
    /// Jobs refused (their queue is gone), with why.
    pub refused: Vec<(u64, String)>,
    /// Running or suspended jobs whose hosts are gone or full, put back
    /// pending to run again.
    pub requeued: Vec<u64>,
}

impl Cluster {
    /// The image of job `id`, unless it has finished.
    pub fn job_image(&self, id: JobId) -> Option<JobImage> {
        let job = self.jobs.get(id)?;
        let state = match job.state {
            // A job waiting in a chunk comes back pending: its chunk is
            // not kept (it is formed again when it starts).
            JobState::Pending | JobState::ChunkWaiting => ImageState::Pending,
            JobState::Running => ImageState::Running,
            JobState::Suspended => ImageState::Suspended,
            JobState::UserSuspended if job.stopped_while_suspended => ImageState::StoppedSuspended,
            JobState::UserSuspended => ImageState::Stopped,
            JobState::PendingSuspended => ImageState::Held,
            JobState::Done | JobState::Exited => return None,
        };
        Some(JobImage {
            id: id.0,
            queue: self.queues[job.queue].config.name.clone(),
            spec: job.spec.clone(),
            forwarded_from: match &job.origin {
                JobOrigin::Local => None,
                JobOrigin::Forwarded { from, source_job } => Some((from.clone(), *source_job)),
            },
            state,
            submitted_at: job.submitted_at,
            queued_at: job.queued_at,
            first_submitted_at: job.first_submitted_at,
            started_at: job.started_at,
            remaining: job.remaining,
            running_since: job.running_since,
            placement: job
                .placement
                .iter()
                .map(|place| (self.hosts[place.host].shared_name.clone(), place.slots))
                .collect(),
            pend_clock: job.pend_clock,
            aps: job.aps.as_deref().copied(),
        })
    }

    /// Puts jobs back as their images say, in the order given (pending
    /// jobs queue in that order). A job whose id is already taken replaces
    /// the job there. Running jobs finish when their remaining run time
    /// from `running_since` is over (at once if that is already past); a
    /// running or suspended job whose hosts are gone or full goes back to
    /// pending with its whole run time. Later job ids follow the largest
    /// restored one.
    pub fn restore_jobs(&mut self, images: impl IntoIterator<Item = JobImage>) -> RestoreReport {
        let host_index: FxHashMap<Arc<str>, usize> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(index, host)| (host.shared_name.clone(), index))
            .collect();
        let mut report = RestoreReport::default();
        for image in images {
            let id = image.id;
            match self.restore_one(image, &host_index) {
                Ok(true) => report.restored += 1,
                Ok(false) => {
                    report.restored += 1;
                    report.requeued.push(id);
                }
                Err(why) => report.refused.push((id, why)),
            }
        }
        report
    }

    /// Restores one job; `Ok(false)`: restored pending instead of on its
    /// hosts.
    fn restore_one(
        &mut self,
        image: JobImage,
        host_index: &FxHashMap<Arc<str>, usize>,
    ) -> Result<bool, String> {
        let queue = self
            .queue_index(image.queue.as_str())
            .ok_or_else(|| format!("no queue named `{}`", image.queue))?;
        let id = JobId(image.id);
        if self.jobs.get(id).is_some() {
            self.remove_job(id);
        }
        let origin = match image.forwarded_from {
            None => JobOrigin::Local,
            Some((from, source_job)) => JobOrigin::Forwarded { from, source_job },
        };
        let (user, new) = self.users.intern(&image.spec.user);
        if new && !self.limit_book.is_empty() {
            self.limit_book
                .note_user(user, &image.spec.user, self.users.directory());
        }
        let priority = self.effective_priority(&image.spec);
        self.jobs.insert_with_id(
            id,
            queue,
            image.spec,
            origin,
            user,
            (image.submitted_at, priority),
        );
        let placement = self.placement_of(&image.placement, host_index);
        let Some(job) = self.jobs.get_mut(id) else {
            return Err("the job book refused it".to_owned());
        };
        job.first_submitted_at = image.first_submitted_at;
        job.queued_at = image.queued_at;
        job.started_at = image.started_at;
        job.remaining = image.remaining;
        job.running_since = image.running_since;
        job.aps = image.aps.map(Box::new);
        // Out of the pending lists a job keeps how long it pended; a pending
        // one gets its start time back once it is filed pending below.
        job.pend_clock = image.pend_clock;
        let pend_clock = image.pend_clock;
        let holding = match (image.state, placement) {
            (ImageState::Pending, _) => Holding::Nothing,
            (ImageState::Held, _) => {
                job.state = JobState::PendingSuspended;
                self.cycle.dirty = true;
                return Ok(true);
            }
            (ImageState::Running, Some(placement)) => {
                job.state = JobState::Running;
                job.placement = placement;
                Holding::Running
            }
            (ImageState::Suspended, Some(placement)) => {
                job.state = JobState::Suspended;
                job.placement = placement;
                Holding::Suspended
            }
            (ImageState::Stopped, Some(placement)) => {
                job.state = JobState::UserSuspended;
                job.placement = placement;
                Holding::Stopped
            }
            (ImageState::StoppedSuspended, Some(placement)) => {
                job.state = JobState::UserSuspended;
                job.stopped_while_suspended = true;
                job.placement = placement;
                Holding::StoppedSuspended
            }
            (_, None) => {
                tracing::warn!(cluster = %self.name, job = %id, "its hosts are gone or full: it runs again from the start");
                job.remaining = job.spec.run_time;
                job.started_at = None;
                self.requeue_restored(id);
                return Ok(false);
            }
        };
        match holding {
            Holding::Nothing => {
                self.requeue_restored(id);
                if let Some(job) = self.jobs.get_mut(id) {
                    job.pend_clock = pend_clock;
                }
            }
            Holding::Running => {
                let finish = job.running_since + job.time_to_end();
                let epoch = job.run_epoch;
                self.account(id, Holding::Nothing, Holding::Running, self.cycle.now);
                self.jobs.schedule_finish(finish, id, epoch);
                self.cycle.dirty = true;
            }
            Holding::Suspended | Holding::Stopped | Holding::StoppedSuspended => {
                self.account(id, Holding::Nothing, holding, self.cycle.now);
                self.cycle.dirty = true;
            }
        }
        Ok(true)
    }

    /// Files restored job `id` as pending.
    fn requeue_restored(&mut self, id: JobId) {
        self.add_pending(id);
        self.cycle.dirty = true;
    }

    /// The placement named by `hosts`, if every host exists and has the
    /// slots free.
    fn placement_of(
        &self,
        hosts: &[(Arc<str>, u32)],
        host_index: &FxHashMap<Arc<str>, usize>,
    ) -> Option<Vec<Placement>> {
        let mut placement = Vec::with_capacity(hosts.len());
        for (name, slots) in hosts {
            let &host = host_index.get(name)?;
            if self.hosts[host].free() < *slots {
                return None;
            }
            placement.push(Placement {
                host,
                slots: *slots,
            });
        }
        (!placement.is_empty()).then_some(placement)
    }

    /// Holds back the end of job `id` (running or suspended): it keeps its
    /// slots past its run time until [`Cluster::release_end`]. A forwarded
    /// job's end waits so while its submission cluster may have decided it
    /// again elsewhere.
    pub fn hold_end(&mut self, id: JobId) {
        if self.jobs.get(id).is_some() {
            self.held_ends.insert(id);
        }
    }

    /// Lets job `id` end again: at the end of its run time, at once if that
    /// has passed (the end is reported at the time it was due).
    pub fn release_end(&mut self, id: JobId) {
        if !self.held_ends.remove(&id) {
            return;
        }
        if let Some(job) = self.jobs.get(id) {
            if let Some(finish) = job.finish_time() {
                let epoch = job.run_epoch;
                self.jobs.schedule_finish(finish, id, epoch);
                self.cycle.dirty = true;
            }
        }
    }

    /// Whether job `id`'s end is held back.
    pub fn is_end_held(&self, id: JobId) -> bool {
        self.held_ends.contains(&id)
    }

    /// Takes job `id` out (see [`Cluster::remove_job`]) and returns its
    /// image, to put it back later with [`Cluster::restore_jobs`].
    pub fn take_job(&mut self, id: JobId) -> Option<JobImage> {
        let image = self.job_image(id)?;
        self.remove_job_quietly(id);
        Some(image)
    }

    /// The next job id, at least `next` (a restarted cluster never reuses
    /// an id, even one of a finished job).
    pub fn reserve_job_ids(&mut self, next: u64) {
        self.jobs.reserve_ids(next);
    }

    /// The id the next job gets.
    pub fn next_job_id(&self) -> u64 {
        self.jobs.next_id()
    }

    /// Notes, from now on, every job that arrives or is taken out, for
    /// [`Cluster::take_changes`] (a journal).
    pub fn track_changes(&mut self) {
        if self.changes.is_none() {
            self.changes = Some(Vec::new());
        }
    }

    /// Notes job `id` as changed (when tracking): for a change that is
    /// neither a transition nor an arrival or removal through the cluster
    /// (a job taken out of a parking place, a job-control operation).
    pub fn note_change(&mut self, id: JobId) {
        if let Some(changes) = &mut self.changes {
            changes.push(id);
        }
    }

    /// The jobs that arrived or were taken out since the last call, in
    /// order (possibly repeated), when tracking.
    pub fn take_changes(&mut self) -> Vec<JobId> {
        self.changes
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}
