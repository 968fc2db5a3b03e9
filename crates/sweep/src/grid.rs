//! The points of a sweep's grid (one run each: an update interval, a mode
//! and a seed), the figures one run leaves, and how runs add up to cells.

use std::time::Duration;

use mcfed_chaos::ChaosConfig;
use mcfed_forwarder::ScheduleMode;
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;
use serde::{Deserialize, Serialize};

use super::{Cell, Runner, variant};
use mcfed_report::input::Records;
use mcfed_report::summary::Summary;

/// One run of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridPoint {
    /// MC_PLUGIN_UPDATE_INTERVAL of every cluster.
    pub interval: Duration,
    /// MC_PLUGIN_SCHEDULE_ENHANCE of every submission cluster.
    pub mode: ScheduleMode,
    /// Added to the faults' seed.
    pub seed: u64,
}

/// Every point of the grid, intervals outermost and seeds innermost: the
/// runs of one cell are next to each other.
pub fn points(intervals: &[Duration], modes: &[ScheduleMode], seeds: u64) -> Vec<GridPoint> {
    let mut points = Vec::with_capacity(intervals.len() * modes.len() * seeds.max(1) as usize);
    for &interval in intervals {
        for &mode in modes {
            for seed in 0..seeds.max(1) {
                points.push(GridPoint {
                    interval,
                    mode,
                    seed,
                });
            }
        }
    }
    points
}

/// What one run of the grid contributes to its cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Forwarding decisions.
    pub decisions: usize,
    /// Decisions the oracle checked.
    pub oracle_decisions: usize,
    /// Decisions the oracle found stale.
    pub stale_decisions: usize,
    /// Decisions made again after a refusal or a return.
    pub returned: usize,
    /// Per cluster, in name order: the mean wait of its started jobs in
    /// seconds, and how many started.
    pub waits: Vec<(f64, usize)>,
}

impl RunFigures {
    /// The figures of a run's output.
    pub fn of(output: RunOutput) -> RunFigures {
        let summary = Summary::of(&Records {
            runs: Vec::new(),
            decisions: output.decisions,
            events: output.events,
            usage: Vec::new(),
            order: output.order,
            summaries: Vec::new(),
        });
        RunFigures {
            decisions: summary.decisions,
            oracle_decisions: summary.oracle_decisions,
            stale_decisions: summary.stale_decisions,
            returned: summary.returned,
            waits: summary
                .wait_per_cluster
                .values()
                .map(|spread| (spread.mean, spread.count))
                .collect(),
        }
    }
}

/// Runs one point of the grid: the scenario's variant for it, with the
/// faults' seed moved by the point's seed.
pub fn run_point(
    scenario: &Scenario,
    base_chaos: Option<&ChaosConfig>,
    point: GridPoint,
    runner: &Runner,
) -> Result<RunFigures, String> {
    let variant = variant(scenario, point.interval, point.mode);
    let chaos = base_chaos.cloned().map(|mut chaos| {
        chaos.seed = chaos.seed.wrapping_add(point.seed);
        chaos
    });
    let options = RunOptions {
        until: None,
        probes: Vec::new(),
        chaos,
        oracle: true,
        events: true,
        count_only: false,
        drain: false,
        jobs_csv: None,
        lsb_acct: None,
    };
    runner(&variant, &options).map(RunFigures::of)
}

/// The cells of the grid from the figures of its runs (`None`: a run
/// that left nothing, which the cell does not count). `points` and
/// `figures` are in the same order; a cell is every point with its
/// interval and mode.
pub fn cells_of(points: &[GridPoint], figures: &[Option<RunFigures>]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = Vec::new();
    let mut start = 0;
    while start < points.len() {
        let first = points[start];
        let end = points[start..]
            .iter()
            .position(|p| p.interval != first.interval || p.mode != first.mode)
            .map_or(points.len(), |offset| start + offset);
        let runs: Vec<&RunFigures> = figures[start..end.min(figures.len())]
            .iter()
            .flatten()
            .collect();
        cells.push(cell_of(first, &runs));
        start = end;
    }
    cells
}

fn cell_of(point: GridPoint, runs: &[&RunFigures]) -> Cell {
    let mean = |f: &dyn Fn(&RunFigures) -> usize| match runs.len() {
        0 => 0.0,
        count => runs.iter().map(|r| f(r) as f64).sum::<f64>() / count as f64,
    };
    let checked: usize = runs.iter().map(|r| r.oracle_decisions).sum();
    let stale: usize = runs.iter().map(|r| r.stale_decisions).sum();
    let (wait_total, wait_jobs) = runs
        .iter()
        .flat_map(|r| r.waits.iter())
        .fold((0.0, 0usize), |(total, jobs), &(mean, started)| {
            (total + mean * started as f64, jobs + started)
        });
    Cell {
        interval: point.interval.as_secs_f64(),
        mode: point.mode.to_string(),
        runs: runs.len() as u64,
        decisions: mean(&|r| r.decisions),
        stale_decisions: mean(&|r| r.stale_decisions),
        stale_rate: if checked == 0 {
            0.0
        } else {
            stale as f64 / checked as f64
        },
        returns: mean(&|r| r.returned),
        mean_wait: (wait_jobs > 0).then(|| wait_total / wait_jobs as f64),
    }
}
