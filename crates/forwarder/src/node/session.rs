//! Forwarding sessions: [`ForwarderNode::schedule`] decides every job
//! waiting at the submission cluster and forwards it, and sends the
//! MAX_RSCHED_TIME recalls that have come due.

use std::time::Duration;

use mcfed_protocol::{Envelope, JobForward, JobRecall, Message, SimTime};
use rustc_hash::FxHashMap;

use super::aps::ApsOrder;
use super::fair::FairOrder;
use super::{ForwarderNode, SendOrder, SourceState, SubmissionOrder};
use crate::policy::{Decision, Outcome, PendReason, decide_into};
use crate::view::{RemoteQueueId, ResourceId};

/// The shape of a job as the policy sees it: send queue, slots, resources.
type Shape = (usize, u32, Vec<ResourceId>);

impl ForwarderNode {
    /// Runs a forwarding session at `now` if one is due: decides every
    /// waiting job, appends the forwards to `out` and records decisions.
    /// With no scheduler to ask, FAIRSHARE send queues are ordered as if no
    /// user had shares and APS send queues by submission, and forwarded
    /// jobs carry no JPRIORITY; see [`ForwarderNode::schedule_with`].
    pub fn schedule(&mut self, now: SimTime, out: &mut Vec<Envelope>) {
        self.schedule_with(now, out, &SubmissionOrder);
    }

    /// [`ForwarderNode::schedule`], with `order` giving the dynamic
    /// priorities of the users of FAIRSHARE send queues, the APS values of
    /// the jobs of APS send queues and the JPRIORITY forwarded jobs carry.
    pub fn schedule_with(&mut self, now: SimTime, out: &mut Vec<Envelope>, order: &dyn SendOrder) {
        self.mark_unreachable(now);
        self.reclaim(now);
        out.append(&mut self.outgoing);
        self.send_recalls(now, out);
        for id in std::mem::take(&mut self.gave_up) {
            let decision = Decision::pend_without_candidates(
                self.mode,
                PendReason::ForwardCapReached {
                    cap: self.max_forwards,
                },
            );
            self.record(now, id, &decision, None);
        }
        if !self.session_due {
            return;
        }
        self.session_due = false;
        self.decide_waiting(now, out, order);
    }

    /// Decides every waiting job, in submission order; the places of a
    /// FAIRSHARE send queue's jobs go to its users in the order of their
    /// dynamic priorities, recomputed after each forward; those of an APS
    /// group's jobs to its jobs in the order of their APS values.
    fn decide_waiting(&mut self, now: SimTime, out: &mut Vec<Envelope>, order: &dyn SendOrder) {
        // Within a session views only lose slots, so a job shaped like one
        // that just pended pends too: reuse that decision.
        let mut pended: FxHashMap<Shape, Decision> = FxHashMap::default();
        let waiting: Vec<(u64, u64)> = self.waiting.iter().map(|(&k, &v)| (k, v)).collect();
        let mut fair = FairOrder::new(self, &waiting, order);
        let mut aps = ApsOrder::new(self, &waiting, order, now);
        for (key, id) in waiting {
            let queue = self.jobs.get(&id).map(|job| job.send_queue);
            let group = queue.and_then(|queue| self.send_queues[queue].aps_group);
            let mut standing = None;
            let (key, id) = match (queue, group) {
                (_, Some(group)) if aps.orders(group) => match aps.next(group) {
                    Some((next, at)) => {
                        standing = at;
                        next
                    }
                    None => continue,
                },
                (Some(queue), _) if fair.orders(queue) => match fair.next(self, queue, order) {
                    Some(next) => next,
                    None => continue,
                },
                _ => (key, id),
            };
            let Some(job) = self.jobs.get(&id) else {
                self.waiting.remove(&key);
                continue;
            };
            let shape = (
                job.send_queue,
                job.request.slots,
                job.request.resources.clone(),
            );
            let decision = if let Some(decision) = pended.get(&shape) {
                if let Outcome::Pend(reason) = &decision.outcome {
                    if job.last_pend.as_ref() == Some(reason) {
                        continue;
                    }
                }
                decision.clone()
            } else {
                let targets = &self.send_queues[job.send_queue].targets;
                let mut decision = std::mem::replace(&mut self.scratch, Decision::empty(self.mode));
                decide_into(
                    &self.view,
                    self.mode,
                    targets,
                    &job.request,
                    now,
                    &mut decision,
                );
                decision
            };
            match decision.outcome {
                Outcome::Forward(target) => {
                    self.record(now, id, &decision, standing);
                    self.scratch = decision;
                    self.waiting.remove(&key);
                    self.forward(now, id, target, out, order);
                }
                Outcome::Pend(ref reason) => {
                    let changed = job.last_pend.as_ref() != Some(reason);
                    if changed {
                        self.record(now, id, &decision, standing);
                        if let Some(job) = self.jobs.get_mut(&id) {
                            job.last_pend = Some(reason.clone());
                        }
                    }
                    pended.entry(shape).or_insert(decision);
                }
            }
        }
    }

