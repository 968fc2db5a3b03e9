//! `mcfed`: the command-line front end. It parses arguments, wires the
//! libraries together and prints; everything else lives in the crates.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use mcfed_protocol::SimTime;
use mcfed_scenario::chaos::ChaosConfig;
use mcfed_scenario::engine::RunOptions;
use mcfed_scenario::{RunOutput, ScenarioError, render};

/// Emulates an LSF-style multi-cluster federation and explains every job
/// forwarding decision.
#[derive(Debug, Parser)]
#[command(name = "mcfed", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario in emulated time and print every forwarding decision.
    Run(RunArgs),
    /// Check a scenario file without running it.
    Validate {
        /// The scenario file (TOML).
        scenario: PathBuf,
    },
    /// Summarise run records (`mcfed run --report json --events`): figures,
    /// per-job timelines and SVG plots.
    Report(ReportArgs),
    /// Run a scenario over a grid of update intervals × modes × seeds.
    Sweep(SweepArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Markdown, for pasting into a ticket.
    Markdown,
    /// JSON, for scripts.
    Json,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// JSON-lines files of one or more runs.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    format: Format,
    /// Write SVG plots into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// How many job timelines to show in Markdown.
    #[arg(long, default_value_t = 20)]
    jobs: usize,
}

#[derive(Debug, clap::Args)]
struct SweepArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Update intervals to try, e.g. 1s,5s,15s,60s.
    #[arg(long, value_delimiter = ',', required = true, value_parser = humantime::parse_duration)]
    interval: Vec<std::time::Duration>,
    /// Modes to try, comma-separated (default: the scenario's).
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Seeds per cell.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Output format of the table.
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    format: Format,
    /// Write the plot (SVG) here.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    chaos: ChaosArgs,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// How to print decisions: a readable table, or one JSON object per line.
    #[arg(long, value_enum, default_value_t = Report::Text)]
    report: Report,
    /// Check the scenario's [[expect]] entries; exit with status 1 if any fails.
    #[arg(long)]
    check: bool,
    /// Which in-process engine runs the scenario.
    #[arg(long, value_enum, default_value_t = Engine::Events)]
    engine: Engine,
    /// Stop at this emulated time (e.g. 10m) if earlier than the scenario's end.
    #[arg(long, value_parser = humantime::parse_duration)]
    until: Option<std::time::Duration>,
    /// With `--report json`, also print job events and slot usage samples
    /// (the input `mcfed report` reads).
    #[arg(long)]
    events: bool,
    /// Compare every decision with what the true counters would have chosen
    /// (on by default when faults are injected).
    #[arg(long)]
    oracle: bool,
    #[command(flatten)]
    chaos: ChaosArgs,
}

/// Faults on every link, added to the scenario's own `[chaos]`.
#[derive(Debug, Default, clap::Args)]
struct ChaosArgs {
    /// Fixed one-way delay of every message (e.g. 40s).
    #[arg(long, value_parser = humantime::parse_duration)]
    delay: Option<std::time::Duration>,
    /// Extra random delay, up to this.
    #[arg(long, value_parser = humantime::parse_duration)]
    jitter: Option<std::time::Duration>,
    /// Probability that a counter update is lost.
    #[arg(long, value_parser = probability)]
    loss: Option<f64>,
    /// Probability that a counter update arrives twice.
    #[arg(long, value_parser = probability)]
    duplicate: Option<f64>,
    /// Probability that a counter update is held back so later ones overtake it.
    #[arg(long, value_parser = probability)]
    reorder: Option<f64>,
    /// How long a reordered update is held back.
    #[arg(long, value_parser = humantime::parse_duration)]
    reorder_delay: Option<std::time::Duration>,
    /// Seed of the fault generator (default: the scenario's).
    #[arg(long)]
    chaos_seed: Option<u64>,
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
    fn is_set(&self) -> bool {
        self.delay.is_some()
            || self.jitter.is_some()
            || self.loss.is_some()
            || self.duplicate.is_some()
            || self.reorder.is_some()
            || self.chaos_seed.is_some()
    }

