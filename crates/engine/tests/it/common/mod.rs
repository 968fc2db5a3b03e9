//! Generated federations of realistic shape for the engines' property
//! tests: mixed job widths up to a host's size, overload, queues many jobs
//! deep, with and without forwarding to several clusters, with and
//! without absolute priority scheduling (send queues included).

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcfed_run::RunOutput;
use mcfed_run::records::EventRecord;
use mcfed_run::render::decision_json;
use mcfed_scenario::Scenario;
use proptest::prelude::*;

/// One generated job.
#[derive(Clone, Debug)]
pub struct GenJob {
    /// Submission time, in milliseconds.
    pub at_ms: u64,
    /// Slots (up to the smallest host's MXJ).
    pub slots: u32,
    /// Run time, in milliseconds.
    pub run_ms: u64,
    /// Which submission target: the local queue, or the send queue.
    pub forwarded: bool,
}

/// One generated federation.
#[derive(Clone, Debug)]
pub struct GenFederation {
    /// Execution clusters: (hosts, MXJ) each. Zero of them: a single
    /// cluster with local jobs only.
    pub execution: Vec<(u32, u32)>,
    /// The submission cluster's own hosts (hosts, MXJ).
    pub local: (u32, u32),
    /// MC_PLUGIN_SCHEDULE_ENHANCE of the submission cluster (empty: unset,
    /// LSF's default; it then collects no counters).
    pub mode: &'static str,
    /// MC_PLUGIN_UPDATE_INTERVAL, in seconds (0: unset, no counters sent).
    pub interval_s: u64,
    /// The jobs.
    pub jobs: Vec<GenJob>,
    /// Absolute priority scheduling: every queue (the send queue too)
    /// orders its jobs by `WEIGHT[[JPRIORITY, 1] [PROC, 1]]`, and jobs get
    /// a `-sp` (MAX_USER_PRIORITY = 100), which forwarded jobs carry.
    pub aps: bool,
}

const MODES: [&str; 5] = [
    "",
    "RESOURCE_ONLY",
    "COUNT_PREEMPTABLE",
    "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY",
    "COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS",
];

/// Federations with 0 (a single cluster) to `max_execution` execution
/// clusters and up to `max_jobs` jobs, submitted faster than they run.
pub fn federation(max_execution: usize, max_jobs: usize) -> impl Strategy<Value = GenFederation> {
    (
        prop::collection::vec((1u32..=4, 1u32..=8), 0..=max_execution),
        (1u32..=4, 1u32..=8),
        0usize..MODES.len(),
        prop::sample::select(vec![0u64, 10, 30, 60]),
        1usize..=max_jobs,
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(execution, local, mode, interval_s, count, seed, aps)| {
            let widest = execution
                .iter()
                .map(|&(_, mxj)| mxj)
                .chain([local.1])
                .min()
                .unwrap_or(1);
            let jobs = jobs(seed, count, widest, !execution.is_empty());
            GenFederation {
                execution,
                local,
                mode: MODES[mode],
                interval_s,
                jobs,
                aps,
            }
        })
}

/// The APS_PRIORITY line of every generated queue, when on.
const APS: &str = "APS_PRIORITY = \"WEIGHT[[JPRIORITY, 1] [PROC, 1]]\"\n";

/// `count` jobs from a small deterministic generator (proptest shrinks
/// the count and the shape; the seed keeps the jobs varied).
fn jobs(seed: u64, count: usize, widest: u32, forwarding: bool) -> Vec<GenJob> {
    let mut state = seed | 1;
    let mut next = move |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound.max(1)
    };
    let mut at_ms = 0;
    (0..count)
        .map(|_| {
            // Bursts: most jobs come within a second of the previous one.
            at_ms += if next(8) == 0 {
                next(120_000)
            } else {
                next(1_000)
            };
            GenJob {
                at_ms,
                slots: 1 + next(u64::from(widest)) as u32,
                run_ms: 1_000 + next(600_000),
                forwarded: forwarding && next(4) != 0,
            }
        })
        .collect()
}

