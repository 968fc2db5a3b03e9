//! `mcfed cluster`, `mcfed launch` and `mcfed certs init`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Subcommand, ValueEnum};
use mcfed_launch::{DEFAULT_BASE_PORT, LaunchOptions, PlanOptions};
use mcfed_process::{ClusterOptions, LiveReport};

/// Parses emulated seconds per wall second: a positive number.
fn speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(speed),
        _ => Err(format!("`{text}` is not a positive number")),
    }
}

/// Parses `NAME=HOST:PORT`.
fn peer(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, address)) if !name.is_empty() && address.contains(':') => {
            Ok((name.to_owned(), address.to_owned()))
        }
        _ => Err(format!("`{text}` is not of the form CLUSTER=HOST:PORT")),
    }
}

fn san(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, host))
            if !name.is_empty() && !host.is_empty() && !host.contains(char::is_whitespace) =>
        {
            Ok((name.to_owned(), host.to_owned()))
        }
        _ => Err(format!("`{text}` is not of the form CLUSTER=HOST")),
    }
}

/// How `mcfed cluster` prints decisions as they are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LiveOutput {
    /// A table per decision.
    Text,
    /// One JSON object per line.
    Json,
    /// Nothing.
    None,
}

/// `mcfed cluster`: run one cluster of a scenario as a process.
#[derive(Debug, clap::Args)]
pub(crate) struct ClusterArgs {
    /// The scenario file (TOML).
    #[arg(long, env = "MCFED_SCENARIO")]
    scenario: PathBuf,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses: where this cluster listens and where its peers are.
    #[arg(long, env = "MCFED_HOSTS")]
    hosts: Option<PathBuf>,
    /// The cluster to run.
    #[arg(long)]
    name: String,
    /// The certificate directory made by `mcfed certs init`.
    #[arg(long, env = "MCFED_CERTS", default_value = "certs")]
    certs: PathBuf,
    /// A certificate to present instead of DIR/cluster-NAME.pem (with --key).
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// The key of --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// Where to listen (HOST:PORT), instead of the scenario's address; port
    /// 0: one the OS picks. The process says where it listens on standard
    /// error: `mcfed cluster NAME: listening on HOST:PORT`.
    #[arg(long)]
    listen: Option<String>,
    /// A peer's address, instead of the scenario's (repeatable).
    #[arg(long = "peer", value_name = "CLUSTER=HOST:PORT", value_parser = peer)]
    peers: Vec<(String, String)>,
    /// The first cluster's port when the scenario gives no addresses (the
    /// others follow in scenario order); 0: this process listens on a port
    /// the OS picks, and learns the address of a peer not given by --peer
    /// or the scenario from its hello when it connects.
    #[arg(long, default_value_t = DEFAULT_BASE_PORT)]
    base_port: u16,
    /// Emulated seconds per wall-clock second: scales every timer.
    #[arg(long, default_value = "1", value_parser = speed)]
    speed: f64,
    /// Emulated time zero, in milliseconds since the Unix epoch (default:
    /// now). Processes of one federation should share it.
    #[arg(long = "epoch-ms")]
    epoch_ms: Option<u64>,
    /// Stop when standard input closes.
    #[arg(long)]
    exit_on_stdin_eof: bool,
    /// Keep every job event and slot-usage sample for `mcfed launch` to
    /// gather at the end (the launcher gives it); without it the process
    /// keeps none, and its job history (bjobs -a, bhist, bacct) is bounded
    /// by CLEAN_PERIOD.
    #[arg(long)]
    record_events: bool,
    /// How to print the decisions this cluster makes.
    #[arg(long, value_enum, default_value_t = LiveOutput::Text)]
    report: LiveOutput,
    /// Judge every decision by what the true counters would have chosen
    /// (on by default when faults are injected).
    #[arg(long)]
    oracle: bool,
    /// Keep a journal in this directory (created if missing) and resume
    /// from it: every accepted job and job change is durable before it is
    /// acknowledged, and a restarted process carries on where it was.
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// With --state: keep every compacted journal as DIR/journal.N (like
    /// LSF's lsb.events.N), the whole history of the cluster's jobs.
    #[arg(long, requires = "state")]
    keep_journals: bool,
    /// With --state: start even if the journal is damaged (sound records
    /// after unreadable bytes, a cut header): keep it aside as
    /// DIR/journal.damaged-N, take every sound record, say what was lost,
    /// and move every id past what the lost records can have handed out.
    #[arg(long, requires = "state")]
    salvage: bool,
    /// Write the cluster's lsb.acct, LSF's accounting log, under DIR
    /// (DIR/NAME/logdir/lsb.acct, appended to): a JOB_FINISH record for
    /// every job that finishes here, as it finishes.
    #[arg(long, value_name = "DIR")]
    lsb_acct: Option<PathBuf>,
    /// Serve a live page of this cluster (its hosts, queues, the counters it holds, its decisions) at ADDR (PORT, on 127.0.0.1, or
    /// HOST:PORT; 0.0.0.0:PORT serves it beyond this machine). The page
    /// only reads; it says where it is on standard error.
    #[arg(long, value_name = "ADDR")]
    web: Option<String>,
    /// Faults on the datagrams this process sends to its peers.
    #[command(flatten)]
    chaos: super::analysis::ChaosArgs,
}

