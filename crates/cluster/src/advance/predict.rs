//! A slot reservation's predicted start under advance reservations (issue
//! 27 item 8): the time a wide pending job could start, which backfill
//! compares run limits with, leaves out the slots an advance reservation
//! will hold then. A reservation holds slots from the job at a time `t`
//! when it has not ended by `t` and starts before the job would end (at
//! `t` plus its run limit; any time, for a job without one) — the rule
//! `Cluster::reservation_bounds` applies when the job is placed, so the
//! prediction is a time the job could really start. What it holds is its
//! slots (at most what its hosts in the job's host set have) less those
//! its own jobs still run on, and no more than its hosts have free then; a
//! closed reservation's jobs end at its end at the latest. Besides running jobs' ends, a reservation's end is a
//! time more slots come free.

use mcfed_protocol::SimTime;

use crate::job::HostIndex;
use crate::reservations::Reservation;
use crate::scheduler::Cluster;

/// A running job of the host set, as the prediction sees it.
struct RunningEnd {
    /// When it ends at the latest: its run limit, or its closed
    /// reservation's end; `SimTime::MAX` when it has neither.
    at: SimTime,
    /// Its host, one of the set's.
    host: HostIndex,
    /// Its slots on that host.
    slots: u64,
    /// Whether it is of the reserving job's queue (a share's room).
    own_queue: bool,
    /// The advance reservation it runs in, by index.
    within: Option<usize>,
}

impl Cluster {
    /// [`Cluster::predicted_start`] for a cluster with advance
    /// reservations; `None` when a job without a run limit stands in the
    /// way for ever.
    pub(crate) fn predicted_start_with_advance(
        &self,
        reservation: &Reservation,
        now: SimTime,
        mut room: u64,
    ) -> Option<SimTime> {
        let run_limit = self.jobs.get(reservation.job)?.spec.run_limit;
        let set = self.hosts.set(reservation.host_set);
        let needed = u64::from(reservation.slots);
        let mut ends: Vec<RunningEnd> = Vec::new();
        self.each_running_on(&set.members, |job, host, slots| {
            let within = self.named_reservation(job).flatten();
            let mut at = job.spec.run_limit.map_or(SimTime::MAX, |limit| {
                job.running_since + limit.saturating_sub(job.ran_before())
            });
            if let Some(index) = within.filter(|&index| !self.advance[index].config.open) {
                at = at.min(self.advance[index].config.end.max(now));
            }
            ends.push(RunningEnd {
                at,
                host,
                slots: u64::from(slots),
                own_queue: job.queue == reservation.queue,
                within,
            });
        });
        ends.sort_unstable_by_key(|end| end.at);
        let capacity = self.advance_capacity_in(&set.members);
        // Free slots on each reservation's hosts: it holds no more.
        let mut free_in: Vec<u64> = self
            .advance
            .iter()
            .map(|rsv| {
                rsv.hosts
                    .iter()
                    .filter(|host| set.members.contains(host))
                    .map(|&host| u64::from(self.hosts[host].free()))
                    .sum()
            })
            .collect();
        let mut own_running = vec![0u64; self.advance.len()];
        for end in &ends {
            if let Some(index) = end.within {
                own_running[index] += end.slots;
            }
        }
        let mut times: Vec<SimTime> = std::iter::once(now)
            .chain(ends.iter().map(|end| end.at))
            .chain(self.advance.iter().map(|rsv| rsv.config.end))
            .filter(|&at| at >= now)
            .collect();
        times.sort_unstable();
        times.dedup();
        let mut free = set.free_slots;
        let mut ended = 0;
        for at in times {
            if at == SimTime::MAX {
                return None;
            }
            for end in ends[ended..].iter().take_while(|end| end.at <= at) {
                free += end.slots;
                if end.own_queue {
                    room = room.saturating_add(end.slots);
                }
                if let Some(index) = end.within {
                    own_running[index] -= end.slots;
                }
                for (index, rsv) in self.advance.iter().enumerate() {
                    if rsv.hosts.contains(&end.host) {
                        free_in[index] += end.slots;
                    }
                }
                ended += 1;
            }
            let held: u64 = (0..self.advance.len())
                .filter(|&index| self.advance_holds_at(index, at, run_limit))
                .map(|index| {
                    capacity[index]
                        .saturating_sub(own_running[index])
                        .min(free_in[index])
                })
                .sum();
            if free.saturating_sub(held) >= needed && room >= needed {
                return Some(at);
            }
        }
        None
    }

    /// Whether advance reservation `index` holds slots from a job that
    /// would start at `at` with run limit `run_limit`.
    fn advance_holds_at(
        &self,
        index: usize,
        at: SimTime,
        run_limit: Option<std::time::Duration>,
    ) -> bool {
        let config = &self.advance[index].config;
        config.end > at && run_limit.is_none_or(|limit| config.start < at + limit)
    }

    /// Each advance reservation's slots within `members` (open hosts): at
    /// most what its hosts among them have.
    fn advance_capacity_in(&self, members: &[HostIndex]) -> Vec<u64> {
        self.advance
            .iter()
            .map(|rsv| {
                let room: u64 = rsv
                    .hosts
                    .iter()
                    .filter(|host| members.contains(host) && !self.hosts[**host].config.closed)
                    .map(|&host| u64::from(self.hosts[host].config.max_slots))
                    .sum();
                room.min(u64::from(rsv.slots))
            })
            .collect()
    }
}
