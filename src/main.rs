//! `mcfed`: the command-line front end. It parses arguments, wires the
//! libraries together and prints; everything else lives in the crates.

mod cli;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use mcfed_chaos::ChaosConfig;
use mcfed_protocol::SimTime;
use mcfed_protocol::words::count;
use mcfed_run::{RunOptions, RunOutput, inspect};
use mcfed_scenario::{Scenario, ScenarioError};

use crate::cli::report::Report;

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
        /// Check the scenario's `refused` expectations: a scenario meant to
        /// be refused passes when it is refused as it expects.
        #[arg(long)]
        check: bool,
    },
    /// Summarise run records (`mcfed run --report json --events`): figures,
    /// per-job timelines and SVG plots; or merge the cells of a sweep
    /// written with `mcfed sweep --emit`.
    Report(cli::analysis::ReportArgs),
    /// Run a scenario over a grid of update intervals × modes × seeds, or
    /// write the grid as a Slurm or LSF job array (`--emit`).
    Sweep(cli::sweep::SweepArgs),
    /// Run one cluster of a scenario as a process, talking QUIC to its peers.
    Cluster(cli::processes::ClusterArgs),
    /// Run a scenario as one process per cluster and report their decisions.
    Launch(cli::processes::LaunchArgs),
    /// Make the federation's certificates.
    #[command(subcommand)]
    Certs(cli::processes::CertsCommand),
    /// Submit a job to a running cluster.
    Bsub(cli::lsf::submit::BsubArgs),
    /// Show a running cluster's jobs.
    Bjobs(cli::lsf::query::BjobsArgs),
    /// Show a running cluster's queues.
    Bqueues(cli::lsf::query::BqueuesArgs),
    /// Show a running cluster's hosts.
    Bhosts(cli::lsf::query::BhostsArgs),
    /// Show a running cluster's MultiCluster links.
    Bclusters(cli::lsf::query::ListArgs),
    /// Show a running cluster's job history: time in each state, events.
    Bhist(cli::lsf::query::BhistArgs),
    /// Show accounting of a running cluster's finished jobs.
    Bacct(cli::lsf::query::BacctArgs),
    /// Show which cluster answers, and its emulated time.
    Lsid(cli::lsf::query::ListArgs),
    /// Show a running cluster's parameters (lsb.params).
    Bparams(cli::lsf::query::BparamsArgs),
    /// Show a running cluster's advance reservations.
    Brsvs(cli::lsf::query::ListArgs),
    /// Make an advance reservation at a running cluster.
    Brsvadd(cli::lsf::reservations::BrsvaddArgs),
    /// Delete advance reservations at a running cluster.
    Brsvdel(cli::lsf::reservations::BrsvdelArgs),
    /// Kill jobs (EXIT).
    Bkill(cli::lsf::control::JobsArgs),
    /// Suspend jobs (USUSP; pending ones PSUSP).
    Bstop(cli::lsf::control::JobsArgs),
    /// Resume jobs suspended by bstop.
    Bresume(cli::lsf::control::JobsArgs),
    /// Kill running jobs and requeue them.
    Brequeue(cli::lsf::control::JobsArgs),
    /// Move pending jobs to another queue.
    Bswitch(cli::lsf::control::BswitchArgs),
    /// Change jobs' run limit, slots, priority or APS values.
    Bmod(cli::lsf::control::BmodArgs),
    /// Migrate running jobs (RERUNNABLE queues): they pend again, before
    /// the pending jobs, keeping their priority.
    Bmig(cli::lsf::control::JobsArgs),
    /// Release slots of running resizable jobs: `bresize release all JOBID`.
    Bresize(cli::lsf::control::BresizeArgs),
    /// Fail a host: its jobs rerun (RERUNNABLE queues) or exit.
    HostFail(cli::lsf::control::HostArgs),
    /// Bring a failed host back.
    HostRecover(cli::lsf::control::HostArgs),
    /// Generate inputs: `mcfed gen swf -o trace.swf` writes a synthetic
    /// SWF trace.
    #[command(subcommand)]
    Gen(cli::traces::GenCommand),
    /// Replay an SWF trace on a federation built from a few flags
    /// (`--hosts N [--mxj M] [--clusters K]`), until it drains.
    Replay(cli::traces::ReplayArgs),
    /// Import a site's configuration: `mcfed import lsf --cluster NAME=DIR
    /// ... -o federation.toml`.
    #[command(subcommand)]
    Import(cli::import::ImportCommand),
    /// Export a federation's clusters: `mcfed export lsf FILE -o DIR`.
    #[command(subcommand)]
    Export(cli::import::ExportCommand),
    /// Make a directory of LSF's command names (bsub, bjobs, ...) that
    /// talk to a cluster, and print the shell exports that use it:
    /// `eval "$(mcfed lsf-env --cluster NAME ...)"`.
    LsfEnv(cli::lsf_names::env::LsfEnvArgs),
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
    chaos: cli::analysis::ChaosArgs,
    /// `queues`: instead of the decisions, show the clusters' queues (as
    /// `bqueues -l`); `jobs`: show every job event (started, suspended,
    /// finished, killed, ...) with the decisions, in time order.
    #[arg(long, value_enum)]
    show: Option<Show>,
    /// With --show queues: the emulated time to look at (default: the
    /// scenario's end).
    #[arg(long, value_parser = humantime::parse_duration, requires = "show")]
    at: Option<std::time::Duration>,
    /// With --show: only this cluster.
    #[arg(long, requires = "show")]
    cluster: Option<String>,
    /// No progress bar on standard error.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Write Batsim's jobs.csv (for evalys) here as jobs finish.
    #[arg(long, value_name = "PATH")]
    jobs_csv: Option<PathBuf>,
    /// Write each cluster's lsb.acct (LSF's accounting log, a JOB_FINISH
    /// record per finished job) under DIR/CLUSTER/logdir/ as jobs finish.
    #[arg(long, value_name = "DIR")]
    lsb_acct: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Show {
    /// Every queue: limits, job counts, slot pool, fairshare table.
    Queues,
    /// Every job event, with the decisions, in time order.
    Jobs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// The event loop over the scheduling cores (fast, the default).
    Events,
    /// The actix actors under a paused tokio clock.
    Actors,
}

