//! Replay throughput of the event-loop engine: a submission cluster
//! forwarding every job of a trace to nine execution clusters (ten clusters
//! in all, 100 hosts × 16 slots each), counting decisions without rendering
//! them.
//!
//! - `easy`: a job every 100 ms, each running 5 minutes: the federation
//!   keeps up and queues stay short.
//! - `deep`: a job every 10 ms: twice what the federation can run, so the
//!   receive queues grow deep.
//!
//! Run: `cargo bench -p mcfed-engine --bench replay`. Results and the
//! comparison with AccaSim are in docs/performance.md.

use divan::{Bencher, black_box};
use mcfed_engine::run;
use mcfed_run::RunOptions;

fn main() {
    divan::main();
}

fn trace(jobs: usize, every_ms: u64) -> mcfed_scenario::Scenario {
    let span_hours = (jobs as u64 * every_ms) / 3_600_000 + 1;
    let targets: Vec<String> = (0..9).map(|i| format!("normal@E{i}")).collect();
    let mut text = format!(
        r#"name = "replay"
end = "{end}h"
[params]
MC_PLUGIN_UPDATE_INTERVAL = "30s"
[[cluster]]
name = "Sub"
params = {{ MC_PLUGIN_SCHEDULE_ENHANCE = "COUNT_PREEMPTABLE" }}
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "{targets}"
[[submit]]
at = "10s"
every = "{every_ms}ms"
count = {jobs}
cluster = "Sub"
queue = "send"
name = "j"
run_time = "5m"
"#,
        end = span_hours + 1,
        targets = targets.join(" ")
    );
    for i in 0..9 {
        text.push_str(&format!(
            r#"[[cluster]]
name = "E{i}"
[[cluster.host]]
name = "e{i}h"
count = 100
MXJ = 16
[[cluster.queue]]
name = "normal"
PRIORITY = 30
IMPT_JOBBKLG = "infinit"
RCVJOBS_FROM = "Sub"
"#
        ));
    }
    mcfed_scenario::parse("replay.toml", &text).expect("valid trace")
}

fn replay(bencher: Bencher, jobs: usize, every_ms: u64) {
    let scenario = trace(jobs, every_ms);
    let options = RunOptions {
        count_only: true,
        ..RunOptions::default()
    };
    bencher
        .counter(divan::counter::ItemsCount::new(jobs))
        .bench_local(|| {
            let output = run(&scenario, &options).expect("runs");
            assert_eq!(output.stats.submitted as usize, jobs);
            black_box(output.stats.decisions)
        });
}

#[divan::bench(args = [10_000, 100_000], sample_count = 5)]
fn easy(bencher: Bencher, jobs: usize) {
    replay(bencher, jobs, 100);
}

#[divan::bench(args = [10_000, 100_000], sample_count = 5)]
fn deep(bencher: Bencher, jobs: usize) {
    replay(bencher, jobs, 10);
}
