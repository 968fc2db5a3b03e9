//! The live page's state: answers from real members (example 1's three
//! clusters, built as a process builds them) go in; the frames pages get
//! come out.

use std::path::Path;

use mcfed_admin::cmd::{hosts, queues, watch};
use mcfed_admin::{CountersRow, WatchReply};
use mcfed_federation::Member;
use mcfed_forwarder::{CandidateRecord, DecisionRecord, OracleVerdict, OutcomeKind};
use mcfed_protocol::SimTime;
use mcfed_web::state::{End, Frame, LiveState, MAX_DECISIONS, MAX_POINTS, MAX_SHOWN_NAME};

fn scenario() -> mcfed_scenario::Scenario {
    mcfed_scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/forwarding/example1-count-preemptable.toml"),
    )
    .expect("example 1 loads")
}

/// What cluster `index` of example 1 answers a watch at `now`, as its
/// process would build it (no decisions).
fn answer(index: usize, now: SimTime, incarnation: u64) -> WatchReply {
    let scenario = scenario();
    let spec = &scenario.clusters[index];
    let (member, _) = Member::build(spec.member_spec()).expect("builds");
    WatchReply {
        cluster: spec.config.name.to_string(),
        address: format!("127.0.0.1:{}", 7100 + index),
        incarnation,
        now: now.as_secs_f64(),
        hosts: hosts::rows(member.node()),
        queues: queues::rows(&member, now),
        views: member
            .forwarder()
            .map(|forwarder| watch::views(forwarder, now))
            .unwrap_or_default(),
        decisions: Vec::new(),
        decisions_total: 0,
    }
}

fn decision(job_id: u64, time: f64, stale: Option<bool>) -> DecisionRecord {
    DecisionRecord {
        record: "decision".to_owned(),
        time,
        job: format!("job{job_id}"),
        job_id,
        cluster: "Cluster1".to_owned(),
        send_queue: "send".to_owned(),
        slots: 1,
        attempt: 0,
        mode: "COUNT_PREEMPTABLE".to_owned(),
        outcome: OutcomeKind::Forwarded,
        target: Some("HighPriority@Cluster2".to_owned()),
        reason: "HighPriority@Cluster2: largest available - pending".to_owned(),
        tier: Some("free slots".to_owned()),
        view_age: Some(15.0),
        workload_unknown: false,
        candidates: vec![CandidateRecord {
            queue: "HighPriority@Cluster2".to_owned(),
            priority: Some(40),
            total: Some(100),
            available: Some(30),
            running: Some(70),
            pending: Some(20),
            preemptable_available: Some(30),
            victim_priority: None,
            imported_pending: Some(0),
            impt_jobbklg: Some(50),
            view_age: Some(15.0),
            known_from: Some("counters".to_owned()),
            eligible: true,
            tier: Some("free slots".to_owned()),
            score: Some(10),
            verdict: "won".to_owned(),
            why: "largest available - pending".to_owned(),
        }],
        note: None,
        oracle: stale.map(|stale| OracleVerdict {
            target: Some("HighPriority@Cluster2".to_owned()),
            stale,
            differences: Vec::new(),
        }),
        forwarded_before: Vec::new(),
        aps_value: None,
        aps_kind: None,
        aps_ahead_of: None,
    }
}

/// Cluster1's answer, holding `held` for HighPriority@Cluster2 (15 s old)
/// and with `decisions` (numbered from `first`).
fn holder(held: CountersRow, first: usize, decisions: Vec<DecisionRecord>) -> WatchReply {
    static CLUSTER1: std::sync::OnceLock<WatchReply> = std::sync::OnceLock::new();
    let mut reply = CLUSTER1
        .get_or_init(|| answer(0, SimTime::from_millis(45_000), 1))
        .clone();
    let view = reply
        .views
        .iter_mut()
        .find(|view| view.cluster == "Cluster2")
        .expect("Cluster1 sends to Cluster2");
    view.figures = Some(held);
    view.taken_at = Some(30.0);
    view.age = Some(15.0);
    reply.decisions_total = first + decisions.len();
    reply.decisions = decisions;
    reply
}

fn truth_of_cluster2() -> CountersRow {
    let reply = answer(1, SimTime::ZERO, 2);
    let queue = reply
        .queues
        .iter()
        .find(|queue| queue.queue == "HighPriority")
        .expect("HighPriority");
    CountersRow::from(queue.counters.as_ref().expect("a receive queue's counters"))
}