/// Whether log lines may carry colour: only on a terminal, and not with
/// `NO_COLOR` set (to anything but the empty string; no-color.org).
fn colour_allowed(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|value| value.is_empty())
}

fn main() -> ExitCode {
    use std::io::IsTerminal as _;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_ansi(colour_allowed(
            io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .with_writer(io::stderr)
        .init();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Run as `bsub`, `bjobs`, ... (the links `mcfed lsf-env` makes).
    if let Some(code) = cli::lsf_names::dispatch(&args) {
        return code;
    }
    let cli = Cli::parse_from(cli::lsf_spellings(args));
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
            eprintln!("{}", error_text(&error));
            ExitCode::from(2)
        }
    }
}

/// What `mcfed` prints for an error: a scenario's problems as they are
/// (one per line with file:line), anything else as `mcfed: ` and its
/// chain of causes, each said once (a layer that already quotes its
/// cause, as `cannot read FILE: No such file or directory` does, is not
/// followed by that cause again); control characters shown escaped.
fn error_text(error: &anyhow::Error) -> String {
    let text = match error.downcast_ref::<ScenarioError>() {
        Some(scenario_error) => scenario_error.to_string(),
        None => format!("mcfed: {}", chain_once(error)),
    };
    mcfed_protocol::words::escape_controls_but(&text, &['\n'])
}

