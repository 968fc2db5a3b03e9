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
    }
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
    let mut out = BufWriter::new(io::stdout().lock());
    match args.report {
        Report::Json => {
            if args.events {
                for line in render::run_json_lines(&output)? {
                    writeln!(out, "{line}")?;
                }
            } else {
                for record in &output.decisions {
                    writeln!(out, "{}", render::decision_json(record)?)?;
                }
            }
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
