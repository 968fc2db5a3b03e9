//! The dynamic priority of a share account in a queue, as dispatch, the
//! APS FS factor, `bqueues -l` and a send queue's forwarder read it: every
//! term of seed 002's formula from the account's figures, with the slots
//! its users' reservations hold and (at a submission cluster) the slots
//! its jobs were forwarded with. The formula itself is
//! [`dynamic_priority`](super::dynamic_priority).

use mcfed_protocol::SimTime;

use super::{NodeId, ShareAccount, UsageTerms, dynamic_priority};
use crate::job::{QueueIndex, UserId};
use crate::scheduler::Cluster;

impl Cluster {
    /// The dynamic priority of share account `node` of fairshare queue
    /// `queue` at `now` (seed 002), with the figures behind it: its figures
    /// are those of every job of its users, with the slots their
    /// reservations hold. With [`Cluster::account_priority`], the one place
    /// a dynamic priority is computed (a user's, through the account its
    /// jobs count against: [`Cluster::dynamic_priority_of`]; absolute
    /// priority scheduling's FS factor is to read it there).
    pub(crate) fn node_priority(
        &self,
        queue: QueueIndex,
        node: NodeId,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let tree = &self.queues[queue].fairshare.as_ref()?.tree;
        let reserved = self.reserved_slots_below(queue, node);
        self.account_priority(queue, &tree.node(node).account, reserved, now)
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
        self.forwarding_account_priority(queue, account, reserved, 0, now)
    }

    /// [`Cluster::account_priority`] with `forwarded` slots of the
    /// account's jobs forwarded to other clusters and not finished (seed
    /// 002's fwd_job_slots, weighed by FWD_JOB_FACTOR).
    fn forwarding_account_priority(
        &self,
        queue: QueueIndex,
        account: &ShareAccount,
        reserved: u32,
        forwarded: u32,
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
            fwd_job_slots: f64::from(forwarded),
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

    /// The dynamic priority of `user` in FAIRSHARE send queue `queue` at
    /// `now`, with `forwarded` slots of the user's jobs forwarded from it
    /// and not finished (the submission cluster's fwd_job_slots; its own
    /// running figures there are zero, a send queue running nothing
    /// locally). `None` for a queue without fairshare, or a user without
    /// shares in it.
    pub fn forwarding_priority(
        &self,
        queue: &str,
        user: &str,
        forwarded: u32,
        now: SimTime,
    ) -> Option<f64> {
        let index = self.queue_index(queue)?;
        let tree = &self.queues[index].fairshare.as_ref()?.tree;
        let shares = tree.leaf_shares(user, self.users.directory())?;
        self.forwarding_account_priority(index, &ShareAccount::new(shares), 0, forwarded, now)
            .map(|(priority, _)| priority)
    }

    /// Slots the reservations of `queue`'s jobs hold for the users whose
    /// accounts are at or below `node`.
    fn reserved_slots_below(&self, queue: QueueIndex, node: NodeId) -> u32 {
        if self.reservations.is_empty() {
            return 0;
        }
        let Some(fairshare) = self.queues[queue].fairshare.as_ref() else {
            return 0;
        };
        let users = &self.queues[queue].users;
        let mut leaves: Vec<UserId> = users
            .iter()
            .filter(|(_, user)| {
                user.leaf
                    .is_some_and(|leaf| fairshare.tree.covers(node, leaf))
            })
            .map(|(&id, _)| id)
            .collect();
        leaves.sort_unstable();
        leaves
            .into_iter()
            .map(|user| self.reserved_slots(queue, Some(user)))
            .sum()
    }
}
