//! The engines' guards on SWF-shaped workloads: generated traces (mixed
//! widths up to the smallest cluster's slots, spanning one-slot hosts;
//! run limits from the trace's requested times; loads from easy to
//! overload) streamed through `[[workload]]` onto a single cluster or a
//! submission cluster forwarding to 1–10 execution clusters, with and
//! without slot reservation and backfill.
//!
//! - **liveness**: drained, every job of the trace is submitted, starts and
//!   finishes, under both engines;
//! - **same outcome**: job events, probes, counting decisions instead of
//!   rendering them, and writing jobs.csv never change the run.

use crate::common;

use std::fmt::Write as _;
use std::path::Path;

use common::decision_lines;
use mcfed_protocol::SimTime;
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;
use mcfed_trace::SyntheticTrace;
use proptest::prelude::*;

/// One generated trace replay.
#[derive(Clone, Debug)]
struct TraceRun {
    /// Execution clusters, (hosts, MXJ) each; none: one cluster runs the
    /// trace itself on `local`.
    execution: Vec<(u32, u32)>,
    /// The single cluster's hosts (hosts, MXJ).
    local: (u32, u32),
    mode: &'static str,
    interval_s: u64,
    /// SLOT_RESERVE and BACKFILL on the queues that run jobs.
    reserve: bool,
    load: f64,
    jobs: u64,
    seed: u64,
}

const MODES: [&str; 3] = [
    "RESOURCE_ONLY",
    "COUNT_PREEMPTABLE",
    "COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS",
];

fn trace_run(max_execution: usize, max_jobs: u64) -> impl Strategy<Value = TraceRun> {
    (
        prop_oneof![
            Just(Vec::new()),
            prop::collection::vec(
                (2u32..=16, prop::sample::select(vec![1u32, 2, 4])),
                1..=max_execution
            ),
        ],
        (2u32..=16, prop::sample::select(vec![1u32, 2, 4])),
        0usize..MODES.len(),
        prop::sample::select(vec![10u64, 30, 60]),
        any::<bool>(),
        prop::sample::select(vec![0.5f64, 0.74, 1.0, 1.5]),
        1u64..=max_jobs,
        any::<u64>(),
    )
        .prop_map(
            |(execution, local, mode, interval_s, reserve, load, jobs, seed)| TraceRun {
                execution,
                local,
                mode: MODES[mode],
                interval_s,
                reserve,
                load,
                jobs,
                seed,
            },
        )
}

impl TraceRun {
    /// Slots of the smallest cluster a job can run in: the widest job.
    fn widest(&self) -> u32 {
        self.execution
            .iter()
            .map(|&(hosts, mxj)| hosts * mxj)
            .min()
            .unwrap_or(self.local.0 * self.local.1)
    }

    fn total_slots(&self) -> u32 {
        if self.execution.is_empty() {
            self.local.0 * self.local.1
        } else {
            self.execution.iter().map(|&(hosts, mxj)| hosts * mxj).sum()
        }
    }

    fn write_trace(&self, path: &Path) {
        let trace = SyntheticTrace {
            jobs: self.jobs,
            processors: self.total_slots(),
            max_width: self.widest(),
            load: self.load,
            min_run_time: 10.0,
            max_run_time: 600.0,
            users: 5,
            seed: self.seed,
            ..SyntheticTrace::default()
        };
        let mut file = std::fs::File::create(path).expect("trace file");
        trace.write(&mut file).expect("trace written");
    }

    fn queue(&self, text: &mut String, name: &str, extra: &str) {
        let _ = writeln!(text, "[[cluster.queue]]\nname = \"{name}\"\n{extra}");
        if self.reserve {
            text.push_str("SLOT_RESERVE = \"MAX_RESERVE_TIME[5]\"\nBACKFILL = \"Y\"\n");
        }
        text.push('\n');
    }

    fn toml(&self) -> String {
        let mut text = format!(
            "name = \"generated trace\"\n[params]\nMC_PLUGIN_UPDATE_INTERVAL = \"{}s\"\n\n",
            self.interval_s
        );
        if self.execution.is_empty() {
            let _ = writeln!(
                text,
                "[[cluster]]\nname = \"C1\"\n[[cluster.host]]\nname = \"h\"\ncount = {}\nMXJ = {}\n",
                self.local.0, self.local.1
            );
            self.queue(&mut text, "normal", "");
            text.push_str("[[workload]]\nswf = \"t.swf\"\ncluster = \"C1\"\nqueue = \"normal\"\n");
            return text;
        }
        let targets: Vec<String> = (1..=self.execution.len())
            .map(|index| format!("normal@E{index}"))
            .collect();
        let _ = writeln!(
            text,
            "[[cluster]]\nname = \"Sub\"\nparams = {{ MC_PLUGIN_SCHEDULE_ENHANCE = \"{}\" }}\n[[cluster.queue]]\nname = \"send\"\nSNDJOBS_TO = \"{}\"\n",
            self.mode,
            targets.join(" ")
        );
        for (index, (hosts, mxj)) in self.execution.iter().enumerate() {
            let number = index + 1;
            let _ = writeln!(
                text,
                "[[cluster]]\nname = \"E{number}\"\n[[cluster.host]]\nname = \"e{number}h\"\ncount = {hosts}\nMXJ = {mxj}\n"
            );
            self.queue(&mut text, "normal", "RCVJOBS_FROM = \"Sub\"");
        }
        text.push_str("[[workload]]\nswf = \"t.swf\"\ncluster = \"Sub\"\nqueue = \"send\"\n");
        text
    }

