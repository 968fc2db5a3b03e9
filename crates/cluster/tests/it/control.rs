//! Job control on the cluster core: `bkill`, `bstop`, `bresume`,
//! `brequeue`, `bswitch` and `bmod` as [`Cluster::control`] applies them,
//! each checked against the jobs that run afterwards and against a full
//! audit of the books; then random clusters under random commands keep
//! every invariant and still run every job.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, ControlError, HostConfig, ImageState, JobId, JobOrigin, JobState,
    QueueConfig, Transition,
};
use mcfed_protocol::{ClusterName, JobAction, JobChanges, JobEvent, JobSpec, QueueName, SimTime};
use proptest::prelude::*;

fn minutes(n: u64) -> SimTime {
    SimTime::from_secs(n * 60)
}

fn queue(name: &str, priority: u32) -> QueueConfig {
    let mut queue = QueueConfig::new(QueueName::new(name).expect("valid"));
    queue.priority = priority;
    queue
}

/// One host of `slots` slots, queues `normal` (10) and `other` (5).
fn cluster(slots: u32, max_user_priority: Option<u32>) -> Cluster {
    cluster_with(slots, max_user_priority, false)
}

/// As [`cluster`]; with `preempting`, `normal` may preempt `other`.
fn cluster_with(slots: u32, max_user_priority: Option<u32>, preempting: bool) -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", slots)];
    let mut normal = queue("normal", 10);
    if preempting {
        normal.preemption = "PREEMPTIVE[other]".parse().expect("valid");
    }
    config.queues = vec![normal, queue("other", 5)];
    config.params.max_user_priority = max_user_priority;
    Cluster::new(config).expect("valid configuration")
}

fn submit(cluster: &mut Cluster, at: SimTime, name: &str, slots: u32, run: u64) -> JobId {
    let mut spec = JobSpec::simple(name, "alice", Duration::from_secs(run * 60));
    spec.slots = slots;
    cluster
        .submit(at, "normal", spec, JobOrigin::Local)
        .expect("accepted")
}

fn advance(cluster: &mut Cluster, at: SimTime) -> Vec<Transition> {
    let mut transitions = Vec::new();
    cluster.advance(at, &mut transitions);
    cluster.audit().expect("books agree");
    transitions
}

fn control(
    cluster: &mut Cluster,
    at: SimTime,
    id: JobId,
    action: JobAction,
) -> Result<Vec<Transition>, ControlError> {
    let mut transitions = Vec::new();
    let result = cluster.control(at, id, &action, &mut transitions);
    cluster.audit().expect("books agree");
    result.map(|()| transitions)
}

fn state(cluster: &Cluster, id: JobId) -> Option<JobState> {
    cluster.job(id).map(|job| job.state)
}

fn finish_times(transitions: &[Transition]) -> Vec<(JobId, SimTime)> {
    transitions
        .iter()
        .filter(|t| t.event == JobEvent::Finished)
        .map(|t| (t.job, t.at))
        .collect()
}

#[test]
fn bkill_ends_a_running_job_with_exit_and_frees_its_slots() {
    let mut c = cluster(1, None);
    let first = submit(&mut c, SimTime::ZERO, "first", 1, 60);
    let second = submit(&mut c, SimTime::ZERO, "second", 1, 60);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, second), Some(JobState::Pending));
    let made = control(&mut c, minutes(10), first, JobAction::Kill).expect("killed");
    assert_eq!(made[0].event, JobEvent::Killed);
    assert_eq!(state(&c, first), None);
    assert_eq!(c.exited_jobs(), 1);
    assert!(c.needs_dispatch());
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, second), Some(JobState::Running));
    // A pending job is removed the same way.
    let third = submit(&mut c, minutes(11), "third", 1, 60);
    control(&mut c, minutes(11), third, JobAction::Kill).expect("killed");
    assert_eq!(state(&c, third), None);
    assert_eq!(
        control(&mut c, minutes(12), third, JobAction::Kill).expect_err("gone"),
        ControlError::NoSuchJob
    );
}

