//! The order of an absolute priority scheduling group's turn (seed 001:
//! "APS overrides the job sort result of FCFS"): the pending jobs of the
//! APS queue and of the queues of its QUEUE_GROUP, with the running jobs'
//! pending resize requests, are ranked once per pass by their APS values
//! (computed for the current scheduling cycle, as LSF does) and tried in
//! that order, each under its own queue's limits and hosts. The group is
//! served at its APS queue's place in the pass; the other queues of the
//! group resume their suspended jobs in their own places.

use mcfed_protocol::SimTime;

use crate::dispatch::{Outcome, Round, Scope, Turn};
use crate::job::{JobId, JobState, QueueIndex, UserId};
use crate::scheduler::Cluster;

use super::{Flow, Next};

/// An APS group's order for one turn.
pub(crate) struct ApsOrder {
    /// The group's queues, and whether each still takes jobs this turn.
    members: Vec<QueueIndex>,
    open: Vec<bool>,
    /// The candidates by rank, and how many were handed out.
    ranked: Vec<JobId>,
    given: usize,
    /// Each member queue's turn state.
    turns: Vec<Turn>,
    /// The candidate being tried: its queue's place among the members and
    /// its user.
    current: Option<(usize, UserId)>,
}

impl ApsOrder {
    /// Group `group`'s order at `now`: its queues that have something to
    /// try and are not stopped at once, their candidates ranked; `None`
    /// when no queue is open.
    pub(super) fn start(cluster: &mut Cluster, group: usize, now: SimTime) -> Option<Self> {
        let members = cluster.queues.aps_group(group).members.clone();
        let open: Vec<bool> = members
            .iter()
            .map(|&queue| cluster.open_for_turn(queue))
            .collect();
        if !open.contains(&true) {
            return None;
        }
        let mut candidates = {
            let group = cluster.queues.aps_group(group);
            cluster.aps_candidates(group, &open, now)
        };
        candidates.sort_by(|a, b| a.0.dispatch_cmp(&b.0));
        let turns = vec![Turn::new(Round::Main); members.len()];
        Some(ApsOrder {
            members,
            open,
            ranked: candidates.into_iter().map(|(_, id)| id).collect(),
            given: 0,
            turns,
            current: None,
        })
    }

    /// The next candidate whose queue is open and whose user the turn has
    /// not stopped at: a pending job, or a running job's resize request.
    pub(super) fn next(&mut self, cluster: &Cluster) -> Option<Next> {
        while let Some(&id) = self.ranked.get(self.given) {
            self.given += 1;
            let Some(job) = cluster.jobs.get(id) else {
                continue;
            };
            let Some(position) = self.members.iter().position(|&queue| queue == job.queue) else {
                continue;
            };
            if !self.open[position] || cluster.user_stopped(job.queue, job.user) {
                continue;
            }
            let grow = match job.state {
                JobState::Pending => false,
                JobState::Running => true,
                _ => continue,
            };
            self.current = Some((position, job.user));
            return Some(Next {
                queue: job.queue,
                job: id,
                grow,
            });
        }
        None
    }

    pub(super) fn turn(&mut self, next: &Next) -> &mut Turn {
        let position = self
            .members
            .iter()
            .position(|&queue| queue == next.queue)
            .unwrap_or(0);
        &mut self.turns[position]
    }

    /// After a try: a failure for the user stops the turn at the user's
    /// jobs in that queue, one for the queue closes the queue; the turn
    /// ends when every queue is closed.
    pub(super) fn tried(&mut self, cluster: &mut Cluster, next: &Next, outcome: Outcome) -> Flow {
        let (Some((position, user)), Outcome::Failed { reason, scope }) =
            (self.current.take(), outcome)
        else {
            return Flow::Continue;
        };
        match scope {
            Scope::Job | Scope::Class => {}
            Scope::User => cluster.stop_user(next.queue, user, reason),
            Scope::Queue => {
                cluster.stop_queue(next.queue, reason);
                self.open[position] = false;
                if !self.open.contains(&true) {
                    return Flow::Stop;
                }
            }
        }
        Flow::Continue
    }
}
