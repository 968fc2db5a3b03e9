//! Decision records: what the node writes for each decision, how it is
//! rendered, and the oracle that judges each decision against the true
//! counters.

use mcfed_protocol::{CounterUpdate, SimTime};

use super::{ApsStanding, ForwarderNode};
use crate::policy::{Decision, decide};
use crate::record::{DecisionEntry, DecisionRecord, OracleVerdict};

impl ForwarderNode {
    /// Records `decision`, made at `now` for job `id` (with the oracle's
    /// verdict, if it is on), and where its send queue's APS order put
    /// it, if it has one.
    pub(super) fn record(
        &mut self,
        now: SimTime,
        id: u64,
        decision: &Decision,
        aps: Option<ApsStanding>,
    ) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let oracle = self.oracle.as_ref().map(|oracle| {
            let targets = &self.send_queues[job.send_queue].targets;
            let truth = decide(oracle, self.mode, targets, &job.request, now);
            OracleVerdict::compare(decision, &self.view, &truth, oracle)
        });
        let mut decision = decision.clone();
        // Decisions made without a scan (MAX_FORWARDS) or taken from the
        // session's cache carry another time; this one is made now.
        decision.at = now;
        self.records.push(DecisionEntry {
            decision,
            job: job.spec.name.clone(),
            job_id: id,
            send_queue: self.send_queues[job.send_queue].name.clone(),
            slots: job.request.slots,
            attempt: job.forwards,
            note: job.note.clone(),
            oracle,
            forwarded_before: job.previous_targets.clone(),
            aps,
        });
    }

    /// Takes the decisions made since the last call, unrendered (see
    /// [`DecisionEntry`]); [`ForwarderNode::render`] turns one into a record.
    pub fn take_entries(&mut self) -> Vec<DecisionEntry> {
        std::mem::take(&mut self.records)
    }

    /// The record of a decision this node made.
    pub fn render(&self, entry: &DecisionEntry) -> DecisionRecord {
        DecisionRecord::from_entry(entry, self.cluster.as_str(), &self.view)
    }

    /// Takes the decision records written since the last call.
    pub fn take_records(&mut self) -> Vec<DecisionRecord> {
        let entries = self.take_entries();
        entries.iter().map(|entry| self.render(entry)).collect()
    }

    /// Turns on the oracle: from now on every recorded decision is compared
    /// with what the same mode would have chosen from the true counters at
    /// that instant, which the engine feeds with
    /// [`ForwarderNode::refresh_oracle`] before each session.
    pub fn enable_oracle(&mut self) {
        if self.oracle.is_none() {
            // Same queues, same forward log, no figures yet.
            self.oracle = Some(self.view.clone());
        }
    }

    /// Whether the oracle is on.
    pub fn has_oracle(&self) -> bool {
        self.oracle.is_some()
    }

    /// Gives the oracle the true counters of one execution cluster (a
    /// snapshot taken now, with the true watermark of received forwards).
    pub fn refresh_oracle(&mut self, truth: &CounterUpdate) {
        if let Some(oracle) = &mut self.oracle {
            oracle.apply_update(&self.cluster, truth);
        }
    }
}
