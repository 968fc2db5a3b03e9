//! The actor engine: the same federation as actix actors, one
//! [`ClusterActor`] per cluster and one [`ForwarderActor`] per submission
//! cluster, talking through a router, on a current-thread tokio runtime
//! whose clock is paused and advances by itself whenever every actor is
//! idle. Emulated time therefore never waits on the wall clock.
//!
//! This is the shape a live process has (where the router is replaced by
//! the QUIC transport); `mcfed run --engine actors` runs it in-process so the
//! actor shells are exercised and can be compared with the event loop.

use actix::prelude::*;
use mcfed_cluster::ClusterActor;
use mcfed_cluster::actor::{Inspect, SubmitLocal, TransitionsMade};
use mcfed_forwarder::actor::{DecisionsMade, SubmitForward};
use mcfed_forwarder::{DecisionRecord, ForwarderActor};
use mcfed_protocol::clock::EmulatedClock;
use mcfed_protocol::{ClusterName, Envelope, SimTime};
use rustc_hash::FxHashMap;

use crate::build::{BuildError, build};
use crate::engine::{RunOptions, RunOutput};
use crate::model::Scenario;
use crate::probe::{ClusterSnapshot, PreemptionRecord, Snapshot, snapshot};

/// Why the actor engine could not run.
#[derive(Debug, thiserror::Error)]
pub enum ActorEngineError {
    /// The federation could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The runtime could not start.
    #[error("cannot start the actor runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// An actor stopped before the run ended.
    #[error("an actor stopped unexpectedly: {0}")]
    Mailbox(#[from] MailboxError),
}

struct Endpoints {
    cluster: Addr<ClusterActor>,
    forwarder: Option<Addr<ForwarderActor>>,
}

/// Routes envelopes to the receiving cluster's actor or forwarder.
#[derive(Default)]
struct Router {
    endpoints: FxHashMap<ClusterName, Endpoints>,
}

impl Actor for Router {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
struct Register(ClusterName, Endpoints);

impl Handler<Register> for Router {
    type Result = ();
    fn handle(&mut self, Register(name, endpoints): Register, _: &mut Self::Context) {
        self.endpoints.insert(name, endpoints);
    }
}

impl Handler<Envelope> for Router {
    type Result = ();
    fn handle(&mut self, envelope: Envelope, _: &mut Self::Context) {
        let Some(endpoints) = self.endpoints.get(&envelope.to) else {
            tracing::warn!(to = %envelope.to, "message to an unknown cluster dropped");
            return;
        };
        if envelope.message.is_for_forwarder() {
            if let Some(forwarder) = &endpoints.forwarder {
                forwarder.do_send(envelope);
            }
        } else {
            endpoints.cluster.do_send(envelope);
        }
    }
}

/// Collects decision records and preemptions.
#[derive(Default)]
struct Collector {
    records: Vec<DecisionRecord>,
    preemptions: Vec<PreemptionRecord>,
}

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Handler<DecisionsMade> for Collector {
    type Result = ();
    fn handle(&mut self, DecisionsMade(records): DecisionsMade, _: &mut Self::Context) {
        self.records.extend(records);
    }
}

impl Handler<TransitionsMade> for Collector {
    type Result = ();
    fn handle(&mut self, made: TransitionsMade, _: &mut Self::Context) {
        self.preemptions.extend(
            made.preemptions
                .iter()
                .map(|note| PreemptionRecord::new(&made.cluster, note)),
        );
    }
}

#[derive(Message)]
#[rtype(result = "(Vec<DecisionRecord>, Vec<PreemptionRecord>)")]
struct TakeRecords;

impl Handler<TakeRecords> for Collector {
    type Result = MessageResult<TakeRecords>;
    fn handle(&mut self, _: TakeRecords, _: &mut Self::Context) -> Self::Result {
        MessageResult((
            std::mem::take(&mut self.records),
            std::mem::take(&mut self.preemptions),
        ))
    }
}

/// Lets every actor handle what was sent at the current instant.
async fn settle_instant() {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
}

/// Something the driver does at a time: submit the job at this index, or
/// take a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Submit(usize),
    Probe,
}

/// Runs `scenario` with the actor engine until its end (or `until`).
pub fn run(scenario: &Scenario, until: Option<SimTime>) -> Result<RunOutput, ActorEngineError> {
    run_plan(
        scenario,
        &RunOptions {
            until,
            ..RunOptions::default()
        },
    )
}

/// Runs `scenario` with the actor engine under `plan` (its `until` and
/// `probes`; faults, the oracle and events need the event loop).
pub fn run_plan(scenario: &Scenario, plan: &RunOptions) -> Result<RunOutput, ActorEngineError> {
    let federation = build(scenario)?;
    let (probes, end) = plan.resolve(scenario);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    let system = actix_rt::System::with_tokio_rt(move || runtime);
    let initial_states = federation.initial_states.clone();
    let submissions = scenario.submissions.clone();
    let mut steps: Vec<(SimTime, Step)> = submissions
        .iter()
        .enumerate()
        .map(|(index, submission)| (submission.at, Step::Submit(index)))
        .chain(probes.iter().map(|&at| (at, Step::Probe)))
        .filter(|&(at, _)| at <= end)
        .collect();
    steps.sort();
    let watched: Vec<Vec<String>> = scenario
        .clusters
        .iter()
        .map(|spec| scenario.watched_jobs(&spec.config.name))
        .collect();
    let (decisions, preemptions, snapshots) = system.block_on(async move {
        let clock = EmulatedClock::start(1.0);
        let origin = tokio::time::Instant::now();
        let router = Router::default().start();
        let collector = Collector::default().start();
        let mut addresses = FxHashMap::default();
        let mut clusters_in_order = Vec::new();
        for member in federation.members {
            let name = member.node.name().clone();
            let cluster = ClusterActor::new(member.node, clock, router.clone().recipient())
                .with_observer(collector.clone().recipient())
                .start();
            let forwarder = member.forwarder.map(|node| {
                ForwarderActor::new(
                    node,
                    clock,
                    router.clone().recipient(),
                    collector.clone().recipient(),
                )
                .start()
            });
            router
                .send(Register(
                    name.clone(),
                    Endpoints {
                        cluster: cluster.clone(),
                        forwarder: forwarder.clone(),
                    },
                ))
                .await?;
            clusters_in_order.push(cluster.clone());
            addresses.insert(name, (cluster, forwarder));
        }
        let mut snapshots = Vec::new();
        for (at, step) in steps {
            let due = origin + clock.real_delay(at.saturating_since(SimTime::ZERO));
            tokio::time::sleep_until(due).await;
            match step {
                Step::Submit(index) => {
                    let submission = &submissions[index];
                    let Some((cluster, forwarder)) = addresses.get(&submission.cluster) else {
                        continue;
                    };
                    let result = match (forwarder, submission.forwarded) {
                        (Some(forwarder), true) => forwarder
                            .send(SubmitForward {
                                queue: submission.queue.clone(),
                                spec: submission.spec.clone(),
                            })
                            .await?
                            .map(|_| ())
                            .map_err(|error| error.to_string()),
                        _ => cluster
                            .send(SubmitLocal {
                                queue: submission.queue.clone(),
                                spec: submission.spec.clone(),
                            })
                            .await?
                            .map(|_| ())
                            .map_err(|error| error.to_string()),
                    };
                    if let Err(error) = result {
                        tracing::warn!(job = %submission.spec.name, %error, "submission refused");
                    }
                }
                Step::Probe => {
                    settle_instant().await;
                    let mut clusters: Vec<ClusterSnapshot> = Vec::new();
                    for (cluster, watched) in clusters_in_order.iter().zip(&watched) {
                        let watched = watched.clone();
                        let taken = cluster
                            .send(Inspect(move |node: &mcfed_cluster::ClusterNode, _| {
                                Some(snapshot(node.cluster(), at, &watched))
                            }))
                            .await?;
                        clusters.extend(taken);
                    }
                    snapshots.push(Snapshot {
                        time: at.as_secs_f64(),
                        clusters,
                    });
                }
            }
        }
        tokio::time::sleep_until(origin + clock.real_delay(end.saturating_since(SimTime::ZERO)))
            .await;
        // Let every message sent at the last instant be handled.
        settle_instant().await;
        let (decisions, preemptions) = collector.send(TakeRecords).await?;
        System::current().stop();
        Ok::<_, ActorEngineError>((decisions, preemptions, snapshots))
    })?;
    Ok(RunOutput {
        decisions,
        initial_states,
        snapshots,
        preemptions,
        stats: crate::engine::RunStats {
            end,
            ..Default::default()
        },
        ..RunOutput::default()
    })
}
