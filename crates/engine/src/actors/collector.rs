//! The actor engine's collector: it gathers what the member actors
//! report — decisions, preemptions, job events, counts and metrics — in
//! the order it arrives, and the driver's own records (submissions, the
//! jobs present at start).

use actix::prelude::*;
use mcfed_actors::Happened;
use mcfed_protocol::SimTime;
use mcfed_run::RunOutput;
use mcfed_run::metrics::MetricsRecorder;
use mcfed_run::probe::PreemptionRecord;
use mcfed_run::records::{EventRecord, RecordRef};

/// Collects what the actors report: decisions, preemptions, job events
/// and counts, in the order they arrive.
#[derive(Default)]
pub(super) struct Collector {
    pub(super) output: RunOutput,
    pub(super) events: bool,
    pub(super) metrics: MetricsRecorder,
}

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Collector {
    fn push_event(&mut self, record: EventRecord) {
        let output = &mut self.output;
        output.order.push(RecordRef::Event(output.events.len()));
        output.events.push(record);
    }
}

impl Handler<Happened> for Collector {
    type Result = ();
    fn handle(&mut self, made: Happened, _: &mut Self::Context) {
        self.output.stats.count_instant(
            made.updates,
            &made.transitions,
            &made.origins,
            &made.decisions,
        );
        self.metrics
            .happened(&made.cluster, &made.transitions, &made.decisions);
        let cluster = made.cluster.as_str();
        self.output.preemptions.extend(
            made.preemptions
                .iter()
                .map(|note| PreemptionRecord::new(&made.cluster, note)),
        );
        if self.events {
            let time = made.at.as_secs_f64();
            for notice in &made.notices {
                self.push_event(EventRecord::of_notice(time, cluster, notice));
            }
            for transition in &made.transitions {
                self.push_event(EventRecord::of_transition(
                    cluster,
                    transition,
                    &made.preemptions,
                ));
            }
            let start = self.output.decisions.len();
            let count = made.decisions.len();
            self.output
                .order
                .extend((start..start + count).map(RecordRef::Decision));
        }
        self.output.decisions.extend(made.decisions);
    }
}

/// A job event recorded by the driver (a submission).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Record(pub(super) EventRecord);

impl Handler<Record> for Collector {
    type Result = ();
    fn handle(&mut self, Record(record): Record, _: &mut Self::Context) {
        if let (Ok(cluster), Some(queue)) = (record.cluster.parse(), &record.queue) {
            self.metrics.submitted(
                &cluster,
                queue,
                SimTime::from_millis((record.time * 1000.0).round() as u64),
            );
        }
        if self.events {
            self.push_event(record);
        }
    }
}

/// The jobs present at start, counted as submissions at time zero, for
/// the metrics ([`MetricsRecorder::with_bundled`]).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Bundled(pub(super) MetricsRecorder);

impl Handler<Bundled> for Collector {
    type Result = ();
    fn handle(&mut self, Bundled(jobs): Bundled, _: &mut Self::Context) {
        self.metrics.merge(jobs);
    }
}

/// Takes the output, its metrics finished with the members' end states.
#[derive(Message)]
#[rtype(result = "RunOutput")]
pub(super) struct TakeOutput(pub(super) Vec<mcfed_run::metrics::EndState>);

impl Handler<TakeOutput> for Collector {
    type Result = MessageResult<TakeOutput>;
    fn handle(&mut self, TakeOutput(states): TakeOutput, _: &mut Self::Context) -> Self::Result {
        let metrics = std::mem::take(&mut self.metrics);
        mcfed_run::metrics::add_end_totals(&mut self.output.stats.jobs, &states);
        self.output.metrics = Some(mcfed_run::metrics::finish(metrics, states));
        MessageResult(std::mem::take(&mut self.output))
    }
}