#[test]
fn the_counters_held_go_beside_the_truth_in_the_queues_cluster() {
    let mut state = LiveState::default();
    for name in ["Cluster1", "Cluster2"] {
        state.add_cluster(name, None);
    }
    let truth = truth_of_cluster2();
    let held = CountersRow {
        available: truth.available + 5,
        ..truth
    };
    state.update(0, Ok(holder(held, 0, Vec::new())));
    state.update(1, Ok(answer(1, SimTime::ZERO, 2)));
    let frame = state.full_frame();
    let (cluster1, cluster2) = (&frame.clusters[0], &frame.clusters[1]);
    assert_eq!((cluster1.status, cluster2.status), ("up", "up"));
    // Cluster3 is not watched: what Cluster1 holds of it stays in its own
    // panel, with no truth; HighPriority@Cluster2 goes to Cluster2's.
    assert_eq!(cluster1.held.len(), 1, "{:?}", cluster1.held);
    assert_eq!(cluster1.held[0].queue, "HighPriority@Cluster3");
    assert_eq!(cluster1.held[0].truth, None);
    let line = &cluster2.held[0];
    assert_eq!(
        (line.holder.as_str(), line.queue.as_str()),
        ("Cluster1", "HighPriority@Cluster2")
    );
    assert_eq!((line.seen, line.truth), (Some(held), Some(truth)));
    assert_eq!(line.age, Some(15.0));
    assert_eq!(line.differs, vec!["available"]);
    // The queues read as bqueues shows them, with their hosts' slots.
    let high = cluster2
        .queues
        .iter()
        .find(|queue| queue.queue == "HighPriority")
        .expect("HighPriority");
    assert_eq!((high.run, high.pend, high.slots), (70, 20, 100));
    assert_eq!(high.receive_from, vec!["Cluster1"]);
}

#[test]
fn a_page_gets_everything_once_then_only_what_changed() {
    let mut state = LiveState::default();
    state.add_cluster("Cluster1", None);
    let held = truth_of_cluster2();
    state.update(0, Ok(holder(held, 0, vec![decision(1, 40.0, Some(false))])));
    let first = state.take_changes();
    assert_eq!(first.decisions.len(), 1);
    assert!(first.decisions[0].text.contains("job1 (job 1@Cluster1"));
    assert!(first.decisions[0].text.contains("| candidate"));
    assert_eq!(first.decisions[0].stale, Some(false));
    assert!(!first.series.is_empty());
    assert_eq!(state.next_decision(0), 1);
    // Nothing new: no decision, one new point per series.
    state.update(0, Ok(holder(held, 1, Vec::new())));
    let second = state.take_changes();
    assert!(second.decisions.is_empty());
    assert!(second.series.iter().all(|series| series.points.len() == 1));
    state.update(0, Ok(holder(held, 1, vec![decision(2, 50.0, Some(true))])));
    let third = state.take_changes();
    assert_eq!(third.decisions.len(), 1);
    assert_eq!(third.decisions[0].job_id, 2);
    assert_eq!(third.decisions[0].stale, Some(true));
    // A page connecting now gets both decisions and every point.
    let full: Frame = state.full_frame();
    assert!(full.full);
    assert_eq!(full.decisions.len(), 2);
    let ages = full
        .series
        .iter()
        .find(|series| series.chart == "staleness")
        .expect("the age of what Cluster1 holds");
    assert_eq!(ages.points.len(), 3);
    assert_eq!(ages.points[0], [45.0, 15.0]);
}

#[test]
fn a_restarted_process_is_asked_for_its_records_from_the_start() {
    let mut state = LiveState::default();
    state.add_cluster("Cluster1", None);
    let held = truth_of_cluster2();
    let records: Vec<DecisionRecord> = (1..=3).map(|id| decision(id, 40.0, None)).collect();
    state.update(0, Ok(holder(held, 0, records)));
    assert_eq!(state.next_decision(0), 3);
    // Started again: a new incarnation, records counted from 0 again.
    let mut again = holder(held, 3, vec![decision(9, 60.0, None)]);
    again.incarnation = 7;
    state.update(0, Ok(again));
    assert_eq!(state.next_decision(0), 0);
    let mut fresh = holder(held, 0, vec![decision(4, 61.0, None)]);
    fresh.incarnation = 7;
    state.update(0, Ok(fresh));
    let ids: Vec<u64> = state
        .full_frame()
        .decisions
        .iter()
        .map(|d| d.job_id)
        .collect();
    assert_eq!(ids, vec![1, 2, 3, 4]);
}

