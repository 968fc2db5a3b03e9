//! Sweeps on a batch system: the grid written to a directory with one
//! job-array script (Slurm or LSF), one cell of it run by its index, and
//! the cells' files merged back into the table an in-process sweep prints.
//!
//! The directory holds `sweep.json` (the scenario, its checksum and the
//! faults), `grid.tsv` (one line per cell: an interval, a mode and a seed),
//! the script, `cells/cell-I.json` (what cell I left, written whole or not
//! at all) and `logs/` for the batch system's output. A cell is
//! independent of every other and idempotent: running it again replaces
//! its file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcfed_chaos::ChaosOverrides;
use mcfed_forwarder::ScheduleMode;
use serde::{Deserialize, Serialize};

use mcfed_protocol::words::escape_controls;

use super::grid::{self, GridPoint, RunFigures};
use super::{Cell, Runner};

mod script;

pub use script::{merge_command, shell_quote};

/// The file naming the scenario and the faults.
pub const MANIFEST: &str = "sweep.json";
/// The grid, one line per cell.
pub const GRID: &str = "grid.tsv";
/// The directory of the cells' files.
pub const CELLS: &str = "cells";
/// The directory of the batch system's output.
pub const LOGS: &str = "logs";
/// The most cells a grid may have.
pub const MAX_CELLS: usize = 1_000_000;

const FORMAT: &str = "mcfed-sweep 1";

/// The batch system a grid is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Slurm: `sbatch --array=1-N`, the index in `SLURM_ARRAY_TASK_ID`.
    Slurm,
    /// LSF: `bsub -J "name[1-N]"`, the index in `LSB_JOBINDEX`.
    Lsf,
}

impl Scheduler {
    /// The script's file name in the directory.
    pub fn script_name(self) -> &'static str {
        match self {
            Scheduler::Slurm => "sweep.slurm",
            Scheduler::Lsf => "sweep.lsf",
        }
    }

    /// The variable that holds a task's index.
    pub fn index_variable(self) -> &'static str {
        match self {
            Scheduler::Slurm => "SLURM_ARRAY_TASK_ID",
            Scheduler::Lsf => "LSB_JOBINDEX",
        }
    }

    /// Its name: `Slurm` or `LSF`.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Slurm => "Slurm",
            Scheduler::Lsf => "LSF",
        }
    }

    /// The command that submits the script, the script's path quoted
    /// for a POSIX shell.
    pub fn submit_command(self, script: &Path) -> String {
        match self {
            Scheduler::Slurm => format!("sbatch {}", shell_quote(script)),
            Scheduler::Lsf => format!("bsub < {}", shell_quote(script)),
        }
    }
}

impl std::str::FromStr for Scheduler {
    type Err = BatchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "slurm" => Ok(Scheduler::Slurm),
            "lsf" => Ok(Scheduler::Lsf),
            other => Err(BatchError::Scheduler(other.to_owned())),
        }
    }
}

