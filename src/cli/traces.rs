//! Workload traces on the command line: `mcfed gen swf` and `mcfed gen
//! lsb-acct` write a synthetic SWF trace or LSF accounting log; `mcfed
//! replay TRACE` replays either (told apart by their content) on a
//! federation built from a few flags (and `--print-scenario` shows that
//! federation as a scenario file, to edit and run with `mcfed run`).

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use mcfed_run::RunOptions;
use mcfed_trace::SyntheticTrace;
use mcfed_trace::lsb_acct::SyntheticAcct;

use crate::cli::report::{Printing, Report};

/// `mcfed gen ...`
#[derive(Debug, clap::Subcommand)]
pub(crate) enum GenCommand {
    /// Write a synthetic SWF trace (seeded; gzip when the file ends in .gz).
    Swf(GenSwfArgs),
    /// Write a synthetic lsb.acct, LSF's accounting log (seeded; the SWF
    /// generator's jobs, given queues, -R requirements, hosts and exit
    /// statuses; in the order jobs finish; gzip when the file ends in .gz).
    LsbAcct(GenAcctArgs),
}

/// `mcfed gen swf`
#[derive(Debug, clap::Args)]
pub(crate) struct GenSwfArgs {
    /// Where to write it (`-` for standard output).
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    #[command(flatten)]
    trace: TraceArgs,
}

/// `mcfed gen lsb-acct`
#[derive(Debug, clap::Args)]
pub(crate) struct GenAcctArgs {
    /// Where to write it (`-` for standard output).
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    #[command(flatten)]
    trace: TraceArgs,
    /// The queues jobs are submitted to (one drawn per job).
    #[arg(long, value_delimiter = ',', default_value = "normal")]
    queues: Vec<String>,
    /// The cluster whose log it is.
    #[arg(long, default_value = "cluster1")]
    cluster: String,
    /// Clusters jobs are forwarded to (MultiCluster records).
    #[arg(long, value_delimiter = ',')]
    remote_clusters: Vec<String>,
    /// The fraction of jobs forwarded to a remote cluster (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    forwarded: f64,
    /// Execution hosts of the cluster (host1 ... hostN).
    #[arg(long, default_value_t = 8)]
    hosts: u32,
    /// The epoch time of the first submission.
    #[arg(long, default_value_t = 1_700_000_000)]
    epoch: i64,
}

/// What a synthetic trace's jobs look like.
#[derive(Debug, clap::Args)]
pub(crate) struct TraceArgs {
    /// How many jobs.
    #[arg(long, default_value_t = 10_000)]
    jobs: u64,
    /// Processors the load is aimed at.
    #[arg(long, default_value_t = 32)]
    processors: u32,
    /// The widest job, in processors.
    #[arg(long, default_value_t = 16)]
    max_width: u32,
    /// Target load (fraction of the processors' time; above 1 overloads).
    #[arg(long, default_value_t = 0.74)]
    load: f64,
    /// Shortest run time, in seconds.
    #[arg(long, default_value_t = 10.0)]
    min_run_time: f64,
    /// Longest run time, in seconds.
    #[arg(long, default_value_t = 600.0)]
    max_run_time: f64,
    /// Users.
    #[arg(long, default_value_t = 20)]
    users: u32,
    /// The seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The share of serial (one-processor) jobs; the rest spread evenly
    /// over the powers of two up to --max-width.
    #[arg(long, default_value_t = 0.5)]
    serial: f64,
    /// The share of jobs asking --unfit-width processors, more than
    /// --max-width: on clusters no larger than --max-width they fit
    /// nowhere. They do not count toward --load.
    #[arg(long, default_value_t = 0.0)]
    unfit: f64,
    /// The width of the jobs --unfit asks for.
    #[arg(long, default_value_t = 32)]
    unfit_width: u32,
}

/// `mcfed replay`
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// SWF traces or lsb.acct logs (plain or .gz; told apart by their
    /// content). With `--clusters` above 1, each trace is the history of
    /// its own submission cluster; on one cluster, they are merged in
    /// time order.
    #[arg(required = true, num_args = 1..)]
    traces: Vec<PathBuf>,
    /// Hosts per execution cluster.
    #[arg(long)]
    hosts: u32,
    /// Job slots per host (MXJ).
    #[arg(long, default_value_t = 1)]
    mxj: u32,
    /// Execution clusters; above 1, a submission cluster per trace forwards
    /// every job to them under COUNT_PREEMPTABLE.
    #[arg(long, default_value_t = 1)]
    clusters: u32,
    /// Read only the first this many jobs.
    #[arg(long)]
    limit: Option<u64>,
    /// Print the scenario it builds instead of running it.
    #[arg(long)]
    print_scenario: bool,
    /// How to print the run.
    #[arg(long, value_enum, default_value_t = Report::Summary)]
    report: Report,
    /// No progress bar on standard error.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Write Batsim's jobs.csv (for evalys) here as jobs finish.
    #[arg(long, value_name = "PATH")]
    jobs_csv: Option<PathBuf>,
    /// Write each cluster's lsb.acct (a JOB_FINISH record per finished
    /// job) under DIR/CLUSTER/logdir/ as jobs finish.
    #[arg(long, value_name = "DIR")]
    lsb_acct: Option<PathBuf>,
}

