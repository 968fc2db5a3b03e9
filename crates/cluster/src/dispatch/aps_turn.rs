//! The turn of an absolute priority scheduling group (seed 001: "APS
//! overrides the job sort result of FCFS"): the pending jobs of the APS
//! queue and of the queues of its QUEUE_GROUP, with the running jobs'
//! pending resize requests, are ranked once per pass by their APS values
//! (computed for the current scheduling cycle, as LSF does) and tried in
//! that order, each under its own queue's limits and hosts. The group is
//! served at its APS queue's place in the pass; the other queues of the
//! group resume their suspended jobs in their own places.

use mcfed_protocol::SimTime;

use crate::job::JobState;
use crate::scheduler::{Cluster, Stop, Transition};

use super::{Outcome, Round, Scope, Turn};

impl Cluster {
    /// APS group `group`'s turn.
    pub(super) fn dispatch_aps(
        &mut self,
        group: usize,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let members = self.queues.aps_groups[group].members.clone();
        let mut open = vec![false; members.len()];
        for (position, &queue) in members.iter().enumerate() {
            self.queues[queue].stopped = None;
            let state = &self.queues[queue];
            if state.pending.is_empty() && state.resize_pending.is_empty() {
                continue;
            }
            match self.queue_stop(queue) {
                Some(reason) => self.queues[queue].stopped = Some(Stop { reason }),
                None => open[position] = true,
            }
        }
        if !open.contains(&true) {
            return;
        }
        let mut candidates = {
            let group = &self.queues.aps_groups[group];
            self.aps_candidates(group, &open, now)
        };
        candidates.sort_by(|a, b| a.0.dispatch_cmp(&b.0));
        let mut turns = vec![Turn::new(Round::Main); members.len()];
        for (_, id) in candidates {
            let Some(job) = self.jobs.get(id) else {
                continue;
            };
            let (queue, user, state) = (job.queue, job.user, job.state);
            let Some(position) = members.iter().position(|&member| member == queue) else {
                continue;
            };
            if !open[position] || self.user_stopped(queue, user) {
                continue;
            }
            let outcome = match state {
                JobState::Pending => {
                    self.try_dispatch(queue, id, now, transitions, &mut turns[position])
                }
                JobState::Running => self.try_grow(queue, id, now, transitions),
                _ => continue,
            };
            let Outcome::Failed { reason, scope } = outcome else {
                continue;
            };
            if state == JobState::Pending {
                self.set_reason(id, reason);
            }
            match scope {
                Scope::Job | Scope::Class => {}
                Scope::User => self.stop_user(queue, user, reason),
                Scope::Queue => {
                    self.stop_queue(queue, reason);
                    open[position] = false;
                    if !open.contains(&true) {
                        break;
                    }
                }
            }
        }
    }

    /// Whether the pass stopped looking at `user`'s jobs in `queue`.
    pub(super) fn user_stopped(
        &self,
        queue: crate::job::QueueIndex,
        user: crate::job::UserId,
    ) -> bool {
        let pass = self.cycle.pass;
        self.queues[queue]
            .users
            .get(&user)
            .and_then(|state| state.stopped)
            .is_some_and(|(at, _)| at == pass)
    }

    /// The pass looks at no more of `user`'s jobs in `queue`.
    pub(super) fn stop_user(
        &mut self,
        queue: crate::job::QueueIndex,
        user: crate::job::UserId,
        reason: crate::job::PendingReason,
    ) {
        let pass = self.cycle.pass;
        self.queues[queue].users.entry(user).or_default().stopped = Some((pass, reason));
    }
}