/// Why a batch sweep could not be written, run or merged.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Not a batch system mcfed writes for.
    #[error("unknown batch system `{0}`: expected `slurm` or `lsf`")]
    Scheduler(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The grid has no cell or too many.
    #[error("a grid of {0} cells: a sweep has between 1 and {MAX_CELLS} cells")]
    GridSize(usize),
    /// The directory already holds a sweep's results.
    #[error(
        "{0} already holds results of a sweep: choose another directory, or remove its `cells` directory first"
    )]
    Taken(PathBuf),
    /// The manifest cannot be read.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A line of the grid cannot be read.
    #[error("{path}:{line}: {message}")]
    Grid {
        /// The grid file.
        path: PathBuf,
        /// Its line (from 1).
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// No such cell.
    #[error("there is no cell {index}: the grid has cells 1 to {cells}")]
    NoSuchCell {
        /// The index asked for.
        index: usize,
        /// How many cells the grid has.
        cells: usize,
    },
    /// The scenario changed since the grid was written.
    #[error(
        "{0} changed since the sweep was written: its cells would not be comparable; write the sweep again"
    )]
    ScenarioChanged(PathBuf),
    /// The scenario cannot be loaded.
    #[error("{0}")]
    Scenario(#[from] mcfed_scenario::ScenarioError),
    /// A path the script would have to name, but which its batch system
    /// (or its shell) could not read back exactly.
    #[error(
        "{}: the {scheduler} script cannot name this path: {why}; write the sweep into another directory",
        escape_controls(&path.display().to_string())
    )]
    Unnameable {
        /// The path.
        path: PathBuf,
        /// `Slurm` or `LSF`.
        scheduler: &'static str,
        /// Why.
        why: &'static str,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BatchError + '_ {
    move |source| BatchError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The faults given on the command line, kept as text so that they read
/// back exactly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedChaos {
    delay: Option<String>,
    jitter: Option<String>,
    loss: Option<String>,
    duplicate: Option<String>,
    reorder: Option<String>,
    reorder_delay: Option<String>,
    seed: Option<u64>,
}

impl SavedChaos {
    /// The flags, to be saved.
    pub fn of(overrides: &ChaosOverrides) -> SavedChaos {
        let duration = |d: Option<Duration>| d.map(|d| humantime::format_duration(d).to_string());
        let number = |p: Option<f64>| p.map(|p| p.to_string());
        SavedChaos {
            delay: duration(overrides.delay),
            jitter: duration(overrides.jitter),
            loss: number(overrides.loss),
            duplicate: number(overrides.duplicate),
            reorder: number(overrides.reorder),
            reorder_delay: duration(overrides.reorder_delay),
            seed: overrides.seed,
        }
    }

    /// The flags, read back.
    pub fn overrides(&self) -> Result<ChaosOverrides, String> {
        let duration = |name: &str, text: &Option<String>| {
            text.as_deref()
                .map(|t| humantime::parse_duration(t).map_err(|e| format!("chaos.{name}: {e}")))
                .transpose()
        };
        let number = |name: &str, text: &Option<String>| {
            text.as_deref()
                .map(|t| {
                    t.parse::<f64>()
                        .ok()
                        .filter(|p| (0.0..=1.0).contains(p))
                        .ok_or_else(|| format!("chaos.{name}: `{t}` is not a probability"))
                })
                .transpose()
        };
        Ok(ChaosOverrides {
            delay: duration("delay", &self.delay)?,
            jitter: duration("jitter", &self.jitter)?,
            loss: number("loss", &self.loss)?,
            duplicate: number("duplicate", &self.duplicate)?,
            reorder: number("reorder", &self.reorder)?,
            reorder_delay: duration("reorder_delay", &self.reorder_delay)?,
            seed: self.seed,
        })
    }
}

/// What `sweep.json` says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `mcfed-sweep 1`.
    pub format: String,
    /// The scenario file, absolute.
    pub scenario: PathBuf,
    /// The scenario's name, the report's title.
    pub scenario_name: String,
    /// The scenario file's size when the grid was written.
    pub scenario_bytes: u64,
    /// Its CRC-32 then.
    pub scenario_crc32: u32,
    /// The faults given on the command line.
    pub chaos: SavedChaos,
    /// How many cells the grid has.
    pub cells: usize,
}

/// A sweep to write for a batch system.
#[derive(Debug)]
pub struct EmitRequest<'a> {
    /// The directory to write into (created if missing).
    pub dir: &'a Path,
    /// Which batch system.
    pub scheduler: Scheduler,
    /// The scenario file.
    pub scenario: &'a Path,
    /// The scenario's name.
    pub scenario_name: &'a str,
    /// The faults given on the command line.
    pub chaos: &'a ChaosOverrides,
    /// The grid.
    pub points: &'a [GridPoint],
    /// The `mcfed` executable the tasks run.
    pub executable: &'a Path,
}

/// Writes the manifest, the grid and the script; returns the script's
/// path.
pub fn emit(request: &EmitRequest<'_>) -> Result<PathBuf, BatchError> {
    let cells = request.points.len();
    if cells == 0 || cells > MAX_CELLS {
        return Err(BatchError::GridSize(cells));
    }
    std::fs::create_dir_all(request.dir).map_err(io(request.dir))?;
    let dir = std::fs::canonicalize(request.dir).map_err(io(request.dir))?;
    let cells_dir = dir.join(CELLS);
    if std::fs::read_dir(&cells_dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(BatchError::Taken(dir));
    }
    let script_text = script::script_text(request.scheduler, &dir, cells, request.executable)?;
    let scenario = std::fs::canonicalize(request.scenario).map_err(io(request.scenario))?;
    let bytes = std::fs::read(&scenario).map_err(io(&scenario))?;
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        scenario,
        scenario_name: request.scenario_name.to_owned(),
        scenario_bytes: bytes.len() as u64,
        scenario_crc32: crc32fast::hash(&bytes),
        chaos: SavedChaos::of(request.chaos),
        cells,
    };
    for sub in [&cells_dir, &dir.join(LOGS)] {
        std::fs::create_dir_all(sub).map_err(io(sub))?;
    }
    let manifest_text =
        serde_json::to_string_pretty(&manifest).map_err(|e| BatchError::Manifest {
            path: dir.join(MANIFEST),
            message: e.to_string(),
        })?;
    write_whole(&dir.join(MANIFEST), manifest_text.as_bytes())?;
    write_whole(&dir.join(GRID), grid_text(request.points).as_bytes())?;
    let script = dir.join(request.scheduler.script_name());
    write_whole(&script, script_text.as_bytes())?;
    make_executable(&script)?;
    Ok(script)
}

