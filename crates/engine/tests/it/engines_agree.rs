//! Every fault-free scenario under `scenarios/` runs under both in-process
//! engines with identical decisions and job timelines.

use crate::common;

use std::path::{Path, PathBuf};

use common::{decision_lines, timelines};
use mcfed_run::RunOptions;

/// The scenario at `file`, or `None` for one meant to be refused (its
/// `[[expect]]` entries say `refused`); any other refusal fails the test.
fn load(file: &Path) -> Option<mcfed_scenario::Scenario> {
    match mcfed_scenario::load(file) {
        Ok(scenario) => Some(scenario),
        Err(error) => {
            let source = std::fs::read_to_string(file).expect("readable");
            assert!(
                !mcfed_run::refusal::expected_refusals(&source).is_empty(),
                "{}: {error}",
                file.display()
            );
            None
        }
    }
}

fn scenario_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            scenario_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "toml") {
            files.push(path);
        }
    }
}

#[test]
fn both_engines_give_the_same_decisions_and_timelines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    scenario_files(&root, &mut files);
    assert!(files.len() >= 30, "found {files:?}");
    let mut compared = 0;
    let mut differences = Vec::new();
    for file in &files {
        let Some(scenario) = load(file) else {
            continue;
        };
        if scenario.chaos.is_some() || scenario.wants_oracle() {
            continue;
        }
        let options = RunOptions {
            events: true,
            ..RunOptions::default()
        };
        let events = mcfed_engine::run(&scenario, &options).expect("event loop");
        let actors = mcfed_engine::actors::run_plan(&scenario, &options).expect("actors");
        let name = file.display();
        if decision_lines(&events) != decision_lines(&actors) {
            differences.push(format!("{name}: decisions differ"));
        }
        let (ours, theirs) = (timelines(&events.events), timelines(&actors.events));
        if ours != theirs {
            let first = ours
                .iter()
                .find(|(job, timeline)| theirs.get(*job) != Some(*timeline))
                .map(|(job, timeline)| format!("{job:?}: {timeline:?} vs {:?}", theirs.get(job)));
            differences.push(format!("{name}: job timelines differ, first {first:?}"));
        }
        let counts = |output: &mcfed_run::RunOutput| {
            let stats = &output.stats;
            (
                stats.submitted,
                stats.refused,
                stats.started,
                stats.finished,
                stats.jobs,
                output.actions.clone(),
            )
        };
        if counts(&events) != counts(&actors) {
            differences.push(format!("{name}: counts differ"));
        }
        compared += 1;
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(compared >= 25, "compared only {compared} scenarios");
}

/// One definition of the totals: every job of every bundled scenario (the
/// jobs present at start and those submitted) is counted once at the end —
/// finished, killed, running, suspended, pending in a queue, or still at
/// its submission cluster — under both engines; and `started` and
/// `finished` are the sums of their breakdowns by origin.
#[test]
fn every_job_is_accounted_for_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    scenario_files(&root, &mut files);
    let mut checked = 0;
    let mut bundled_started = 0;
    for file in &files {
        let Some(scenario) = load(file) else {
            continue;
        };
        if scenario.chaos.is_some() || !scenario.workloads.is_empty() {
            continue;
        }
        let options = RunOptions::default();
        let runs = [
            mcfed_engine::run(&scenario, &options).expect("event loop"),
            mcfed_engine::actors::run_plan(&scenario, &options).expect("actors"),
        ];
        for output in &runs {
            let stats = &output.stats;
            let jobs = &stats.jobs;
            let name = file.display();
            assert_eq!(jobs.in_flight, 0, "{name}: a forward in flight at the end");
            assert_eq!(
                stats.bundled + stats.submitted,
                jobs.accounted(),
                "{name}: {stats:?}"
            );
            assert_eq!(stats.started, jobs.started.total(), "{name}");
            assert_eq!(stats.finished, jobs.finished.total(), "{name}");
            assert!(
                jobs.started.total() >= jobs.finished.total() + jobs.running.total(),
                "{name}: {jobs:?}"
            );
            bundled_started += jobs.started.bundled;
        }
        checked += 1;
    }
    assert!(checked >= 25, "checked only {checked} scenarios");
    assert!(bundled_started > 0, "jobs present at start are counted");
}