/// Runs `mcfed cluster`.
pub(crate) fn cluster(args: ClusterArgs) -> anyhow::Result<ExitCode> {
    let mut plan = PlanOptions::new(args.scenario, args.name);
    plan.hosts = args.hosts;
    plan.listen = args.listen;
    plan.peers = args.peers;
    plan.base_port = args.base_port;
    plan.chaos = args.chaos.overrides();
    plan.oracle = args.oracle;
    let plan = mcfed_launch::plan_cluster(&plan)?;
    let mut options = ClusterOptions::new(args.certs);
    options.cert = args.cert;
    options.key = args.key;
    options.speed = args.speed;
    options.epoch_unix_ms = args.epoch_ms;
    options.exit_on_stdin_eof = args.exit_on_stdin_eof;
    options.record_events = args.record_events;
    options.state = args.state;
    options.keep_journals = args.keep_journals;
    options.salvage = args.salvage;
    options.lsb_acct = args.lsb_acct;
    options.report = match args.report {
        LiveOutput::Text => LiveReport::Text,
        LiveOutput::Json => LiveReport::Json,
        LiveOutput::None => LiveReport::None,
    };
    let web = match &args.web {
        Some(address) => Some(start_web(
            address,
            &format!("mcfed cluster {}", plan.name()),
        )?),
        None => None,
    };
    if let Some(web) = &web {
        options.watch = Some(web.local_sender());
    }
    let ran = mcfed_process::run_cluster(options, plan);
    if let Some(web) = &web {
        let why = "the cluster's process stopped; the page shows what it held last";
        match &ran {
            Ok(_) => web.finish(why),
            Err(_) => web.fail(why),
        }
    }
    ran?;
    Ok(ExitCode::SUCCESS)
}

/// `mcfed launch`: run a scenario as one process per cluster.
#[derive(Debug, clap::Args)]
pub(crate) struct LaunchArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses.
    #[arg(long, env = "MCFED_HOSTS")]
    hosts: Option<PathBuf>,
    /// Print the command that starts each cluster on its own host (and
    /// the certificates to make first) instead of starting them here.
    #[arg(long, conflicts_with_all = ["web", "check", "events"])]
    print_commands: bool,
    /// With --print-commands: how long from now emulated time zero is (every
    /// cluster should be started by then).
    #[arg(long, default_value = "1m", value_parser = humantime::parse_duration, requires = "print_commands")]
    start_in: Duration,
    /// Print one JSON object per decision, per line (as `mcfed run --report json`).
    #[arg(long, value_enum, default_value = "text")]
    report: LaunchReport,
    /// Check the scenario's [[expect]] entries; exit with status 1 if any fails.
    #[arg(long)]
    check: bool,
    /// Emulated seconds per wall-clock second: scales every timer.
    #[arg(long, default_value = "10", value_parser = speed)]
    speed: f64,
    /// Use this certificate directory (default: make one for the run).
    #[arg(long)]
    certs: Option<PathBuf>,
    /// The first cluster's port when the scenario gives no addresses; 0:
    /// each process listens on a port the OS picks (they are started one
    /// after the other, each told where the earlier ones listen).
    #[arg(long, default_value_t = DEFAULT_BASE_PORT)]
    base_port: u16,
    /// How long the processes may take to start and connect.
    #[arg(long, default_value = "30s", value_parser = positive_duration)]
    connect_timeout: Duration,
    /// With `--report json`, also print job events (from every process)
    /// and the run record: the input `mcfed report` reads.
    #[arg(long)]
    events: bool,
    /// Judge every decision by what the true counters would have chosen
    /// (on by default when faults are injected).
    #[arg(long)]
    oracle: bool,
    /// Give each process a state directory, DIR/NAME (`mcfed cluster
    /// --state`): processes restarted after an outage resume from their
    /// journals instead of losing their jobs.
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// Have each process write its cluster's lsb.acct under DIR
    /// (DIR/NAME/logdir/lsb.acct, `mcfed cluster --lsb-acct`).
    #[arg(long, value_name = "DIR")]
    lsb_acct: Option<PathBuf>,
    /// Serve a live page of the whole federation (every cluster, the counters held and the truth, the decisions) at ADDR (PORT, on 127.0.0.1, or
    /// HOST:PORT; 0.0.0.0:PORT serves it beyond this machine). The page
    /// only reads; it says where it is on standard error.
    #[arg(long, value_name = "ADDR")]
    web: Option<String>,
    /// Faults on the datagrams between the processes (below QUIC).
    #[command(flatten)]
    chaos: super::analysis::ChaosArgs,
}

