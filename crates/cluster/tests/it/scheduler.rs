//! The cluster core: dispatch order, limits, preemption and the counters it
//! publishes, all from real jobs.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, HostConfig, HostSelection, JobId, JobOrigin, JobState, QueueConfig,
    ReceiveFrom, SubmitError, Transition,
};
use mcfed_protocol::{
    ClusterName, JobEvent, JobForward, JobSpec, QueueName, RejectReason, SimTime,
};

fn name(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

fn hosts(count: usize, slots: u32) -> Vec<HostConfig> {
    (1..=count)
        .map(|n| {
            let mut host = HostConfig::new(format!("h{n}"), slots);
            if n == 1 {
                host.resources = vec!["bigmem".into()];
            }
            host
        })
        .collect()
}

fn queue(text: &str, priority: u32) -> QueueConfig {
    let mut queue = QueueConfig::new(name(text));
    queue.priority = priority;
    queue
}

fn cluster(hosts: Vec<HostConfig>, queues: Vec<QueueConfig>) -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C2").expect("valid"));
    config.hosts = hosts;
    config.queues = queues;
    config.update_interval = Some(Duration::from_secs(30));
    Cluster::new(config).expect("valid configuration")
}

fn job(slots: u32, minutes: u64) -> JobSpec {
    let mut spec = JobSpec::simple("j", "alice", Duration::from_secs(minutes * 60));
    spec.slots = slots;
    spec
}

fn submit(cluster: &mut Cluster, queue: &str, slots: u32, minutes: u64) -> JobId {
    cluster
        .submit(SimTime::ZERO, queue, job(slots, minutes), JobOrigin::Local)
        .expect("accepted")
}

fn advance(cluster: &mut Cluster, at: SimTime) -> Vec<Transition> {
    let mut transitions = Vec::new();
    cluster.advance(at, &mut transitions);
    transitions
}

fn state(cluster: &Cluster, id: JobId) -> Option<JobState> {
    cluster.job(id).map(|job| job.state)
}

#[test]
fn higher_priority_queues_dispatch_first() {
    let mut c = cluster(hosts(1, 2), vec![queue("low", 10), queue("high", 50)]);
    let low = submit(&mut c, "low", 1, 10);
    let high = [submit(&mut c, "high", 1, 10), submit(&mut c, "high", 1, 10)];
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, high[0]), Some(JobState::Running));
    assert_eq!(state(&c, high[1]), Some(JobState::Running));
    assert_eq!(state(&c, low), Some(JobState::Pending));
}

#[test]
fn jobs_finish_after_their_run_time_and_free_their_slots() {
    let mut c = cluster(hosts(1, 1), vec![queue("normal", 10)]);
    let first = submit(&mut c, "normal", 1, 10);
    let second = submit(&mut c, "normal", 1, 10);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(c.next_event_time(), Some(SimTime::from_secs(600)));
    let transitions = advance(&mut c, SimTime::from_secs(600));
    assert!(
        transitions
            .iter()
            .any(|t| t.job == first && t.event == JobEvent::Finished)
    );
    assert!(
        transitions
            .iter()
            .any(|t| t.job == second && t.event == JobEvent::Started)
    );
    assert_eq!(state(&c, first), None, "finished jobs leave the cluster");
    assert_eq!(c.finished_jobs(), 1);
}

#[test]
fn parallel_jobs_span_hosts_and_the_largest_free_host_is_used_first() {
    let mut c = cluster(hosts(3, 4), vec![queue("normal", 10)]);
    let small = submit(&mut c, "normal", 3, 10);
    advance(&mut c, SimTime::ZERO);
    let wide = submit(&mut c, "normal", 6, 10);
    advance(&mut c, SimTime::ZERO);
    let placement = &c.job(wide).expect("running").placement;
    assert_eq!(placement.iter().map(|p| p.slots).sum::<u32>(), 6);
    assert_eq!(
        placement.len(),
        2,
        "two free hosts of 4 each: {placement:?}"
    );
    let small_host = c.job(small).expect("running").placement[0].host;
    assert!(placement.iter().all(|p| p.host != small_host));
}

