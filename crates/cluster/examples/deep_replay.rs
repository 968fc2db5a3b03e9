//! Replays a generated SWF trace on one cluster's scheduler alone, with no
//! engine around it: the cost of the dispatch passes on a deep queue, for
//! instruction counts with callgrind (`measured_replay` holds the whole loop, so
//! `--toggle-collect` leaves the trace's generation out).
//!
//! `deep_replay JOBS [HOSTS] [MAX_WIDTH] [LOAD] [full]`: JOBS jobs of
//! `mcfed gen swf --processors HOSTS --max-width MAX_WIDTH --load LOAD`
//! (seed 1; by default 16 hosts, widths up to 16, load 1.5: the deep
//! shape of issue 25) on HOSTS one-slot hosts and one first-come,
//! first-served queue; `full` makes every pass try every pending job
//! (`Cluster::scan_every_job`), as before the pending jobs were indexed.
//!
//! ```sh
//! cargo build --release -p mcfed-cluster --example deep_replay
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_replay*' \
//!     target/release/examples/deep_replay 100000
//! ```

use std::time::Duration;

use mcfed_cluster::{Cluster, ClusterConfig, HostConfig, JobOrigin, QueueConfig, Transition};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};
use mcfed_trace::SyntheticTrace;

/// One job of the trace: when, and what.
struct Arrival {
    at: SimTime,
    spec: JobSpec,
}

fn millis(seconds: f64) -> Duration {
    Duration::from_millis((seconds * 1000.0).round() as u64)
}

/// The trace's jobs, as `mcfed replay` maps SWF records.
fn arrivals(trace: &SyntheticTrace) -> Vec<Arrival> {
    trace
        .records()
        .expect("valid settings")
        .map(|record| {
            let mut spec = JobSpec::simple(
                format!("j{}", record.job_number),
                format!("u{}", record.user_id),
                millis(record.run_time),
            );
            spec.slots = record.requested_processors as u32;
            spec.run_limit = Some(millis(record.requested_time));
            Arrival {
                at: SimTime::from(millis(record.submit_time)),
                spec,
            }
        })
        .collect()
}

/// Submits every arrival at its time and runs the cluster to the end:
/// returns how many jobs started and the most that pended at once.
#[inline(never)]
fn measured_replay(cluster: &mut Cluster, arrivals: Vec<Arrival>) -> (usize, usize) {
    let queue = "normal";
    let (mut started, mut deepest, mut pending) = (0, 0, 0usize);
    let mut transitions: Vec<Transition> = Vec::new();
    let mut arrivals = arrivals.into_iter().peekable();
    loop {
        let next_arrival = arrivals.peek().map(|arrival| arrival.at);
        let Some(now) = [next_arrival, cluster.next_event_time()]
            .into_iter()
            .flatten()
            .min()
        else {
            break;
        };
        while let Some(arrival) = arrivals.next_if(|arrival| arrival.at <= now) {
            if cluster
                .submit(now, queue, arrival.spec, JobOrigin::Local)
                .is_ok()
            {
                pending += 1;
            }
        }
        deepest = deepest.max(pending);
        transitions.clear();
        cluster.advance(now, &mut transitions);
        let starts = transitions
            .iter()
            .filter(|t| t.event == mcfed_protocol::JobEvent::Started)
            .count();
        started += starts;
        pending -= starts;
    }
    (started, deepest)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |index: usize, default: f64| {
        args.get(index)
            .and_then(|arg| arg.parse::<f64>().ok())
            .unwrap_or(default)
    };
    let jobs = number(0, 100_000.0) as u64;
    let hosts = number(1, 16.0) as u32;
    let max_width = number(2, 16.0) as u32;
    let load = number(3, 1.5);
    let full = args.iter().any(|arg| arg == "full");
    let trace = SyntheticTrace {
        jobs,
        processors: hosts,
        max_width,
        load,
        ..SyntheticTrace::default()
    };
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = (0..hosts)
        .map(|index| HostConfig::new(format!("h{index}"), 1))
        .collect();
    config.queues = vec![QueueConfig::new(QueueName::new("normal").expect("valid"))];
    let mut cluster = Cluster::new(config).expect("valid configuration");
    cluster.scan_every_job(full);
    let (started, deepest) = measured_replay(&mut cluster, arrivals(&trace));
    eprintln!("{jobs} jobs: {started} started, at most {deepest} pending at once");
}