/// The messages of `error` and its causes joined by `: `, leaving out a
/// cause whose message the text already holds.
fn chain_once(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let message = cause.to_string();
        if message.is_empty() || text.contains(&message) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

fn execute(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Validate { scenario, check } => {
            let loaded = match mcfed_scenario::load(&scenario) {
                Ok(loaded) => loaded,
                Err(error) if check => return refusal_checks(&scenario, error),
                Err(error) => return Err(error.into()),
            };
            print_warnings(&scenario, &loaded);
            if check && !loaded.expectations.is_empty() {
                let output = RunOutput::default();
                let results: Vec<_> = mcfed_run::check(&loaded, &output)
                    .into_iter()
                    .filter(|result| {
                        loaded.expectations.iter().any(|expectation| {
                            expectation.origin == result.origin
                                && matches!(
                                    expectation.kind,
                                    mcfed_scenario::expect::ExpectKind::Refused { .. }
                                )
                        })
                    })
                    .collect();
                if !results.is_empty() {
                    return print_checks(&results);
                }
            }
            let mut out = io::stdout().lock();
            writeln!(
                out,
                "{}: ok: {} ({}, {}, {})",
                scenario.display(),
                loaded.name,
                count(loaded.clusters.len() as u64, "cluster"),
                count(loaded.submissions.len() as u64, "submission"),
                count(loaded.expectations.len() as u64, "expectation")
            )?;
            let footprint = loaded.footprint;
            writeln!(
                out,
                "memory: about {} ({}, {}{})",
                mcfed_scenario::humanize_bytes(footprint.bytes),
                count(footprint.jobs, "job"),
                count(footprint.hosts, "host"),
                match mcfed_scenario::available_memory() {
                    Some(available) =>
                        format!("; {} available", mcfed_scenario::humanize_bytes(available)),
                    None => String::new(),
                }
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => run(args),
        Command::Report(args) => cli::analysis::report(args),
        Command::Sweep(args) => cli::sweep::sweep(args),
        Command::Cluster(args) => cli::processes::cluster(args),
        Command::Launch(args) => cli::processes::launch(args),
        Command::Certs(command) => cli::processes::certs(command),
        Command::Bsub(args) => cli::lsf::submit::bsub(args),
        Command::Bjobs(args) => cli::lsf::query::bjobs(args),
        Command::Bqueues(args) => cli::lsf::query::bqueues(args),
        Command::Bhosts(args) => cli::lsf::query::bhosts(args),
        Command::Bclusters(args) => cli::lsf::query::bclusters(args),
        Command::Bhist(args) => cli::lsf::query::bhist(args),
        Command::Bacct(args) => cli::lsf::query::bacct(args),
        Command::Lsid(args) => cli::lsf::query::lsid(args),
        Command::Bparams(args) => cli::lsf::query::bparams(args),
        Command::Brsvs(args) => cli::lsf::query::brsvs(args),
        Command::Brsvadd(args) => cli::lsf::reservations::brsvadd(args, cli::lsf::Dialect::Mcfed),
        Command::Brsvdel(args) => cli::lsf::reservations::brsvdel(args, cli::lsf::Dialect::Mcfed),
        Command::Bkill(args) => cli::lsf::control::bkill(args),
        Command::Bstop(args) => cli::lsf::control::bstop(args),
        Command::Bresume(args) => cli::lsf::control::bresume(args),
        Command::Brequeue(args) => cli::lsf::control::brequeue(args),
        Command::Bswitch(args) => cli::lsf::control::bswitch(args),
        Command::Bmod(args) => cli::lsf::control::bmod(args),
        Command::Bmig(args) => cli::lsf::control::bmig(args),
        Command::Bresize(args) => cli::lsf::control::bresize(args),
        Command::HostFail(args) => cli::lsf::control::host_event(args, true),
        Command::HostRecover(args) => cli::lsf::control::host_event(args, false),
        Command::Gen(command) => cli::traces::generate(command),
        Command::Replay(args) => cli::traces::replay(args),
        Command::Import(command) => cli::import::import(command),
        Command::Export(command) => cli::import::export(command),
        Command::LsfEnv(args) => cli::lsf_names::env::lsf_env(args),
    }
}

fn print_warnings(file: &std::path::Path, scenario: &Scenario) {
    for warning in &scenario.warnings {
        eprintln!("warning: {}", warning.render(&file.display().to_string()));
    }
}

/// A scenario that does not load: when its `[[expect]]` entries say it is
/// refused (`refused = "..."`), its refusal is checked against them.
fn refusal_checks(path: &std::path::Path, error: ScenarioError) -> anyhow::Result<ExitCode> {
    let source = mcfed_protocol::bounds::CONFIG_FILE
        .read_to_string(path)
        .unwrap_or_default();
    let expected = mcfed_run::refusal::expected_refusals(&source);
    if expected.is_empty() {
        return Err(error.into());
    }
    eprintln!("{error}");
    print_checks(&mcfed_run::refusal::check_refusals(&expected, &error))
}

/// Prints check results as `run --check` does; exit status 1 if one
/// failed.
fn print_checks(results: &[mcfed_run::CheckResult]) -> anyhow::Result<ExitCode> {
    let (summary, failed) = mcfed_run::render::checks_summary(results);
    let mut out = io::stdout().lock();
    writeln!(out, "{summary}")?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let scenario = match mcfed_scenario::load(&args.scenario) {
        Ok(scenario) => scenario,
        Err(error) if args.check => return refusal_checks(&args.scenario, error),
        Err(error) => return Err(error.into()),
    };
    print_warnings(&args.scenario, &scenario);
    let until = args.until.map(SimTime::from);
    let show_at =
        (args.show == Some(Show::Queues)).then(|| args.at.map_or(scenario.end, SimTime::from));
    let show_jobs = args.show == Some(Show::Jobs);
    let chaos = args.chaos.apply(&scenario);
    let faulty = chaos.as_ref().is_some_and(ChaosConfig::is_active);
    let options = RunOptions {
        until,
        probes: show_at.into_iter().collect(),
        chaos,
        oracle: args.oracle || faulty || scenario.wants_oracle(),
        events: args.events || show_jobs,
        count_only: args.report == Report::Summary && !args.check,
        drain: false,
        jobs_csv: args.jobs_csv.clone(),
        lsb_acct: args.lsb_acct.clone(),
    };
    let started = std::time::Instant::now();
    let output: RunOutput = match args.engine {
        Engine::Events => cli::progress::run(&scenario, &options, args.quiet)
            .context("cannot build the scenario's clusters")?,
        Engine::Actors => {
            if faulty || args.oracle || scenario.wants_oracle() {
                anyhow::bail!("faults and --oracle need the events engine (drop --engine actors)");
            }
            if args.lsb_acct.is_some() {
                anyhow::bail!("--lsb-acct needs the events engine (drop --engine actors)");
            }
            mcfed_engine::actors::run_plan(&scenario, &options)
                .context("the actor engine failed")?
        }
    };
    if let Some(at) = show_at {
        let snapshot = output
            .snapshot_at(at)
            .ok_or(inspect::InspectError::NoSnapshot(at))?;
        let cluster = args.cluster.as_deref();
        let shown = match args.report {
            Report::Json => inspect::queues_json(snapshot, cluster)?,
            Report::Text | Report::Summary => inspect::queues_text(snapshot, cluster)?,
        };
        let mut out = io::stdout().lock();
        writeln!(out, "{}", shown.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    let printing = cli::report::Printing {
        report: args.report,
        events: args.events,
        faulty,
        check: args.check,
        wall: Some(started.elapsed()),
        jobs: show_jobs,
    };
    cli::report::print(&scenario, &output, &printing)
}

#[cfg(test)]
mod tests {
    use super::{colour_allowed, error_text};

    #[test]
    fn an_error_chain_says_each_cause_once() {
        let os = std::io::Error::from_raw_os_error(2);
        let quoted = format!("cannot read /nonexistent.jsonl: {os}");
        let error = anyhow::Error::new(os).context(quoted).context("report");
        let text = error_text(&error);
        assert_eq!(
            text,
            "mcfed: report: cannot read /nonexistent.jsonl: No such file or directory (os error 2)"
        );
        let plain =
            anyhow::Error::new(std::io::Error::from_raw_os_error(98)).context("cannot listen");
        assert_eq!(
            error_text(&plain),
            "mcfed: cannot listen: Address already in use (os error 98)"
        );
    }

    #[test]
    fn control_characters_in_an_error_are_shown_escaped() {
        let error = anyhow::anyhow!("cannot read a\u{1b}[2Jb\0c\nd");
        assert_eq!(
            error_text(&error),
            "mcfed: cannot read a\\u{1b}[2Jb\\u{0}c\nd"
        );
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_allowed(true, None));
        assert!(!colour_allowed(false, None));
        assert!(!colour_allowed(true, Some("1".into())));
        assert!(colour_allowed(true, Some("".into())));
    }

    /// clap's own checks of every subcommand's arguments (unique names,
    /// valid `requires` and `conflicts_with`), which otherwise only panic
    /// when that subcommand is run.
    #[test]
    fn every_subcommand_is_well_formed() {
        use clap::CommandFactory as _;
        super::Cli::command().debug_assert();
    }
}
