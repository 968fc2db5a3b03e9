//! `mcfed bsub`: submit a job to a running cluster.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcfed_admin::cmd::submit;
use mcfed_admin::table::json;
use mcfed_admin::{AdminRequest, AdminResponse};
use mcfed_protocol::{JobOptions, JobSpec};

use super::{TargetArgs, print, run_limit, user_name};

/// What one `-R` asks for: boolean resources, and the memory and swap of
/// its `rusage[...]` (its own type: clap takes an `Option<Vec<_>>` field
/// for a repeated option, and would then expect the parser to return one
/// item, not a list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Resources {
    names: Vec<String>,
    mem_mb: Option<u64>,
    swap_mb: Option<u64>,
}

/// `-R`: `select[...]` (or bare names) and `rusage[mem=N:swp=N]`, in any
/// order: `"select[bigmem] rusage[mem=4096:swp=1024]"`.
fn resources_arg(text: &str) -> Result<Resources, String> {
    let mut requirement = Resources::default();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("rusage[") {
            let (inside, left) = after
                .split_once(']')
                .ok_or_else(|| format!("`{text}`: rusage[ is not closed"))?;
            usage(inside, &mut requirement)?;
            rest = left.trim_start();
        } else if let Some(after) = rest.strip_prefix("select[") {
            let (inside, left) = after
                .split_once(']')
                .ok_or_else(|| format!("`{text}`: select[ is not closed"))?;
            requirement.names.extend(resources(inside)?);
            rest = left.trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            requirement.names.extend(resources(&rest[..end])?);
            rest = rest[end..].trim_start();
        }
    }
    Ok(requirement)
}