    /// The scenario's faults with these flags applied to every link.
    fn apply(&self, scenario: &mcfed_scenario::Scenario) -> Option<ChaosConfig> {
        if !self.is_set() {
            return scenario.chaos.clone();
        }
        let mut config = scenario.chaos.clone().unwrap_or(ChaosConfig {
            seed: scenario.seed,
            ..ChaosConfig::default()
        });
        let link = &mut config.default_link;
        if let Some(delay) = self.delay {
            link.delay = delay;
            link.reorder_delay = delay * 2 + std::time::Duration::from_secs(1);
        }
        link.jitter = self.jitter.unwrap_or(link.jitter);
        link.loss = self.loss.unwrap_or(link.loss);
        link.duplicate = self.duplicate.unwrap_or(link.duplicate);
        link.reorder = self.reorder.unwrap_or(link.reorder);
        link.reorder_delay = self.reorder_delay.unwrap_or(link.reorder_delay);
        if link.retransmit.is_zero() {
            link.retransmit = mcfed_scenario::chaos::DEFAULT_RETRANSMIT;
        }
        config.seed = self.chaos_seed.unwrap_or(config.seed);
        Some(config)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Report {
    /// A table per decision.
    Text,
    /// One JSON object per decision, one per line.
    Json,
    /// Only the run's totals and how fast it ran.
    Summary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// The event loop over the scheduling cores (fast, the default).
    Events,
    /// The actix actors under a paused tokio clock.
    Actors,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(io::stderr)
        .init();
    let cli = Cli::parse();
    match execute(cli) {
        Ok(code) => code,
        // A reader that stops early (`| head`) is not an error.
        Err(error)
            if error
                .downcast_ref::<io::Error>()
                .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            // A scenario's problems are already one per line with file:line.
            match error.downcast_ref::<ScenarioError>() {
                Some(scenario_error) => eprintln!("{scenario_error}"),
                None => eprintln!("mcfed: {error:#}"),
            }
            ExitCode::from(2)
        }
    }
}

fn execute(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Validate { scenario } => {
            let loaded = mcfed_scenario::load(&scenario)?;
            let mut out = io::stdout().lock();
            writeln!(
                out,
                "{}: ok: {} ({} clusters, {} submissions, {} expectations)",
                scenario.display(),
                loaded.name,
                loaded.clusters.len(),
                loaded.submissions.len(),
                loaded.expectations.len()
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => run(args),
        Command::Report(args) => report(args),
        Command::Sweep(args) => sweep(args),
    }
}

fn write_file(path: &std::path::Path, contents: &str) -> anyhow::Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let runs = mcfed_report::read_runs(&args.runs)?;
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
    if let Some(dir) = &args.plots {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut drawn = vec![
            (
                "slots-in-use.svg",
                mcfed_report::plots::slots_in_use(&records)?,
            ),
            ("view-age.svg", mcfed_report::plots::view_age(&records)?),
        ];
        if !per_run.is_empty() {
            drawn.push((
                "stale-by-interval.svg",
                mcfed_report::plots::stale_rate_by_interval(&per_run)?,
            ));
        }
        for (name, svg) in drawn {
            let path = dir.join(name);
            write_file(&path, &svg)?;
            plots.push(path);
        }
    }
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Json => {
            let value = serde_json::json!({
                "summary": summary,
                "timelines": timelines,
                "stale_by_run": per_run
                    .iter()
                    .map(|(mode, interval, stale)| serde_json::json!({
                        "mode": mode, "update_interval": interval, "stale_percent": stale
                    }))
                    .collect::<Vec<_>>(),
                "plots": plots,
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
            if !plots.is_empty() {
                writeln!(
                    out,
                    "
## Plots
"
                )?;
                for path in &plots {
                    writeln!(out, "![{}]({})", path.display(), path.display())?;
                }
            }
            writeln!(out)?;
            write!(
                out,
                "{}",
                mcfed_report::markdown::timelines(&timelines, args.jobs)
            )?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn sweep(args: SweepArgs) -> anyhow::Result<ExitCode> {
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
            .map(|text| match text.trim() {
                "DEFAULT" | "" => Ok(mcfed_forwarder::ScheduleMode::Default),
                text => text.parse().with_context(|| format!("--mode {text}")),
            })
            .collect::<anyhow::Result<_>>()?
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let spec = mcfed_report::sweep::SweepSpec {
        intervals: args.interval.clone(),
        modes,
        seeds: args.seeds,
        chaos: args.chaos.apply(&scenario),
        threads,
    };
    let total = (spec.intervals.len() * spec.modes.len()) as u64 * spec.seeds.max(1);
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let cells = mcfed_report::sweep::run_sweep(&scenario, &spec, &|done, _| {
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        write_file(path, &mcfed_report::sweep::cells_svg(&cells)?)?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&cells)?)?,
        Format::Markdown => {
            writeln!(
                out,
                "# Sweep of {}
",
                scenario.name
            )?;
            write!(out, "{}", mcfed_report::sweep::cells_markdown(&cells))?;
            if let Some(path) = &args.plot {
                writeln!(
                    out,
                    "
![sweep]({})",
                    path.display()
                )?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let scenario = mcfed_scenario::load(&args.scenario)?;
    let until = args.until.map(SimTime::from);
    let chaos = args.chaos.apply(&scenario);
    let faulty = chaos.as_ref().is_some_and(ChaosConfig::is_active);
    let options = RunOptions {
        until,
        chaos,
        oracle: args.oracle || faulty || scenario.wants_oracle(),
        events: args.events,
    };
    let started = std::time::Instant::now();
    let output: RunOutput = match args.engine {
        Engine::Events => mcfed_scenario::engine::run(&scenario, &options)
            .context("cannot build the scenario's clusters")?,
        Engine::Actors => {
            if faulty || args.oracle || args.events || scenario.wants_oracle() {
                anyhow::bail!(
                    "faults, --oracle and --events need the events engine (drop --engine actors)"
                );
            }
            mcfed_scenario::actors::run(&scenario, until).context("the actor engine failed")?
        }
    };
    let wall = started.elapsed();
    let mut out = BufWriter::new(io::stdout().lock());
    match args.report {
        Report::Json => {
            if args.events {
                for line in render::run_json_lines(&scenario.run_record(faulty), &output)? {
                    writeln!(out, "{line}")?;
                }
            } else {
                for record in &output.decisions {
                    writeln!(out, "{}", render::decision_json(record)?)?;
                }
            }
        }
        Report::Summary => {
            let stats = &output.stats;
            let forwarded = output
                .decisions
                .iter()
                .filter(|r| r.target.is_some())
                .count();
            let stale = output
                .decisions
                .iter()
                .filter(|r| r.oracle.as_ref().is_some_and(|o| o.stale))
                .count();
            writeln!(out, "scenario: {}", scenario.name)?;
            writeln!(out, "emulated: {}", stats.end)?;
            writeln!(out, "wall: {:.3} s", wall.as_secs_f64())?;
            writeln!(
                out,
                "jobs submitted: {} ({:.0} per wall second)",
                stats.submitted,
                stats.submitted as f64 / wall.as_secs_f64().max(1e-9)
            )?;
            writeln!(
                out,
                "jobs started: {}, finished: {}",
                stats.started, stats.finished
            )?;
            writeln!(
                out,
                "decisions: {} ({forwarded} forwarded, {} pending, {stale} stale)",
                output.decisions.len(),
                output.decisions.len() - forwarded
            )?;
            writeln!(
                out,
                "events: {}, messages: {}, counter updates: {} ({} lost, {} ignored)",
                stats.events,
                stats.messages,
                stats.updates,
                stats.updates_lost,
                stats.updates_ignored
            )?;
        }
        Report::Text => {
            writeln!(out, "# {}", scenario.name)?;
            if !scenario.description.is_empty() {
                writeln!(out, "# {}", scenario.description.trim())?;
            }
            writeln!(out)?;
            for record in &output.decisions {
                writeln!(out, "{}", render::decision_text(record))?;
            }
            let forwarded = output
                .decisions
                .iter()
                .filter(|record| record.target.is_some())
                .count();
            writeln!(
                out,
                "{} decisions ({} forwarded, {} pending); ran to {}",
                output.decisions.len(),
                forwarded,
                output.decisions.len() - forwarded,
                output.stats.end
            )?;
        }
    }
    out.flush()?;
    drop(out);
    if !args.check {
        return Ok(ExitCode::SUCCESS);
    }
    let results = mcfed_scenario::check(&scenario, &output);
    let failed = results.iter().filter(|result| !result.held).count();
    let summary = format!(
        "{}{} of {} expectations held",
        render::checks_text(&results),
        results.len() - failed,
        results.len()
    );
    // Keep stdout pure JSON lines when JSON is asked for.
    if args.report == Report::Json {
        eprintln!("{summary}");
    } else {
        let mut out = io::stdout().lock();
        writeln!(out, "{summary}")?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