#[test]
fn queue_job_limit_holds_jobs_pending() {
    let mut q = queue("high", 40);
    q.job_limit = Some(3);
    let mut c = cluster(hosts(2, 10), vec![q]);
    let ids: Vec<JobId> = (0..5).map(|_| submit(&mut c, "high", 1, 10)).collect();
    advance(&mut c, SimTime::ZERO);
    let running = ids
        .iter()
        .filter(|&&id| state(&c, id) == Some(JobState::Running))
        .count();
    assert_eq!(running, 3);
    let counters = c.queue_counters(0, c.now());
    assert_eq!((counters.total_slots, counters.available_slots), (20, 17));
    assert_eq!((counters.running_slots, counters.pending_slots), (3, 2));
    for id in &ids[3..] {
        let pending = c.job(*id).expect("pending");
        assert_eq!(
            c.pending_reason(pending),
            mcfed_cluster::PendingReason::QueueJobLimit
        );
    }
}

#[test]
fn resource_requirements_pick_hosts_and_refuse_impossible_jobs() {
    let mut c = cluster(hosts(2, 2), vec![queue("normal", 10)]);
    let mut big = job(1, 10);
    big.resources = vec!["bigmem".into()];
    let id = c
        .submit(SimTime::ZERO, "normal", big, JobOrigin::Local)
        .expect("h1 has bigmem");
    advance(&mut c, SimTime::ZERO);
    assert_eq!(
        c.host_name(c.job(id).expect("runs").placement[0].host),
        "h1"
    );
    let mut gpu = job(1, 10);
    gpu.resources = vec!["gpu".into()];
    assert_eq!(
        c.submit(SimTime::ZERO, "normal", gpu, JobOrigin::Local),
        Err(SubmitError::CannotRun(RejectReason::MissingResource(
            "gpu".into()
        )))
    );
    assert_eq!(
        c.submit(SimTime::ZERO, "normal", job(5, 1), JobOrigin::Local),
        Err(SubmitError::CannotRun(RejectReason::TooManySlots {
            asked: 5,
            total: 4
        }))
    );
}

/// The preemptive queue suspends the low-priority job, which keeps its place
/// and resumes (before any pending job) when the preemptor finishes, with
/// its remaining run time.
#[test]
fn preemption_suspends_and_resumes() {
    let mut high = queue("high", 50);
    high.preemption = "PREEMPTIVE".parse().expect("valid");
    let mut c = cluster(hosts(1, 1), vec![high, queue("low", 10)]);
    let low = submit(&mut c, "low", 1, 60);
    advance(&mut c, SimTime::ZERO);
    let preemptor = c
        .submit(
            SimTime::from_secs(600),
            "high",
            job(1, 10),
            JobOrigin::Local,
        )
        .expect("accepted");
    let transitions = advance(&mut c, SimTime::from_secs(600));
    assert!(
        transitions
            .iter()
            .any(|t| t.job == low && t.event == JobEvent::Suspended)
    );
    assert_eq!(state(&c, preemptor), Some(JobState::Running));
    assert_eq!(state(&c, low), Some(JobState::Suspended));
    // The suspended job does not count against MXJ, but keeps counting
    // against its queue.
    assert_eq!(c.queue_slot_usage(1), (0, 1, 0));
    let transitions = advance(&mut c, SimTime::from_secs(1200));
    assert!(
        transitions
            .iter()
            .any(|t| t.job == low && t.event == JobEvent::Resumed)
    );
    // 10 minutes ran before, 50 to go from 20 minutes.
    assert_eq!(
        c.job(low).and_then(|j| j.finish_time()),
        Some(SimTime::from_secs(1200 + 50 * 60))
    );
}

