//! A member restarted from its durable state keeps a history of the jobs
//! it restored as they stand (`Member::keep_history` after
//! `Member::restore`): running, preempted, stopped, held and pending jobs
//! in their state, with their submission, first start and origin, the
//! jobs parked until their submission cluster's sync too; the time whose
//! states the state directory cannot tell is UNKWN, and each record says
//! it was restored (docs/reliability.md, "History after a restart").

use std::time::Duration;

use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::history::{JobRecord, RecordOrigin};
use mcfed_federation::{Effects, JobRef, Member, MemberSpec};
use mcfed_protocol::{ClusterName, JobAction, QueueName, SimTime};

use super::snapshot_slices::{
    execution_c2, federation_of, job, resume, settle, submission_c1, submit_jobs,
};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

/// `action` on C2's job `id` at `now`.
fn control(member: &mut Member, now: SimTime, id: u64, action: JobAction) {
    let mut effects = Effects::default();
    member
        .control(now, &JobRef::Id(id), &action, &mut effects)
        .expect("the action is taken");
    member.step(now, &mut effects);
}

/// C2's local job submitted to `queue` at `now`, and its id.
fn submit_local(member: &mut Member, now: SimTime, queue: &str, n: u64) -> u64 {
    let mut effects = Effects::default();
    let id = member
        .submit(now, queue, job(n, 3600), &mut effects)
        .expect("accepted")
        .job_id;
    member.step(now, &mut effects);
    id
}

/// A record's state, origin, queue, submission, first submission, first
/// start and hosts.
type Known = (
    &'static str,
    RecordOrigin,
    String,
    SimTime,
    SimTime,
    Option<SimTime>,
    Option<String>,
);

/// What a restored record must share with the record kept all along.
fn known(record: &JobRecord) -> Known {
    (
        record.state,
        record.origin.clone(),
        record.queue.to_string(),
        record.submitted_at,
        record.first_submitted_at,
        record.started_at,
        record.exec.clone(),
    )
}

/// C2's local jobs of [`lived`], by id.
struct Local {
    preempted: u64,
    running: u64,
    stopped: u64,
    pending: u64,
    held: u64,
    urgent: u64,
}

/// C2 with four slots, a queue `other` that nothing preempts and a queue
/// `urgent` that preempts `normal`'s jobs.
fn c2_of_four_slots() -> ClusterConfig {
    let mut config = execution_c2().0;
    config.hosts = vec![HostConfig::new("b1", 4)];
    let mut urgent = QueueConfig::new(QueueName::new("urgent").expect("valid"));
    urgent.priority = 90;
    urgent.preemption = "PREEMPTIVE[normal]".parse().expect("valid");
    config.queues.push(urgent);
    config
        .queues
        .push(QueueConfig::new(QueueName::new("other").expect("valid")));
    config
}