#[test]
fn a_job_ends_finished_at_its_time_or_exited_at_its_run_limit_with_its_name_and_origin() {
    let mut c = cluster(2, None);
    let forwarded = JobOrigin::Forwarded {
        from: ClusterName::new("C0").expect("valid"),
        source_job: 7,
    };
    let mut spec = JobSpec::simple("limited", "alice", Duration::from_secs(60 * 60));
    spec.run_limit = Some(Duration::from_secs(30 * 60));
    let limited = c
        .submit(SimTime::ZERO, "normal", spec, forwarded.clone())
        .expect("accepted");
    let done = submit(&mut c, SimTime::ZERO, "done", 1, 20);
    advance(&mut c, SimTime::ZERO);
    let ended = advance(&mut c, minutes(40));
    let summary: Vec<_> = ended
        .iter()
        .map(|t| (t.job, t.event, t.at, &*t.name, t.origin.clone()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                done,
                JobEvent::Finished,
                minutes(20),
                "done",
                JobOrigin::Local
            ),
            (
                limited,
                JobEvent::RunLimit,
                minutes(30),
                "limited",
                forwarded.clone()
            ),
        ]
    );
    assert_eq!((c.finished_jobs(), c.exited_jobs()), (1, 1));
    // bkill hands the origin over too.
    let spec = JobSpec::simple("killed", "alice", Duration::from_secs(60 * 60));
    let killed = c
        .submit(minutes(41), "normal", spec, forwarded.clone())
        .expect("accepted");
    advance(&mut c, minutes(41));
    let made = control(&mut c, minutes(42), killed, JobAction::Kill).expect("killed");
    assert_eq!(
        (made[0].event, &*made[0].name, made[0].origin.clone()),
        (JobEvent::Killed, "killed", forwarded)
    );
    assert_eq!((c.finished_jobs(), c.exited_jobs()), (1, 2));
}

#[test]
fn bstop_keeps_a_running_jobs_slots_and_bresume_runs_out_its_time() {
    let mut c = cluster(1, None);
    let first = submit(&mut c, SimTime::ZERO, "first", 1, 60);
    let second = submit(&mut c, SimTime::ZERO, "second", 1, 10);
    advance(&mut c, SimTime::ZERO);
    let made = control(&mut c, minutes(20), first, JobAction::Stop).expect("stopped");
    assert_eq!(made[0].event, JobEvent::Stopped);
    assert_eq!(state(&c, first), Some(JobState::UserSuspended));
    // Its slot is not given away: the second job still pends.
    let made = advance(&mut c, minutes(30));
    assert!(made.is_empty(), "{made:?}");
    assert_eq!(state(&c, second), Some(JobState::Pending));
    let report = c.queue_report(0, minutes(30));
    assert_eq!((report.run, report.susp, report.pend), (0, 1, 1));
    assert!(
        control(&mut c, minutes(30), first, JobAction::Stop).is_err(),
        "stopped twice"
    );
    let made = control(&mut c, minutes(50), first, JobAction::Resume).expect("resumed");
    assert_eq!(made[0].event, JobEvent::Resumed);
    // It ran 20 of its 60 minutes, so it finishes 40 minutes after resuming.
    let made = advance(&mut c, minutes(90));
    assert_eq!(finish_times(&made), vec![(first, minutes(90))]);
    assert_eq!(state(&c, second), Some(JobState::Running));
}

