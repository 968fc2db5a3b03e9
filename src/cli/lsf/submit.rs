//! `mcfed bsub`: submit a job to a running cluster.

use std::process::ExitCode;
use std::time::Duration;

use mcfed_node::admin::{AdminRequest, AdminResponse};
use mcfed_node::lsf;
use mcfed_protocol::{JobOptions, JobSpec};

use super::{TargetArgs, print, run_limit, user_name};

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
    #[arg(short = 'u', default_value = "user1", value_parser = user_name)]
    user: String,
    /// The job's name.
    #[arg(short = 'J', default_value = "job")]
    name: String,
    /// How long the job runs once started (emulated; mcfed's own option).
    #[arg(long, default_value = "1h", value_parser = humantime::parse_duration)]
    run_time: Duration,
    /// The job's output file, recorded with the job (`-o json`, the alias
    /// from before `-json`, prints the answer as JSON instead; write
    /// `./json` for a file named json).
    #[arg(short = 'o', value_name = "FILE")]
    output_file: Option<String>,
    /// The job's error file, recorded with the job.
    #[arg(short = 'e', value_name = "FILE")]
    error_file: Option<String>,
    /// The job's priority (1 to MAX_USER_PRIORITY; LSF's -sp).
    #[arg(long = "sp", value_name = "PRIORITY")]
    priority: Option<u32>,
    /// LSF 10.1's JSON.
    #[arg(long = "json")]
    json: bool,
}

/// Runs `mcfed bsub`.
pub(crate) fn bsub(args: BsubArgs) -> anyhow::Result<ExitCode> {
    let json_alias = args.output_file.as_deref() == Some("json");
    let mut spec = JobSpec {
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
        options: None,
    };
    spec.set_options(JobOptions {
        output_file: args.output_file.filter(|_| !json_alias),
        error_file: args.error_file,
        user_priority: args.priority,
    });
    let request = AdminRequest::Submit {
        queue: args.queue,
        spec,
    };
    match args.target.ask(&request)? {
        AdminResponse::Submitted(job) if args.json => print(&lsf::submitted_table(&job).lsf_json()),
        AdminResponse::Submitted(job) if json_alias => print(&lsf::json(&job)),
        AdminResponse::Submitted(job) => print(&lsf::submitted(&job)),
        _ => Err(args.target.unexpected()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
