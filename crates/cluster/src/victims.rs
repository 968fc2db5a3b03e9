//! Choosing preemption victims (seed `003_f223f39848659bbb.txt`).
//!
//! A pending job of a queue that may preempt others, and that cannot start,
//! looks for running jobs to suspend (or, in a TERMINATE_WHEN=PREEMPT
//! queue, to terminate and requeue):
//!
//! - victim queues in preference order (queues with a preference number
//!   first, higher number first; then lower priority first);
//! - within a queue, jobs on the least-loaded hosts first, then the most
//!   recently started (the newest job on a tie); or, with
//!   PREEMPT_FOR=LEAST_RUN_TIME, the job that has run for the shortest time
//!   first;
//! - never a job protected by NO_PREEMPT_RUN_TIME or NO_PREEMPT_FINISH_TIME,
//!   nor (unless PREEMPT_JOBTYPE=BACKFILL) a job of a backfill queue;
//! - when a user limit that ignores suspended jobs stands in the way (the
//!   user's MAX_JOBS, or a group's with PREEMPT_FOR=GROUP_MAX, or a Limit
//!   section of lsb.resources that names no queues), only the jobs counted
//!   by the same user (group, or limit instance) help, and they are taken
//!   first.
//!
//! Victims are taken one by one, tentatively: each is stopped in the books
//! only, and the job is tried again under every limit. Once it fits, victims
//! that turn out not to be needed are given back, and only then are the
//! rest suspended for real and the job started. If no set of victims makes
//! it fit, nothing is suspended.

use std::cmp::Reverse;
use std::ops::Bound;

use mcfed_protocol::SimTime;
use rustc_hash::FxHashSet;

use crate::dispatch::{LimitBlock, PlaceMode};
use crate::job::{HostIndex, Job, JobId, JobState, PendingReason, Placement, QueueIndex, UserId};
use crate::scheduler::{Cluster, Transition, victim_key};

/// A victim stopped in the books, and whether it is terminated rather
/// than suspended.
type Chosen = (JobId, bool);

/// What a pending job needs from victims.
#[derive(Clone, Copy, Debug)]
struct Need {
    queue: QueueIndex,
    job: JobId,
    user: UserId,
    slots: u32,
}

impl Cluster {
    /// Whether running job `job` could be preempted at `now` (by a queue
    /// that may preempt its queue): not when NO_PREEMPT_RUN_TIME or
    /// NO_PREEMPT_FINISH_TIME protects it. The one test both victim choice
    /// and the counters' preemptable available slots use.
    pub(crate) fn preemptable_now(&self, job: &Job, now: SimTime) -> bool {
        job.state == JobState::Running
            && self.queues[job.queue]
                .guards
                .protection(job.run_time_at(now), job.expected_duration())
                .is_none()
    }

    /// Tries to start job `id` of `queue` by preempting running jobs of the
    /// queues `queue` may preempt. Returns whether it started.
    pub(crate) fn preempt_for(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) -> bool {
        let Some(job) = self.jobs.get(id) else {
            return false;
        };
        let need = Need {
            queue,
            job: id,
            user: job.user,
            slots: job.spec.slots,
        };
        if !self.preemption_may_help(&need, job.spec.resources.is_empty(), now) {
            return false;
        }
        let mut chosen: Vec<Chosen> = Vec::new();
        let Some(placement) = self.choose_victims(&need, now, &mut chosen) else {
            for &(victim, terminated) in chosen.iter().rev() {
                self.undo_stop(victim, terminated, now);
            }
            return false;
        };
        let placement = self.keep_needed_victims(&need, now, &mut chosen, placement);
        for &(victim, terminated) in &chosen {
            tracing::debug!(cluster = %self.name, victim = %victim, by = %id, terminated, "preempted");
            if terminated {
                self.finish_termination(victim, id, now, transitions);
            } else {
                self.finish_suspension(victim, id, now, transitions);
            }
        }
        self.start(id, placement, now, transitions);
        if self.hosts.set(self.queues[queue].host_set).free_slots > 0 {
            // The victims freed more than the job took: queues served
            // earlier in this pass may use the rest.
            self.cycle.pass_again = true;
        }
        true
    }

    /// Whether preempting could let the job start at all: not when a limit
    /// that suspending cannot lift holds it back, when (for a job without
    /// resource needs) free and preemptable slots together are too few, or
    /// when only reservations hold it back (preempting frees nothing).
    fn preemption_may_help(&self, need: &Need, plain: bool, now: SimTime) -> bool {
        let (queue, id) = (need.queue, need.job);
        // Limits that suspending cannot lift make it hopeless.
        if self
            .find_placement(queue, id, now, PlaceMode::Optimistic)
            .is_err()
        {
            return false;
        }
        let block = self.blocking_reason(need);
        if let Some(block) = block {
            if !block.relievable {
                return false;
            }
        } else {
            if plain {
                let reachable: u64 = self.hosts.set(self.queues[queue].host_set).free_slots
                    + self.queues[queue]
                        .victims
                        .iter()
                        .map(|&v| self.victim_slots.get(queue, v))
                        .sum::<u64>();
                if reachable < u64::from(need.slots) {
                    return false;
                }
            }
            // Held back by reservations alone: preempting frees nothing.
            if self
                .find_placement(queue, id, now, PlaceMode::Preempting)
                .is_ok()
            {
                return false;
            }
        }
        true
    }

    /// The cluster-wide limit (the user's or a group's MAX_JOBS, or a
    /// Limit section counting no hosts) holding the job back, if any.
    fn blocking_reason(&self, need: &Need) -> Option<LimitBlock> {
        self.user_limit_block(need.user, need.queue, need.slots)
    }