/// `bstop` of a job suspended by preemption (SSUSP) makes it USUSP, as
/// LSF does (issue 27 item 10): it no longer resumes when its preemptor
/// ends; its slot, which only running jobs count with preemption enabled
/// (seed 003), goes to the next job; `bresume` makes it SSUSP while the
/// slot is taken, and it resumes on its own once the slot is free.
#[test]
fn bstop_of_a_preempted_job_waits_for_bresume_then_resumes_when_free() {
    let mut c = cluster_with(1, None, true);
    let other = |c: &mut Cluster, at: SimTime, name: &str, run: u64| {
        let spec = JobSpec::simple(name, "alice", Duration::from_secs(run * 60));
        c.submit(at, "other", spec, JobOrigin::Local)
            .expect("accepted")
    };
    let victim = other(&mut c, SimTime::ZERO, "victim", 60);
    advance(&mut c, SimTime::ZERO);
    let preemptor = submit(&mut c, minutes(10), "preemptor", 1, 20);
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, victim), Some(JobState::Suspended));
    let made = control(&mut c, minutes(15), victim, JobAction::Stop).expect("stopped");
    assert_eq!(made[0].event, JobEvent::Stopped);
    assert_eq!(state(&c, victim), Some(JobState::UserSuspended));
    let image = c.job_image(victim).expect("an image");
    assert_eq!(image.state, ImageState::StoppedSuspended);
    assert!(
        control(&mut c, minutes(16), victim, JobAction::Stop).is_err(),
        "stopped twice"
    );
    let later = other(&mut c, minutes(20), "later", 5);
    advance(&mut c, minutes(20));
    assert_eq!(
        state(&c, later),
        Some(JobState::Pending),
        "the preemptor runs"
    );
    // The preemptor ends at 30: the stopped victim does not resume, the
    // later job takes the slot.
    let made = advance(&mut c, minutes(30));
    assert_eq!(finish_times(&made), vec![(preemptor, minutes(30))]);
    assert_eq!(state(&c, victim), Some(JobState::UserSuspended));
    assert_eq!(state(&c, later), Some(JobState::Running));
    // bresume while the slot is taken: SSUSP, resumed when it frees at 35.
    let made = control(&mut c, minutes(32), victim, JobAction::Resume).expect("resumed");
    assert_eq!(made[0].event, JobEvent::Suspended);
    assert_eq!(state(&c, victim), Some(JobState::Suspended));
    let made = advance(&mut c, minutes(35));
    assert!(
        made.iter()
            .any(|t| t.job == victim && t.event == JobEvent::Resumed)
    );
    // It ran 10 of its 60 minutes before the preemption.
    let made = advance(&mut c, minutes(85));
    assert_eq!(finish_times(&made), vec![(victim, minutes(85))]);
}

/// `bresume` of a preempted, stopped job whose slot is free runs it at
/// once.
#[test]
fn bresume_of_a_preempted_stopped_job_with_its_slot_free_runs_it() {
    let mut c = cluster_with(1, None, true);
    let spec = JobSpec::simple("victim", "alice", Duration::from_secs(60 * 60));
    let victim = c
        .submit(SimTime::ZERO, "other", spec, JobOrigin::Local)
        .expect("accepted");
    advance(&mut c, SimTime::ZERO);
    submit(&mut c, minutes(10), "preemptor", 1, 20);
    advance(&mut c, minutes(10));
    control(&mut c, minutes(15), victim, JobAction::Stop).expect("stopped");
    advance(&mut c, minutes(30));
    assert_eq!(state(&c, victim), Some(JobState::UserSuspended));
    let made = control(&mut c, minutes(40), victim, JobAction::Resume).expect("resumed");
    assert_eq!(made[0].event, JobEvent::Resumed);
    assert_eq!(state(&c, victim), Some(JobState::Running));
    let made = advance(&mut c, minutes(90));
    assert_eq!(finish_times(&made), vec![(victim, minutes(90))]);
}

#[test]
fn bstop_holds_a_pending_job_until_bresume() {
    let mut c = cluster(1, None);
    let first = submit(&mut c, SimTime::ZERO, "first", 1, 10);
    let held = submit(&mut c, SimTime::ZERO, "held", 1, 10);
    let third = submit(&mut c, SimTime::ZERO, "third", 1, 10);
    advance(&mut c, SimTime::ZERO);
    let made = control(&mut c, minutes(1), held, JobAction::Stop).expect("held");
    assert_eq!(made[0].event, JobEvent::Held);
    assert_eq!(state(&c, held), Some(JobState::PendingSuspended));
    // The held job is passed over.
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, first), None);
    assert_eq!(state(&c, third), Some(JobState::Running));
    assert_eq!(state(&c, held), Some(JobState::PendingSuspended));
    let made = control(&mut c, minutes(12), held, JobAction::Resume).expect("released");
    assert_eq!(made[0].event, JobEvent::Released);
    advance(&mut c, minutes(20));
    assert_eq!(state(&c, held), Some(JobState::Running));
}

