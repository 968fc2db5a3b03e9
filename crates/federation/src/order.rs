//! The submission cluster's scheduler answering its forwarder about the
//! order of the jobs waiting in its send queues ([`ClusterOrder`], the
//! [`SendOrder`] a session is given): users' dynamic priorities in
//! FAIRSHARE send queues, jobs' APS values in APS send queues, and the
//! JPRIORITY a forwarded job carries. Also what a member shows of that
//! order: a waiting job's APS value ([`Member::send_queue_aps`]) and the
//! order the next session would decide a send queue's jobs in
//! ([`Member::forwarding_order`]).

use std::time::Duration;

use mcfed_cluster::{ApsEntry, ApsSet, ApsShown, Cluster, WaitingJob};
use mcfed_forwarder::{ApsQuery, ApsValue, SendOrder};
use mcfed_protocol::{ApsChange, JobSpec, QueueName, SimTime};

use crate::member::Member;

/// A submission cluster's scheduler, at `now`, as its forwarder's
/// [`SendOrder`].
pub(crate) struct ClusterOrder<'a> {
    pub(crate) cluster: &'a Cluster,
    pub(crate) now: SimTime,
}

impl SendOrder for ClusterOrder<'_> {
    fn priority(&self, queue: &QueueName, user: &str, fwd_job_slots: u32) -> Option<f64> {
        self.cluster
            .forwarding_priority(queue.as_str(), user, fwd_job_slots, self.now)
    }

    fn aps_value(&self, job: &ApsQuery<'_>) -> Option<ApsValue> {
        let entry = self
            .cluster
            .send_queue_aps(job.queue.as_str(), &waiting(job))?;
        match entry.shown {
            ApsShown::System(value) => Some(ApsValue::System(value)),
            ApsShown::Calculated(value) => Some(ApsValue::Calculated(value)),
            ApsShown::None => None,
        }
    }

    fn job_priority(&self, spec: &JobSpec, pended: Duration) -> Option<u32> {
        self.cluster.forwarded_job_priority(spec, pended)
    }
}

/// The job `query` asks about, as the scheduler's APS reads it.
fn waiting<'a>(query: &ApsQuery<'a>) -> WaitingJob<'a> {
    WaitingJob {
        id: query.id,
        spec: query.spec,
        pended: query.pended,
        fs: query.fs,
        set: query.set.and_then(aps_set),
    }
}

/// The value `bmod -aps` leaves set.
fn aps_set(change: ApsChange) -> Option<ApsSet> {
    match change {
        ApsChange::System(value) => Some(ApsSet::System(value.0)),
        ApsChange::Admin(value) => Some(ApsSet::Admin(value.0)),
        ApsChange::Clear => None,
    }
}

impl Member {
    /// The order of the send queues' waiting jobs at `now`, as this
    /// member's scheduler gives it.
    pub(crate) fn send_order(&self, now: SimTime) -> ClusterOrder<'_> {
        ClusterOrder {
            cluster: self.node.cluster(),
            now,
        }
    }

    /// The APS value, with the formula's parts, of job `id` of an APS send
    /// queue while it waits at this cluster (held or given up on
    /// included), at `now`; `None` for any other job.
    pub fn send_queue_aps(&self, id: u64, now: SimTime) -> Option<ApsEntry> {
        let forwarder = self.forwarder.as_ref()?;
        let job = forwarder.job(id)?;
        if job.remote_queue().is_some() {
            return None;
        }
        let queue = forwarder.send_queue_name(job.send_queue_index());
        let cluster = self.node.cluster();
        let forwarded = forwarder.forwarded_slots(job.send_queue_index(), &job.spec.user);
        let local = self.local_time(now);
        let query = ApsQuery {
            id,
            queue,
            spec: &job.spec,
            pended: local.saturating_since(job.submitted_at),
            fs: cluster.forwarding_priority(queue.as_str(), &job.spec.user, forwarded, now),
            set: job.aps,
        };
        cluster.send_queue_aps(queue.as_str(), &waiting(&query))
    }

    /// The order in which the next forwarding session would decide the
    /// jobs waiting in send queue `queue` at `now` (their ids): an APS
    /// group's by APS value, a plain send queue's by submission; `None`
    /// for a FAIRSHARE send queue without APS, or no send queue.
    pub fn forwarding_order(&self, queue: &str, now: SimTime) -> Option<Vec<u64>> {
        let forwarder = self.forwarder.as_ref()?;
        forwarder.waiting_order(queue, self.local_time(now), &self.send_order(now))
    }
}
