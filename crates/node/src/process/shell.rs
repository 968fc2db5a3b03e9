//! The actors around the member in a cluster process: the outbox that
//! hands what the member sends to the transport, and the collector of its
//! decision records and job events.

use std::sync::Arc;

use actix::prelude::*;
use mcfed_actors::{Deliver, Happened, MemberActor};
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{ClusterName, Envelope};
use mcfed_run::RunStats;
use mcfed_run::metrics::MetricsRecorder;
use mcfed_run::records::{EventRecord, UsageRecord};
use mcfed_run::render;
use mcfed_transport::Transport;

use super::LiveReport;

/// Sends what the actor sends through the transport (or back to the
/// actor, for a message to this cluster itself).
pub(super) struct Outbox {
    pub(super) transport: Arc<Transport>,
    pub(super) local: Option<Local>,
}

/// This process's member actor.
#[derive(Clone)]
pub(super) struct Local {
    pub(super) name: ClusterName,
    pub(super) member: Addr<MemberActor>,
}

impl Local {
    pub(super) fn deliver(&self, envelope: Envelope) {
        self.member.do_send(Deliver(envelope));
    }
}

impl Actor for Outbox {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct SetLocal(pub(super) Local);

impl Handler<SetLocal> for Outbox {
    type Result = ();
    fn handle(&mut self, SetLocal(local): SetLocal, _: &mut Self::Context) {
        self.local = Some(local);
    }
}

impl Handler<Deliver> for Outbox {
    type Result = ();
    fn handle(&mut self, Deliver(envelope): Deliver, _: &mut Self::Context) {
        if let Some(local) = self
            .local
            .as_ref()
            .filter(|local| local.name == envelope.to)
        {
            local.deliver(envelope);
            return;
        }
        match self.transport.send(envelope) {
            Ok(()) => {}
            // The process is stopping: nothing is lost that matters.
            Err(error @ mcfed_transport::TransportError::Closed) => {
                tracing::debug!(%error, "message dropped at shutdown");
            }
            Err(error) => tracing::warn!(%error, "message dropped"),
        }
    }
}

/// Keeps the forwarder's decision records (and prints them if asked) and
/// the job events: the scheduler's transitions and what the forwarder
/// heard about its jobs.
pub(super) struct Collector {
    pub(super) records: Vec<DecisionRecord>,
    pub(super) events: Vec<EventRecord>,
    pub(super) usage: Vec<UsageRecord>,
    pub(super) report: LiveReport,
    /// The scheduling metrics of this cluster's jobs (submissions are
    /// counted by whoever submits: the launcher).
    pub(super) metrics: MetricsRecorder,
    /// Counts of what happened (updates, starts and ends, decisions).
    pub(super) stats: RunStats,
}

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Handler<Happened> for Collector {
    type Result = ();
    fn handle(&mut self, made: Happened, _: &mut Self::Context) {
        use std::io::Write as _;
        let cluster = made.cluster.as_str();
        let time = made.at.as_secs_f64();
        if let Some((slots_in_use, total_slots)) = made.usage.filter(|(_, total)| *total > 0) {
            self.usage.push(UsageRecord {
                record: "usage".to_owned(),
                time,
                cluster: cluster.to_owned(),
                slots_in_use,
                total_slots,
            });
        }
        self.events.extend(
            made.notices
                .iter()
                .map(|notice| EventRecord::of_notice(time, cluster, notice)),
        );
        self.events.extend(
            made.transitions.iter().map(|transition| {
                EventRecord::of_transition(cluster, transition, &made.preemptions)
            }),
        );
        self.metrics
            .happened(&made.cluster, &made.transitions, &made.decisions);
        self.stats.count_instant(
            made.updates,
            &made.transitions,
            &made.origins,
            &made.decisions,
        );
        let records = made.decisions;
        if self.report != LiveReport::None {
            let mut out = std::io::stdout().lock();
            for record in &records {
                let line = match self.report {
                    LiveReport::Json => render::decision_json(record).unwrap_or_default(),
                    _ => render::decision_text(record),
                };
                let _ = writeln!(out, "{line}");
            }
            let _ = out.flush();
        }
        self.records.extend(records);
    }
}

/// What the collector holds, from decision record `from` on.
pub(super) struct Collected {
    pub(super) records: Vec<DecisionRecord>,
    pub(super) events: Vec<EventRecord>,
    pub(super) usage: Vec<UsageRecord>,
    pub(super) metrics: MetricsRecorder,
    pub(super) stats: RunStats,
}

#[derive(Message)]
#[rtype(result = "Collected")]
pub(super) struct RecordsFrom(pub(super) usize);

impl Handler<RecordsFrom> for Collector {
    type Result = MessageResult<RecordsFrom>;
    fn handle(&mut self, RecordsFrom(from): RecordsFrom, _: &mut Self::Context) -> Self::Result {
        MessageResult(Collected {
            records: self.records_from(from),
            events: self.events.clone(),
            usage: self.usage.clone(),
            metrics: self.metrics.clone(),
            stats: self.stats,
        })
    }
}

impl Collector {
    /// The decision records from index `from` on.
    fn records_from(&self, from: usize) -> Vec<DecisionRecord> {
        self.records
            .get(from..)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    }
}

/// The decision records from an index on, at most the newest `limit` of
/// them, and how many there are in all (for the live page, which asks for
/// the new ones only).
#[derive(Message)]
#[rtype(result = "(Vec<DecisionRecord>, usize)")]
pub(super) struct DecisionsFrom {
    pub(super) from: usize,
    pub(super) limit: usize,
}

impl Handler<DecisionsFrom> for Collector {
    type Result = MessageResult<DecisionsFrom>;
    fn handle(&mut self, asked: DecisionsFrom, _: &mut Self::Context) -> Self::Result {
        let total = self.records.len();
        let from = asked.from.max(total.saturating_sub(asked.limit));
        MessageResult((self.records_from(from), total))
    }
}
