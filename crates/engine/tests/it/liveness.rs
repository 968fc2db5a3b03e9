//! The engines' guards on generated federations of realistic shape:
//!
//! - **liveness**: a run continued until nothing is left to do (drain)
//!   starts and finishes every job, when every job fits a host, under both
//!   engines; nothing submitted is refused or dropped;
//! - **same outcome**: observing a run (job events, probes for `--show`,
//!   counting instead of rendering decisions) never changes it.
//!
//! These failed before the event loop settled every touched member before
//! ending (it stopped when its heap was momentarily empty, leaving jobs
//! that could run pending).

use crate::common;

use common::{GenFederation, decision_lines, federation};
use mcfed_protocol::SimTime;
use mcfed_run::{RunOptions, RunOutput};
use proptest::prelude::*;

fn drained(generated: &GenFederation, options: RunOptions) -> RunOutput {
    let scenario = generated.scenario();
    // A cap far past any generated job (the longest trace submits for a
    // few hours of jobs of at most ten minutes): a run that has not drained
    // by then is a liveness failure, reported rather than run forever.
    let options = RunOptions {
        drain: true,
        until: Some(SimTime::from_secs(5 * 86_400)),
        ..options
    };
    mcfed_engine::run(&scenario, &options).expect("builds")
}

fn assert_every_job_ran(generated: &GenFederation, output: &RunOutput, engine: &str) {
    let jobs = generated.jobs.len() as u64;
    let stats = &output.stats;
    assert_eq!(stats.refused, 0, "{engine}: refused submissions");
    assert_eq!(stats.submitted, jobs, "{engine}: submitted");
    assert_eq!(
        stats.started,
        jobs,
        "{engine}: started\n{}",
        generated.toml()
    );
    assert_eq!(
        stats.finished,
        jobs,
        "{engine}: finished\n{}",
        generated.toml()
    );
}

proptest! {
    #![proptest_config(common::config(64))]

    /// Every job that fits eventually starts and finishes, with and
    /// without forwarding, under overload.
    #[test]
    fn every_job_that_fits_runs_to_the_end(generated in federation(4, 300)) {
        let output = drained(&generated, RunOptions { count_only: true, ..RunOptions::default() });
        assert_every_job_ran(&generated, &output, "events");
    }

    /// Job events, probes and counting never change what a run does.
    #[test]
    fn observing_a_run_never_changes_it(generated in federation(3, 150)) {
        let plain = drained(&generated, RunOptions::default());
        let observed = drained(&generated, RunOptions {
            events: true,
            probes: vec![SimTime::from_secs(60), SimTime::from_secs(600)],
            ..RunOptions::default()
        });
        let counted = drained(&generated, RunOptions { count_only: true, ..RunOptions::default() });
        prop_assert_eq!(decision_lines(&plain), decision_lines(&observed));
        for other in [&observed, &counted] {
            let (a, b) = (&plain.stats, &other.stats);
            prop_assert_eq!(
                (a.submitted, a.started, a.finished, a.decisions, a.forwarded, a.messages, a.end),
                (b.submitted, b.started, b.finished, b.decisions, b.forwarded, b.messages, b.end)
            );
        }
        assert_every_job_ran(&generated, &observed, "events, observed");
        // Every job's timeline is whole: submitted, started, finished.
        let started = observed.events.iter().filter(|event| event.event == "started").count();
        prop_assert_eq!(started, generated.jobs.len());
    }
}

proptest! {
    #![proptest_config(common::config(16))]

    /// The actor engine, drained, runs every job too, with the same job
    /// events and decisions as the event loop.
    #[test]
    fn the_actor_engine_runs_every_job_too(generated in federation(3, 60)) {
        let scenario = generated.scenario();
        let options = RunOptions { drain: true, events: true, ..RunOptions::default() };
        let actors = mcfed_engine::actors::run_plan(&scenario, &options).expect("runs");
        prop_assert_eq!(actors.stats.submitted, generated.jobs.len() as u64);
        let finished = actors.events.iter().filter(|event| event.event == "finished").count();
        prop_assert_eq!(finished, generated.jobs.len(), "{}", generated.toml());
        let events = mcfed_engine::run(&scenario, &options).expect("runs");
        prop_assert_eq!(common::outcome(&actors), common::outcome(&events), "{}", generated.toml());
    }
}

