//! A fairshare queue's turn (seed 002): pending jobs are tried one at a
//! time from the user with the highest dynamic priority, recomputed after
//! each start, first come first served within a user.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use mcfed_protocol::SimTime;

use crate::fairshare::{ShareAccount, UsageTerms, dynamic_priority};
use crate::job::{QueueIndex, UserId};
use crate::scheduler::{Cluster, Transition};

use super::{Outcome, Round, Scope, Turn};

/// A fairshare user waiting for its next job to be tried.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    priority: f64,
    next: u64,
    user: UserId,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// Highest priority first, then the earliest job, then the lowest user
    /// number: a max-heap pops the candidate to try next.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then_with(|| other.next.cmp(&self.next))
            .then_with(|| other.user.cmp(&self.user))
    }
}

impl Cluster {
    /// The dynamic priority of `user` in fairshare queue `queue` at `now`
    /// (seed 002), with the figures behind it, or `None` for a queue
    /// without fairshare or a user it has not seen. The one place a user's
    /// dynamic priority is computed (absolute priority scheduling's FS
    /// factor is to read it too).
    pub(crate) fn user_priority(
        &self,
        queue: QueueIndex,
        user: UserId,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let account = &self.queues[queue].users.get(&user)?.account;
        let reserved = self.reserved_slots(queue, Some(user));
        self.account_priority(queue, account, reserved, now)
    }

    /// The dynamic priority of the account `account` in `queue`, which
    /// holds `reserved` reserved slots, at `now`: every term of seed 002's
    /// formula, the optional ones as the queue's switches say.
    pub(crate) fn account_priority(
        &self,
        queue: QueueIndex,
        account: &ShareAccount,
        reserved: u32,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let factors = &self.queues[queue].fairshare.as_ref()?.factors;
        let hist_hours = factors.hist_hours;
        let cpu_time = account.cpu_time(now, hist_hours);
        let run_time = if factors.run_time_decay {
            account.decayed_run_time(now, hist_hours)
        } else {
            account.run_time(now)
        };
        let fairshare_adjustment =
            self.adjustment
                .value(factors.fairshare_adjustment, account, cpu_time, run_time);
        let usage = UsageTerms {
            cpu_time,
            run_time,
            historical_run_time: if factors.hist_run_time {
                account.historical_run_time(now, hist_hours)
            } else {
                0.0
            },
            committed_run_time: if factors.committed_run_time > 0.0 {
                account.committed_run_time(now)
            } else {
                0.0
            },
            job_slots: f64::from(account.running_slots + reserved),
            fwd_job_slots: 0.0,
            fairshare_adjustment,
            historical_gpu_run_time: if factors.gpu_hist_run_time {
                account.historical_gpu_run_time(now, hist_hours)
            } else {
                0.0
            },
            gpu_run_time: account.gpu_run_time(now),
            gpus: f64::from(account.gpus),
        };
        Some((dynamic_priority(account.shares, &usage, factors), usage))
    }

    pub(super) fn dispatch_fairshare(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let mut heap: BinaryHeap<Candidate> = self.queues[queue]
            .users
            .iter()
            .filter_map(|(&user, state)| {
                let (&next, _) = state.pending.first_key_value()?;
                let (priority, _) = self.user_priority(queue, user, now)?;
                Some(Candidate {
                    priority,
                    next,
                    user,
                })
            })
            .collect();
        let mut turn = Turn::new(Round::Main);
        while let Some(candidate) = heap.pop() {
            let Some((&arrival, &id)) = self.queues[queue]
                .users
                .get(&candidate.user)
                .and_then(|user| user.pending.range(candidate.next..).next())
            else {
                continue;
            };
            let outcome = self.try_dispatch(queue, id, now, transitions, &mut turn);
            let priority = match outcome {
                Outcome::Started => self
                    .user_priority(queue, candidate.user, now)
                    .map_or(candidate.priority, |(priority, _)| priority),
                Outcome::Failed { reason, scope } => {
                    self.set_reason(id, reason);
                    match scope {
                        Scope::Job => candidate.priority,
                        Scope::User => {
                            let pass = self.cycle.pass;
                            if let Some(user) = self.queues[queue].users.get_mut(&candidate.user) {
                                user.stopped = Some((pass, reason));
                            }
                            continue;
                        }
                        Scope::Queue => {
                            self.stop_queue(queue, reason);
                            return;
                        }
                    }
                }
            };
            let has_more = self.queues[queue]
                .users
                .get(&candidate.user)
                .is_some_and(|user| user.pending.range(arrival + 1..).next().is_some());
            if has_more {
                heap.push(Candidate {
                    priority,
                    next: arrival + 1,
                    user: candidate.user,
                });
            }
        }
    }
}