    /// Where the job fits now, if it does.
    fn fits(&self, need: &Need, now: SimTime) -> Option<Vec<Placement>> {
        if self.blocking_reason(need).is_some() {
            return None;
        }
        self.find_placement(need.queue, need.job, now, PlaceMode::Preempting)
            .ok()
    }

    /// Stops victims in the books, in preference order, until the job fits.
    /// Returns its placement, with `chosen` holding the victims; `None`
    /// when every candidate is stopped and it still does not fit.
    fn choose_victims(
        &mut self,
        need: &Need,
        now: SimTime,
        chosen: &mut Vec<Chosen>,
    ) -> Option<Vec<Placement>> {
        let least_run_time = self.policy.preempt_for.least_run_time;
        let victims = self.queues[need.queue].victims.clone();
        for victim_queue in victims {
            let mut seen: FxHashSet<JobId> = FxHashSet::default();
            if !least_run_time && self.blocking_reason(need).is_none() {
                // Least-loaded hosts first: hosts with free slots, by load.
                for host in self.partly_loaded_hosts(need) {
                    let mut on_host: Vec<(i64, JobId)> = self.hosts[host]
                        .jobs
                        .iter()
                        .filter_map(|&id| self.jobs.get(id))
                        .filter(|job| job.queue == victim_queue && job.state == JobState::Running)
                        .map(|job| (victim_key(job, false), job.id))
                        .collect();
                    on_host.sort_unstable_by_key(|&(key, id)| (Reverse(key), Reverse(id)));
                    for (_, victim) in on_host {
                        if seen.insert(victim) {
                            if let Some(placement) = self.consider(need, victim, now, chosen) {
                                return Some(placement);
                            }
                        }
                    }
                }
            }
            // Then the queue's running jobs in victim order.
            let mut cursor: Option<(Reverse<i64>, Reverse<JobId>)> = None;
            loop {
                let next = match cursor {
                    None => self.queues[victim_queue].running_order.iter().next(),
                    Some(after) => self.queues[victim_queue]
                        .running_order
                        .range((Bound::Excluded(after), Bound::Unbounded))
                        .next(),
                }
                .copied();
                let Some(entry) = next else {
                    break;
                };
                cursor = Some(entry);
                let Reverse(victim) = entry.1;
                if seen.contains(&victim) {
                    continue;
                }
                if let Some(placement) = self.consider(need, victim, now, chosen) {
                    return Some(placement);
                }
            }
        }
        None
    }

    /// Open hosts of the job's queue with free slots and running jobs, that
    /// offer the job's resources, least loaded first.
    fn partly_loaded_hosts(&self, need: &Need) -> Vec<HostIndex> {
        let Some(job) = self.jobs.get(need.job) else {
            return Vec::new();
        };
        let set = self.hosts.set(self.queues[need.queue].host_set);
        let mut hosts: Vec<HostIndex> = set
            .hosts_with_free_slots()
            .map(|(host, _)| host)
            .filter(|&host| {
                let host = &self.hosts[host];
                host.used > 0 && host.has_resources(&job.spec.resources)
            })
            .collect();
        hosts.sort_unstable_by_key(|&host| (self.hosts[host].load(), host));
        hosts
    }

    /// Stops `victim` in the books if it may be preempted and can help;
    /// returns the job's placement once it fits.
    fn consider(
        &mut self,
        need: &Need,
        victim: JobId,
        now: SimTime,
        chosen: &mut Vec<Chosen>,
    ) -> Option<Vec<Placement>> {
        if chosen.iter().any(|&(id, _)| id == victim) {
            return None;
        }
        let job = self.jobs.get(victim)?;
        if !self.preemptable_now(job, now) {
            return None;
        }
        let victim_queue = &self.queues[job.queue];
        let helps = match self.blocking_reason(need) {
            Some(LimitBlock {
                limit: Some(limit), ..
            }) => self.shares_limit(limit, (job.user, job.queue), need.user, need.queue),
            Some(LimitBlock {
                reason: PendingReason::UserJobLimit,
                ..
            }) => job.user == need.user,
            Some(_) => {
                job.user == need.user
                    || self.users[job.user]
                        .groups
                        .iter()
                        .any(|group| self.users[need.user].groups.contains(group))
            }
            None => {
                let set = self.hosts.set(self.queues[need.queue].host_set);
                let resources = self
                    .jobs
                    .get(need.job)
                    .map(|pending| pending.spec.resources.clone())
                    .unwrap_or_default();
                job.placement.iter().any(|place| {
                    let host = &self.hosts[place.host];
                    set.contains(place.host)
                        && !host.config.closed
                        && host.has_resources(&resources)
                })
            }
        };
        if !helps {
            return None;
        }
        let terminated = victim_queue.config.terminate_when_preempt;
        self.stop_in_books(victim, terminated, now);
        chosen.push((victim, terminated));
        self.fits(need, now)
    }

    /// Gives back, newest choice first, every victim the job fits without;
    /// the last victim chosen is the one that made it fit and stays.
    fn keep_needed_victims(
        &mut self,
        need: &Need,
        now: SimTime,
        chosen: &mut Vec<Chosen>,
        placement: Vec<Placement>,
    ) -> Vec<Placement> {
        if chosen.len() < 2 {
            return placement;
        }
        let mut index = chosen.len() - 1;
        while index > 0 {
            index -= 1;
            let (victim, terminated) = chosen[index];
            self.undo_stop(victim, terminated, now);
            if self.fits(need, now).is_some() {
                chosen.remove(index);
            } else {
                self.stop_in_books(victim, terminated, now);
            }
        }
        self.fits(need, now).unwrap_or(placement)
    }
}
