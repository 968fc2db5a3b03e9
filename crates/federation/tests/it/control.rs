//! Job control and history across two members: a command given at the
//! submission cluster reaches the execution cluster that holds the job,
//! the job's state follows at both ends, and both histories tell it, with
//! times; ids of send-queue jobs and local jobs never collide.

use std::time::Duration;

use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig, ReceiveFrom};
use mcfed_federation::{
    ControlOutcome, ControlRefused, DurableState, Effects, InitialJobs, JobRef, Member, MemberSpec,
    NoticeKind,
};
use mcfed_forwarder::{ForwarderConfig, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{
    ClusterName, Envelope, JobAction, JobEvent, JobReturn, JobSpec, Message, QueueName, SimTime,
};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn queue(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

/// The configurations of C1 (one local queue `normal` on one host, a send
/// queue `send` to `high@C2`, one job present at start) and C2 (`high`
/// receiving from C1, two one-slot hosts).
struct Configs {
    c1: ClusterConfig,
    forwarder: ForwarderConfig,
    initial: Vec<InitialJobs>,
    c2: ClusterConfig,
}

fn configs() -> Configs {
    let mut c1 = ClusterConfig::new(name("C1"));
    c1.hosts = vec![HostConfig::new("a1", 1)];
    c1.queues = vec![QueueConfig::new(queue("normal")), {
        let mut send = QueueConfig::new(queue("send"));
        send.send_to = vec!["high@C2".parse().expect("valid")];
        send
    }];
    c1.update_interval = Some(Duration::from_secs(10));
    let forwarder = ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: queue("send"),
            send_to: vec!["high@C2".parse().expect("valid")],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 3,
        reachability: Default::default(),
    };
    let mut c2 = ClusterConfig::new(name("C2"));
    c2.hosts = vec![HostConfig::new("b1", 1), HostConfig::new("b2", 1)];
    c2.queues = vec![{
        let mut high = QueueConfig::new(queue("high"));
        high.receive_from = Some(ReceiveFrom::Listed(vec![name("C1")]));
        high
    }];
    c2.update_interval = Some(Duration::from_secs(10));
    let initial = vec![InitialJobs {
        queue: "normal".into(),
        jobs: vec![JobSpec::simple(
            "present",
            "alice",
            Duration::from_secs(600),
        )],
    }];
    Configs {
        c1,
        forwarder,
        initial,
        c2,
    }
}

fn c1_spec(configs: &Configs) -> MemberSpec<'_> {
    MemberSpec {
        config: &configs.c1,
        forwarder: Some(&configs.forwarder),
        subscribers: &[],
        collectors: &[],
        initial_jobs: &configs.initial,
    }
}

/// C1 and C2 of [`configs`], keeping histories.
fn federation() -> Vec<Member> {
    let configs = configs();
    let (mut one, _) = Member::build(c1_spec(&configs)).expect("C1 builds");
    let (mut two, _) = Member::build(MemberSpec {
        config: &configs.c2,
        forwarder: None,
        subscribers: &[name("C1")],
        collectors: &[name("C1")],
        initial_jobs: &[],
    })
    .expect("C2 builds");
    one.keep_history(Duration::from_secs(3600));
    two.keep_history(Duration::from_secs(3600));
    vec![one, two]
}

/// Delivers every envelope and steps every member at `now` until nothing
/// is left to do; returns the notices heard.
fn settle(members: &mut [Member], now: SimTime, effects: &mut Effects) -> Vec<NoticeKind> {
    let mut notices = Vec::new();
    for _ in 0..20 {
        let mut envelopes: Vec<Envelope> = std::mem::take(&mut effects.envelopes);
        for member in members.iter_mut() {
            member.step(now, effects);
            envelopes.append(&mut effects.envelopes);
        }
        notices.extend(effects.notices.drain(..).map(|notice| notice.kind));
        effects.clear();
        if envelopes.is_empty() {
            return notices;
        }
        for envelope in envelopes {
            let index = members
                .iter()
                .position(|member| *member.name() == envelope.to)
                .expect("a member");
            members[index].receive(now, envelope, effects);
        }
    }
    panic!("the federation does not settle");
}

fn publish(members: &mut [Member], now: SimTime, effects: &mut Effects) {
    members[1].publish(now, effects);
    settle(members, now, effects);
}

fn state_at_c2(members: &[Member], source_job: u64) -> Option<&'static str> {
    let id = members[1].node().forwarded_job(&name("C1"), source_job)?;
    members[1].cluster().job(id).map(|job| job.state.as_str())
}