#[test]
fn preemption_follows_the_relation_and_preference() {
    // A 99; B 10 preemptive and preemptable; C 1 (seed 003's case study).
    let a = queue("A", 99);
    let mut b = queue("B", 10);
    b.preemption = "PREEMPTIVE PREEMPTABLE".parse().expect("valid");
    let c_queue = queue("C", 1);
    let mut c = cluster(hosts(1, 1), vec![a, b, c_queue]);
    let in_c = submit(&mut c, "C", 1, 60);
    advance(&mut c, SimTime::ZERO);
    let in_a = submit(&mut c, "A", 1, 60);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(
        state(&c, in_a),
        Some(JobState::Pending),
        "A cannot preempt C"
    );
    assert_eq!(state(&c, in_c), Some(JobState::Running));
    let in_b = submit(&mut c, "B", 1, 60);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, in_c), Some(JobState::Suspended), "B preempts C");
    // A is served before B in a pass, so it finds B's job only in the next
    // pass at the same instant: then A preempts B.
    assert_eq!(state(&c, in_b), Some(JobState::Suspended), "A preempts B");
    assert_eq!(state(&c, in_a), Some(JobState::Running));
}

#[test]
fn preemption_prefers_queues_with_a_preference_number() {
    let mut top = queue("top", 90);
    top.preemption = "PREEMPTIVE[low mid+1]".parse().expect("valid");
    let mut c = cluster(hosts(2, 1), vec![top, queue("mid", 20), queue("low", 10)]);
    let in_low = submit(&mut c, "low", 1, 60);
    let in_mid = submit(&mut c, "mid", 1, 60);
    advance(&mut c, SimTime::ZERO);
    submit(&mut c, "top", 1, 60);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(
        state(&c, in_mid),
        Some(JobState::Suspended),
        "mid+1 is preferred"
    );
    assert_eq!(state(&c, in_low), Some(JobState::Running));
}

#[test]
fn counters_come_from_the_state() {
    let mut high = queue("HighPriority", 40);
    high.preemption = "PREEMPTIVE[LowPriority]".parse().expect("valid");
    high.job_limit = Some(20);
    high.receive_from = Some(ReceiveFrom::All);
    let mut c = cluster(hosts(10, 10), vec![high, queue("LowPriority", 20)]);
    for _ in 0..25 {
        submit(&mut c, "HighPriority", 1, 600);
    }
    for _ in 0..80 {
        submit(&mut c, "LowPriority", 1, 600);
    }
    advance(&mut c, SimTime::ZERO);
    let counters = c.queue_counters(0, c.now());
    assert_eq!(counters.total_slots, 100);
    assert_eq!(counters.available_slots, 0);
    assert_eq!(counters.running_slots, 20);
    assert_eq!(counters.pending_slots, 5);
    // At its QJOB_LIMIT the queue can access nothing through preemption
    // (seed 004: "the slots the queue can access through preemption").
    assert_eq!(counters.preemptable_available_slots, 0);
    assert_eq!(counters.lowest_preemptable_priority, None);
    assert_eq!(c.receive_queues().collect::<Vec<_>>(), vec![0]);
}

#[test]
fn preemptable_slots_stop_at_the_queues_own_limit() {
    let mut high = queue("HighPriority", 40);
    high.preemption = "PREEMPTIVE[LowPriority]".parse().expect("valid");
    high.job_limit = Some(30);
    high.receive_from = Some(ReceiveFrom::All);
    let mut c = cluster(hosts(10, 10), vec![high, queue("LowPriority", 20)]);
    for _ in 0..80 {
        submit(&mut c, "LowPriority", 1, 600);
    }
    advance(&mut c, SimTime::ZERO);
    let counters = c.queue_counters(0, c.now());
    assert_eq!(counters.available_slots, 20);
    // 20 free and 80 preemptable, but QJOB_LIMIT leaves 30.
    assert_eq!(counters.preemptable_available_slots, 30);
    assert_eq!(counters.lowest_preemptable_priority, Some(20));
}

