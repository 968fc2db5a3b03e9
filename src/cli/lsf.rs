//! The LSF-style commands: `bsub`, `bjobs`, `bqueues`, `bhosts`,
//! `bclusters`, against a running cluster process over the authenticated
//! admin channel.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use mcfed_node::admin::{AdminRequest, AdminResponse};
use mcfed_node::client::{Target, ask_once};
use mcfed_node::lsf;
use mcfed_node::process::DEFAULT_BASE_PORT;
use mcfed_protocol::JobSpec;

/// Which cluster process to ask, and how.
#[derive(Debug, clap::Args)]
pub(crate) struct TargetArgs {
    /// The cluster to ask.
    #[arg(long, env = "MCFED_CLUSTER")]
    cluster: String,
    /// The certificate directory (its admin.pem and ca.pem).
    #[arg(long, env = "MCFED_CERTS", default_value = "certs")]
    certs: PathBuf,
    /// The scenario listing the cluster's address.
    #[arg(long, env = "MCFED_SCENARIO")]
    scenario: Option<PathBuf>,
    /// The cluster's address (HOST:PORT), instead of the scenario's.
    #[arg(long)]
    address: Option<String>,
    /// The first cluster's port when the scenario gives no addresses.
    #[arg(long, default_value_t = DEFAULT_BASE_PORT)]
    base_port: u16,
}

impl TargetArgs {
    fn target(&self) -> Target {
        Target {
            certs: self.certs.clone(),
            cluster: self.cluster.clone(),
            address: self.address.clone(),
            scenario: self.scenario.clone(),
            base_port: self.base_port,
        }
    }
}

/// `-o`: how to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// JSON, for scripts.
    Json,
}

/// LSF's run limit: `[hour:]minute`, or a duration such as `90m`.
fn run_limit(text: &str) -> Result<Duration, String> {
    let minutes = |text: &str| text.parse::<u64>().map_err(|_| ());
    let parsed = match text.split_once(':') {
        Some((hours, mins)) => minutes(hours)
            .and_then(|hours| Ok(hours * 60 + minutes(mins)?))
            .ok(),
        None => minutes(text).ok(),
    };
    match parsed {
        Some(total) => Ok(Duration::from_secs(total * 60)),
        None => humantime::parse_duration(text)
            .map_err(|_| format!("`{text}` is not a run limit ([hour:]minute, or e.g. 90m)")),
    }
}

/// `-gpu "num=N[:...]"`: the GPUs the job needs on each host (other
/// options of LSF's GPU requirement are accepted and ignored; GPUs are
/// always used exclusively).
fn gpus_arg(text: &str) -> Result<u32, String> {
    text.split(':')
        .find_map(|option| option.trim().strip_prefix("num="))
        .and_then(|number| number.trim().parse::<u32>().ok())
        .filter(|&gpus| (1..=1024).contains(&gpus))
        .ok_or_else(|| {
            format!("`{text}` is not a GPU requirement: expected num=N with N from 1 to 1024")
        })
}

/// The boolean resources of one `-R` (its own type: clap takes an
/// `Option<Vec<_>>` field for a repeated option, and would then expect the
/// parser to return one item, not a list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resources(Vec<String>);

fn resources_arg(text: &str) -> Result<Resources, String> {
    resources(text).map(Resources)
}

/// `-R`: boolean resources, as `bigmem`, `"bigmem fast"` or
/// `"select[bigmem && fast]"`.
fn resources(text: &str) -> Result<Vec<String>, String> {
    let inner = text
        .trim()
        .strip_prefix("select[")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(text);
    let words: Vec<String> = inner
        .split(|c: char| c.is_whitespace() || c == ',' || c == '&')
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect();
    match words.iter().find(|word| {
        !word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }) {
        Some(bad) => Err(format!(
            "`{bad}` is not a boolean resource name (mcfed's -R takes resource names, optionally in select[...])"
        )),
        None => Ok(words),
    }
}

/// `mcfed bsub`.
#[derive(Debug, clap::Args)]
pub(crate) struct BsubArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The queue.
    #[arg(short = 'q')]
    queue: String,
    /// Slots.
    #[arg(short = 'n', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    slots: u32,
    /// Run limit: [hour:]minute.
    #[arg(short = 'W', value_parser = run_limit)]
    run_limit: Option<Duration>,
    /// Run-time estimate (`-We`): [hour:]minute; never enforced.
    #[arg(long = "We", value_parser = run_limit)]
    run_estimate: Option<Duration>,
    /// GPUs on each host of the job (`-gpu "num=N"`).
    #[arg(long = "gpu", value_parser = gpus_arg)]
    gpus: Option<u32>,
    /// Boolean resources every host of the job must have.
    #[arg(short = 'R', value_parser = resources_arg)]
    resources: Option<Resources>,
    /// The submitting user.
    #[arg(short = 'u', default_value = "user1")]
    user: String,
    /// The job's name.
    #[arg(short = 'J', default_value = "job")]
    name: String,
    /// How long the job runs once started (emulated; mcfed's own option).
    #[arg(long, default_value = "1h", value_parser = humantime::parse_duration)]
    run_time: Duration,
    /// How to print: JSON for scripts.
    #[arg(short = 'o', value_enum)]
    output: Option<Format>,
}