#[test]
fn a_command_at_the_submission_cluster_reaches_the_execution_cluster() {
    let mut members = federation();
    let mut effects = Effects::default();
    members[0].take_start(&mut effects);
    assert_eq!(effects.transitions.len(), 1, "the job present at start");
    effects.clear();
    publish(&mut members, SimTime::from_secs(10), &mut effects);
    let t = SimTime::from_secs(20);
    let spec = JobSpec::simple("away", "bob", Duration::from_secs(3600));
    let sent = members[0]
        .submit(t, "send", spec, &mut Effects::default())
        .expect("submitted");
    // Ids continue after the job present at start (id 1).
    assert_eq!(sent.job_id, 2);
    let local = members[0]
        .submit(
            t,
            "normal",
            JobSpec::simple("here", "bob", Duration::from_secs(60)),
            &mut Effects::default(),
        )
        .expect("submitted");
    assert_eq!(local.job_id, 3);
    settle(&mut members, t, &mut effects);
    assert_eq!(state_at_c2(&members, 2), Some("RUN"));

    let t = SimTime::from_secs(30);
    let outcome = members[0]
        .control(t, &JobRef::Id(2), &JobAction::Stop, &mut effects)
        .expect("sent");
    assert_eq!(
        outcome,
        ControlOutcome::Sent {
            job: 2,
            cluster: name("C2")
        }
    );
    let notices = settle(&mut members, t, &mut effects);
    assert!(
        notices.contains(&NoticeKind::ControlReply { done: true }),
        "{notices:?}"
    );
    assert_eq!(state_at_c2(&members, 2), Some("USUSP"));
    let at_c1 = members[0]
        .forwarder()
        .and_then(|f| f.job(2))
        .expect("known");
    assert_eq!(at_c1.state.as_str(), "USUSP");

    // By name too; a kill ends it at both ends.
    let t = SimTime::from_secs(40);
    members[0]
        .control(
            t,
            &JobRef::Name("away".into()),
            &JobAction::Kill,
            &mut effects,
        )
        .expect("sent");
    settle(&mut members, t, &mut effects);
    assert_eq!(state_at_c2(&members, 2), None);
    assert!(members[0].forwarder().and_then(|f| f.job(2)).is_none());
    assert_eq!(members[1].cluster().exited_jobs(), 1);
    assert_eq!(
        members[0].control(t, &JobRef::Id(2), &JobAction::Kill, &mut effects),
        Err(ControlRefused::Finished(2))
    );
    assert!(matches!(
        members[0].control(t, &JobRef::Id(99), &JobAction::Kill, &mut effects),
        Err(ControlRefused::NoSuchJob(_))
    ));

    // Both histories tell the story, with times.
    let one = members[0].history().expect("kept");
    let record = one.job(2).expect("job 2");
    assert_eq!(record.state, "EXIT");
    let events = record.events();
    let texts: Vec<&str> = events.iter().map(|e| e.text.as_str()).collect();
    assert!(
        texts[0].starts_with("Submitted to queue <send>"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Forwarded to queue <high@C2>")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Accepted by <high@C2> as job <1>")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Started at cluster <C2>")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Bstop sent to cluster <C2>")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Exited: killed by bkill")),
        "{texts:?}"
    );
    assert_eq!(record.times_at(t).run, Duration::from_secs(10));
    assert_eq!(record.ended_at, Some(SimTime::from_secs(40)));
    let two = members[1].history().expect("kept");
    let there = two.job(1).expect("the forwarded job at C2");
    assert_eq!(there.state, "EXIT");
    assert!(
        there.events()[0]
            .text
            .starts_with("Forwarded from cluster <C1>, where it is job <2>")
    );
    assert_eq!(there.times_at(t).run, Duration::from_secs(10));
    assert_eq!(there.times_at(t).ususp, Duration::from_secs(10));
    // The job present at start and the local one are in C1's history too.
    assert_eq!(one.job(1).map(|r| r.state), Some("RUN"));
    assert_eq!(one.job(3).map(|r| r.state), Some("PEND"));
}

#[test]
fn ended_jobs_are_cleaned_after_clean_period() {
    let mut members = federation();
    let mut effects = Effects::default();
    members[0].take_start(&mut effects);
    effects.clear();
    // The job present at start ends at 10 minutes; it is kept for an hour.
    let ten = SimTime::from_secs(600);
    settle(&mut members, ten, &mut effects);
    let history = members[0].history().expect("kept");
    assert_eq!(history.job(1).map(|record| record.state), Some("DONE"));
    let later = SimTime::from_secs(600 + 3599);
    settle(&mut members, later, &mut effects);
    assert!(members[0].history().and_then(|h| h.job(1)).is_some());
    settle(&mut members, SimTime::from_secs(600 + 3600), &mut effects);
    assert!(members[0].history().and_then(|h| h.job(1)).is_none());
    assert!(members[0].history().is_some_and(|h| h.is_empty()));
}

