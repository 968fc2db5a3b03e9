//! `mcfed cluster`, `mcfed launch` and `mcfed certs init`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Subcommand, ValueEnum};
use mcfed_node::launch::LaunchOptions;
use mcfed_node::process::DEFAULT_BASE_PORT;
use mcfed_node::{ClusterOptions, LiveReport};

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
    /// How to print the decisions this cluster makes.
    #[arg(long, value_enum, default_value_t = LiveOutput::Text)]
    report: LiveOutput,
    /// Judge every decision by what the true counters would have chosen
    /// (on by default when faults are injected).
    #[arg(long)]
    oracle: bool,
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
    let mut options = ClusterOptions::new(args.scenario, args.name, args.certs);
    options.cert = args.cert;
    options.key = args.key;
    options.listen = args.listen;
    options.peers = args.peers;
    options.base_port = args.base_port;
    options.speed = args.speed;
    options.epoch_unix_ms = args.epoch_ms;
    options.exit_on_stdin_eof = args.exit_on_stdin_eof;
    options.chaos = args.chaos.overrides();
    options.oracle = args.oracle;
    options.report = match args.report {
        LiveOutput::Text => LiveReport::Text,
        LiveOutput::Json => LiveReport::Json,
        LiveOutput::None => LiveReport::None,
    };
    let web = match &args.web {
        Some(address) => Some(start_web(
            address,
            &format!("mcfed cluster {}", options.name),
        )?),
        None => None,
    };
    if let Some(web) = &web {
        options.watch = Some(web.local_sender());
    }
    let ran = mcfed_node::run_cluster(options);
    if let Some(web) = &web {
        web.finish("the cluster's process stopped; the page shows what it held last");
    }
    ran?;
    Ok(ExitCode::SUCCESS)
}

/// `mcfed launch`: run a scenario as one process per cluster.
#[derive(Debug, clap::Args)]
pub(crate) struct LaunchArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
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
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    connect_timeout: Duration,
    /// With `--report json`, also print job events (from every process)
    /// and the run record: the input `mcfed report` reads.
    #[arg(long)]
    events: bool,
    /// Judge every decision by what the true counters would have chosen
    /// (on by default when faults are injected).
    #[arg(long)]
    oracle: bool,
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

/// Runs `mcfed launch`.
pub(crate) fn launch(args: LaunchArgs) -> anyhow::Result<ExitCode> {
    let binary = std::env::current_exe().context("cannot find the mcfed executable")?;
    let mut options = LaunchOptions::new(args.scenario.clone(), binary);
    options.certs = args.certs;
    options.base_port = args.base_port;
    options.speed = args.speed;
    options.connect_timeout = args.connect_timeout;
    options.chaos = args.chaos.overrides();
    options.oracle = args.oracle;
    let scenario = mcfed_scenario::load(&args.scenario)?;
    let web = match &args.web {
        Some(address) => Some(start_web(address, "mcfed launch")?),
        None => None,
    };
    if let Some(web) = &web {
        options.watch = Some(web.launch_sender());
    }
    let faulty = options
        .chaos
        .apply(&scenario)
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
    let launched = mcfed_node::launch::launch(&options);
    if let Some(web) = &web {
        web.finish(match &launched {
            Ok(_) => "the run ended and its processes were stopped; the page shows what they held last",
            Err(_) => "the launch failed and its processes were stopped; the page shows what they held last",
        });
    }
    match launched {
        Ok(output) => super::report::print(&scenario, &output, &printing),
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
        /// Take the clusters from this scenario instead.
        #[arg(long, conflicts_with = "clusters")]
        scenario: Option<PathBuf>,
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
        } => {
            let clusters = match scenario {
                Some(path) => mcfed_scenario::load(&path)?
                    .clusters
                    .iter()
                    .map(|spec| spec.config.name.to_string())
                    .collect(),
                None => clusters,
            };
            let written = mcfed_transport::certs::init(&dir, &clusters)?;
            let mut out = std::io::stdout().lock();
            for file in written.files {
                writeln!(out, "{}", file.display())?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