/// The most clusters `mcfed replay` builds (mcfed's bound on clusters).
const MAX_REPLAY_CLUSTERS: u32 = mcfed_protocol::bounds::CLUSTER_COUNT.max as u32;

impl TraceArgs {
    fn synthetic(&self) -> SyntheticTrace {
        SyntheticTrace {
            jobs: self.jobs,
            processors: self.processors,
            max_width: self.max_width,
            load: self.load,
            min_run_time: self.min_run_time,
            max_run_time: self.max_run_time,
            users: self.users,
            seed: self.seed,
            serial: self.serial,
            unfit: self.unfit,
            unfit_width: self.unfit_width,
        }
    }
}

pub(crate) fn generate(command: GenCommand) -> anyhow::Result<ExitCode> {
    let (output, written, what) = match command {
        GenCommand::Swf(args) => {
            let trace = args.trace.synthetic();
            trace.validate()?;
            let written = write_to(&args.output, |mut out| trace.write(&mut out))?;
            (args.output, written, "jobs")
        }
        GenCommand::LsbAcct(args) => {
            let settings = SyntheticAcct {
                trace: args.trace.synthetic(),
                queues: args.queues,
                cluster: args.cluster,
                remote_clusters: args.remote_clusters,
                forwarded: args.forwarded,
                epoch: args.epoch,
                hosts: args.hosts,
            };
            settings.validate()?;
            let written = write_to(&args.output, |mut out| {
                mcfed_trace::lsb_acct::generate(&settings, &mut out)
            })?;
            (args.output, written, "JOB_FINISH records")
        }
    };
    if output != Path::new("-") {
        eprintln!("{}: {written} {what}", output.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes with `write` to `path` (`-`: standard output), gzip when its
/// name ends in `.gz`; what `write` counted.
fn write_to(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<u64>,
) -> anyhow::Result<u64> {
    if path == Path::new("-") {
        let mut out = BufWriter::new(io::stdout().lock());
        let written = write(&mut out)?;
        out.flush()?;
        return Ok(written);
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    if path.extension().is_some_and(|ext| ext == "gz") {
        let mut encoder =
            flate2::write::GzEncoder::new(BufWriter::new(file), flate2::Compression::fast());
        let written = write(&mut encoder)?;
        encoder.finish()?.flush()?;
        Ok(written)
    } else {
        let mut out = BufWriter::new(file);
        let written = write(&mut out)?;
        out.flush()?;
        Ok(written)
    }
}

/// The most traces `mcfed replay` takes (one submission cluster each).
const MAX_REPLAY_TRACES: usize = 100;

/// A path as a TOML basic string's contents.
fn toml_string(path: &Path) -> String {
    path.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// Checks the flags `mcfed replay` builds its federation from against the
/// bounds a scenario's own keys are held to, each error naming its flag
/// (not the scenario built from them, which the user never wrote).
fn check_replay_flags(args: &ReplayArgs, traces: usize) -> anyhow::Result<()> {
    use mcfed_protocol::Bound;
    use mcfed_protocol::bounds::{CLUSTER_SLOTS, HOST_COUNT, HOST_SLOTS};
    let flag = |what: &'static str, bound: Bound| Bound { what, ..bound };
    flag("--hosts", HOST_COUNT).check(u64::from(args.hosts))?;
    flag("--mxj", HOST_SLOTS).check(u64::from(args.mxj))?;
    flag("--hosts × --mxj, the slots of a cluster", CLUSTER_SLOTS)
        .check(u64::from(args.hosts) * u64::from(args.mxj))?;
    anyhow::ensure!(
        (1..=MAX_REPLAY_CLUSTERS).contains(&args.clusters),
        "--clusters: between 1 and {MAX_REPLAY_CLUSTERS}"
    );
    if let Some(limit) = args.limit {
        flag("--limit", mcfed_scenario::validate::WORKLOAD_LIMIT).check(limit)?;
    }
    anyhow::ensure!(
        (1..=MAX_REPLAY_TRACES).contains(&traces),
        "between 1 and {MAX_REPLAY_TRACES} traces"
    );
    Ok(())
}

/// The scenario `mcfed replay` runs, on `traces` (absolute paths, each
/// with whether it is an lsb.acct).
fn replay_scenario(args: &ReplayArgs, traces: &[(PathBuf, bool)]) -> anyhow::Result<String> {
    check_replay_flags(args, traces.len())?;
    let names: Vec<String> = traces.iter().map(|(trace, _)| toml_string(trace)).collect();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "name = \"replay of {}\"\nend = \"drain\"\n",
        names.join(", ")
    );
    let limit = args
        .limit
        .map(|limit| format!("limit = {limit}\n"))
        .unwrap_or_default();
    // Workload names must differ: the file's stem, numbered when needed.
    let workload = |text: &mut String, index: usize, cluster: &str, queue: &str| {
        let name = if traces.len() > 1 {
            format!("name = \"w{}\"\n", index + 1)
        } else {
            String::new()
        };
        let key = if traces[index].1 { "lsb_acct" } else { "swf" };
        let _ = writeln!(
            text,
            "[[workload]]\n{name}{key} = \"{}\"\ncluster = \"{cluster}\"\nqueue = \"{queue}\"\n{limit}",
            names[index]
        );
    };
    let host = |text: &mut String, name: &str| {
        let _ = writeln!(
            text,
            "[[cluster.host]]\nname = \"{name}\"\ncount = {}\nMXJ = {}\n",
            args.hosts, args.mxj
        );
    };
    if args.clusters == 1 {
        text.push_str("[[cluster]]\nname = \"C1\"\n\n");
        host(&mut text, "h");
        text.push_str("[[cluster.queue]]\nname = \"normal\"\n\n");
        for index in 0..traces.len() {
            workload(&mut text, index, "C1", "normal");
        }
        return Ok(text);
    }
    let submitters: Vec<String> = match traces.len() {
        1 => vec!["Sub".to_owned()],
        count => (1..=count).map(|i| format!("Sub{i}")).collect(),
    };
    let targets: Vec<String> = (1..=args.clusters)
        .map(|i| format!("normal@E{i}"))
        .collect();
    text.push_str("[params]\nMC_PLUGIN_UPDATE_INTERVAL = \"30s\"\n\n");
    for submitter in &submitters {
        let _ = writeln!(
            text,
            "[[cluster]]\nname = \"{submitter}\"\nparams = {{ MC_PLUGIN_SCHEDULE_ENHANCE = \"COUNT_PREEMPTABLE\" }}\n\n[[cluster.queue]]\nname = \"send\"\nSNDJOBS_TO = \"{}\"\n",
            targets.join(" ")
        );
    }
    for i in 1..=args.clusters {
        let _ = writeln!(text, "[[cluster]]\nname = \"E{i}\"\n");
        host(&mut text, &format!("e{i}h"));
        let _ = writeln!(
            text,
            "[[cluster.queue]]\nname = \"normal\"\nIMPT_JOBBKLG = \"infinit\"\nRCVJOBS_FROM = \"{}\"\n",
            submitters.join(" ")
        );
    }
    for (index, submitter) in submitters.iter().enumerate() {
        workload(&mut text, index, submitter, "send");
    }
    Ok(text)
}

/// A refusal of the federation `mcfed replay` built from its flags, said
/// without the lines of a file the user never wrote: each problem's field
/// and message, and how to see that federation.
fn flags_refused(error: mcfed_scenario::ScenarioError) -> anyhow::Error {
    let problems: Vec<String> = error
        .problems()
        .iter()
        .map(|problem| match problem.field.0.is_empty() {
            true => problem.message.clone(),
            false => format!("{}: {}", problem.field, problem.message),
        })
        .collect();
    if problems.is_empty() {
        return error.into();
    }
    anyhow::anyhow!(
        "the federation built from --hosts, --mxj, --clusters and --limit is refused ({} shows it): {}",
        "--print-scenario",
        problems.join("; ")
    )
}

pub(crate) fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let traces = args
        .traces
        .iter()
        .map(|trace| {
            let path = std::path::absolute(trace)
                .with_context(|| format!("{}: not a usable path", trace.display()))?;
            // A FIFO or a device is refused before anything reads it.
            mcfed_protocol::bounds::TRACE_FILE
                .open(&path)
                .map_err(|error| anyhow::anyhow!("cannot open trace {error}"))?;
            let lsb_acct = mcfed_trace::lsb_acct::is_lsb_acct(&path)?;
            Ok((path, lsb_acct))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let text = replay_scenario(&args, &traces)?;
    if args.print_scenario {
        let mut out = io::stdout().lock();
        write!(out, "{text}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let scenario = mcfed_scenario::parse("replay.toml", &text).map_err(flags_refused)?;
    let options = RunOptions {
        count_only: args.report == Report::Summary,
        jobs_csv: args.jobs_csv.clone(),
        lsb_acct: args.lsb_acct.clone(),
        ..RunOptions::default()
    };
    let started = std::time::Instant::now();
    let output = crate::cli::progress::run(&scenario, &options, args.quiet)?;
    let printing = Printing {
        report: args.report,
        events: false,
        faulty: false,
        check: false,
        wall: Some(started.elapsed()),
        jobs: false,
    };
    crate::cli::report::print(&scenario, &output, &printing)
}
