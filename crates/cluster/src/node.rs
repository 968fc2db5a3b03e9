//! A cluster's protocol endpoint, sans-IO: it takes forwarded jobs and
//! answers them, reports forwarded jobs' state changes to their submission
//! clusters, and takes the counter snapshots sent every
//! MC_PLUGIN_UPDATE_INTERVAL.

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, ForwardWatermark, JobAccept, JobReject, JobSpec,
    JobStatus, Message, SimTime,
};
use rustc_hash::FxHashMap;

use crate::job::{JobId, JobOrigin, QueueIndex};
use crate::scheduler::{Cluster, SubmitError, Transition};

/// A submission cluster that collects this cluster's counters.
#[derive(Clone, Debug)]
struct Subscriber {
    cluster: ClusterName,
    /// Receive queues that take jobs from it.
    queues: Vec<QueueIndex>,
}

/// A cluster with its MultiCluster endpoint.
#[derive(Debug)]
pub struct ClusterNode {
    cluster: Cluster,
    subscribers: Vec<Subscriber>,
    update_seq: u64,
    /// Per submission cluster, the last forward sequence number received.
    last_forward: FxHashMap<ClusterName, u64>,
    transitions: Vec<Transition>,
}

impl ClusterNode {
    /// Wraps `cluster`; it sends counters to each of `subscribers` (the
    /// submission clusters that forward to it), for the receive queues that
    /// accept jobs from that cluster.
    pub fn new(cluster: Cluster, subscribers: impl IntoIterator<Item = ClusterName>) -> Self {
        let subscribers = subscribers
            .into_iter()
            .map(|name| {
                let queues = cluster
                    .receive_queues()
                    .filter(|&queue| {
                        cluster
                            .queue_config(queue)
                            .receive_from
                            .as_ref()
                            .is_some_and(|from| from.accepts(&name))
                    })
                    .collect();
                Subscriber {
                    cluster: name,
                    queues,
                }
            })
            .collect();
        ClusterNode {
            cluster,
            subscribers,
            update_seq: 0,
            last_forward: FxHashMap::default(),
            transitions: Vec::new(),
        }
    }

    /// The scheduling core.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        self.cluster.name()
    }

    /// Whether any submission cluster collects this cluster's counters.
    pub fn has_subscribers(&self) -> bool {
        !self.subscribers.is_empty()
    }

    /// Submits a local job.
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
    ) -> Result<JobId, SubmitError> {
        self.cluster.submit(now, queue, spec, JobOrigin::Local)
    }

    /// Handles a message from cluster `from`; replies go to `out`.
    pub fn handle(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        message: Message,
        out: &mut Vec<Envelope>,
    ) {
        let Message::JobForward(forward) = message else {
            tracing::debug!(cluster = %self.name(), kind = message.kind(), "message not for the cluster");
            return;
        };
        let last = self.last_forward.entry(from.clone()).or_insert(0);
        *last = (*last).max(forward.forward_seq);
        let reply = match self.cluster.receive_forward(now, from, &forward) {
            Ok(job) => {
                tracing::debug!(cluster = %self.name(), from = %from, source_job = forward.source_job, job = %job, "accepted forwarded job");
                Message::JobAccept(JobAccept {
                    forward_seq: forward.forward_seq,
                    source_job: forward.source_job,
                    dest_job: job.0,
                })
            }
            Err(reason) => {
                tracing::debug!(cluster = %self.name(), from = %from, source_job = forward.source_job, %reason, "refused forwarded job");
                Message::JobReject(JobReject {
                    forward_seq: forward.forward_seq,
                    source_job: forward.source_job,
                    reason,
                })
            }
        };
        out.push(Envelope {
            from: self.name().clone(),
            to: from.clone(),
            message: reply,
        });
    }

    /// When the node next needs [`ClusterNode::advance`] on its own.
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        self.cluster.next_event_time()
    }

    /// Whether [`ClusterNode::advance`] has work to do at the current time.
    pub fn needs_advance(&self) -> bool {
        self.cluster.needs_dispatch()
    }

    /// Moves the cluster to `now` (finishing and dispatching jobs), tells
    /// submission clusters about their jobs, and appends every job
    /// transition to `transitions`.
    pub fn advance(
        &mut self,
        now: SimTime,
        out: &mut Vec<Envelope>,
        transitions: &mut Vec<Transition>,
    ) {
        self.transitions.clear();
        self.cluster.advance(now, &mut self.transitions);
        for transition in &self.transitions {
            if let JobOrigin::Forwarded { from, source_job } = &transition.origin {
                out.push(Envelope {
                    from: self.cluster.name().clone(),
                    to: from.clone(),
                    message: Message::JobStatus(JobStatus {
                        source_job: *source_job,
                        dest_job: transition.job.0,
                        event: transition.event,
                        at: transition.at,
                    }),
                });
            }
        }
        transitions.extend_from_slice(&self.transitions);
    }

    /// Takes a counter snapshot at `now` and appends one update per
    /// subscribing submission cluster to `out`.
    pub fn publish_counters(&mut self, now: SimTime, out: &mut Vec<Envelope>) {
        if self.subscribers.is_empty() {
            return;
        }
        self.update_seq += 1;
        for subscriber in &self.subscribers {
            out.push(Envelope {
                from: self.cluster.name().clone(),
                to: subscriber.cluster.clone(),
                message: Message::CounterUpdate(self.snapshot(subscriber, self.update_seq, now)),
            });
        }
    }

    /// The true counters `submission_cluster` would get if a snapshot were
    /// taken now, numbered `seq` (for the oracle; sends nothing and does not
    /// advance the node's own update numbering).
    pub fn true_counters(
        &self,
        submission_cluster: &ClusterName,
        seq: u64,
        now: SimTime,
    ) -> Option<CounterUpdate> {
        self.subscribers
            .iter()
            .find(|subscriber| &subscriber.cluster == submission_cluster)
            .map(|subscriber| self.snapshot(subscriber, seq, now))
    }

    fn snapshot(&self, subscriber: &Subscriber, seq: u64, now: SimTime) -> CounterUpdate {
        CounterUpdate {
            sender: self.cluster.name().clone(),
            seq,
            taken_at: now,
            queues: subscriber
                .queues
                .iter()
                .map(|&queue| self.cluster.queue_counters(queue))
                .collect(),
            forwards_received: self
                .last_forward
                .get(&subscriber.cluster)
                .map(|&seq| ForwardWatermark {
                    submission_cluster: subscriber.cluster.clone(),
                    last_forward_seq: seq,
                })
                .into_iter()
                .collect(),
        }
    }
}
