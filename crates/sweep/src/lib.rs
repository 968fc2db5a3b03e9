//! Sweeps: one scenario run over a grid of update intervals × forwarding
//! modes × seeds, in emulated time, on every core, and the figures of each
//! cell (stale decisions, returns, mean wait).
//!
//! Every run of the grid is independent and seeded (the seed drives the
//! fault generator), so a sweep gives the same table whatever the number of
//! threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcfed_chaos::ChaosConfig;
use mcfed_forwarder::ScheduleMode;
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;

pub use mcfed_report::cells::{Cell, cells_markdown, cells_svg};

pub mod batch;
pub mod grid;

pub use grid::{GridPoint, RunFigures};

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// MC_PLUGIN_UPDATE_INTERVAL values, given to every cluster.
    pub intervals: Vec<Duration>,
    /// MC_PLUGIN_SCHEDULE_ENHANCE values, given to every submission cluster.
    pub modes: Vec<ScheduleMode>,
    /// Seeds per cell: 0, 1, ... added to the faults' seed.
    pub seeds: u64,
    /// Faults for every run (`None`: the scenario's own).
    pub chaos: Option<ChaosConfig>,
    /// Worker threads.
    pub threads: usize,
}

/// Why a sweep could not run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// Nothing to sweep.
    #[error("a sweep needs at least one interval and one mode")]
    EmptyGrid,
    /// A run of the grid could not be built.
    #[error("run with interval {} and mode {mode}: {message}", mcfed_protocol::words::duration(*interval))]
    Run {
        /// Its interval.
        interval: Duration,
        /// Its mode.
        mode: ScheduleMode,
        /// What went wrong.
        message: String,
    },
}

/// `scenario` with every cluster's update interval and every submission
/// cluster's mode replaced.
pub fn variant(scenario: &Scenario, interval: Duration, mode: ScheduleMode) -> Scenario {
    let mut variant = scenario.clone();
    for cluster in &mut variant.clusters {
        cluster.config.update_interval = Some(interval);
        if let Some(forwarder) = &mut cluster.forwarder {
            forwarder.mode = mode;
        }
    }
    // Leave room for at least three updates after the last submission.
    let last = variant
        .submissions
        .last()
        .map_or(mcfed_protocol::SimTime::ZERO, |s| s.at);
    variant.end = variant.end.max(last + interval * 3);
    variant
}

/// Runs one variant of a scenario (an engine's `run`); the error is
/// reported as text.
pub type Runner = dyn Fn(&Scenario, &RunOptions) -> Result<RunOutput, String> + Sync;

/// Runs the grid with `runner`; `progress(done, total)` is called after
/// each run.
pub fn run_sweep(
    scenario: &Scenario,
    spec: &SweepSpec,
    runner: &Runner,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Cell>, SweepError> {
    if spec.intervals.is_empty() || spec.modes.is_empty() {
        return Err(SweepError::EmptyGrid);
    }
    let points = grid::points(&spec.intervals, &spec.modes, spec.seeds);
    let base_chaos = spec.chaos.clone().or_else(|| scenario.chaos.clone());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunFigures, String>>>> =
        Mutex::new((0..points.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..spec.threads.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&point) = points.get(index) else {
                        break;
                    };
                    let result = grid::run_point(scenario, base_chaos.as_ref(), point, runner);
                    if let Ok(mut results) = results.lock() {
                        results[index] = Some(result);
                    }
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, points.len());
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_default();
    let mut figures = Vec::with_capacity(results.len());
    for (point, result) in points.iter().zip(results) {
        match result {
            Some(Ok(run)) => figures.push(Some(run)),
            Some(Err(message)) => {
                return Err(SweepError::Run {
                    interval: point.interval,
                    mode: point.mode,
                    message,
                });
            }
            None => figures.push(None),
        }
    }
    Ok(grid::cells_of(&points, &figures))
}