impl GenFederation {
    /// The scenario file's text.
    pub fn toml(&self) -> String {
        let mut text = String::new();
        text.push_str("name = \"generated\"\n[params]\n");
        if self.interval_s > 0 {
            let _ = writeln!(text, "MC_PLUGIN_UPDATE_INTERVAL = \"{}s\"", self.interval_s);
        }
        let aps = if self.aps { APS } else { "" };
        if self.aps {
            text.push_str("MAX_USER_PRIORITY = 100\n");
        }
        text.push_str("\n[[cluster]]\nname = \"Sub\"\n");
        if !self.mode.is_empty() {
            let _ = writeln!(
                text,
                "params = {{ MC_PLUGIN_SCHEDULE_ENHANCE = \"{}\" }}",
                self.mode
            );
        }
        text.push('\n');
        let _ = writeln!(
            text,
            "[[cluster.host]]\nname = \"s\"\ncount = {}\nMXJ = {}\n",
            self.local.0, self.local.1
        );
        let _ = writeln!(text, "[[cluster.queue]]\nname = \"local\"\n{aps}");
        if !self.execution.is_empty() {
            let targets: Vec<String> = (1..=self.execution.len())
                .map(|index| format!("normal@E{index}"))
                .collect();
            let _ = writeln!(
                text,
                "[[cluster.queue]]\nname = \"send\"\nSNDJOBS_TO = \"{}\"\n{aps}",
                targets.join(" ")
            );
        }
        for (index, (hosts, mxj)) in self.execution.iter().enumerate() {
            let number = index + 1;
            let _ = writeln!(
                text,
                "[[cluster]]\nname = \"E{number}\"\n\n[[cluster.host]]\nname = \"e{number}h\"\ncount = {hosts}\nMXJ = {mxj}\n\n[[cluster.queue]]\nname = \"normal\"\nRCVJOBS_FROM = \"Sub\"\n{aps}"
            );
        }
        for (index, job) in self.jobs.iter().enumerate() {
            let queue = if job.forwarded { "send" } else { "local" };
            let _ = writeln!(
                text,
                "[[submit]]\nat = \"{}ms\"\ncluster = \"Sub\"\nqueue = \"{queue}\"\nname = \"j{index}\"\nslots = {}\nrun_time = \"{}ms\"",
                job.at_ms, job.slots, job.run_ms
            );
            if self.aps {
                let _ = writeln!(text, "priority = {}", 1 + (index * 37) % 100);
            }
            text.push('\n');
        }
        text
    }

    /// The validated scenario.
    pub fn scenario(&self) -> Scenario {
        match mcfed_scenario::parse("generated.toml", &self.toml()) {
            Ok(scenario) => scenario,
            Err(error) => panic!("generated scenario refused: {error}\n{}", self.toml()),
        }
    }
}

/// A property's configuration: `default` cases, or as many as the
/// `PROPTEST_CASES` environment variable says (the long runs of
/// docs/reliability.md); proptest's own default reads it too, but a case
/// count written in the test would override it.
pub fn config(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// Every decision as its JSON line, sorted.
pub fn decision_lines(output: &RunOutput) -> Vec<String> {
    let mut lines: Vec<String> = output
        .decisions
        .iter()
        .map(|record| decision_json(record).unwrap_or_default())
        .collect();
    lines.sort();
    lines
}

/// Each job's timeline — its events as (time, event, detail) — keyed by
/// (cluster, job name, source cluster).
pub type Timelines = BTreeMap<(String, String, Option<String>), Vec<(u64, String, Option<String>)>>;

/// The per-job timelines of a run's events.
pub fn timelines(events: &[EventRecord]) -> Timelines {
    let mut timelines = Timelines::new();
    for event in events {
        timelines
            .entry((
                event.cluster.clone(),
                event.job.clone(),
                event.source_cluster.clone(),
            ))
            .or_default()
            .push((
                (event.time * 1000.0).round() as u64,
                event.event.clone(),
                event.detail.clone(),
            ));
    }
    for timeline in timelines.values_mut() {
        timeline.sort();
    }
    timelines
}

/// What the two engines must agree on: every job's timeline and every
/// decision.
pub fn outcome(output: &RunOutput) -> (Timelines, Vec<String>) {
    (timelines(&output.events), decision_lines(output))
}
