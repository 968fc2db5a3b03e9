//! Every input's changes are journaled with it, whatever ends a job: a
//! forwarded job killed or stopped at its run limit keeps its end for its
//! submission cluster's next sync after a replay, and a host failure or a
//! forward that cannot be sent is in the journal before its messages
//! leave (found by review: each test failed before).

use std::time::Duration;

use mcfed_federation::JobRef;
use mcfed_protocol::{JobAction, SimTime};

use super::snapshot_slices::{connected, job, settle};

/// A forwarded job that ends other than by finishing keeps its end after
/// a replay of the journal, as the live member does.
#[test]
fn a_forwarded_job_killed_or_run_limited_keeps_its_end_after_replay() {
    let (mut members, mut effects) = connected();
    let state0 = members[1].durable_state();
    members[1].take_journal();
    let now = SimTime::from_secs(10);
    let killed = members[0]
        .submit(now, "send", job(1, 3600), &mut effects)
        .expect("accepted")
        .job_id;
    let mut limited = job(2, 3600);
    limited.run_limit = Some(Duration::from_secs(5));
    members[0]
        .submit(now, "send", limited, &mut effects)
        .expect("accepted");
    settle(&mut members, now, &mut effects);
    let now = SimTime::from_secs(20);
    members[0]
        .control(now, &JobRef::Id(killed), &JobAction::Kill, &mut effects)
        .expect("sent");
    settle(&mut members, now, &mut effects);
    for secs in [30, 40, 60, 100] {
        settle(&mut members, SimTime::from_secs(secs), &mut effects);
    }
    let live = members[1].durable_state();
    let mut replayed = state0;
    for record in members[1].take_journal() {
        replayed.apply(record);
    }
    assert!(!live.finished.is_empty(), "live ends: {:?}", live.finished);
    assert_eq!(
        replayed.finished, live.finished,
        "ends after replay vs live"
    );
    assert_eq!(replayed.jobs, live.jobs);
}

/// A host failure's changes are journaled with the input that made them
/// (its envelopes leave with them).
#[test]
fn a_host_failure_is_journaled_with_its_input() {
    let (mut members, mut effects) = connected();
    let now = SimTime::from_secs(10);
    members[1]
        .submit(now, "normal", job(7, 3600), &mut effects)
        .expect("accepted");
    members[1].step(now, &mut effects);
    effects.clear();
    let state0 = {
        let mut state = members[1].durable_state();
        for record in members[1].take_journal() {
            state.apply(record);
        }
        state
    };
    assert_eq!(state0.jobs, members[1].durable_state().jobs);
    members[1]
        .host_event(
            SimTime::from_secs(20),
            "b1",
            mcfed_cluster::HostEvent::Fail,
            &mut effects,
        )
        .expect("fails");
    let mut replayed = state0;
    for record in members[1].take_journal() {
        replayed.apply(record);
    }
    assert_eq!(
        replayed.jobs,
        members[1].durable_state().jobs,
        "after host_event"
    );
}

/// A forward that cannot be sent ends its job: journaled with that input.
#[test]
fn an_unsendable_forward_is_journaled_with_its_input() {
    let (mut members, mut effects) = connected();
    members[0].enable_journal();
    members[0].take_journal();
    let now = SimTime::from_secs(10);
    let id = members[0]
        .submit(now, "send", job(9, 3600), &mut effects)
        .expect("accepted")
        .job_id;
    members[0].step(now, &mut effects);
    let forward = effects
        .envelopes
        .iter()
        .find(|envelope| matches!(envelope.message, mcfed_protocol::Message::JobForward(_)))
        .cloned()
        .expect("a forward");
    effects.clear();
    let mut state = members[0].durable_state();
    members[0].take_journal();
    assert_eq!(
        members[0].unsendable(now, &forward, "too large", &mut effects),
        Some(id)
    );
    for record in members[0].take_journal() {
        state.apply(record);
    }
    assert_eq!(
        state.sources,
        members[0].durable_state().sources,
        "after unsendable"
    );
}
