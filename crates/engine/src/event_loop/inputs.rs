//! The event loop's inputs: the jobs present at start, the scenario's
//! submissions and workloads, and its `[[action]]`s — each handed to its
//! member at its time, counted and recorded.

use mcfed_protocol::SimTime;
use mcfed_scenario::model::Submission;

use super::EventLoop;
use crate::heap::{EventKind, PHASE_STREAM, PHASE_SUBMIT};

impl EventLoop<'_> {
    /// Counts and records the jobs present at start and what the first
    /// dispatch pass did with them, as any other submission and start.
    pub(super) fn take_start(&mut self) {
        for index in 0..self.scenario.clusters.len() {
            self.federation.members[index].take_start(&mut self.effects);
            self.absorb(index);
        }
    }

    pub(super) fn submit_scenario(&mut self, index: usize) {
        let scenario = self.scenario;
        let submission = &scenario.submissions[index];
        if let Some(until) = self.waits_for(submission) {
            // bsub waits for mbatchd to come back.
            self.heap
                .push(until, PHASE_SUBMIT, EventKind::Submit(index));
            return;
        }
        self.submit(submission.clone());
    }

    /// Gives the scenario's `[[action]]` at `index`: its cluster acts on
    /// the job (or sends the command where the job is).
    pub(super) fn act(&mut self, index: usize) {
        let scenario = self.scenario;
        let action = &scenario.actions[index];
        let Some(member_index) = self.federation.position(&action.cluster) else {
            return;
        };
        if let Some(until) = self.down_until(member_index) {
            self.heap
                .push(until, PHASE_SUBMIT, EventKind::Action(index));
            return;
        }
        let member = &mut self.federation.members[member_index];
        let record = crate::actions::play(action, member, self.now, &mut self.effects);
        self.recorder.action(record);
        self.absorb(member_index);
        self.touch(member_index);
    }

    /// Schedules the next jobs of workload `index` at `at`: after the
    /// scenario's own submissions and actions of that instant, and after
    /// the workloads before it.
    fn schedule_stream_at(&mut self, index: usize, at: SimTime) {
        let rank = index as u64;
        self.heap
            .push_ranked(at, PHASE_STREAM, rank, EventKind::Stream(index));
    }

    /// Schedules the next jobs of workload `index` (a trace out of order is
    /// submitted as soon as it is read).
    pub(super) fn schedule_stream(&mut self, index: usize) {
        if let Some(next) = self.streams.peek(index) {
            let at = next.at.max(self.now);
            self.schedule_stream_at(index, at);
        }
    }

    /// Submits every job of workload `index` due now, in trace order.
    pub(super) fn submit_stream(&mut self, index: usize) {
        while let Some(next) = self.streams.peek(index) {
            if next.at > self.now {
                break;
            }
            if let Some(until) = self.waits_for(next) {
                self.schedule_stream_at(index, until);
                return;
            }
            if let Some(submission) = self.streams.take(index) {
                self.submit(submission);
            }
        }
        self.schedule_stream(index);
    }

    /// When the cluster a submission goes to is down, until when.
    pub(super) fn waits_for(&self, submission: &Submission) -> Option<SimTime> {
        // Only chaos takes clusters down: no lookup without it.
        self.chaos.as_ref()?;
        let index = self.federation.position(&submission.cluster)?;
        self.down_until(index)
    }

    pub(super) fn submit(&mut self, submission: Submission) {
        let Submission {
            cluster,
            queue,
            spec,
            ..
        } = submission;
        let Some(member_index) = self.federation.position(&cluster) else {
            self.recorder.refused_unknown_cluster(&spec.name, &cluster);
            return;
        };
        let member = &mut self.federation.members[member_index];
        // Counted and recorded with the effects, refused or not.
        let _ = member.submit_shared(self.now, &queue, spec, &mut self.effects);
        self.absorb(member_index);
        self.touch(member_index);
    }
}