fn forward(seq: u64, queue: &str) -> JobForward {
    JobForward {
        forward_seq: seq,
        source_job: seq,
        queue: name(queue),
        send_queue: mcfed_protocol::QueueName::new("send").expect("a queue name"),
        spec: job(1, 60),
        submitted_at: SimTime::ZERO,
        attempt: 0,
    }
}

#[test]
fn receive_queue_checks_rcvjobs_from_and_impt_jobbklg() {
    let mut receive = queue("recv", 30);
    receive.receive_from = Some(ReceiveFrom::Listed(vec![
        ClusterName::new("C1").expect("valid"),
    ]));
    receive.impt_jobbklg = Some(2);
    receive.hosts = HostSelection::Listed(vec!["h1".into()]);
    let mut c = cluster(hosts(1, 1), vec![receive, queue("local", 1)]);
    let c1 = ClusterName::new("C1").expect("valid");
    let c9 = ClusterName::new("C9").expect("valid");
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &c9, &forward(1, "recv")),
        Err(RejectReason::NotAllowed)
    );
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &c1, &forward(1, "local")),
        Err(RejectReason::NotAllowed)
    );
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &c1, &forward(1, "nosuch")),
        Err(RejectReason::UnknownQueue)
    );
    // One runs, two pend; the third pending one is over IMPT_JOBBKLG.
    let first = c
        .receive_forward(SimTime::ZERO, &c1, &forward(1, "recv"))
        .expect("accepted");
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, first), Some(JobState::Running));
    c.receive_forward(SimTime::ZERO, &c1, &forward(2, "recv"))
        .expect("accepted");
    c.receive_forward(SimTime::ZERO, &c1, &forward(3, "recv"))
        .expect("accepted");
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &c1, &forward(4, "recv")),
        Err(RejectReason::BacklogFull { limit: 2 })
    );
    assert_eq!(c.queue_counters(0, c.now()).imported_pending_jobs, 2);
    // When the running one finishes, one pending starts and room opens.
    advance(&mut c, SimTime::from_secs(3600));
    assert_eq!(c.queue_counters(0, c.now()).imported_pending_jobs, 1);
    assert!(
        c.receive_forward(SimTime::from_secs(3600), &c1, &forward(5, "recv"))
            .is_ok()
    );
}

#[test]
fn bad_configurations_are_refused_with_their_location() {
    use mcfed_cluster::ConfigLocation;
    let mut listed = queue("q", 1);
    listed.hosts = HostSelection::Listed(vec!["nosuch".into()]);
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = hosts(1, 1);
    config.queues = vec![queue("ok", 1), listed];
    let error = Cluster::new(config).expect_err("unknown host");
    assert_eq!(
        error.location,
        ConfigLocation::Queue {
            index: 1,
            field: "HOSTS"
        }
    );
    let mut upward = queue("low", 1);
    upward.preemption = "PREEMPTIVE[high]".parse().expect("valid");
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = hosts(1, 1);
    config.queues = vec![queue("high", 50), upward];
    let error = Cluster::new(config).expect_err("cannot preempt a higher queue");
    assert_eq!(
        error.location,
        ConfigLocation::Queue {
            index: 1,
            field: "PREEMPTION"
        }
    );
}

#[test]
fn every_queue_is_found_by_its_name_among_few_or_many() {
    for count in [1, 3, 8, 9, 12] {
        let queues = (0..count)
            .map(|n| queue(&format!("q{n}"), 10 + n))
            .collect();
        let cluster = cluster(hosts(1, 1), queues);
        for n in 0..count {
            assert_eq!(
                cluster.queue_index(&format!("q{n}")),
                Some(n as usize),
                "{count} queues"
            );
        }
        assert_eq!(cluster.queue_index("q"), None, "{count} queues");
        assert_eq!(cluster.queue_index(&format!("q{count}")), None);
    }
}
