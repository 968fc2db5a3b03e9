//! Forwarding sessions: [`ForwarderNode::schedule`] decides every job
//! waiting at the submission cluster and forwards it, and sends the
//! MAX_RSCHED_TIME recalls that have come due.

use std::cmp::Reverse;
use std::time::Duration;

use mcfed_protocol::{Envelope, JobForward, JobRecall, Message, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

use super::aps::ApsOrder;
use super::fair::FairOrder;
use super::parked::Shape;
use super::{ApsStanding, ForwarderNode, SendOrder, SourceState, SubmissionOrder};
use crate::policy::{Decision, Outcome, PendReason, decide_into};
use crate::view::RemoteQueueId;

/// What a session carries from one parked group to the next.
struct Session<'a> {
    now: SimTime,
    /// The view's fit epoch during the session.
    epoch: u64,
    /// The session's pend decision of each shape decided so far.
    pended: &'a mut FxHashMap<Shape, Decision>,
    /// Jobs that pended in the session, to park once it is over.
    to_park: &'a mut Vec<u64>,
    out: &'a mut Vec<Envelope>,
    order: &'a dyn SendOrder,
}

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
        self.expire_refusals();
        self.decide_waiting(now, out, order);
    }

    /// Decides every waiting job, in submission order; the places of a
    /// FAIRSHARE send queue's jobs go to its users in the order of their
    /// dynamic priorities, recomputed after each forward; those of an APS
    /// group's jobs to its jobs in the order of their APS values. Parked
    /// jobs (`parked`) are met group by group, each group at its first
    /// job's place.
    fn decide_waiting(&mut self, now: SimTime, out: &mut Vec<Envelope>, order: &dyn SendOrder) {
        // Within a session views only lose slots, so a job shaped like one
        // that just pended pends too: reuse that decision.
        let mut pended: FxHashMap<Shape, Decision> = FxHashMap::default();
        let waiting: Vec<(u64, u64)> = self.waiting.iter().map(|(&k, &v)| (k, v)).collect();
        let mut fair = FairOrder::new(self, &waiting, order);
        let mut aps = ApsOrder::new(self, &waiting, order, now);
        let epoch = self.view.fit_epoch();
        let deciding: FxHashSet<(usize, u32)> = waiting
            .iter()
            .filter_map(|(_, id)| self.jobs.get(id))
            .map(|job| (job.send_queue, job.request.slots))
            .collect();
        let mut heads = self.parked.heads(epoch, &deciding);
        let mut to_park = Vec::new();
        let mut places = waiting.into_iter().peekable();
        loop {
            let group_first = match (places.peek(), heads.peek()) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(&(key, _)), Some(Reverse((first, _)))) => *first < key,
            };
            if group_first {
                let Some(Reverse((_, group))) = heads.pop() else {
                    break;
                };
                let mut session = Session {
                    now,
                    epoch,
                    pended: &mut pended,
                    to_park: &mut to_park,
                    out,
                    order,
                };
                if let Some(next) = self.decide_parked(group, &mut session) {
                    heads.push(Reverse((next, group)));
                }
                continue;
            }
            let Some((key, id)) = places.next() else {
                break;
            };
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
            let parks = self.send_queues[job.send_queue].parks();
            let shape = job.shape();
            let decision = if let Some(decision) = pended.get(&shape) {
                if let Outcome::Pend(reason) = &decision.outcome {
                    if job.last_pend.as_ref() == Some(reason) {
                        if parks {
                            to_park.push(id);
                        }
                        continue;
                    }
                }
                decision.clone()
            } else {
                self.decide_job(id, now)
            };
            match decision.outcome {
                Outcome::Forward(target) => {
                    self.record(now, id, &decision, standing);
                    self.scratch = decision;
                    self.waiting.remove(&key);
                    self.forward(now, id, target, out, order);
                }
                Outcome::Pend(ref reason) => {
                    self.note_pend(now, id, &decision, reason, standing);
                    if parks {
                        to_park.push(id);
                    }
                    pended.entry(shape).or_insert(decision);
                }
            }
        }
        for id in to_park {
            self.park(id, epoch);
        }
        self.parked.compact();
    }

    /// Decides job `id` now, from the view as it stands.
    fn decide_job(&mut self, id: u64, now: SimTime) -> Decision {
        let mut decision = std::mem::replace(&mut self.scratch, Decision::empty(self.mode));
        self.decisions_computed += 1;
        if let Some(job) = self.jobs.get(&id) {
            let targets = &self.send_queues[job.send_queue].targets;
            decide_into(
                &self.view,
                self.mode,
                targets,
                &job.request,
                now,
                &mut decision,
            );
        }
        decision
    }

    /// Job `id` pends for `reason` by `decision`: recorded if the reason
    /// changed since its last decision.
    fn note_pend(
        &mut self,
        now: SimTime,
        id: u64,
        decision: &Decision,
        reason: &PendReason,
        standing: Option<ApsStanding>,
    ) {
        let changed = self
            .jobs
            .get(&id)
            .is_some_and(|job| job.last_pend.as_ref() != Some(reason));
        if changed {
            self.record(now, id, decision, standing);
            if let Some(job) = self.jobs.get_mut(&id) {
                job.last_pend = Some(reason.clone());
            }
        }
    }

    /// Meets parked group `group` at its first job's place: decides that
    /// job (or takes the session's decision for its shape). If it pends
    /// for the group's reason, so does the whole group, and the session is
    /// done with it; otherwise the job leaves the group, and the key of the
    /// group's next job is returned, to meet the group again there.
    fn decide_parked(&mut self, group: usize, session: &mut Session<'_>) -> Option<u64> {
        let (_, id) = self.parked.first(group)?;
        let cached = session.pended.get(self.parked.group(group).0).cloned();
        let decision = match cached {
            Some(decision) => decision,
            None => self.decide_job(id, session.now),
        };
        match decision.outcome {
            Outcome::Forward(target) => {
                self.record(session.now, id, &decision, None);
                self.scratch = decision;
                let next = self.unpark_first(group);
                self.forward(session.now, id, target, session.out, session.order);
                next
            }
            Outcome::Pend(ref new_reason) => {
                let (shape, reason) = self.parked.group(group);
                let same = new_reason == reason;
                if !session.pended.contains_key(shape) {
                    session.pended.insert(shape.clone(), decision.clone());
                }
                if same {
                    self.parked.confirm(group, session.epoch);
                    return None;
                }
                self.note_pend(session.now, id, &decision, new_reason, None);
                session.to_park.push(id);
                self.unpark_first(group)
            }
        }
    }

    /// Takes group `group`'s first job out of it (it is decided in its
    /// place); returns the key of the group's next job.
    fn unpark_first(&mut self, group: usize) -> Option<u64> {
        if let Some((_, id)) = self.parked.first(group) {
            if let Some(job) = self.jobs.get_mut(&id) {
                job.parked = false;
            }
        }
        self.parked.take_first(group)
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
