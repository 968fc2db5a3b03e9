//! Advance reservations made and deleted at a journaled member (`brsvadd`,
//! `brsvdel`; issue 27 item 8) survive a restart: replayed from the
//! records, or from a snapshot taken after them, the member has the same
//! reservations, a deleted one stays deleted and its detached job stays an
//! ordinary one.

use std::time::Duration;

use mcfed_cluster::{AdvanceReservationConfig, ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::{DurableState, Effects, Member, MemberSpec};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};

fn config() -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 2), HostConfig::new("h2", 2)];
    config.queues = vec![QueueConfig::new(QueueName::new("normal").expect("valid"))];
    config.advance_reservations = vec![rsv("maint", "h2", 0, 3600)];
    config
}

fn rsv(name: &str, host: &str, start: u64, end: u64) -> AdvanceReservationConfig {
    AdvanceReservationConfig {
        name: name.to_owned(),
        hosts: vec![host.to_owned()],
        slots: None,
        start: SimTime::from_secs(start),
        end: SimTime::from_secs(end),
        users: vec!["alice".to_owned()],
        open: false,
    }
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

fn names(member: &Member) -> Vec<String> {
    member
        .cluster()
        .advance_reservations(SimTime::ZERO)
        .into_iter()
        .map(|report| report.name)
        .collect()
}

#[test]
fn reservations_made_and_deleted_live_survive_a_restart() {
    let config = config();
    let (mut member, _) = Member::build(spec(&config)).expect("builds");
    member.enable_journal();
    let snapshot = member.durable_state();
    let mut effects = Effects::default();
    let message = member
        .add_reservation(SimTime::ZERO, rsv("day", "h1", 60, 7200), None)
        .expect("added");
    assert_eq!(message, "Reservation <day> is created");
    let mut job = JobSpec::simple("in", "alice", Duration::from_secs(9000));
    job.resources
        .push(mcfed_cluster::advance::reservation_word("maint"));
    let id = member
        .submit(SimTime::ZERO, "normal", job, &mut effects)
        .expect("submitted")
        .job_id;
    member.step(SimTime::ZERO, &mut effects);
    let deleted = member
        .delete_reservation(SimTime::from_secs(10), "maint", None)
        .expect("deleted");
    assert!(
        deleted.starts_with("Reservation <maint> is being deleted"),
        "{deleted}"
    );
    assert!(deleted.contains(&format!("job(s) {id} go on")), "{deleted}");
    member.step(SimTime::from_secs(10), &mut effects);
    assert_eq!(names(&member), ["day"]);

    let records = member.take_journal();
    let mut replayed: DurableState = snapshot;
    for record in records {
        replayed.apply(record);
    }
    let compacted = member.durable_state();
    assert_eq!(replayed.reservations, compacted.reservations);
    for state in [replayed, compacted] {
        let restored =
            Member::restore(spec(&config), state, SimTime::from_secs(20)).expect("restores");
        assert_eq!(names(&restored), ["day"]);
        let job = restored
            .cluster()
            .jobs()
            .find(|job| job.id.0 == id)
            .expect("the job");
        assert!(job.spec.resources.is_empty(), "detached: an ordinary job");
    }
}