    /// The trace and the scenario, in `dir`.
    fn scenario(&self, dir: &Path) -> Scenario {
        self.write_trace(&dir.join("t.swf"));
        let file = dir.join("s.toml");
        std::fs::write(&file, self.toml()).expect("scenario file");
        match mcfed_scenario::load(&file) {
            Ok(scenario) => scenario,
            Err(error) => panic!("generated scenario refused: {error}\n{}", self.toml()),
        }
    }
}

/// Runs until nothing is left to do (with a cap far past any generated
/// trace: a run that has not drained by then is a liveness failure).
fn drained(scenario: &Scenario, options: RunOptions) -> RunOutput {
    let options = RunOptions {
        drain: true,
        until: Some(SimTime::from_secs(30 * 86_400)),
        ..options
    };
    mcfed_engine::run(scenario, &options).expect("runs")
}

fn assert_every_job_ran(run: &TraceRun, output: &RunOutput, engine: &str) {
    let stats = &output.stats;
    let context = || format!("{engine}: {run:?}\n{}", run.toml());
    assert_eq!(stats.refused, 0, "refused, {}", context());
    assert_eq!(stats.submitted, run.jobs, "submitted, {}", context());
    assert_eq!(stats.started, run.jobs, "started, {}", context());
    assert_eq!(stats.finished, run.jobs, "finished, {}", context());
}

proptest! {
    #![proptest_config(common::config(32))]

    /// Every job of an SWF-shaped trace starts and finishes, on one cluster
    /// or forwarded to up to ten; and observing the run never changes it.
    #[test]
    fn every_trace_job_runs_and_observing_changes_nothing(run in trace_run(10, 400)) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let scenario = run.scenario(dir.path());
        let plain = drained(&scenario, RunOptions::default());
        assert_every_job_ran(&run, &plain, "events");
        let observed = drained(&scenario, RunOptions {
            events: true,
            probes: vec![SimTime::from_secs(60), SimTime::from_secs(3_600)],
            jobs_csv: Some(dir.path().join("jobs.csv")),
            ..RunOptions::default()
        });
        let counted = drained(&scenario, RunOptions { count_only: true, ..RunOptions::default() });
        prop_assert_eq!(decision_lines(&plain), decision_lines(&observed));
        for other in [&observed, &counted] {
            let (a, b) = (&plain.stats, &other.stats);
            prop_assert_eq!(
                (a.submitted, a.started, a.finished, a.decisions, a.forwarded, a.messages, a.end),
                (b.submitted, b.started, b.finished, b.decisions, b.forwarded, b.messages, b.end)
            );
        }
        let started = observed.events.iter().filter(|event| event.event == "started").count();
        prop_assert_eq!(started as u64, run.jobs);
        let rows = std::fs::read_to_string(dir.path().join("jobs.csv")).expect("jobs.csv").lines().count();
        prop_assert_eq!(rows as u64, run.jobs + 1, "a header and a row per job");
    }
}

proptest! {
    #![proptest_config(common::config(8))]

    /// The actor engine runs every job of the trace too, with the same
    /// job events and decisions as the event loop.
    #[test]
    fn the_actor_engine_runs_every_trace_job_too(run in trace_run(4, 80)) {
        let (actors, events) = both_engines(&run);
        prop_assert_eq!(common::outcome(&actors), common::outcome(&events));
    }
}

/// `run` drained under the actor engine (checked to run every job) and
/// under the event loop, with job events.
fn both_engines(run: &TraceRun) -> (RunOutput, RunOutput) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let scenario = run.scenario(dir.path());
    let options = RunOptions {
        drain: true,
        events: true,
        ..RunOptions::default()
    };
    let actors = mcfed_engine::actors::run_plan(&scenario, &options).expect("runs");
    assert_every_job_ran(run, &actors, "actors");
    let events = mcfed_engine::run(&scenario, &options).expect("runs");
    (actors, events)
}

/// The case the actor-engine property found (issue 26): a job finished at
/// E1 at 102 s, when t-28 and t-29 were submitted at Sub. The actor engine
/// took the finish between the two submissions and sent t-29 to E1; the
/// event loop decided both together, before the finish reached Sub, and
/// sent both to E3 (and every later job differed). Both now take the
/// instant in the order of `mcfed_federation::instant`.
#[test]
fn the_engines_agree_when_a_job_ends_as_two_are_submitted_elsewhere() {
    let run = TraceRun {
        execution: vec![(9, 2), (2, 1), (4, 4)],
        local: (2, 1),
        mode: "RESOURCE_ONLY",
        interval_s: 60,
        reserve: false,
        load: 1.5,
        jobs: 68,
        seed: 17_888_752_446_908_014_262,
    };
    let (actors, events) = both_engines(&run);
    let placed = |output: &RunOutput, job: &str| {
        output
            .events
            .iter()
            .find(|event| event.job == job && event.event == "accepted")
            .and_then(|event| event.detail.clone())
    };
    // Decided together at 102 s, on the view before E1's finish.
    assert_eq!(placed(&events, "t-28").as_deref(), Some("E3"));
    assert_eq!(placed(&events, "t-29").as_deref(), Some("E3"));
    assert_eq!(common::outcome(&actors), common::outcome(&events));
}