/// `mcfed bjobs`.
#[derive(Debug, clap::Args)]
pub(crate) struct BjobsArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Only jobs forwarded to another cluster (LSF's -fwd).
    #[arg(long = "fwd")]
    fwd: bool,
    /// Long format.
    #[arg(short = 'l')]
    long: bool,
    /// How to print: JSON for scripts.
    #[arg(short = 'o', value_enum)]
    output: Option<Format>,
}

/// `mcfed bqueues`.
#[derive(Debug, clap::Args)]
pub(crate) struct BqueuesArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Long format.
    #[arg(short = 'l')]
    long: bool,
    /// How to print: JSON for scripts.
    #[arg(short = 'o', value_enum)]
    output: Option<Format>,
}

/// `mcfed bhosts` and `mcfed bclusters`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// How to print: JSON for scripts.
    #[arg(short = 'o', value_enum)]
    output: Option<Format>,
}

fn print(text: &str) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn unexpected(cluster: &str) -> anyhow::Error {
    anyhow::anyhow!("cluster `{cluster}` gave an unexpected answer")
}

/// Runs `mcfed bsub`.
pub(crate) fn bsub(args: BsubArgs) -> anyhow::Result<ExitCode> {
    let spec = JobSpec {
        name: args.name.into(),
        user: args.user.into(),
        slots: args.slots,
        run_time: args.run_time,
        run_limit: args.run_limit,
        run_estimate: args.run_estimate,
        gpus: args.gpus.unwrap_or(0),
        resources: args.resources.map(|r| r.0).unwrap_or_default(),
        cpu_utilisation: 1.0,
        memory_mb: 0,
    };
    let request = AdminRequest::Submit {
        queue: args.queue,
        spec,
    };
    match ask_once(&args.target.target(), &request)? {
        AdminResponse::Submitted(job) => match args.output {
            Some(Format::Json) => print(&lsf::json(&job)),
            None => print(&lsf::submitted(&job)),
        },
        _ => Err(unexpected(&args.target.cluster)),
    }
}

/// Runs `mcfed bjobs`.
pub(crate) fn bjobs(args: BjobsArgs) -> anyhow::Result<ExitCode> {
    match ask_once(&args.target.target(), &AdminRequest::Jobs)? {
        AdminResponse::Jobs(mut rows) => {
            if args.fwd {
                rows.retain(|row| row.forwarded_to.is_some());
            }
            match args.output {
                Some(Format::Json) => print(&lsf::json(&rows)),
                None => print(&lsf::jobs(&rows, args.fwd, args.long)),
            }
        }
        _ => Err(unexpected(&args.target.cluster)),
    }
}

/// Runs `mcfed bqueues`.
pub(crate) fn bqueues(args: BqueuesArgs) -> anyhow::Result<ExitCode> {
    match ask_once(&args.target.target(), &AdminRequest::Queues)? {
        AdminResponse::Queues(rows) => match args.output {
            Some(Format::Json) => print(&lsf::json(&rows)),
            None => print(&lsf::queues(&rows, args.long)),
        },
        _ => Err(unexpected(&args.target.cluster)),
    }
}

/// Runs `mcfed bhosts`.
pub(crate) fn bhosts(args: ListArgs) -> anyhow::Result<ExitCode> {
    match ask_once(&args.target.target(), &AdminRequest::Hosts)? {
        AdminResponse::Hosts(rows) => match args.output {
            Some(Format::Json) => print(&lsf::json(&rows)),
            None => print(&lsf::hosts(&rows)),
        },
        _ => Err(unexpected(&args.target.cluster)),
    }
}

/// Runs `mcfed bclusters`.
pub(crate) fn bclusters(args: ListArgs) -> anyhow::Result<ExitCode> {
    match ask_once(&args.target.target(), &AdminRequest::Clusters)? {
        AdminResponse::Clusters(rows) => match args.output {
            Some(Format::Json) => print(&lsf::json(&rows)),
            None => print(&lsf::clusters(&rows)),
        },
        _ => Err(unexpected(&args.target.cluster)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_limits_read_as_lsf_writes_them() {
        assert_eq!(run_limit("90"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(run_limit("1:30"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(run_limit("2h"), Ok(Duration::from_secs(7200)));
        assert!(run_limit("soon").is_err());
    }

    #[test]
    fn resource_requirements_read_as_names() {
        assert_eq!(resources("bigmem"), Ok(vec!["bigmem".to_owned()]));
        assert_eq!(
            resources("select[bigmem && fast]"),
            Ok(vec!["bigmem".to_owned(), "fast".to_owned()])
        );
        assert!(resources("mem>100").is_err());
    }
}
