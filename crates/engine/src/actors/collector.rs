//! The actor engine's collector: it gathers what the member actors
//! report — decisions, preemptions, job events, counts and metrics — in
//! the order it arrives, and the driver's own records (submissions, the
//! jobs present at start).

use actix::prelude::*;
use mcfed_actors::Happened;
use mcfed_protocol::{ClusterName, SimTime};
use mcfed_scenario::RunOutput;
use mcfed_scenario::metrics::MetricsRecorder;
use mcfed_scenario::probe::PreemptionRecord;
use mcfed_scenario::records::{EventRecord, RecordRef};

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
        let stats = &mut self.output.stats;
        stats.updates += made.updates.sent;
        stats.updates_ignored += made.updates.ignored;
        stats.update_regressions += made.updates.regressions;
        for (transition, origin) in made.transitions.iter().zip(&made.origins) {
            stats.count_transition(*origin, transition);
        }
        for transition in &made.transitions {
            self.metrics.transition(&made.cluster, transition);
        }
        for decision in made.decisions.iter().filter(|d| d.target.is_some()) {
            self.metrics.forwarded(&made.cluster, &decision.send_queue);
        }
        stats.decisions += made.decisions.len() as u64;
        stats.forwarded += made.decisions.iter().filter(|d| d.target.is_some()).count() as u64;
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

/// The jobs present at start, as submissions at time zero (cluster,
/// queue), for the metrics.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Bundled(pub(super) Vec<(ClusterName, String)>);

impl Handler<Bundled> for Collector {
    type Result = ();
    fn handle(&mut self, Bundled(jobs): Bundled, _: &mut Self::Context) {
        for (cluster, queue) in jobs {
            self.metrics.submitted(&cluster, &queue, SimTime::ZERO);
        }
    }
}

/// Takes the output, its metrics finished with the members' end states.
#[derive(Message)]
#[rtype(result = "RunOutput")]
pub(super) struct TakeOutput(pub(super) Vec<crate::metrics::EndState>);

impl Handler<TakeOutput> for Collector {
    type Result = MessageResult<TakeOutput>;
    fn handle(&mut self, TakeOutput(states): TakeOutput, _: &mut Self::Context) -> Self::Result {
        let metrics = std::mem::take(&mut self.metrics);
        crate::metrics::add_end_totals(&mut self.output.stats.jobs, &states);
        self.output.metrics = Some(crate::metrics::finish(metrics, states));
        MessageResult(std::mem::take(&mut self.output))
    }
}
