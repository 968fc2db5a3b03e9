//! `mcfed`: the command-line front end. It parses arguments, wires the
//! libraries together and prints; everything else lives in the crates.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use mcfed_protocol::SimTime;
use mcfed_scenario::engine::RunPlan;
use mcfed_scenario::{RunOutput, Scenario, ScenarioError, inspect, render};

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
    /// Instead of the decisions, show the clusters' queues (as `bqueues -l`).
    #[arg(long, value_enum)]
    show: Option<Show>,
    /// With --show: the emulated time to look at (default: the scenario's end).
    #[arg(long, value_parser = humantime::parse_duration, requires = "show")]
    at: Option<std::time::Duration>,
    /// With --show: only this cluster.
    #[arg(long, requires = "show")]
    cluster: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Show {
    /// Every queue: limits, job counts, slot pool, fairshare table.
    Queues,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Report {
    /// A table per decision.
    Text,
    /// One JSON object per decision, one per line.
    Json,
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
            print_warnings(&scenario, &loaded);
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
    }
}

fn print_warnings(file: &std::path::Path, scenario: &Scenario) {
    for warning in &scenario.warnings {
        eprintln!("warning: {}", warning.render(&file.display().to_string()));
    }
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let scenario = mcfed_scenario::load(&args.scenario)?;
    print_warnings(&args.scenario, &scenario);
    let show_at = args
        .show
        .map(|_| args.at.map_or(scenario.end, SimTime::from));
    let plan = RunPlan {
        until: args.until.map(SimTime::from),
        probes: show_at.into_iter().collect(),
    };
    let output: RunOutput = match args.engine {
        Engine::Events => mcfed_scenario::engine::run_plan(&scenario, &plan)
            .context("cannot build the scenario's clusters")?,
        Engine::Actors => {
            mcfed_scenario::actors::run_plan(&scenario, &plan).context("the actor engine failed")?
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    match (args.report, show_at) {
        (report, Some(at)) => {
            let snapshot = output
                .snapshot_at(at)
                .ok_or(inspect::InspectError::NoSnapshot(at))?;
            let cluster = args.cluster.as_deref();
            let shown = match report {
                Report::Json => inspect::queues_json(snapshot, cluster)?,
                Report::Text => inspect::queues_text(snapshot, cluster)?,
            };
            writeln!(out, "{}", shown.trim_end())?;
        }
        (Report::Json, None) => {
            for record in &output.decisions {
                writeln!(out, "{}", render::decision_json(record)?)?;
            }
        }
        (Report::Text, None) => {
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
