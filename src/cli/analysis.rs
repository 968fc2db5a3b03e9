//! Analysis subcommands: `mcfed report` (summaries, timelines and plots of
//! run records, or the merged cells of a sweep's directory), and the fault
//! flags `run` and `sweep` share.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::ValueEnum;
use mcfed_chaos::{ChaosConfig, ChaosOverrides};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Markdown, for pasting into a ticket.
    Markdown,
    /// JSON, for scripts.
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// JSON-lines files of one or more runs (`-`: standard input), or
    /// the directory of a sweep written with `mcfed sweep --emit` (its
    /// cells are merged).
    #[arg(required = true)]
    pub(crate) runs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    pub(crate) format: Format,
    /// Write SVG plots into this directory.
    #[arg(long)]
    pub(crate) plots: Option<PathBuf>,
    /// How many job timelines to show (default: 20 in Markdown, 5000 in
    /// the HTML page).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Also write the whole report as one self-contained HTML page here:
    /// the summary, the metrics, the plots inline, and every job's
    /// timeline with its decisions, behind a search box.
    #[arg(long, value_name = "OUT.html")]
    pub(crate) html: Option<PathBuf>,
}

/// Job timelines shown in Markdown unless `--jobs` says otherwise.
const MARKDOWN_JOBS: usize = 20;

/// Job timelines in the HTML page unless `--jobs` says otherwise.
const HTML_JOBS: usize = 5000;

/// Faults on every link, added to the scenario's own `[chaos]`.
#[derive(Debug, Default, clap::Args)]
pub(crate) struct ChaosArgs {
    /// Fixed one-way delay of every message (between processes: every datagram), e.g. 40s.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub(crate) delay: Option<std::time::Duration>,
    /// Extra random delay, up to this.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub(crate) jitter: Option<std::time::Duration>,
    /// Probability that a counter update (between processes: a datagram) is lost.
    #[arg(long, value_parser = probability)]
    pub(crate) loss: Option<f64>,
    /// Probability that a counter update (between processes: a datagram) arrives twice.
    #[arg(long, value_parser = probability)]
    pub(crate) duplicate: Option<f64>,
    /// Probability that a counter update (between processes: a datagram) is held back so
    /// later ones overtake it.
    #[arg(long, value_parser = probability)]
    pub(crate) reorder: Option<f64>,
    /// How long a reordered update is held back.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub(crate) reorder_delay: Option<std::time::Duration>,
    /// Seed of the fault generator (default: the scenario's).
    #[arg(long)]
    pub(crate) chaos_seed: Option<u64>,
}

fn probability(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("a probability is between 0 and 1, not {value}"))
    }
}

impl ChaosArgs {
    /// The flags as the libraries take them.
    pub(crate) fn overrides(&self) -> ChaosOverrides {
        ChaosOverrides {
            delay: self.delay,
            jitter: self.jitter,
            loss: self.loss,
            duplicate: self.duplicate,
            reorder: self.reorder,
            reorder_delay: self.reorder_delay,
            seed: self.chaos_seed,
        }
    }

    /// The scenario's faults with these flags applied to every link.
    pub(crate) fn apply(&self, scenario: &mcfed_scenario::Scenario) -> Option<ChaosConfig> {
        self.overrides()
            .apply(scenario.chaos.as_ref(), scenario.seed)
    }
}

pub(crate) fn write_file(path: &std::path::Path, contents: &str) -> anyhow::Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

/// The records of each run named: a file, or `-` for standard input
/// (at most once: it can be read only once).
fn read_runs(paths: &[PathBuf]) -> anyhow::Result<Vec<mcfed_report::Records>> {
    let stdin = std::path::Path::new("-");
    if paths.iter().filter(|path| *path == stdin).count() > 1 {
        anyhow::bail!("`-` (standard input) can be given once");
    }
    let mut runs = Vec::with_capacity(paths.len());
    for path in paths {
        if path == stdin {
            let mut records = mcfed_report::Records::default();
            records.read_lines(io::stdin().lock(), "standard input")?;
            runs.push(records);
        } else {
            runs.push(mcfed_report::read_records(&[path])?);
        }
    }
    Ok(runs)
}

pub(crate) fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    if let [dir] = &args.runs[..]
        && dir.join(mcfed_sweep::batch::MANIFEST).is_file()
    {
        return super::sweep::merged_report(dir, args.format, args.plots.as_deref());
    }
    let runs = read_runs(&args.runs)?;
    // Stale rate per run, against its update interval.
    let per_run: Vec<(String, f64, f64)> = runs
        .iter()
        .filter_map(|run| {
            let header = run.runs.first()?;
            let summary = mcfed_report::Summary::of(run);
            (summary.oracle_decisions > 0).then(|| {
                (
                    header.modes.join(" + "),
                    header.update_interval,
                    100.0 * summary.stale_rate,
                )
            })
        })
        .collect();
    let mut records = mcfed_report::Records::default();
    for run in runs {
        records.extend(run);
    }
    let summary = mcfed_report::Summary::of(&records);
    let timelines = mcfed_report::timelines(&records);
    let mut plots = Vec::new();
    let mut left_out = Vec::new();
    let drawn = match args.plots.is_some() || args.html.is_some() {
        true => mcfed_report::plots::report_plots(&records, &per_run)?,
        false => Vec::new(),
    };
    if let Some(dir) = &args.plots {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for plot in &drawn {
            match plot {
                mcfed_report::plots::Plot::Drawn { name, svg } => {
                    let path = dir.join(name);
                    write_file(&path, svg)?;
                    plots.push(path);
                }
                mcfed_report::plots::Plot::LeftOut { name, why } => {
                    eprintln!("plot {name} left out: {why}");
                    left_out.push((*name, why.clone()));
                }
            }
        }
    }
    if let Some(path) = &args.html {
        let page = mcfed_report::html::page(&mcfed_report::html::HtmlReport {
            records: &records,
            summary: &summary,
            timelines: &timelines,
            plots: &drawn,
            stale_by_run: &per_run,
            job_limit: args.jobs.unwrap_or(HTML_JOBS),
        });
        write_file(path, &page)?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Json => {
            let value = serde_json::json!({
                "summary": summary,
                "metrics": records.summaries,
                "timelines": timelines,
                "stale_by_run": per_run
                    .iter()
                    .map(|(mode, interval, stale)| serde_json::json!({
                        "mode": mode, "update_interval": interval, "stale_percent": stale
                    }))
                    .collect::<Vec<_>>(),
                "plots": plots,
                "plots_left_out": left_out
                    .iter()
                    .map(|(name, why)| serde_json::json!({ "plot": name, "why": why }))
                    .collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        }
        Format::Markdown => {
            writeln!(
                out,
                "# mcfed report
"
            )?;
            write!(out, "{}", mcfed_report::markdown::summary(&summary))?;
            for run in &records.summaries {
                writeln!(
                    out,
                    "\n## Metrics\n\n```\n{}```",
                    mcfed_run::render::metrics_text(&run.metrics)
                )?;
            }
            if !plots.is_empty() || !left_out.is_empty() {
                writeln!(out, "\n## Plots\n")?;
                for path in &plots {
                    writeln!(out, "![{}]({})", path.display(), path.display())?;
                }
                for (name, why) in &left_out {
                    writeln!(out, "- {name} left out: {why}")?;
                }
            }
            writeln!(out)?;
            write!(
                out,
                "{}",
                mcfed_report::markdown::timelines(&timelines, args.jobs.unwrap_or(MARKDOWN_JOBS))
            )?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
