//! Host types and models (issue 27 item 9): `select[type==X]` places a job
//! only on hosts of type X, a queue's resources in its counters and hello
//! name the types its hosts are of (so a submission cluster reads a host
//! group as satisfying the request when any host is of the type, seed
//! 004), and a forwarded job is refused when its queue's hosts of the type
//! are too few for it.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, HostConfig, JobId, JobOrigin, JobState, QueueConfig, ReceiveFrom,
    SubmitError,
};
use mcfed_protocol::{ClusterName, JobForward, JobSpec, QueueName, RejectReason, SimTime};

/// `x86`: one LINUX86 host of 4 slots (model XeonE5); `ppc1`, `ppc2`:
/// LINUXPPC64 hosts of 8; queue `normal` on all of them, receiving from
/// any cluster.
fn mixed() -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C2").expect("valid"));
    let host = |name: &str, slots: u32, host_type: &str| {
        let mut host = HostConfig::new(name, slots);
        host.host_type = Some(host_type.into());
        host
    };
    let mut x86 = host("x86", 4, "LINUX86");
    x86.model = Some("XeonE5".into());
    config.hosts = vec![
        x86,
        host("ppc1", 8, "LINUXPPC64"),
        host("ppc2", 8, "LINUXPPC64"),
    ];
    let mut normal = QueueConfig::new(QueueName::new("normal").expect("valid"));
    normal.receive_from = Some(ReceiveFrom::All);
    config.queues = vec![normal];
    Cluster::new(config).expect("valid")
}

fn job(slots: u32, requirement: &[&str]) -> JobSpec {
    let mut spec = JobSpec::simple("j", "u", Duration::from_secs(600));
    spec.slots = slots;
    spec.resources = requirement.iter().map(|word| (*word).to_owned()).collect();
    spec
}

fn hosts_of(c: &Cluster, id: JobId) -> Vec<&str> {
    c.job(id)
        .expect("a job")
        .placement
        .iter()
        .map(|place| c.host_name(place.host))
        .collect()
}

#[test]
fn a_job_asking_for_a_type_runs_only_on_hosts_of_that_type() {
    let mut c = mixed();
    let x86 = c
        .submit(
            SimTime::ZERO,
            "normal",
            job(2, &["type==LINUX86"]),
            JobOrigin::Local,
        )
        .expect("accepted");
    let ppc = c
        .submit(
            SimTime::ZERO,
            "normal",
            job(12, &["type==LINUXPPC64"]),
            JobOrigin::Local,
        )
        .expect("accepted");
    let model = c
        .submit(
            SimTime::ZERO,
            "normal",
            job(2, &["model==XeonE5"]),
            JobOrigin::Local,
        )
        .expect("accepted");
    let third = c
        .submit(
            SimTime::ZERO,
            "normal",
            job(2, &["type==LINUX86"]),
            JobOrigin::Local,
        )
        .expect("accepted");
    let mut transitions = Vec::new();
    c.advance(SimTime::ZERO, &mut transitions);
    c.audit().expect("books agree");
    assert_eq!(hosts_of(&c, x86), ["x86"]);
    assert_eq!(hosts_of(&c, ppc), ["ppc1", "ppc2"]);
    assert_eq!(hosts_of(&c, model), ["x86"]);
    // x86 is full: the third LINUX86 job pends though 4 PPC slots are free.
    assert_eq!(c.job(third).map(|job| job.state), Some(JobState::Pending));
}

#[test]
fn counters_name_the_types_and_models_of_the_queues_hosts() {
    let c = mixed();
    let facts = c.queue_counters(0, SimTime::ZERO);
    assert_eq!(
        facts.resources,
        ["model==XeonE5", "type==LINUX86", "type==LINUXPPC64"]
    );
}

/// Seed 004: the submission cluster "assumes all slots within a hostgroup
/// are of the same host type" — so it may forward a job that the queue's
/// hosts of the type are too few for; the execution cluster refuses it.
#[test]
fn a_forwarded_job_wider_than_the_hosts_of_its_type_is_refused() {
    let mut c = mixed();
    let from = ClusterName::new("C1").expect("valid");
    let forward = |seq: u64, slots: u32, requirement: &[&str]| JobForward {
        forward_seq: seq,
        source_job: seq,
        queue: QueueName::new("normal").expect("valid"),
        send_queue: QueueName::new("send").expect("valid"),
        spec: job(slots, requirement),
        submitted_at: SimTime::ZERO,
        attempt: 0,
    };
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &from, &forward(1, 6, &["type==LINUX86"])),
        Err(RejectReason::NotEnoughQualifiedSlots {
            asked: 6,
            qualified: 4
        })
    );
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &from, &forward(2, 1, &["type==SPARC"])),
        Err(RejectReason::MissingResource("type==SPARC".into()))
    );
    assert!(
        c.receive_forward(SimTime::ZERO, &from, &forward(3, 4, &["type==LINUX86"]))
            .is_ok()
    );
    assert_eq!(
        c.submit(
            SimTime::ZERO,
            "normal",
            job(1, &["LINUX86"]),
            JobOrigin::Local
        ),
        Err(SubmitError::CannotRun(RejectReason::MissingResource(
            "LINUX86".into()
        ))),
        "a type is not a boolean resource"
    );
}