    /// Forwards job `id` to `target`, carrying the JPRIORITY `order` gives
    /// it now (so it keeps it at the execution cluster).
    fn forward(
        &mut self,
        now: SimTime,
        id: u64,
        target: RemoteQueueId,
        out: &mut Vec<Envelope>,
        order: &dyn SendOrder,
    ) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let mut spec = job.spec.clone();
        if let Some(priority) = order.job_priority(&spec, now.saturating_since(job.submitted_at)) {
            let mut options = spec.options();
            options.job_priority = Some(priority);
            spec.set_options(options);
        }
        let forward_seq = self.view.record_forward(target, job.request.slots);
        if let Some(oracle) = &mut self.oracle {
            oracle.record_forward(target, job.request.slots);
        }
        let at = self.view.queue_ref(target);
        let attempt = job.forwards;
        job.forwards += 1;
        job.note = None;
        job.last_pend = None;
        job.forward_seq = forward_seq;
        job.forwarded_at = now;
        job.recalled = false;
        job.previous_targets.push(target);
        tracing::debug!(cluster = %self.cluster, job = id, to = %at, at = %now, "forward");
        out.push(Envelope {
            from: self.cluster.clone(),
            to: at.cluster.clone(),
            message: Message::JobForward(JobForward {
                forward_seq,
                source_job: id,
                queue: at.queue.clone(),
                send_queue: self.send_queues[job.send_queue_index()].name.clone(),
                spec,
                submitted_at: job.submitted_at,
                attempt,
            }),
        });
        self.set_state(
            id,
            SourceState::Forwarded {
                to: target,
                forward_seq,
            },
        );
        self.count_forwarded(id, false);
    }

    /// Sends the recalls due at `now` (MAX_RSCHED_TIME).
    fn send_recalls(&mut self, now: SimTime, out: &mut Vec<Envelope>) {
        while let Some((&(at, id), _)) = self.recalls.iter().next() {
            if at > now {
                break;
            }
            self.recalls.remove(&(at, id));
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let SourceState::Accepted { to, dest_job } = job.state else {
                continue;
            };
            if job.recalled {
                continue;
            }
            job.recalled = true;
            if let Some(changes) = &mut self.changes {
                changes.push(id);
            }
            let limit = self.send_queues[job.send_queue]
                .max_rsched_time
                .unwrap_or_default();
            let at_queue = self.view.queue_ref(to);
            tracing::debug!(cluster = %self.cluster, job = id, at = %at_queue, "recall");
            out.push(Envelope {
                from: self.cluster.clone(),
                to: at_queue.cluster.clone(),
                message: Message::JobRecall(JobRecall {
                    source_job: id,
                    dest_job,
                    reason: format!(
                        "recalled after pending there longer than MAX_RSCHED_TIME ({})",
                        humanize(limit)
                    ),
                }),
            });
        }
    }
}

/// A duration as `1h 30m`, `2m`, `45s`.
fn humanize(duration: Duration) -> String {
    let secs = duration.as_secs();
    let (hours, minutes, seconds) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}m"));
    }
    if seconds > 0 || parts.is_empty() {
        parts.push(format!("{seconds}s"));
    }
    parts.join(" ")
}
