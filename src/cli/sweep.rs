//! `mcfed sweep`: a grid of update intervals × modes × seeds, run on every
//! core (the default), written for a batch system as one job array
//! (`--emit slurm|lsf DIR`), or one cell of such a grid (`--cell I DIR`);
//! and the table `mcfed report DIR` merges from a grid's cells.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use mcfed_protocol::words::count;
use mcfed_sweep::batch::{self, Scheduler};
use mcfed_sweep::{Cell, SweepSpec};

use super::analysis::{ChaosArgs, Format, write_file};

/// `--interval`: MC_PLUGIN_UPDATE_INTERVAL, within the bound a scenario's
/// own is held to.
fn update_interval(text: &str) -> Result<std::time::Duration, String> {
    let interval = humantime::parse_duration(text).map_err(|error| error.to_string())?;
    mcfed_protocol::bounds::UPDATE_INTERVAL
        .check_duration(interval)
        .map_err(|error| error.to_string())
}

/// `--seeds`: runs per cell of a sweep.
fn seeds(text: &str) -> Result<u64, String> {
    const SEEDS: mcfed_protocol::Bound = mcfed_protocol::Bound {
        what: "--seeds",
        min: 1,
        max: 10_000,
        why: "runs per cell of a sweep",
    };
    let value: i128 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    SEEDS.check_i128(value).map_err(|error| error.to_string())
}

#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// The scenario file (TOML); with `--cell`, the directory written by
    /// `--emit`.
    #[arg(value_name = "SCENARIO|DIR")]
    pub(crate) scenario: PathBuf,
    /// Update intervals to try, e.g. 1s,5s,15s,60s.
    #[arg(long, value_delimiter = ',', required_unless_present = "cell", value_parser = update_interval)]
    pub(crate) interval: Vec<std::time::Duration>,
    /// Modes to try, comma-separated (default: the scenario's).
    #[arg(long, value_delimiter = ',')]
    pub(crate) mode: Vec<String>,
    /// Seeds per cell.
    #[arg(long, default_value_t = 1, value_parser = seeds)]
    pub(crate) seeds: u64,
    /// Output format of the table.
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    pub(crate) format: Format,
    /// Write the plot (SVG) here.
    #[arg(long)]
    pub(crate) plot: Option<PathBuf>,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Write the grid for a batch system instead of running it: `slurm` or
    /// `lsf`, and the directory (one job-array script, one task per cell;
    /// `mcfed report DIR` merges the cells).
    #[arg(long, num_args = 2, value_names = ["SYSTEM", "DIR"], conflicts_with = "cell")]
    pub(crate) emit: Vec<String>,
    /// Run cell I (from 1) of the grid in the directory given instead of a
    /// scenario, replacing its earlier result if any.
    #[arg(long, value_name = "I", conflicts_with_all = ["interval", "mode", "seeds", "plot", "threads"])]
    pub(crate) cell: Option<usize>,
    #[command(flatten)]
    pub(crate) chaos: ChaosArgs,
}