/// The federation after a while: three of C2's local jobs started, one
/// preempted since by an urgent job (SSUSP), one stopped (USUSP), the
/// other stopped and resumed (its last start later than its first); C1
/// forwarded two, one started on C2's last slot, the other waits at C2;
/// two more local jobs wait, one of them held (PSUSP). Both members keep
/// a history from the start.
fn lived() -> ([Member; 2], Local, SimTime) {
    let mut members = federation_of(c2_of_four_slots());
    let mut effects = Effects::default();
    members[0].keep_history(Duration::from_secs(3600));
    members[1].keep_history(Duration::from_secs(3600));
    resume(&mut members, SimTime::ZERO, 1, &mut effects);
    settle(&mut members, SimTime::ZERO, &mut effects);
    members[1].publish(SimTime::ZERO, &mut effects);
    settle(&mut members, SimTime::ZERO, &mut effects);

    let mut now = SimTime::from_secs(10);
    let preempted = submit_local(&mut members[1], now, "normal", 0);
    let running = submit_local(&mut members[1], now, "other", 1);
    let stopped = submit_local(&mut members[1], now, "other", 2);
    submit_jobs(&mut members[0], now, "send", 3..5, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    now += Duration::from_secs(5);
    let pending = submit_local(&mut members[1], now, "other", 5);
    let held = submit_local(&mut members[1], now, "other", 6);
    control(&mut members[1], now, held, JobAction::Stop);
    now += Duration::from_secs(10);
    control(&mut members[1], now, stopped, JobAction::Stop);
    control(&mut members[1], now, running, JobAction::Stop);
    now += Duration::from_secs(10);
    control(&mut members[1], now, running, JobAction::Resume);
    now += Duration::from_secs(5);
    let urgent = submit_local(&mut members[1], now, "urgent", 7);
    now += Duration::from_secs(15);
    settle(&mut members, now, &mut effects);
    let local = Local {
        preempted,
        running,
        stopped,
        pending,
        held,
        urgent,
    };
    (members, local, now)
}

#[test]
fn a_restored_member_s_history_has_each_job_s_state_and_times() {
    let (members, local, now) = lived();
    let Local {
        preempted,
        running,
        stopped,
        pending,
        held,
        urgent,
    } = local;
    let c1 = name("C1");
    let original = members[1].history().expect("kept");
    let forwarded = original.live_forwarded_from(&c1);
    assert_eq!(forwarded.len(), 2, "C1's two jobs at C2");
    let states = |ids: &[u64]| -> Vec<&str> {
        ids.iter()
            .map(|id| original.job(*id).expect("kept").state)
            .collect()
    };
    assert_eq!(
        states(&[preempted, running, stopped, pending, held, urgent]),
        ["SSUSP", "RUN", "USUSP", "PEND", "PSUSP", "RUN"]
    );
    let mut forwarded_states = states(&forwarded);
    forwarded_states.sort_unstable();
    assert_eq!(forwarded_states, ["PEND", "RUN"]);

    // C2 restarts from its durable state ten seconds later.
    let restarted_at = now + Duration::from_secs(10);
    let (config, subscribers) = (c2_of_four_slots(), execution_c2().1);
    let mut restored = Member::restore(
        MemberSpec {
            config: &config,
            forwarder: None,
            subscribers: &subscribers,
            collectors: &subscribers,
            initial_jobs: &[],
        },
        members[1].durable_state(),
        restarted_at,
    )
    .expect("C2 restores");
    assert_eq!(
        restored.node().parked_jobs().count(),
        1,
        "C1's pending job is parked until C1's sync"
    );
    restored.keep_history(Duration::from_secs(3600));
    let history = restored.history().expect("kept");

    let ids = [
        preempted,
        running,
        stopped,
        pending,
        held,
        urgent,
        forwarded[0],
        forwarded[1],
    ];
    assert_eq!(history.len(), ids.len(), "every job held, parked too");
    assert_eq!(history.live_forwarded_from(&c1), forwarded);
    for id in ids {
        let before = original.job(id).expect("kept");
        let after = history.job(id).expect("restored");
        assert_eq!(known(after), known(before), "job {id}");
        let (times_before, times_after) =
            (before.times_at(restarted_at), after.times_at(restarted_at));
        assert_eq!(
            times_after.total(),
            times_before.total(),
            "job {id}: all its time since its submission is counted"
        );
        let last = after.events().last().cloned().expect("an event");
        assert_eq!(last.at, restarted_at, "job {id}");
        assert!(
            last.text
                .starts_with("Restored from the state directory at "),
            "job {id}: {}",
            last.text
        );
        match after.state {
            // Running since its last start or resumption, its states
            // before that not known.
            "RUN" => {
                assert_eq!(after.since, before.since, "job {id}");
                assert_eq!(times_after.run, restarted_at.saturating_since(before.since));
                assert_eq!(
                    times_after.unknown,
                    before.since.saturating_since(before.submitted_at)
                );
            }
            // Pending since its submission, never held: as kept all along.
            "PEND" => assert_eq!(times_after, times_before, "job {id}"),
            // Since when it is stopped or held is not kept: UNKWN.
            _ => assert_eq!(
                times_after.unknown,
                restarted_at.saturating_since(before.submitted_at),
                "job {id}"
            ),
        }
    }
    let resumed = history.job(running).expect("restored");
    assert!(
        resumed
            .started_at
            .is_some_and(|first| first < resumed.since),
        "resumed after its first start"
    );
}

/// The send queue's jobs of a restarted submission cluster: in their
/// state, with their last forward; when they started there, or entered
/// their state, the forwarder does not keep (UNKWN, no start time).
#[test]
fn a_restored_submission_cluster_s_history_has_its_send_queue_s_jobs() {
    let (members, _, now) = lived();
    let original = members[0].history().expect("kept");
    let restarted_at = now + Duration::from_secs(10);
    let (config, forwarder) = submission_c1();
    let mut restored = Member::restore(
        MemberSpec {
            config: &config,
            forwarder: Some(&forwarder),
            subscribers: &[],
            collectors: &[],
            initial_jobs: &[],
        },
        members[0].durable_state(),
        restarted_at,
    )
    .expect("C1 restores");
    restored.keep_history(Duration::from_secs(3600));
    let history = restored.history().expect("kept");
    assert_eq!(history.len(), 2, "C1's two jobs");
    let mut states = Vec::new();
    for before in original.jobs() {
        let after = history.job(before.id).expect("restored");
        states.push(after.state);
        assert_eq!(
            (
                after.state,
                &after.origin,
                &after.forwarded,
                after.submitted_at
            ),
            (
                before.state,
                &before.origin,
                &before.forwarded,
                before.submitted_at
            ),
            "job {}",
            before.id
        );
        assert_eq!(after.started_at, None, "not kept by the forwarder");
        let times = after.times_at(restarted_at);
        assert_eq!(
            times.unknown,
            restarted_at.saturating_since(before.submitted_at)
        );
        assert_eq!(times.total(), before.times_at(restarted_at).total());
    }
    states.sort_unstable();
    assert_eq!(states, ["PEND", "RUN"]);
    let running = history
        .jobs()
        .into_iter()
        .find(|record| record.state == "RUN")
        .expect("one runs");
    assert_eq!(running.exec.as_deref(), Some("C2"));
}