fn grid_text(points: &[GridPoint]) -> String {
    let mut text = String::from(
        "# mcfed sweep grid: one line per cell, run by `mcfed sweep --cell CELL DIR`\n# cell\tinterval\tmode\tseed\n",
    );
    for (index, point) in points.iter().enumerate() {
        let _ = writeln!(
            text,
            "{}\t{}\t{}\t{}",
            index + 1,
            humantime::format_duration(point.interval),
            point.mode,
            point.seed
        );
    }
    text
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), BatchError> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(io(path))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), BatchError> {
    Ok(())
}

/// Writes a file whole or not at all: a temporary file renamed over it.
fn write_whole(path: &Path, contents: &[u8]) -> Result<(), BatchError> {
    let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&temporary, contents).map_err(io(&temporary))?;
    std::fs::rename(&temporary, path).map_err(io(path))
}

/// Reads a directory's manifest and grid.
pub fn read(dir: &Path) -> Result<(Manifest, Vec<GridPoint>), BatchError> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| BatchError::Manifest {
        path: path.clone(),
        message: e.to_string(),
    })?;
    if manifest.format != FORMAT {
        return Err(BatchError::Manifest {
            path,
            message: format!("format `{}`, expected `{FORMAT}`", manifest.format),
        });
    }
    let grid_path = dir.join(GRID);
    let points = read_grid(&grid_path)?;
    if points.len() != manifest.cells {
        return Err(BatchError::Manifest {
            path,
            message: format!(
                "{}, but {} has {}",
                mcfed_protocol::words::count(manifest.cells as u64, "cell"),
                grid_path.display(),
                points.len()
            ),
        });
    }
    Ok((manifest, points))
}

fn read_grid(path: &Path) -> Result<Vec<GridPoint>, BatchError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let mut points = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let problem = |message: String| BatchError::Grid {
            path: path.to_owned(),
            line: number + 1,
            message,
        };
        if points.len() == MAX_CELLS {
            return Err(problem(format!("more than {MAX_CELLS} cells")));
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [cell, interval, mode, seed] = fields[..] else {
            return Err(problem(format!(
                "expected 4 tab-separated fields (cell, interval, mode, seed), found {}",
                fields.len()
            )));
        };
        if cell.parse::<usize>().ok() != Some(points.len() + 1) {
            return Err(problem(format!(
                "cell `{cell}`: expected {}",
                points.len() + 1
            )));
        }
        points.push(GridPoint {
            interval: humantime::parse_duration(interval)
                .map_err(|e| problem(format!("interval `{interval}`: {e}")))?,
            mode: parse_mode(mode).map_err(|e| problem(format!("mode `{mode}`: {e}")))?,
            seed: seed
                .parse()
                .map_err(|_| problem(format!("seed `{seed}` is not a whole number")))?,
        });
    }
    Ok(points)
}

/// A mode as the grid writes it (`DEFAULT` included).
pub fn parse_mode(text: &str) -> Result<ScheduleMode, String> {
    match text.trim() {
        "DEFAULT" | "" => Ok(ScheduleMode::Default),
        text => text.parse().map_err(|e| format!("{e}")),
    }
}

/// What a cell left in its file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct CellRecord {
    cell: usize,
    interval: String,
    mode: String,
    seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    figures: Option<RunFigures>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl CellRecord {
    fn of(index: usize, point: GridPoint, result: Result<RunFigures, String>) -> CellRecord {
        let (figures, error) = match result {
            Ok(figures) => (Some(figures), None),
            Err(error) => (None, Some(error)),
        };
        CellRecord {
            cell: index,
            interval: humantime::format_duration(point.interval).to_string(),
            mode: point.mode.to_string(),
            seed: point.seed,
            figures,
            error,
        }
    }
}

