//! The member actor's oracle refresh in a cluster process: before each
//! forwarding session it asks for the true counters ([`FetchTruth`]) and
//! waits; a session whose truths did not all come leaves its decisions
//! unjudged.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::prelude::*;
use mcfed_actors::{Apply, Deliver, EmulatedClock, FetchTruth, Inspect, MemberActor, TruthFetched};
use mcfed_cluster::{ClusterConfig, ClusterNode};
use mcfed_federation::{Effects, Member, Observer};
use mcfed_forwarder::{
    DecisionRecord, ForwarderConfig, ForwarderNode, ScheduleMode, SendQueueConfig,
};
use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, JobSpec, Message, QueueCounters, QueueName, SimTime,
};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn counters(sender: &ClusterName, seq: u64, available: u32) -> CounterUpdate {
    CounterUpdate {
        sender: sender.clone(),
        seq,
        taken_at: SimTime::ZERO,
        queues: vec![QueueCounters {
            cluster: sender.clone(),
            queue: QueueName::new("high").expect("valid"),
            priority: 40,
            total_slots: 10,
            available_slots: available,
            running_slots: 10 - available,
            pending_slots: 0,
            preemptable_available_slots: available,
            lowest_preemptable_priority: None,
            impt_jobbklg: Some(50),
            imported_pending_jobs: 0,
            resources: Vec::new(),
            slot_group: 0,
            gpu_slots: Default::default(),
            gpu_free_slots: Default::default(),
        }],
        forwards_received: Vec::new(),
    }
}

/// Answers [`FetchTruth`]: C2 with 1 free slot and C3 with 5, or nothing.
struct Truth {
    answer: bool,
    asked: Arc<Mutex<Vec<Vec<ClusterName>>>>,
}

impl Actor for Truth {
    type Context = Context<Self>;
}

impl Handler<FetchTruth> for Truth {
    type Result = MessageResult<FetchTruth>;
    fn handle(&mut self, fetch: FetchTruth, _: &mut Self::Context) -> Self::Result {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(fetch.clusters.clone());
        }
        MessageResult(if self.answer {
            TruthFetched {
                updates: fetch
                    .clusters
                    .iter()
                    .map(|cluster| counters(cluster, 1, if cluster == "C2" { 1 } else { 5 }))
                    .collect(),
                complete: true,
            }
        } else {
            TruthFetched::default()
        })
    }
}

struct Collect(Arc<Mutex<Vec<DecisionRecord>>>);

impl Observer for Collect {
    fn observe(&mut self, member: &Member, _: SimTime, effects: &Effects) {
        if let Ok(mut kept) = self.0.lock() {
            kept.extend(member.render(&effects.decisions));
        }
    }
}

struct Sink;

impl Actor for Sink {
    type Context = Context<Self>;
}

impl Handler<Deliver> for Sink {
    type Result = ();
    fn handle(&mut self, _: Deliver, _: &mut Self::Context) {}
}

/// One job decided by a forwarder that sees 3 free slots at C2 and 2 at
/// C3, with an oracle source that answers or not; the clusters it was
/// asked about, and the decision.
async fn decide_one(answer: bool) -> (Vec<Vec<ClusterName>>, Vec<DecisionRecord>) {
    let node = ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: QueueName::new("send").expect("valid"),
            send_to: vec![
                "high@C2".parse().expect("valid"),
                "high@C3".parse().expect("valid"),
            ],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 3,
        reachability: Default::default(),
    });
    let cluster = mcfed_cluster::Cluster::new(ClusterConfig::new(name("C1"))).expect("valid");
    let mut member = Member::new(ClusterNode::new(cluster, Vec::new()), Some(node));
    member.enable_oracle();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let records = Arc::new(Mutex::new(Vec::new()));
    let truth = Truth {
        answer,
        asked: asked.clone(),
    }
    .start();
    let actor = MemberActor::new(member, EmulatedClock::start(1.0), Sink.start().recipient())
        .with_observer(Collect(records.clone()))
        .with_truth(truth.recipient())
        .start();
    for (cluster, available) in [("C2", 3), ("C3", 2)] {
        actor.do_send(Deliver(Envelope {
            from: name(cluster),
            to: name("C1"),
            message: Message::CounterUpdate(counters(&name(cluster), 1, available)),
        }));
    }
    actor
        .send(Apply {
            changes: true,
            apply: |member: &mut Member, now, effects: &mut Effects| {
                let spec = JobSpec::simple("j", "u", Duration::from_secs(60));
                member.submit(now, "send", spec, effects)
            },
        })
        .await
        .expect("mailbox")
        .expect("durable")
        .expect("submitted");
    // The submission queued a step; a step whose session wants the truth
    // fetches it and runs the session before the actor takes another
    // message (`ctx.wait`). So once the actor has answered this inspection,
    // the session has run, however busy the machine: no time to wait out.
    actor
        .send(Inspect(|_: &Member, _: SimTime| ()))
        .await
        .expect("mailbox");
    let asked = asked.lock().map(|asked| asked.clone()).unwrap_or_default();
    let records = records.lock().map(|kept| kept.clone()).unwrap_or_default();
    (asked, records)
}

#[actix_rt::test]
async fn each_session_is_judged_on_the_truth_fetched_right_before_it() {
    let (asked, records) = decide_one(true).await;
    assert!(!asked.is_empty());
    assert!(
        asked
            .iter()
            .all(|clusters| clusters == &[name("C2"), name("C3")])
    );
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].target.as_deref(), Some("high@C2"));
    // The truth says C3 has more free slots: the decision was stale.
    let oracle = records[0].oracle.as_ref().expect("judged");
    assert_eq!(oracle.target.as_deref(), Some("high@C3"));
    assert!(oracle.stale);
}

#[actix_rt::test]
async fn a_session_without_its_truths_leaves_its_decisions_unjudged() {
    let (asked, records) = decide_one(false).await;
    assert!(!asked.is_empty());
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].target.as_deref(), Some("high@C2"));
    assert!(records[0].oracle.is_none(), "{:?}", records[0].oracle);
}