#[test]
fn a_job_killed_away_is_remembered_through_a_restart_from_the_journal() {
    let mut members = federation();
    members[0].enable_journal();
    let mut effects = Effects::default();
    members[0].take_start(&mut effects);
    effects.clear();
    publish(&mut members, SimTime::from_secs(10), &mut effects);
    let t = SimTime::from_secs(20);
    let spec = JobSpec::simple("away", "bob", Duration::from_secs(3600));
    members[0]
        .submit(t, "send", spec, &mut Effects::default())
        .expect("submitted");
    settle(&mut members, t, &mut effects);
    assert_eq!(state_at_c2(&members, 2), Some("RUN"));
    let snapshot = members[0].durable_state();
    members[0].take_journal();
    // bkill at C1; C1 is killed -9 before the kill leaves (it never does).
    let t = SimTime::from_secs(30);
    members[0]
        .control(t, &JobRef::Id(2), &JobAction::Kill, &mut effects)
        .expect("sent");
    effects.clear();
    let mut state: DurableState = snapshot;
    for record in members[0].take_journal() {
        state.apply(record);
    }
    // A compaction keeps it too.
    let bytes = postcard::to_allocvec(&members[0].snapshot_view(None)).expect("encodes");
    let compacted: DurableState = postcard::from_bytes(&bytes).expect("decodes");
    assert_eq!(compacted.sources, state.sources);
    let configs = configs();
    for state in [state, compacted] {
        let mut restarted = Member::restore(c1_spec(&configs), state, t).expect("restores");
        assert!(restarted.forwarder().and_then(|f| f.job(2)).is_none());
        // C2 had sent it back (a recall) before the kill could come: it
        // ends at C1, killed, once.
        let dest_job = members[1]
            .node()
            .forwarded_job(&name("C1"), 2)
            .expect("at C2");
        let returned = || Envelope {
            from: name("C2"),
            to: name("C1"),
            message: Message::JobReturn(JobReturn {
                source_job: 2,
                dest_job: dest_job.0,
                reason: "recalled".into(),
            }),
        };
        let mut effects = Effects::default();
        restarted.receive(t, returned(), &mut effects);
        let killed: Vec<_> = effects
            .notices
            .iter()
            .filter(|notice| notice.kind == NoticeKind::Control(JobEvent::Killed))
            .collect();
        assert_eq!(killed.len(), 1, "{:?}", effects.notices);
        assert_eq!(&*killed[0].name, "away");
        effects.clear();
        restarted.receive(t, returned(), &mut effects);
        assert!(effects.notices.is_empty(), "{:?}", effects.notices);
        assert!(restarted.forwarder().and_then(|f| f.job(2)).is_none());
    }
}

/// A job killed when the closed advance reservation it runs in ends says
/// so in its history (bhist, bjobs -l), not "killed by bkill" (issue 27
/// item 8).
#[test]
fn a_job_killed_at_its_reservations_end_says_so_in_its_history() {
    let mut config = ClusterConfig::new(name("C1"));
    config.hosts = vec![HostConfig::new("a1", 2)];
    config.queues = vec![QueueConfig::new(queue("normal"))];
    config.advance_reservations = vec![mcfed_cluster::AdvanceReservationConfig {
        name: "maint".to_owned(),
        hosts: vec!["a1".to_owned()],
        slots: Some(1),
        start: SimTime::ZERO,
        end: SimTime::from_secs(600),
        users: vec!["alice".to_owned()],
        open: false,
    }];
    let mut inside = JobSpec::simple("inside", "alice", Duration::from_secs(3600));
    inside
        .resources
        .push(mcfed_cluster::advance::reservation_word("maint"));
    let initial = vec![InitialJobs {
        queue: "normal".into(),
        jobs: vec![
            inside,
            JobSpec::simple("outside", "bob", Duration::from_secs(3600)),
        ],
    }];
    let (mut member, _) = Member::build(MemberSpec {
        config: &config,
        forwarder: None,
        subscribers: &[],
        collectors: &[],
        initial_jobs: &initial,
    })
    .expect("C1 builds");
    member.keep_history(Duration::from_secs(3600));
    let mut effects = Effects::default();
    member.take_start(&mut effects);
    member.step(SimTime::ZERO, &mut effects);
    member.step(SimTime::from_secs(600), &mut effects);
    let history = member.history().expect("kept");
    let last = |id: u64| {
        let record = history.job(id).expect("recorded");
        let events = record.events();
        (record.state, events.last().map(|event| event.text.clone()))
    };
    assert_eq!(
        last(1),
        (
            "EXIT",
            Some(
                "Exited: killed when advance reservation <maint> ended (TERM_DEADLINE)".to_owned()
            )
        )
    );
    assert_eq!(last(2).0, "RUN", "a job outside it runs on");
}