#[test]
fn brequeue_restarts_a_job_from_the_start_behind_the_pending_ones() {
    let mut c = cluster(1, None);
    let first = submit(&mut c, SimTime::ZERO, "first", 1, 60);
    let second = submit(&mut c, SimTime::ZERO, "second", 1, 10);
    advance(&mut c, SimTime::ZERO);
    assert!(control(&mut c, minutes(1), second, JobAction::Requeue).is_err());
    let made = control(&mut c, minutes(30), first, JobAction::Requeue).expect("requeued");
    assert_eq!(made[0].event, JobEvent::Requeued);
    assert_eq!(made[0].preempted_by, None);
    let job = c.job(first).expect("same id");
    assert_eq!(job.state, JobState::Pending);
    assert_eq!(job.queued_at, minutes(30));
    // The second job goes first; the requeued one runs its whole hour after.
    let made = advance(&mut c, minutes(30));
    assert_eq!(state(&c, second), Some(JobState::Running));
    assert!(made.iter().all(|t| t.job != first));
    let made = advance(&mut c, minutes(40));
    assert_eq!(finish_times(&made), vec![(second, minutes(40))]);
    assert_eq!(state(&c, first), Some(JobState::Running));
    let made = advance(&mut c, minutes(100));
    assert_eq!(finish_times(&made), vec![(first, minutes(100))]);
}

#[test]
fn bswitch_moves_a_pending_job_and_refuses_a_running_one() {
    let mut c = cluster(1, None);
    let first = submit(&mut c, SimTime::ZERO, "first", 1, 10);
    let second = submit(&mut c, SimTime::ZERO, "second", 1, 10);
    advance(&mut c, SimTime::ZERO);
    let other = QueueName::new("other").expect("valid");
    assert!(matches!(
        control(&mut c, minutes(1), first, JobAction::Switch(other.clone())),
        Err(ControlError::WrongState { .. })
    ));
    let nosuch = QueueName::new("nosuch").expect("valid");
    assert!(matches!(
        control(&mut c, minutes(1), second, JobAction::Switch(nosuch)),
        Err(ControlError::BadQueue(_))
    ));
    let made = control(&mut c, minutes(1), second, JobAction::Switch(other)).expect("moved");
    assert_eq!(made[0].event, JobEvent::Switched);
    assert_eq!(made[0].queue.as_str(), "other");
    let report = c.queue_report(1, minutes(1));
    assert_eq!(report.pend, 1);
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, second), Some(JobState::Running));
}

#[test]
fn bmod_changes_slots_of_pending_jobs_and_limits_of_any() {
    let mut c = cluster(2, None);
    let first = submit(&mut c, SimTime::ZERO, "first", 1, 10);
    let wide = submit(&mut c, SimTime::ZERO, "wide", 2, 10);
    advance(&mut c, SimTime::ZERO);
    let slots = |n| {
        JobAction::Modify(JobChanges {
            slots: Some(n),
            ..JobChanges::default()
        })
    };
    assert!(control(&mut c, minutes(1), first, slots(2)).is_err());
    assert!(
        control(&mut c, minutes(1), wide, slots(3)).is_err(),
        "too wide"
    );
    control(&mut c, minutes(1), wide, slots(1)).expect("narrower");
    advance(&mut c, minutes(1));
    assert_eq!(state(&c, wide), Some(JobState::Running));
    let limit = JobAction::Modify(JobChanges {
        run_limit: Some(Some(Duration::from_secs(3600))),
        ..JobChanges::default()
    });
    control(&mut c, minutes(2), first, limit).expect("limit of a running job");
    assert_eq!(
        c.job(first).and_then(|job| job.spec.run_limit),
        Some(Duration::from_secs(3600))
    );
    let zero = JobAction::Modify(JobChanges {
        run_limit: Some(Some(Duration::ZERO)),
        ..JobChanges::default()
    });
    assert!(matches!(
        control(&mut c, minutes(2), first, zero),
        Err(ControlError::BadChange(_))
    ));
}