/// `mcfed launch --report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LaunchReport {
    /// A table per decision.
    Text,
    /// One JSON object per decision, one per line.
    Json,
}

/// Warns, on standard error, when a launched run's processes fell behind
/// emulated time by more than a fraction of the smallest update interval
/// (records::FAITHFUL_LAG): their decisions may then differ from
/// `mcfed run`'s. Says which clusters, by how much, and a speed that would
/// keep up (lag grows with the speed: a timer late by a wall-clock
/// millisecond is `speed` milliseconds late in emulated time).
fn warn_if_unfaithful(
    scenario: &mcfed_scenario::Scenario,
    output: &mcfed_run::RunOutput,
    speed: f64,
    faults: bool,
) {
    let smallest = scenario.sample_interval();
    let late = mcfed_run::records::unfaithful(&output.lags, smallest, faults);
    let Some(worst) = late.first() else {
        return;
    };
    let clusters: Vec<String> = late
        .iter()
        .map(|lag| format!("{} by {:.2} s", lag.cluster, lag.behind(faults)))
        .collect();
    let bound = smallest.as_secs_f64() * mcfed_run::records::FAITHFUL_LAG;
    let faithful_speed = (speed * bound / worst.behind(faults)).floor().max(1.0);
    eprintln!(
        "warning: the processes fell behind emulated time ({}), more than {:.0} % of the {} update interval: decisions may differ from `mcfed run`'s; try --speed {faithful_speed} or lower",
        clusters.join(", "),
        mcfed_run::records::FAITHFUL_LAG * 100.0,
        humantime::format_duration(smallest),
    );
}

/// A duration flag that must be above zero (`--connect-timeout 0s` would
/// give up before trying).
fn positive_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|error| error.to_string())?;
    if duration.is_zero() {
        return Err("must be above zero".to_owned());
    }
    Ok(duration)
}

