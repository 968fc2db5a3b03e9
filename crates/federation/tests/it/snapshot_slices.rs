//! A snapshot made a slice at a time ([`SnapshotBuilder`]) while the
//! member goes on equals one made in one go at its end
//! (`Member::durable_state`): jobs submitted, killed, started and
//! finished between its slices, the send queue's jobs likewise, and jobs
//! parked and put back when the link to their submission cluster goes
//! down and comes up again (they move unchanged, journaled as moved and
//! encoded again where they are), even between every two slices.

use std::time::Duration;

use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig, ReceiveFrom};
use mcfed_federation::{DurableState, Effects, JobRef, Member, MemberSpec, SnapshotBuilder};
use mcfed_forwarder::{ForwarderConfig, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{
    ClusterName, Envelope, Hello, JobAction, JobSpec, Message, QueueName, Resume, SimTime,
};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn queue(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

pub(super) fn job(n: u64, run_secs: u64) -> JobSpec {
    JobSpec::simple(format!("job{n}"), "alice", Duration::from_secs(run_secs))
}

/// Submits jobs `numbers` ([`job`], each running `run_secs`) to `queue`
/// of `member` at `now`; their ids there, in order.
pub(super) fn submit_jobs(
    member: &mut Member,
    now: SimTime,
    queue: &str,
    numbers: std::ops::Range<u64>,
    run_secs: u64,
    effects: &mut Effects,
) -> Vec<u64> {
    numbers
        .map(|n| {
            member
                .submit(now, queue, job(n, run_secs), effects)
                .expect("accepted")
                .job_id
        })
        .collect()
}

/// The snapshot `building` makes of `member` now, read back, which must
/// be the member's state copied in one go.
fn finish_and_compare(building: SnapshotBuilder, member: &Member) {
    let bytes = building.finish(member, None).expect("the snapshot encodes");
    let read: DurableState = postcard::from_bytes(&bytes).expect("the snapshot decodes");
    assert_eq!(read, member.durable_state(), "the snapshot made in slices");
}

/// Journals what `member` wrote, as a process does, into `building`.
fn journal(member: &mut Member, building: &mut SnapshotBuilder) {
    let records = member.take_journal();
    building.note(&records).expect("the records encode");
}

#[test]
fn jobs_submitted_killed_and_finished_between_slices_are_as_at_the_end() {
    let mut config = ClusterConfig::new(name("C1"));
    config.hosts = vec![HostConfig::new("h1", 2)];
    config.queues = vec![QueueConfig::new(queue("normal"))];
    let (mut member, _) = Member::build(MemberSpec {
        config: &config,
        forwarder: None,
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    })
    .expect("builds");
    member.enable_journal();
    let mut effects = Effects::default();
    submit_jobs(
        &mut member,
        SimTime::ZERO,
        "normal",
        0..60,
        100,
        &mut effects,
    );
    member.step(SimTime::ZERO, &mut effects);
    member.take_journal();

    let mut building = SnapshotBuilder::begin(&member);
    let mut slices = 0;
    let mut now = SimTime::ZERO;
    while !building.advance(&member, 4).expect("encodes") {
        slices += 1;
        // Between slices: a job arrives, one walked or not yet walked is
        // killed, time passes (two finish, two start).
        now += Duration::from_secs(50);
        member
            .submit(now, "normal", job(100 + slices, 30), &mut effects)
            .expect("accepted");
        let victim = (slices * 37) % 60 + 1;
        let _ = member.control(now, &JobRef::Id(victim), &JobAction::Kill, &mut effects);
        member.step(now, &mut effects);
        effects.clear();
        journal(&mut member, &mut building);
    }
    assert!(slices >= 10, "walked in {slices} slices");
    // And after the last slice, before its end.
    now += Duration::from_secs(50);
    member.step(now, &mut effects);
    journal(&mut member, &mut building);
    finish_and_compare(building, &member);
}

/// C1 forwarding from its send queue to `high@C2`, C2's one slot taking
/// one job at a time: the others wait at C2, forwarded.
pub(super) fn federation() -> [Member; 2] {
    federation_of(execution_c2().0)
}

/// [`federation`] with `c2` as C2's configuration.
pub(super) fn federation_of(c2: ClusterConfig) -> [Member; 2] {
    let (_, subscribers) = execution_c2();
    let (c1, forwarder) = submission_c1();
    let (one, _) = Member::build(MemberSpec {
        config: &c1,
        forwarder: Some(&forwarder),
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    })
    .expect("C1 builds");
    let (mut two, _) = Member::build(MemberSpec {
        config: &c2,
        forwarder: None,
        subscribers: &subscribers,
        collectors: &subscribers,
        initial_jobs: &[],
    })
    .expect("C2 builds");
    two.enable_journal();
    [one, two]
}

/// C1 of [`federation`]: its configuration (one send queue to
/// `high@C2`) and its forwarder's.
pub(super) fn submission_c1() -> (ClusterConfig, ForwarderConfig) {
    let mut c1 = ClusterConfig::new(name("C1"));
    c1.hosts = vec![HostConfig::new("a1", 1)];
    c1.queues = vec![{
        let mut send = QueueConfig::new(queue("send"));
        send.send_to = vec!["high@C2".parse().expect("valid")];
        send
    }];
    let forwarder = ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::Default,
        send_queues: vec![SendQueueConfig {
            name: queue("send"),
            send_to: vec!["high@C2".parse().expect("valid")],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 100,
        reachability: Default::default(),
    };
    (c1, forwarder)
}

/// C2 of [`federation`]: its configuration, one slot, and its submission
/// clusters (C1).
pub(super) fn execution_c2() -> (ClusterConfig, [ClusterName; 1]) {
    let mut c2 = ClusterConfig::new(name("C2"));
    c2.hosts = vec![HostConfig::new("b1", 1)];
    c2.queues = vec![QueueConfig::new(queue("normal")), {
        let mut high = QueueConfig::new(queue("high"));
        high.receive_from = Some(ReceiveFrom::Listed(vec![name("C1")]));
        high
    }];
    c2.update_interval = Some(Duration::from_secs(10));
    (c2, [name("C1")])
}

/// Delivers every envelope and steps both members at `now` until
/// nothing is left to do.
pub(super) fn settle(members: &mut [Member; 2], now: SimTime, effects: &mut Effects) {
    for _ in 0..20 {
        let mut envelopes: Vec<Envelope> = std::mem::take(&mut effects.envelopes);
        for member in members.iter_mut() {
            member.step(now, effects);
            envelopes.append(&mut effects.envelopes);
        }
        effects.clear();
        if envelopes.is_empty() {
            return;
        }
        for envelope in envelopes {
            let to = usize::from(envelope.to == name("C2"));
            members[to].receive(now, envelope, effects);
        }
    }
    panic!("the federation does not settle");
}

/// C1 and C2 linked, C2's counters known to C1: where the tests that
/// forward begin.
pub(super) fn connected() -> ([Member; 2], Effects) {
    let mut members = federation();
    let mut effects = Effects::default();
    connect(&mut members, SimTime::ZERO, &mut effects);
    settle(&mut members, SimTime::ZERO, &mut effects);
    members[1].publish(SimTime::ZERO, &mut effects);
    settle(&mut members, SimTime::ZERO, &mut effects);
    (members, effects)
}

/// The link between C1 and C2 comes up: each says hello and resumes.
fn connect(members: &mut [Member; 2], now: SimTime, effects: &mut Effects) {
    resume(members, now, 1, effects);
}

/// The link between C1 and C2 comes up: each says hello and resumes, C1
/// with lineage `c1_lineage` (a new one: C1 lost its state).
pub(super) fn resume(
    members: &mut [Member; 2],
    now: SimTime,
    c1_lineage: u64,
    effects: &mut Effects,
) {
    for (from, to) in [(0, 1), (1, 0)] {
        let from_name = members[from].name().clone();
        let member = &mut members[to];
        member.link(now, &from_name, true);
        for message in [
            Message::Hello(Hello::with_incarnation(from_name.clone(), 1)),
            Message::Resume(Resume {
                lineage: if from == 0 { c1_lineage } else { 1 },
                epoch_unix_ms: 0,
            }),
        ] {
            let to = member.name().clone();
            member.receive(
                now,
                Envelope {
                    from: from_name.clone(),
                    to,
                    message,
                },
                effects,
            );
        }
    }
}

#[test]
fn jobs_parked_and_put_back_between_slices_are_as_at_the_end() {
    let (mut members, mut effects) = connected();
    let mut now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..12, 3600, &mut effects);
    submit_jobs(&mut members[1], now, "normal", 50..62, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    members[1].take_journal();
    let forwarded = members[1]
        .cluster()
        .jobs()
        .filter(|job| job.origin != mcfed_cluster::JobOrigin::Local)
        .count();
    assert!(forwarded >= 4, "{forwarded} jobs forwarded to C2");

    let mut building = SnapshotBuilder::begin(&members[1]);
    assert!(!building.advance(&members[1], 3).expect("encodes"));
    // The link goes down: C2's pending jobs of C1 are parked.
    now += Duration::from_secs(10);
    members[1].link(now, &name("C1"), false);
    members[0].link(now, &name("C2"), false);
    journal(&mut members[1], &mut building);
    let parked = members[1].node().parked_jobs().count();
    assert!(parked >= 3, "{parked} jobs parked");
    assert!(!building.advance(&members[1], 3).expect("encodes"));
    // The link comes up: C1 syncs, the parked jobs are put back.
    now += Duration::from_secs(10);
    connect(&mut members, now, &mut effects);
    settle(&mut members, now, &mut effects);
    journal(&mut members[1], &mut building);
    assert_eq!(members[1].node().parked_jobs().count(), 0, "put back");
    assert!(!building.advance(&members[1], 3).expect("encodes"));
    // Down again, to end with jobs parked.
    members[1].link(now, &name("C1"), false);
    journal(&mut members[1], &mut building);
    while !building.advance(&members[1], 3).expect("encodes") {}
    finish_and_compare(building, &members[1]);
}

/// The send queue's jobs (held when the journal began, and since),
/// walked a slice at
/// a time in the order of their ids while jobs are submitted to it (after the walk's end), killed
/// (walked or not yet), forwarded, started and finished at C2 between
/// slices: the snapshot is C1's state at its end.
#[test]
fn send_queue_jobs_changed_between_slices_are_as_at_the_end() {
    let (mut members, mut effects) = connected();
    let mut now = SimTime::from_secs(10);
    let mut ids = Vec::new();
    ids.extend(submit_jobs(
        &mut members[0],
        now,
        "send",
        0..40,
        20,
        &mut effects,
    ));
    settle(&mut members, now, &mut effects);
    // Journaled from here, holding them (as a restored member is); more
    // come before the snapshot begins.
    members[0].enable_journal();
    ids.extend(submit_jobs(
        &mut members[0],
        now,
        "send",
        40..50,
        20,
        &mut effects,
    ));
    settle(&mut members, now, &mut effects);
    members[0].take_journal();
    let held = members[0].durable_state().sources.len();
    assert!(held >= 30, "{held} jobs in the send queue");

    let mut building = SnapshotBuilder::begin(&members[0]);
    let mut slices = 0u64;
    while !building.advance(&members[0], 2).expect("encodes") {
        slices += 1;
        // Between slices: a job arrives, one walked or not yet walked is
        // killed, time passes (C2 ends one job and starts the next).
        now += Duration::from_secs(20);
        members[0]
            .submit(now, "send", job(100 + slices, 20), &mut effects)
            .expect("accepted");
        let victim = ids[usize::try_from((slices * 13) % 50).expect("small")];
        let _ = members[0].control(now, &JobRef::Id(victim), &JobAction::Kill, &mut effects);
        settle(&mut members, now, &mut effects);
        journal(&mut members[0], &mut building);
    }
    assert!(slices >= 10, "walked in {slices} slices");
    now += Duration::from_secs(20);
    settle(&mut members, now, &mut effects);
    journal(&mut members[0], &mut building);
    let end = members[0].durable_state();
    assert!(
        end.sources.len() >= 10 && end.sources.len() < held,
        "{} jobs in the send queue at the end",
        end.sources.len()
    );
    finish_and_compare(building, &members[0]);
}

/// The link to C1 goes down and up again between every two slices (C2's
/// pending jobs of C1 parked, then put back by C1's sync), faster than
/// the snapshot is made: the walk goes on (the moved jobs encoded when the
/// move is seen) and ends, as C2's state at its end.
#[test]
fn a_link_flapping_between_slices_does_not_keep_the_snapshot_from_ending() {
    let (mut members, mut effects) = connected();
    let mut now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..20, 3600, &mut effects);
    submit_jobs(&mut members[1], now, "normal", 50..70, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    members[1].take_journal();
    let held = members[1].durable_state().jobs.len();
    assert!(held >= 30, "{held} jobs at C2");

    let mut building = SnapshotBuilder::begin(&members[1]);
    let mut slices = 0;
    while !building.advance(&members[1], 3).expect("encodes") {
        slices += 1;
        assert!(slices <= held, "the snapshot does not end: {slices} slices");
        now += Duration::from_secs(1);
        if slices % 2 == 1 {
            members[1].link(now, &name("C1"), false);
            members[0].link(now, &name("C2"), false);
            assert!(members[1].node().parked_jobs().count() >= 3, "parked");
        } else {
            connect(&mut members, now, &mut effects);
            settle(&mut members, now, &mut effects);
            assert_eq!(members[1].node().parked_jobs().count(), 0, "put back");
        }
        if slices % 3 == 0 {
            members[1]
                .submit(now, "normal", job(100 + slices as u64, 60), &mut effects)
                .expect("accepted");
            members[1].step(now, &mut effects);
            effects.clear();
        }
        journal(&mut members[1], &mut building);
    }
    assert!(slices >= 8, "walked in {slices} slices");
    finish_and_compare(building, &members[1]);
}

/// Jobs parked before the walk met them, their places taken by jobs
/// submitted meanwhile, and put back in places the walk does not reach
/// (beyond those when it began): they are in the snapshot, encoded when
/// their move is seen.
#[test]
fn jobs_put_back_beyond_the_walk_are_in_the_snapshot() {
    let (mut members, mut effects) = connected();
    let mut now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..12, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    members[1].take_journal();

    let mut building = SnapshotBuilder::begin(&members[1]);
    assert!(!building.advance(&members[1], 1).expect("encodes"));
    now += Duration::from_secs(10);
    members[1].link(now, &name("C1"), false);
    members[0].link(now, &name("C2"), false);
    let parked = members[1].node().parked_jobs().count();
    assert!(parked >= 8, "{parked} jobs parked");
    submit_jobs(
        &mut members[1],
        now,
        "normal",
        50..50 + parked as u64,
        3600,
        &mut effects,
    );
    members[1].step(now, &mut effects);
    effects.clear();
    journal(&mut members[1], &mut building);
    connect(&mut members, now, &mut effects);
    settle(&mut members, now, &mut effects);
    journal(&mut members[1], &mut building);
    assert_eq!(members[1].node().parked_jobs().count(), 0, "put back");
    while !building.advance(&members[1], 1).expect("encodes") {}
    finish_and_compare(building, &members[1]);
}