/// The case the old loop lost: one cluster, wide jobs, a deep queue, no
/// observer to keep the heap busy. All 400 jobs must run.
#[test]
fn a_deep_queue_of_wide_jobs_drains_without_observers() {
    let generated = GenFederation {
        execution: Vec::new(),
        local: (4, 4),
        mode: "RESOURCE_ONLY",
        interval_s: 30,
        jobs: (0..400)
            .map(|index| common::GenJob {
                at_ms: index * 10,
                slots: 1 + (index % 4) as u32,
                run_ms: 5_000 + (index * 7_919) % 60_000,
                forwarded: false,
            })
            .collect(),
        aps: false,
    };
    let output = drained(&generated, RunOptions::default());
    assert_every_job_ran(&generated, &output, "events");
}

/// A drained run ends even when a forwarder holds jobs that no queue can
/// ever take (only counter updates keep arriving), and lists them with
/// their reasons.
#[test]
fn a_drained_run_ends_with_jobs_held_for_ever_and_lists_them() {
    let text = r#"
name = "held"
end = "drain"
[params]
MC_PLUGIN_UPDATE_INTERVAL = "30s"
[[cluster]]
name = "C1"
params = { MC_PLUGIN_SCHEDULE_ENHANCE = "COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS" }
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "normal@C2"
[[cluster]]
name = "C2"
[[cluster.host]]
name = "h"
MXJ = 1
[[cluster.queue]]
name = "normal"
RCVJOBS_FROM = "C1"
[[submit]]
at = "40s"
cluster = "C1"
queue = "send"
name = "wide"
count = 3
slots = 2
"#;
    let scenario = mcfed_scenario::parse("held.toml", text).expect("valid");
    for output in [
        mcfed_engine::run(&scenario, &RunOptions::default()).expect("runs"),
        mcfed_engine::actors::run_plan(&scenario, &RunOptions::default()).expect("runs"),
    ] {
        assert!(
            output.stats.end <= SimTime::from_secs(120),
            "{:?}",
            output.stats.end
        );
        let metrics = output.metrics.expect("metrics");
        assert_eq!(metrics.never_started.len(), 3);
        // Wider than every remote host: held for ever, and said so.
        assert!(
            metrics.never_started[0]
                .reason
                .contains("No remote queue can take the job"),
            "{}",
            metrics.never_started[0].reason
        );
        assert_eq!(metrics.clusters[0].never_started, 3);
    }
}

/// A forwarded job's wait runs from its submission at the submission
/// cluster: forwarded at 10 s on the hello's facts (C2's workload unknown
/// before its first update), it pends there behind a local job until 30 s
/// and so waits 20 s.
#[test]
fn a_forwarded_jobs_wait_counts_from_its_first_submission() {
    let text = r#"
name = "wait"
[params]
MC_PLUGIN_UPDATE_INTERVAL = "30s"
[[cluster]]
name = "C1"
params = { MC_PLUGIN_SCHEDULE_ENHANCE = "COUNT_PREEMPTABLE" }
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "normal@C2"
[[cluster]]
name = "C2"
[[cluster.host]]
name = "h"
MXJ = 1
[[cluster.queue]]
name = "normal"
RCVJOBS_FROM = "C1"
[[cluster.job]]
queue = "normal"
name = "local"
run_time = "30s"
[[submit]]
at = "10s"
cluster = "C1"
queue = "send"
name = "j"
run_time = "60s"
"#;
    let scenario = mcfed_scenario::parse("wait.toml", text).expect("valid");
    let options = RunOptions {
        drain: true,
        ..RunOptions::default()
    };
    let output = mcfed_engine::run(&scenario, &options).expect("runs");
    let metrics = output.metrics.expect("metrics");
    let queue = metrics
        .queues
        .iter()
        .find(|group| group.cluster == "C2")
        .expect("C2's queue");
    // The local job and the forwarded one; the local one waits 0 s.
    assert_eq!(queue.finished, 2);
    assert_eq!(queue.forwarded_in, 1);
    assert_eq!(queue.wait.max, Some(20.0));
}
