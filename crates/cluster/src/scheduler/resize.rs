//! Resizable jobs (`bsub -n min,max -ar`, `bresize release`; seed 001,
//! "Resizable jobs"): a running autoresizable job below its maximum has a
//! pending resize allocation request for the rest, which is scheduled
//! like a job — by APS value in an APS queue (it inherits the job's value;
//! PROC is the request's slots), in arrival order before the pending jobs
//! elsewhere — and met with as many of those slots as are free under every
//! limit. `bresize release` gives slots back. Either way the job's slots
//! move through `Cluster::account` like a suspension and a resumption, so
//! fairshare counts the new slots from then on (RUN_JOB_FACTOR: growing
//! lowers the user's priority, releasing raises it) without ending its
//! run.
//!
//! **Choices**: a resize request never preempts and never reserves slots;
//! `bresize release` lowers the job's maximum to what it keeps, so no
//! request pends after it (LSF's `bresize release -c` behaviour).

use mcfed_protocol::{JobEvent, SimTime, SlotRelease};

use crate::dispatch::{Outcome, PlaceMode, Round, Scope};
use crate::job::{JobId, JobState, PendingReason, Placement, QueueIndex};

use super::control::ControlError;
use super::{Cluster, Transition};

impl Cluster {
    /// The resize requests of `queue` (not in an APS group), in arrival
    /// order, before its pending jobs.
    pub(crate) fn dispatch_resize_requests(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let requests: Vec<JobId> = self.queues[queue]
            .resize_pending
            .values()
            .map(|&(id, _)| id)
            .collect();
        for id in requests {
            if let Outcome::Failed {
                scope: Scope::Queue,
                ..
            } = self.try_grow(queue, id, now, transitions)
            {
                break;
            }
        }
    }

    /// A resizable job (`-n min,max`) that has just started takes as many
    /// more slots as are free, up to its max (as LSF allocates it).
    pub(crate) fn grow_at_start(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        if self
            .jobs
            .get(id)
            .is_some_and(|job| job.spec.max_slots() > job.spec.slots)
        {
            let _ = self.try_grow(queue, id, now, transitions);
        }
    }

    /// Tries to meet running job `id`'s resize request now: all the slots
    /// it asks for, else as many as its queue's hosts have free, under
    /// every limit.
    pub(crate) fn try_grow(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) -> Outcome {
        let failed = |reason, scope| Outcome::Failed { reason, scope };
        let Some(job) = self.jobs.get(id) else {
            return failed(PendingReason::NewJob, Scope::Job);
        };
        if job.state != JobState::Running {
            return failed(PendingReason::NewJob, Scope::Job);
        }
        let (current, user) = (job.spec.slots, job.user);
        let wanted = job.spec.max_slots().saturating_sub(current);
        let free = self.hosts.set(self.queues[queue].host_set).free_slots;
        if free == 0 {
            return failed(PendingReason::NotEnoughSlots, Scope::Queue);
        }
        let mut last = PendingReason::NotEnoughSlots;
        for ask in [wanted, wanted.min(u32::try_from(free).unwrap_or(u32::MAX))] {
            if ask == 0 {
                continue;
            }
            if let Some(Outcome::Failed { reason, .. }) =
                self.queue_limit_failure(queue, user, ask, Round::Main)
            {
                last = reason;
                continue;
            }
            if let Some(block) = self.user_limit_block(user, queue, ask) {
                last = block.reason;
                continue;
            }
            match self.probe_placement(queue, id, ask, now) {
                Ok(extra) => {
                    let mut placement = self
                        .jobs
                        .get(id)
                        .map(|j| j.placement.clone())
                        .unwrap_or_default();
                    for place in extra {
                        match placement.iter_mut().find(|p| p.host == place.host) {
                            Some(held) => held.slots += place.slots,
                            None => placement.push(place),
                        }
                    }
                    self.resize_to(id, current + ask, placement, now, transitions);
                    return Outcome::Started;
                }
                Err(reason) => last = reason,
            }
        }
        failed(last, Scope::Job)
    }