#[test]
fn a_cluster_that_stops_answering_is_down_with_its_last_state() {
    let mut state = LiveState::default();
    state.add_cluster("Cluster2", Some("127.0.0.1:7101".to_owned()));
    assert_eq!(state.full_frame().clusters[0].status, "waiting");
    state.update(0, Ok(answer(1, SimTime::ZERO, 2)));
    state.update(0, Err("connection refused".to_owned()));
    let frame = state.full_frame();
    let panel = &frame.clusters[0];
    assert_eq!(panel.status, "down");
    assert_eq!(panel.error.as_deref(), Some("connection refused"));
    assert_eq!(panel.queues.len(), 2, "the last state stays");
}

#[test]
fn memory_stays_bounded_however_long_the_run() {
    let mut state = LiveState::default();
    state.add_cluster("Cluster1", None);
    let held = truth_of_cluster2();
    let mut total = 0;
    for round in 0..(MAX_POINTS + 500) {
        let decisions = if round < MAX_DECISIONS + 100 {
            vec![decision(round as u64 + 1, round as f64, None)]
        } else {
            Vec::new()
        };
        let mut reply = holder(held, total, decisions);
        total = reply.decisions_total;
        reply.now = round as f64;
        state.update(0, Ok(reply));
        let _ = state.take_changes();
    }
    let full = state.full_frame();
    assert_eq!(full.decisions.len(), MAX_DECISIONS);
    assert_eq!(
        full.decisions.last().map(|d| d.job_id),
        Some((MAX_DECISIONS + 100) as u64),
        "the newest are kept"
    );
    for series in &full.series {
        assert!(series.points.len() <= MAX_POINTS, "{}", series.id);
        assert!(series.points.len() > MAX_POINTS / 2, "{}", series.id);
        let last = series.points.last().expect("points")[0];
        assert_eq!(last, (MAX_POINTS + 499) as f64, "{}", series.id);
        assert!(
            series.points.windows(2).all(|pair| pair[0][0] < pair[1][0]),
            "{}: in time order",
            series.id
        );
    }
}

/// Two clusters that answered, then met the processes shutting down.
fn shut_down_state() -> LiveState {
    let mut state = LiveState::default();
    for (index, name) in ["Cluster1", "Cluster2"].into_iter().enumerate() {
        state.add_cluster(name, None);
        state.update(index, Ok(answer(index, SimTime::ZERO, 1)));
        state.update(
            index,
            Err("the request failed: closed by peer: shutting down".to_owned()),
        );
    }
    state
}

#[test]
fn a_normal_end_shows_every_cluster_stopped_not_down() {
    let mut state = shut_down_state();
    state.end("the run ended", End::Stopped);
    for frame in [state.full_frame(), state.take_changes()] {
        for panel in &frame.clusters {
            assert_eq!(panel.status, "stopped", "{}", panel.cluster);
            assert_eq!(panel.error, None, "{}", panel.cluster);
            assert!(!panel.queues.is_empty(), "what it held last stays");
        }
    }
    assert_eq!(state.ended(), Some("the run ended"));
}

#[test]
fn a_failed_end_keeps_what_each_cluster_last_showed() {
    let mut state = shut_down_state();
    state.end("the launch failed", End::Failed);
    let frame = state.full_frame();
    assert!(frame.clusters.iter().all(|panel| {
        panel.status == "down"
            && panel
                .error
                .as_deref()
                .is_some_and(|error| error.contains("closed by peer"))
    }));
}

#[test]
fn a_huge_job_name_is_cut_in_what_the_page_shows() {
    let mut state = LiveState::default();
    state.add_cluster("Cluster1", None);
    let mut huge = decision(1, 40.0, None);
    huge.job = "n".repeat(30_000_000);
    state.update(0, Ok(holder(truth_of_cluster2(), 0, vec![huge])));
    let frame = state.full_frame();
    let item = &frame.decisions[0];
    assert!(item.job.len() < MAX_SHOWN_NAME + 32, "{}", item.job.len());
    assert!(
        item.job.ends_with("… (30000000 bytes)"),
        "{}",
        &item.job[200..]
    );
    assert!(item.text.contains("… (30000000 bytes)"));
    let json = serde_json::to_string(&frame).expect("JSON");
    assert!(
        json.len() < 100_000,
        "the whole state is {} bytes",
        json.len()
    );
}

#[test]
fn every_change_moves_the_version_and_nothing_else_does() {
    let mut state = LiveState::default();
    let start = state.version();
    state.add_cluster("Cluster1", None);
    let added = state.version();
    assert!(added > start);
    let _ = state.full_frame();
    let _ = state.take_changes();
    assert_eq!(state.version(), added, "looking changes nothing");
    state.update(0, Ok(holder(truth_of_cluster2(), 0, Vec::new())));
    let updated = state.version();
    assert!(updated > added);
    state.end("done", End::Stopped);
    assert!(state.version() > updated);
}
