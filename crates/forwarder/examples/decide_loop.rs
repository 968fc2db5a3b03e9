//! Runs `decide` a fixed number of times (for instruction counting with
//! callgrind): `decide_loop QUEUES ITERATIONS`.
use mcfed_forwarder::policy::{Decision, JobRequest, decide_into};
use mcfed_forwarder::{RemoteView, ScheduleMode};
use mcfed_protocol::{ClusterName, CounterUpdate, QueueCounters, QueueName, QueueRef, SimTime};

fn main() {
    let mut args = std::env::args().skip(1);
    let queues: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let mut view = RemoteView::new();
    let receiver = ClusterName::new("submit").expect("valid");
    let mut ids = Vec::new();
    for n in 0..queues {
        let cluster = ClusterName::new(&format!("exec{n}")).expect("valid");
        let queue = QueueName::new("q").expect("valid");
        ids.push(view.add_queue(&QueueRef::new(queue.clone(), cluster.clone())));
        let n = n as u32;
        let available = (n * 7919) % 64;
        view.apply_update(
            &receiver,
            &CounterUpdate {
                sender: cluster.clone(),
                seq: 1,
                taken_at: SimTime::from_secs(30),
                queues: vec![QueueCounters {
                    cluster,
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
                }],
                forwards_received: vec![],
            },
        );
    }
    let job = JobRequest {
        slots: 1,
        resources: vec![],
        ..JobRequest::default()
    };
    let mode: ScheduleMode = "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY"
        .parse()
        .expect("valid");
    let mut decision = Decision::empty(mode);
    let mut wins = 0usize;
    for _ in 0..iterations {
        decide_into(
            &view,
            mode,
            std::hint::black_box(&ids),
            &job,
            SimTime::from_secs(45),
            &mut decision,
        );
        wins += usize::from(decision.target().is_some());
    }
    // Print the result so the loop cannot be optimised away.
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{wins}");
}