/// Runs `mcfed launch`.
pub(crate) fn launch(args: LaunchArgs) -> anyhow::Result<ExitCode> {
    let binary = std::env::current_exe().context("cannot find the mcfed executable")?;
    let mut options = LaunchOptions::new(args.scenario.clone(), binary);
    options.hosts = args.hosts.clone();
    options.certs = args.certs.clone();
    options.base_port = args.base_port;
    options.speed = args.speed;
    options.connect_timeout = args.connect_timeout;
    options.chaos = args.chaos.overrides();
    options.oracle = args.oracle;
    options.state = args.state;
    options.lsb_acct = args.lsb_acct;
    if args.print_commands {
        let epoch = std::time::SystemTime::now() + args.start_in;
        let print = mcfed_launch::PrintOptions {
            certs: args.certs.unwrap_or_else(|| PathBuf::from("certs")),
            epoch_ms: epoch
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_millis() as u64),
        };
        use std::io::Write as _;
        let commands = mcfed_launch::print_commands(&options, &print)?;
        std::io::stdout().lock().write_all(commands.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let scenario = mcfed_scenario::hosts::load_with_hosts(&args.scenario, args.hosts.as_deref())?;
    let web = match &args.web {
        Some(address) => Some(start_web(address, "mcfed launch")?),
        None => None,
    };
    if let Some(web) = &web {
        options.watch = Some(web.launch_sender());
    }
    let faulty = options
        .chaos
        .apply(scenario.chaos.as_ref(), scenario.seed)
        .is_some_and(|chaos| chaos.is_active());
    let report = match args.report {
        LaunchReport::Json => super::report::Report::Json,
        LaunchReport::Text => super::report::Report::Text,
    };
    let printing = super::report::Printing {
        report,
        events: args.events,
        faulty,
        check: args.check,
        wall: None,
        jobs: false,
    };
    let launched = mcfed_launch::launch(&options);
    if let Some(web) = &web {
        match &launched {
            Ok(_) => web.finish(
                "the run ended and its processes were stopped; the page shows what they held last",
            ),
            Err(_) => web.fail(
                "the launch failed and its processes were stopped; the page shows what they held last",
            ),
        }
    }
    match launched {
        Ok(output) => {
            warn_if_unfaithful(&scenario, &output, args.speed, faulty);
            super::report::print(&scenario, &output, &printing)
        }
        Err(failure) => {
            // What the processes had decided by then, before the error.
            if let Some(gathered) = &failure.gathered {
                eprintln!(
                    "mcfed: the launch failed; what the running processes had decided by then follows"
                );
                let partial = super::report::Printing {
                    check: false,
                    ..printing
                };
                super::report::print(&scenario, gathered, &partial)?;
            }
            Err(failure.into())
        }
    }
}

/// Serves the live page at `address` and says where on standard error.
fn start_web(address: &str, who: &str) -> anyhow::Result<mcfed_web::Web> {
    let web = mcfed_web::Web::start(mcfed_web::parse_address(address)?, mcfed_web::DEFAULT_POLL)?;
    eprintln!("{}", web.announcement(who));
    Ok(web)
}

/// `mcfed certs`.
#[derive(Debug, Subcommand)]
pub(crate) enum CertsCommand {
    /// Make a federation CA, a key pair per cluster and an admin certificate.
    Init {
        /// Where to write them.
        dir: PathBuf,
        /// The clusters, comma-separated.
        #[arg(long, value_delimiter = ',', required_unless_present = "scenario")]
        clusters: Vec<String>,
        /// Take the clusters from this scenario instead; each cluster's
        /// certificate names the host of its address (this machine's
        /// loopback names when it has none).
        #[arg(long, conflicts_with = "clusters")]
        scenario: Option<PathBuf>,
        /// Replace a CA, certificates or keys already in DIR (every
        /// certificate the old CA issued stops being accepted; keys are
        /// written anew, 0600, never through a symbolic link).
        #[arg(long)]
        force: bool,
        /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
        /// addresses.
        #[arg(long, requires = "scenario")]
        hosts: Option<PathBuf>,
        /// Another host (name or IP address) a cluster's certificate names,
        /// e.g. Cluster1=node1.example.org (repeatable).
        #[arg(long = "san", value_name = "CLUSTER=HOST", value_parser = san)]
        sans: Vec<(String, String)>,
    },
}

/// Runs `mcfed certs`.
pub(crate) fn certs(command: CertsCommand) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    match command {
        CertsCommand::Init {
            dir,
            clusters,
            scenario,
            force,
            hosts,
            sans,
        } => {
            let existing = [
                mcfed_transport::certs::ca_cert_path(&dir),
                dir.join("ca.key"),
            ];
            if let Some(ca) = existing
                .iter()
                .find(|path| path.exists())
                .filter(|_| !force)
            {
                anyhow::bail!(
                    "{} exists: replacing the federation CA would make every certificate it issued useless; pass --force to replace it anyway",
                    ca.display()
                );
            }
            let clusters = match scenario {
                Some(path) => mcfed_launch::certificate_hosts(
                    &mcfed_scenario::hosts::load_with_hosts(&path, hosts.as_deref())?,
                    &sans,
                ),
                None => {
                    let named: Vec<(String, Option<&str>)> =
                        clusters.iter().map(|name| (name.clone(), None)).collect();
                    mcfed_process::process::hosts_of_clusters(&named, &sans)
                }
            };
            for (cluster, _) in &sans {
                if !clusters.iter().any(|c| &c.name == cluster) {
                    anyhow::bail!("--san {cluster}=...: there is no cluster `{cluster}`");
                }
            }
            let written = mcfed_transport::certs::init_with_options(&dir, &clusters, force)?;
            let mut out = std::io::stdout().lock();
            for file in written.files {
                writeln!(out, "{}", file.display())?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
