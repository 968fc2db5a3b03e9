//! Benchmark of `decide` with 10, 100 and 1,000 remote queues.
//!
//! Run: `cargo bench -p mcfed-forwarder --bench decide`.
//! Targets (one core): >= 1,000,000 decisions/s at 100 queues and
//! >= 100,000/s at 1,000. Results are in docs/performance.md.

use divan::{Bencher, black_box};
use mcfed_forwarder::policy::{Decision, JobRequest, decide, decide_into};
use mcfed_forwarder::{RemoteQueueId, RemoteView, ScheduleMode};
use mcfed_protocol::{ClusterName, CounterUpdate, QueueCounters, QueueName, QueueRef, SimTime};

fn main() {
    divan::main();
}

const QUEUES_PER_CLUSTER: usize = 10;

/// A view of `queues` remote queues (ten per cluster) with varied figures,
/// all known. Deterministic: figures come from the queue's index.
fn view(queues: usize) -> (RemoteView, Vec<RemoteQueueId>) {
    let mut view = RemoteView::new();
    let receiver = ClusterName::new("submit").expect("valid");
    let mut ids = Vec::new();
    let clusters = queues.div_ceil(QUEUES_PER_CLUSTER);
    for cluster_index in 0..clusters {
        let cluster = ClusterName::new(&format!("exec{cluster_index}")).expect("valid");
        let mut counters = Vec::new();
        for queue_index in 0..QUEUES_PER_CLUSTER.min(queues - cluster_index * QUEUES_PER_CLUSTER) {
            let n = (cluster_index * QUEUES_PER_CLUSTER + queue_index) as u32;
            let queue = QueueName::new(&format!("q{queue_index}")).expect("valid");
            ids.push(view.add_queue(&QueueRef::new(queue.clone(), cluster.clone())));
            let available = (n * 7919) % 64;
            counters.push(QueueCounters {
                cluster: cluster.clone(),
                queue,
                priority: 10 + (n * 31) % 50,
                total_slots: 512,
                available_slots: available,
                running_slots: 512 - available,
                pending_slots: (n * 104_729) % 97,
                preemptable_available_slots: available + (n * 13) % 200,
                lowest_preemptable_priority: Some(1 + (n * 17) % 9),
                impt_jobbklg: Some(50),
                imported_pending_jobs: n % 60,
                resources: vec![],
                slot_group: 0,
                gpu_slots: Default::default(),
                gpu_free_slots: Default::default(),
            });
        }
        let update = CounterUpdate {
            sender: cluster,
            seq: 1,
            taken_at: SimTime::from_secs(30),
            queues: counters,
            forwards_received: vec![],
        };
        view.apply_update(&receiver, &update);
    }
    (view, ids)
}

fn modes() -> [ScheduleMode; 2] {
    [
        ScheduleMode::ResourceOnly,
        "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY"
            .parse()
            .expect("valid mode"),
    ]
}

/// `decide_into`, reusing the decision's buffer: the forwarder's hot path.
#[divan::bench(args = [10, 100, 1000])]
fn decide_reusing_buffer(bencher: Bencher, queues: usize) {
    let (view, ids) = view(queues);
    let job = JobRequest {
        slots: 1,
        resources: vec![],
        ..JobRequest::default()
    };
    let [resource_only, all_keys] = modes();
    let mut decision = Decision::empty(resource_only);
    let mut flip = false;
    bencher
        .counter(divan::counter::ItemsCount::new(1usize))
        .bench_local(|| {
            flip = !flip;
            let mode = if flip { resource_only } else { all_keys };
            decide_into(
                &view,
                mode,
                black_box(&ids),
                black_box(&job),
                SimTime::from_secs(45),
                &mut decision,
            );
            black_box(decision.target())
        });
}

/// `decide`, allocating a fresh decision each time.
#[divan::bench(args = [10, 100, 1000])]
fn decide_allocating(bencher: Bencher, queues: usize) {
    let (view, ids) = view(queues);
    let job = JobRequest {
        slots: 1,
        resources: vec![],
        ..JobRequest::default()
    };
    let [_, all_keys] = modes();
    bencher
        .counter(divan::counter::ItemsCount::new(1usize))
        .bench_local(|| {
            decide(
                &view,
                all_keys,
                black_box(&ids),
                black_box(&job),
                SimTime::from_secs(45),
            )
        });
}