/// The inside of `rusage[...]`: `mem=N` and `swp=N` (MB), separated by
/// `:` or `,`.
fn usage(inside: &str, requirement: &mut Resources) -> Result<(), String> {
    for part in inside
        .split([':', ','])
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}` in rusage[...]: expected mem=N or swp=N"))?;
        let megabytes = value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&mb| mb <= 1 << 40)
            .ok_or_else(|| format!("`{part}` in rusage[...]: N is a number of MB"))?;
        match key.trim() {
            "mem" => requirement.mem_mb = Some(megabytes),
            "swp" | "swap" => requirement.swap_mb = Some(megabytes),
            other => {
                return Err(format!(
                    "`{other}` in rusage[...]: mcfed reads mem and swp (MB)"
                ));
            }
        }
    }
    Ok(())
}

/// `-n N` or `-n min,max` (a resizable job).
fn slots_arg(text: &str) -> Result<(u32, Option<u32>), String> {
    // Each number within mcfed's bound (mcfed_protocol::bounds::JOB_SLOTS).
    let number = |part: &str| -> Result<u32, String> {
        let value: i128 = part
            .trim()
            .parse()
            .map_err(|_| format!("`{part}` is not a number of slots"))?;
        mcfed_protocol::bounds::JOB_SLOTS
            .check_i128(value)
            .and_then(|slots| mcfed_protocol::bounds::JOB_SLOTS.check_u32(slots))
            .map_err(|error| error.to_string())
    };
    match text.split_once(',') {
        Some((min, max)) => {
            let (min, max) = (number(min)?, number(max)?);
            if max < min {
                return Err(format!("-n {text}: the max is below the min"));
            }
            Ok((min, Some(max)))
        }
        None => Ok((number(text)?, None)),
    }
}

/// Boolean resources, as `bigmem`, `"bigmem fast"` or `bigmem && fast`,
/// and the host type or model asked for, `type==LINUX86` (spaces around
/// `==` allowed; `type==any` asks for nothing; docs/scheduling.md).
fn resources(inner: &str) -> Result<Vec<String>, String> {
    let joined = inner
        .split("==")
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("==");
    let mut words = Vec::new();
    for word in joined
        .split(|c: char| c.is_whitespace() || c == ',' || c == '&')
        .filter(|word| !word.is_empty())
    {
        let plain = word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !plain && !word.contains("==") {
            return Err(format!(
                "`{word}` is not a boolean resource name (mcfed's -R takes resource names and type==X or model==X, optionally in select[...])"
            ));
        }
        words.extend(mcfed_cluster::host_types::requirement_word(word)?);
    }
    Ok(words)
}

/// `-U`: a reservation's name (as `[[cluster.reservation]]` names one).
fn reservation_name(text: &str) -> Result<String, String> {
    let name = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '#'));
    match name {
        true => Ok(text.to_owned()),
        false => Err(format!(
            "`{}` is not a reservation name (letters, digits, _ - . #)",
            mcfed_admin::table::shown(text)
        )),
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

/// `--run-time`: a duration within mcfed's bound.
fn run_time(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|error| error.to_string())?;
    mcfed_protocol::bounds::JOB_DURATION
        .check_duration(duration)
        .map_err(|error| error.to_string())
}

/// What one job asks for: `bsub`'s job options, on the command line or,
/// with `bsub --from`, on each line of a file.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct JobArgs {
    /// The queue (with --from: for lines that give none).
    #[arg(short = 'q')]
    pub(crate) queue: Option<String>,
    /// Slots: N, or min,max for a resizable job.
    #[arg(short = 'n', value_name = "N|MIN,MAX", value_parser = slots_arg)]
    slots: Option<(u32, Option<u32>)>,
    /// Autoresizable (with -n min,max): while it runs below max, a resize
    /// allocation request for the rest pends.
    #[arg(long = "ar")]
    auto_resize: bool,
    /// Run limit: [hour:]minute.
    #[arg(short = 'W', value_parser = run_limit)]
    run_limit: Option<Duration>,
    /// Run-time estimate (`-We`): [hour:]minute; never enforced.
    #[arg(long = "We", value_parser = run_limit)]
    run_estimate: Option<Duration>,
    /// GPUs on each host of the job (`-gpu "num=N"`).
    #[arg(long = "gpu", value_parser = gpus_arg)]
    gpus: Option<u32>,
    /// Resource requirements: boolean resources every host of the job
    /// must have (`select[...]`), memory and swap asked for
    /// (`rusage[mem=MB:swp=MB]`).
    #[arg(short = 'R', value_parser = resources_arg)]
    resources: Option<Resources>,
    /// The advance reservation the job runs in (`[[cluster.reservation]]`,
    /// `brsvs`; LSF's -U).
    #[arg(short = 'U', value_name = "RESERVATION", value_parser = reservation_name)]
    reservation: Option<String>,
    /// The submitting user.
    #[arg(short = 'u', default_value = "user1", value_parser = user_name)]
    user: String,
    /// The job's name.
    #[arg(short = 'J', default_value = "job")]
    name: String,
    /// How long the job runs once started (emulated; mcfed's own option).
    #[arg(long, default_value = "1h", value_parser = run_time)]
    run_time: Duration,
    /// The job's error file, recorded with the job.
    #[arg(short = 'e', value_name = "FILE")]
    error_file: Option<String>,
    /// The job's priority (1 to MAX_USER_PRIORITY; LSF's -sp).
    #[arg(long = "sp", value_name = "PRIORITY")]
    priority: Option<u32>,
}

impl JobArgs {
    /// The queue and the job, with output file `output_file`; `queue` is
    /// used when no `-q` was given.
    pub(crate) fn job(
        &self,
        queue: Option<&str>,
        output_file: Option<String>,
    ) -> anyhow::Result<(String, JobSpec)> {
        let queue = self
            .queue
            .as_deref()
            .or(queue)
            .ok_or_else(|| anyhow::anyhow!("give the queue (-q QUEUE)"))?;
        let (slots, max_slots) = self.slots.unwrap_or((1, None));
        if self.auto_resize && max_slots.is_none() {
            anyhow::bail!("-ar makes a resizable job autoresizable: give -n min,max with it");
        }
        let mut resources = self.resources.clone().unwrap_or_default();
        if let Some(name) = &self.reservation {
            // The cluster reads the reservation among the job's words.
            resources
                .names
                .push(mcfed_cluster::advance::reservation_word(name));
        }
        let mut spec = JobSpec {
            name: self.name.as_str().into(),
            user: self.user.as_str().into(),
            slots,
            run_time: self.run_time,
            run_limit: self.run_limit,
            run_estimate: self.run_estimate,
            gpus: self.gpus.unwrap_or(0),
            resources: resources.names,
            cpu_utilisation: 1.0,
            memory_mb: 0,
            options: None,
        };
        spec.set_options(JobOptions {
            output_file,
            error_file: self.error_file.clone(),
            user_priority: self.priority,
            mem_request_mb: resources.mem_mb,
            swap_request_mb: resources.swap_mb,
            max_slots,
            auto_resize: self.auto_resize,
            job_priority: None,
        });
        Ok((queue.to_owned(), spec))
    }
}

/// `mcfed bsub`.
#[derive(Debug, clap::Args)]
pub(crate) struct BsubArgs {
    #[command(flatten)]
    pub(crate) target: TargetArgs,
    #[command(flatten)]
    pub(crate) job: JobArgs,
    /// The job's output file, recorded with the job (`-o json`, the alias
    /// from before `-json`, prints the answer as JSON instead; write
    /// `./json` for a file named json).
    #[arg(short = 'o', value_name = "FILE")]
    pub(crate) output_file: Option<String>,
    /// LSF 10.1's JSON.
    #[arg(long = "json")]
    pub(crate) json: bool,
    /// Submit many jobs over one connection: one job per line of FILE
    /// (`-` for standard input), each line `bsub`'s job options (-q, -n,
    /// -W, -R, -u, -J, --run-time, ...); -q on the command line is the
    /// queue of lines that give none. Each job is printed once
    /// acknowledged.
    #[arg(long, value_name = "FILE")]
    pub(crate) from: Option<PathBuf>,
    /// With --from: jobs per request.
    #[arg(long, default_value_t = 256, requires = "from")]
    pub(crate) batch: u64,
    /// With --from: requests in flight at once.
    #[arg(long, default_value_t = 8, requires = "from")]
    pub(crate) window: usize,
    /// With --from: submit at most this many jobs a second (default: as
    /// fast as they are acknowledged).
    #[arg(long, requires = "from")]
    pub(crate) rate: Option<f64>,
    /// With --from: print the submission rate and acknowledgement
    /// latencies (p50, p99, max) on standard error.
    #[arg(long, requires = "from")]
    pub(crate) stats: bool,
}

impl BsubArgs {
    /// Whether `-o json` asks for mcfed's JSON (the alias from before
    /// `-json`) rather than naming an output file.
    pub(crate) fn json_alias(&self) -> bool {
        self.output_file.as_deref() == Some("json")
    }
}

/// Runs `mcfed bsub`.
pub(crate) fn bsub(args: BsubArgs) -> anyhow::Result<ExitCode> {
    if args.from.is_some() {
        return crate::cli::submit::submit_from(&args);
    }
    let json_alias = args.json_alias();
    let output_file = args.output_file.clone().filter(|_| !json_alias);
    let (queue, spec) = args.job.job(None, output_file)?;
    let request = AdminRequest::Submit { queue, spec };
    match args.target.ask(&request)? {
        AdminResponse::Submitted(job) if args.json => {
            print(&submit::submitted_table(&job).lsf_json())
        }
        AdminResponse::Submitted(job) if json_alias => print(&json(&job)),
        AdminResponse::Submitted(job) => print(&submit::submitted(&job)),
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
            resources_arg("select[bigmem && fast]").map(|r| r.names),
            Ok(vec!["bigmem".to_owned(), "fast".to_owned()])
        );
        assert!(resources("mem>100").is_err());
        let both = resources_arg("select[bigmem] rusage[mem=4096:swp=512]").expect("valid");
        assert_eq!(both.names, vec!["bigmem".to_owned()]);
        assert_eq!((both.mem_mb, both.swap_mb), (Some(4096), Some(512)));
        assert!(resources_arg("rusage[cpu=2]").is_err());
        assert_eq!(
            resources_arg("select[bigmem && type == LINUX86 && model==XeonE5]").map(|r| r.names),
            Ok(vec![
                "bigmem".to_owned(),
                "type==LINUX86".to_owned(),
                "model==XeonE5".to_owned()
            ])
        );
        assert_eq!(
            resources_arg("select[type==any]").map(|r| r.names),
            Ok(Vec::new())
        );
        assert!(resources_arg("select[mem==4]").is_err());
        assert_eq!(reservation_name("user1#0"), Ok("user1#0".to_owned()));
        assert!(reservation_name("").is_err());
        assert!(reservation_name("a b").is_err());
        assert_eq!(slots_arg("2,8"), Ok((2, Some(8))));
        assert!(slots_arg("8,2").is_err());
    }
}