    /// Where `ask` more slots of running job `id` would go: a placement
    /// search as for a pending job of that many slots.
    fn probe_placement(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        ask: u32,
        now: SimTime,
    ) -> Result<Vec<Placement>, PendingReason> {
        let current = self.jobs.get(id).map_or(0, |job| job.spec.slots);
        if let Some(job) = self.jobs.get_mut(id) {
            job.spec.slots = ask;
        }
        let found = self.find_placement(queue, id, now, PlaceMode::Normal);
        if let Some(job) = self.jobs.get_mut(id) {
            job.spec.slots = current;
        }
        found.map_err(|failure| failure.reason)
    }

    /// Running job `id` holds `slots` slots on `placement` from `now` on.
    fn resize_to(
        &mut self,
        id: JobId,
        slots: u32,
        placement: Vec<Placement>,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        self.account_resize_stop(id, now);
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.remaining = job
            .remaining
            .saturating_sub(now.saturating_since(job.running_since));
        job.running_since = now;
        job.run_epoch += 1;
        job.spec.slots = slots;
        job.placement = placement;
        let finish = (now + job.time_to_end(), job.run_epoch);
        let mut transition = Transition::of(job, JobEvent::Resized, now, None, &self.queues);
        transition.started_at = job.started_at;
        let queue = job.queue;
        self.account(
            id,
            super::accounting::Holding::Nothing,
            super::accounting::Holding::Running,
            now,
        );
        self.cycle.dirty = true;
        self.now_running(queue, finish, transition, transitions);
    }

    /// `bresize release`: running resizable job `id` gives back slots
    /// (`all`: every one but one on its first host); its maximum becomes
    /// what it keeps.
    pub(crate) fn release_slots(
        &mut self,
        id: JobId,
        release: &SlotRelease,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) -> Result<(), ControlError> {
        let Some(job) = self.jobs.get(id) else {
            return Err(ControlError::NoSuchJob);
        };
        if job.state != JobState::Running {
            return Err(ControlError::WrongState {
                state: job.state.as_str(),
                why: "bresize release takes running jobs",
            });
        }
        if job
            .spec
            .options
            .as_ref()
            .and_then(|o| o.max_slots)
            .is_none()
        {
            return Err(ControlError::BadChange(
                "the job is not resizable (bsub -n min,max)".into(),
            ));
        }
        let mut placement = job.placement.clone();
        match release {
            SlotRelease::All => {
                placement.truncate(1);
                if let Some(first) = placement.first_mut() {
                    first.slots = 1;
                }
            }
            SlotRelease::Hosts(hosts) => {
                for (name, slots) in hosts {
                    let Some(held) = placement
                        .iter_mut()
                        .find(|place| self.hosts[place.host].config.name == *name)
                    else {
                        return Err(ControlError::BadChange(format!(
                            "the job holds no slot on host `{name}`"
                        )));
                    };
                    if *slots > held.slots {
                        return Err(ControlError::BadChange(format!(
                            "the job holds {} slots on host `{name}`, not {slots}",
                            held.slots
                        )));
                    }
                    held.slots -= slots;
                }
                placement.retain(|place| place.slots > 0);
            }
        }
        let kept: u32 = placement.iter().map(|place| place.slots).sum();
        if kept == 0 {
            return Err(ControlError::BadChange(
                "a running job keeps at least one slot (bkill ends it)".into(),
            ));
        }
        if kept == job.spec.slots {
            return Err(ControlError::BadChange("nothing to release".into()));
        }
        // The maximum becomes what it keeps: no request pends after it.
        if let Some(job) = self.jobs.get_mut(id) {
            let mut options = job.spec.options();
            options.max_slots = Some(kept);
            job.spec.set_options(options);
        }
        let queue = self.jobs.get(id).map(|job| job.queue);
        if let Some(queue) = queue {
            let arrival = self.jobs.get(id).map_or(0, |job| job.arrival);
            self.queues[queue].resize_pending.remove(&arrival);
        }
        self.resize_to(id, kept, placement, now, transitions);
        Ok(())
    }
}
