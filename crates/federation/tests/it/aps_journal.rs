//! A scheduler's pending jobs keep their absolute priority scheduling
//! state across a restart from the journal: the value `bmod -aps` gave
//! them and their pending clock (grace periods and JOB_PRIORITY_OVER_TIME
//! go on where they were), so the restored cluster dispatches in the same
//! order as the one that crashed.

use std::time::Duration;

use mcfed_cluster::{ApsPriority, ApsSet, ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::{DurableState, Effects, JobRef, Member, MemberSpec};
use mcfed_protocol::{
    ApsChange, ApsNumber, ClusterName, JobAction, JobChanges, QueueName, SimTime,
};

fn config() -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 1)];
    let mut queue = QueueConfig::new(QueueName::new("normal").expect("valid"));
    queue.aps_priority = Some(
        "WEIGHT[[QPRIORITY, 1]] GRACE_PERIOD[[QPRIORITY, 10m]]"
            .parse::<ApsPriority>()
            .expect("valid"),
    );
    config.queues = vec![queue];
    config
}

fn spec(config: &ClusterConfig) -> MemberSpec<'_> {
    MemberSpec {
        config,
        forwarder: None,
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    }
}

#[test]
fn bmod_aps_values_and_pending_clocks_survive_a_restart() {
    let config = config();
    let (mut member, _) = Member::build(spec(&config)).expect("builds");
    member.enable_journal();
    let snapshot = member.durable_state();
    let mut effects = Effects::default();
    let submit = |member: &mut Member, at: u64, name: &str, run: u64| {
        let job = mcfed_protocol::JobSpec::simple(name, "alice", Duration::from_secs(run));
        member
            .submit(
                SimTime::from_secs(at),
                "normal",
                job,
                &mut Effects::default(),
            )
            .expect("submitted")
            .job_id
    };
    submit(&mut member, 0, "runner", 3600);
    member.step(SimTime::from_secs(0), &mut effects);
    let early = submit(&mut member, 60, "early", 600);
    let late = submit(&mut member, 300, "late", 600);
    member.step(SimTime::from_secs(300), &mut effects);
    member
        .control(
            SimTime::from_secs(400),
            &JobRef::Id(late),
            &JobAction::Modify(JobChanges {
                aps: Some(ApsChange::Admin(ApsNumber(50.0))),
                ..JobChanges::default()
            }),
            &mut effects,
        )
        .expect("accepted");
    let now = SimTime::from_secs(400);
    member.step(now, &mut effects);

    let mut state: DurableState = snapshot;
    for record in member.take_journal() {
        state.apply(record);
    }
    // Restarted a while later: the pending clocks went on meanwhile.
    let later = SimTime::from_secs(900);
    let restored = Member::restore(spec(&config), state, later).expect("restores");
    let job = |member: &Member, id: u64| {
        let job = member
            .cluster()
            .jobs()
            .find(|job| job.id.0 == id)
            .expect("the job")
            .clone();
        (job.aps_set(), job.pended(later))
    };
    assert_eq!(job(&restored, late).0, Some(ApsSet::Admin(50.0)));
    assert_eq!(job(&restored, early).0, None);
    for id in [early, late] {
        assert_eq!(job(&restored, id), job(&member, id), "job {id}");
    }
    assert_eq!(job(&restored, early).1, Duration::from_secs(840));
}