pub(crate) fn sweep(args: SweepArgs) -> anyhow::Result<ExitCode> {
    if let Some(index) = args.cell {
        if args.chaos.overrides() != Default::default() {
            anyhow::bail!(
                "--cell runs a cell of a written grid with the grid's own faults: give fault flags to `mcfed sweep --emit`"
            );
        }
        return run_cell(&args.scenario, index);
    }
    let scenario = mcfed_scenario::load(&args.scenario)?;
    let modes = if args.mode.is_empty() {
        let mut modes: Vec<mcfed_forwarder::ScheduleMode> = scenario
            .clusters
            .iter()
            .filter_map(|spec| spec.forwarder.as_ref().map(|f| f.mode))
            .collect();
        modes.dedup();
        modes
    } else {
        args.mode
            .iter()
            .map(|text| {
                batch::parse_mode(text).map_err(|error| anyhow::anyhow!("--mode {text}: {error}"))
            })
            .collect::<anyhow::Result<_>>()?
    };
    let cells = (args.interval.len() * modes.len()) as u128 * u128::from(args.seeds.max(1));
    if cells == 0 || cells > batch::MAX_CELLS as u128 {
        anyhow::bail!(
            "a grid of {} × {} × {} = {}: a sweep has between 1 and {} runs",
            count(args.interval.len() as u64, "interval"),
            count(modes.len() as u64, "mode"),
            count(args.seeds.max(1), "seed"),
            count(cells.min(u128::from(u64::MAX)) as u64, "run"),
            batch::MAX_CELLS
        );
    }
    if let [system, dir] = &args.emit[..] {
        return emit(&args, &scenario, &modes, system, Path::new(dir));
    }
    let spec = SweepSpec {
        intervals: args.interval.clone(),
        modes,
        seeds: args.seeds,
        chaos: args.chaos.apply(&scenario),
        threads: args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let bar = indicatif::ProgressBar::new(cells as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let table = mcfed_sweep::run_sweep(&scenario, &spec, &run_with_event_loop, &|done, _| {
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        write_file(path, &mcfed_sweep::cells_svg(&table)?)?;
    }
    print_table(&scenario.name, &table, args.format, args.plot.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// `--emit SYSTEM DIR`: the grid, the manifest and the job-array script.
fn emit(
    args: &SweepArgs,
    scenario: &mcfed_scenario::Scenario,
    modes: &[mcfed_forwarder::ScheduleMode],
    system: &str,
    dir: &Path,
) -> anyhow::Result<ExitCode> {
    let scheduler: Scheduler = system.parse().context("--emit")?;
    let points = mcfed_sweep::grid::points(&args.interval, modes, args.seeds);
    let executable = std::env::current_exe().context("cannot find the mcfed executable")?;
    let script = batch::emit(&batch::EmitRequest {
        dir,
        scheduler,
        scenario: &args.scenario,
        scenario_name: &scenario.name,
        chaos: &args.chaos.overrides(),
        points: &points,
        executable: &executable,
    })?;
    let dir = script.parent().unwrap_or(dir);
    writeln!(
        io::stdout().lock(),
        "{} written to {}\nsubmit:  {}\nmerge:   {}",
        count(points.len() as u64, "cell"),
        dir.display(),
        scheduler.submit_command(&script),
        batch::merge_command(dir)
    )?;
    if points.len() > 1000 {
        eprintln!(
            "note: {} array tasks; Slurm's MaxArraySize and LSF's MAX_JOB_ARRAY_SIZE default to about 1000",
            points.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--cell I DIR`: one cell of a written grid.
fn run_cell(dir: &Path, index: usize) -> anyhow::Result<ExitCode> {
    match batch::run_cell(dir, index, &run_with_event_loop)? {
        Ok(_) => {
            eprintln!(
                "cell {index} written to {}",
                batch::cell_path(dir, index).display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(message) => {
            eprintln!("cell {index} failed: {message}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `mcfed report DIR` on a written grid: the table of the cells that ran,
/// and every cell that is missing or failed. Exits with failure when any
/// is.
pub(crate) fn merged_report(
    dir: &Path,
    format: Format,
    plots: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let merged = batch::merge(dir)?;
    let plot = match plots {
        Some(plots) => {
            std::fs::create_dir_all(plots)
                .with_context(|| format!("cannot create {}", plots.display()))?;
            let path = plots.join("sweep.svg");
            write_file(&path, &mcfed_sweep::cells_svg(&merged.cells)?)?;
            Some(path)
        }
        None => None,
    };
    print_table(
        &merged.scenario_name,
        &merged.cells,
        format,
        plot.as_deref(),
    )?;
    let total = merged.missing.len() + merged.failed.len();
    if total == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    let mut err = io::stderr().lock();
    if !merged.missing.is_empty() {
        writeln!(
            err,
            "{} missing (not run, or still running): {}",
            count(merged.missing.len() as u64, "cell"),
            ranges(&merged.missing)
        )?;
    }
    for (index, why) in &merged.failed {
        writeln!(err, "cell {index} failed: {why}")?;
    }
    writeln!(
        err,
        "the table above counts only the cells that ran; run the others with `mcfed sweep --cell I {}`",
        batch::shell_quote(dir)
    )?;
    Ok(ExitCode::FAILURE)
}

/// `1-3,7,9-10`.
fn ranges(indices: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut start = 0;
    while start < indices.len() {
        let mut end = start;
        while end + 1 < indices.len() && indices[end + 1] == indices[end] + 1 {
            end += 1;
        }
        parts.push(if end == start {
            indices[start].to_string()
        } else {
            format!("{}-{}", indices[start], indices[end])
        });
        start = end + 1;
    }
    parts.join(",")
}

/// The sweep's table, as JSON or Markdown.
fn print_table(
    name: &str,
    table: &[Cell],
    format: Format,
    plot: Option<&Path>,
) -> anyhow::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(table)?)?,
        Format::Markdown => {
            writeln!(out, "# Sweep of {name}\n")?;
            write!(out, "{}", mcfed_sweep::cells_markdown(table))?;
            if let Some(path) = plot {
                writeln!(out, "\n![sweep]({})", path.display())?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs one sweep variant with the event loop.
fn run_with_event_loop(
    scenario: &mcfed_scenario::Scenario,
    options: &mcfed_run::RunOptions,
) -> Result<mcfed_run::RunOutput, String> {
    mcfed_engine::run(scenario, options).map_err(|error| error.to_string())
}