#[test]
fn user_priorities_order_a_queue_and_bmod_reorders_it() {
    let mut c = cluster(1, Some(100));
    let running = submit(&mut c, SimTime::ZERO, "running", 1, 10);
    advance(&mut c, SimTime::ZERO);
    let plain = submit(&mut c, SimTime::ZERO, "plain", 1, 10);
    let mut spec = JobSpec::simple("urgent", "alice", Duration::from_secs(600));
    let mut options = spec.options();
    options.user_priority = Some(90);
    spec.set_options(options);
    let urgent = c
        .submit(SimTime::ZERO, "normal", spec, JobOrigin::Local)
        .expect("accepted");
    let late = submit(&mut c, SimTime::ZERO, "late", 1, 10);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, running), Some(JobState::Running));
    // bmod -sp 95 puts the last job ahead of the urgent one.
    let raise = JobAction::Modify(JobChanges {
        user_priority: Some(95),
        ..JobChanges::default()
    });
    control(&mut c, minutes(1), late, raise).expect("reordered");
    let mut order = Vec::new();
    for at in [10, 20, 30] {
        for transition in advance(&mut c, minutes(at)) {
            if transition.event == JobEvent::Started {
                order.push(transition.job);
            }
        }
    }
    assert_eq!(order, vec![late, urgent, plain]);
}

#[test]
fn user_priorities_need_max_user_priority() {
    let mut c = cluster(1, None);
    let mut spec = JobSpec::simple("j", "alice", Duration::from_secs(60));
    let mut options = spec.options();
    options.user_priority = Some(5);
    spec.set_options(options);
    let refused = c.submit(SimTime::ZERO, "normal", spec, JobOrigin::Local);
    assert!(
        refused
            .expect_err("refused")
            .to_string()
            .contains("MAX_USER_PRIORITY"),
    );
}

/// One command of the property test.
#[derive(Clone, Debug)]
enum Step {
    Submit { slots: u32, run: u64 },
    Control { job: usize, action: u8 },
    Advance { minutes: u64 },
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        (1u32..=3, 1u64..=30).prop_map(|(slots, run)| Step::Submit { slots, run }),
        (0usize..12, 0u8..7).prop_map(|(job, action)| Step::Control { job, action }),
        (0u64..=15).prop_map(|minutes| Step::Advance { minutes }),
    ];
    proptest::collection::vec(step, 1..60)
}

fn action(code: u8) -> JobAction {
    match code {
        0 => JobAction::Kill,
        1 => JobAction::Stop,
        2 => JobAction::Resume,
        3 => JobAction::Requeue,
        4 => JobAction::Switch(QueueName::new("other").expect("valid")),
        5 => JobAction::Switch(QueueName::new("normal").expect("valid")),
        _ => JobAction::Modify(JobChanges {
            slots: Some(1),
            ..JobChanges::default()
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever commands come, the books agree after every step, and once
    /// every stopped or held job is resumed, every job that was not killed
    /// runs to its end.
    #[test]
    fn random_commands_keep_the_books_and_every_job_runs(
        steps in steps(),
        preempting in any::<bool>(),
    ) {
        let mut c = cluster_with(3, None, preempting);
        let mut jobs: Vec<JobId> = Vec::new();
        let mut now = SimTime::ZERO;
        let mut ended = 0usize;
        for step in steps {
            match step {
                Step::Submit { slots, run } => jobs.push(submit(&mut c, now, "j", slots, run)),
                Step::Control { job, action: code } => {
                    if let Some(&id) = jobs.get(job) {
                        let mut made = Vec::new();
                        let _ = c.control(now, id, &action(code), &mut made);
                        ended += made.iter().filter(|t| t.event.ends_job()).count();
                    }
                }
                Step::Advance { minutes } => now += Duration::from_secs(minutes * 60),
            }
            let mut made = Vec::new();
            c.advance(now, &mut made);
            ended += made.iter().filter(|t| t.event.ends_job()).count();
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
        }
        for &id in &jobs {
            let mut made = Vec::new();
            let _ = c.control(now, id, &JobAction::Resume, &mut made);
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
        }
        while let Some(at) = c.next_event_time().or(c.needs_dispatch().then_some(now)) {
            now = now.max(at);
            let mut made = Vec::new();
            c.advance(now, &mut made);
            ended += made.iter().filter(|t| t.event.ends_job()).count();
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
        }
        prop_assert_eq!(c.jobs().count(), 0, "every job ran");
        prop_assert_eq!(ended, jobs.len());
        prop_assert_eq!(c.finished_jobs() + c.exited_jobs(), jobs.len() as u64);
    }
}