impl CellRecord {
    /// The run's figures, or why there are none: the run failed, or the
    /// file was written for another grid.
    fn outcome(self, index: usize, point: GridPoint) -> Result<RunFigures, String> {
        let expected = CellRecord::of(index, point, Err(String::new()));
        if (self.cell, &self.interval, &self.mode, self.seed)
            != (
                expected.cell,
                &expected.interval,
                &expected.mode,
                expected.seed,
            )
        {
            return Err(format!(
                "its file was written for another grid (cell {}, interval {}, mode {}, seed {})",
                self.cell, self.interval, self.mode, self.seed
            ));
        }
        match (self.figures, self.error) {
            (_, Some(error)) => Err(error),
            (Some(run), None) => Ok(run),
            (None, None) => Err("its file holds neither figures nor an error".to_owned()),
        }
    }
}

/// The file of cell `index` (from 1).
pub fn cell_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(CELLS).join(format!("cell-{index}.json"))
}

/// Runs cell `index` (from 1) of the sweep in `dir` with `runner` and
/// writes its file, replacing any earlier one. The run's own failure is
/// written into the file too, and returned as `Ok(Err(message))`.
pub fn run_cell(
    dir: &Path,
    index: usize,
    runner: &Runner,
) -> Result<Result<RunFigures, String>, BatchError> {
    let (manifest, points) = read(dir)?;
    let Some(&point) = index.checked_sub(1).and_then(|i| points.get(i)) else {
        return Err(BatchError::NoSuchCell {
            index,
            cells: points.len(),
        });
    };
    let bytes = std::fs::read(&manifest.scenario).map_err(io(&manifest.scenario))?;
    if bytes.len() as u64 != manifest.scenario_bytes
        || crc32fast::hash(&bytes) != manifest.scenario_crc32
    {
        return Err(BatchError::ScenarioChanged(manifest.scenario));
    }
    let scenario = mcfed_scenario::load(&manifest.scenario)?;
    let overrides = manifest
        .chaos
        .overrides()
        .map_err(|message| BatchError::Manifest {
            path: dir.join(MANIFEST),
            message,
        })?;
    let chaos = overrides.apply(scenario.chaos.as_ref(), scenario.seed);
    let result = grid::run_point(&scenario, chaos.as_ref(), point, runner);
    let record = CellRecord::of(index, point, result.clone());
    let path = cell_path(dir, index);
    let text = serde_json::to_string(&record).map_err(|e| BatchError::Manifest {
        path: path.clone(),
        message: e.to_string(),
    })?;
    write_whole(&path, text.as_bytes())?;
    Ok(result)
}

/// The cells of a sweep merged from its directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// The scenario's name.
    pub scenario_name: String,
    /// The table, as an in-process sweep of the same grid gives it when
    /// no cell is missing or failed.
    pub cells: Vec<Cell>,
    /// Cells (from 1) whose file is not there: not run yet, or still
    /// running.
    pub missing: Vec<usize>,
    /// Cells (from 1) that failed, and why.
    pub failed: Vec<(usize, String)>,
}

/// Merges every cell's file in `dir`.
pub fn merge(dir: &Path) -> Result<Merged, BatchError> {
    let (manifest, points) = read(dir)?;
    let mut figures = Vec::with_capacity(points.len());
    let mut missing = Vec::new();
    let mut failed = Vec::new();
    for (offset, &point) in points.iter().enumerate() {
        let index = offset + 1;
        let path = cell_path(dir, index);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                missing.push(index);
                figures.push(None);
                continue;
            }
            Err(source) => return Err(BatchError::Io { path, source }),
        };
        let outcome = match serde_json::from_str::<CellRecord>(&text) {
            Err(error) => Err(format!("{}: {error}", path.display())),
            Ok(record) => record.outcome(index, point),
        };
        match outcome {
            Ok(run) => figures.push(Some(run)),
            Err(error) => {
                failed.push((index, error));
                figures.push(None);
            }
        }
    }
    Ok(Merged {
        scenario_name: manifest.scenario_name,
        cells: grid::cells_of(&points, &figures),
        missing,
        failed,
    })
}
