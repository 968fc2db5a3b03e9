//! `bsub` under LSF's own name, in LSF 10.1's syntax: `bsub [options]
//! command [args]`, or `bsub [options] < script` with the script's
//! `#BSUB` lines (before its first command) read as options, the command
//! line's winning over them.
//!
//! - honoured: `-q`, `-n N|MIN,MAX`, `-W`, `-We`, `-R` (its selection's
//!   boolean resources, host type and model, `type==X` and `model==X`,
//!   and its usage's memory and swap; what else it asks is said on
//!   standard error and ignored), `-U` (an advance reservation), `-J`,
//!   `-o`/`-oo`, `-e`/`-eo`, `-gpu`, `-sp`, `-ar`; the job's user is the caller's
//!   (`MCFED_USER`, else `USER`, else `LOGNAME`; `-u` is LSF's mail address
//!   and is ignored);
//! - the queue: `-q`, else `LSB_DEFAULTQUEUE` (LSF's own variable), else
//!   the cluster's queue `normal`, else its first queue;
//! - the emulated run time: an explicit mcfed directive (`#MCFED -run-time
//!   10m` in the script, or `MCFED_RUN_TIME`), else `-We`, else `-W`, else
//!   one hour;
//! - accepted and ignored (mcfed runs no command): `-P`, `-G`, `-m`,
//!   `-cwd`, `-outdir`, `-E`, `-Ep`, `-M`, `-c`, `-F`, `-D`, `-S`, `-v`,
//!   `-k`, `-L`, `-app`, `-sla`, `-g`, `-Lp`, `-u`, `-ext`, `-env`, `-i`,
//!   `-is`, `-f`, `-x`, `-N`, `-B`, `-r`, `-rn`, `-hl`; `-w`, `-b`, `-t`,
//!   `-H` and `-K` change when a job runs, so ignoring them is said on
//!   standard error;
//! - refused: the interactive options (`-I`, `-Ip`, `-Is`, `-IS`, `-ISp`,
//!   `-ISs`, `-IX`) and any other option, as LSF refuses one it does not
//!   know (status 255).
//!
//! Printed as LSF does: `Job <N> is submitted to queue <Q>.`; a refusal
//! is `REASON. Job not submitted.` with status 255.

use std::ffi::OsString;
use std::io::{IsTerminal as _, Read as _};
use std::process::ExitCode;

use clap::{Args, FromArgMatches};
use mcfed_admin::table::shown;
use mcfed_admin::{AdminRequest, AdminResponse};
use mcfed_process::client::ClientError;

use super::current_user;
use crate::cli::lsf::TargetArgs;
use crate::cli::lsf::submit::JobArgs;

/// The longest script read from standard input.
const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// The run time of a job whose submission gives no hint of it.
const DEFAULT_RUN_TIME: &str = "1h";

/// What one LSF option does here.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meaning {
    /// Becomes mcfed's `bsub` option (taking a value).
    Value(&'static str),
    /// Becomes mcfed's `bsub` flag.
    Flag(&'static str),
    /// The job's output file.
    Output,
    /// The run-time estimate (mcfed's `--We`), also a run-time hint.
    Estimate,
    /// The run limit (`-W`), also a run-time hint.
    Limit,
    /// `-R`: what mcfed models of it (boolean resources, memory, swap).
    Requirement,
    /// Takes a value; ignored.
    IgnoredValue,
    /// A flag; ignored.
    IgnoredFlag,
    /// Takes a value; ignored, though it changes when the job runs.
    UnhonouredValue,
    /// A flag; ignored, though it changes when the job runs.
    UnhonouredFlag,
    /// An interactive job: refused.
    Interactive,
}

/// Every option `bsub` takes under LSF's name.
const OPTIONS: &[(&str, Meaning)] = &[
    ("-q", Meaning::Value("-q")),
    ("-n", Meaning::Value("-n")),
    ("-W", Meaning::Limit),
    ("-We", Meaning::Estimate),
    ("-R", Meaning::Requirement),
    ("-J", Meaning::Value("-J")),
    ("-e", Meaning::Value("-e")),
    ("-eo", Meaning::Value("-e")),
    ("-o", Meaning::Output),
    ("-oo", Meaning::Output),
    ("-gpu", Meaning::Value("--gpu")),
    ("-sp", Meaning::Value("--sp")),
    ("-U", Meaning::Value("-U")),
    ("-ar", Meaning::Flag("--ar")),
    ("-P", Meaning::IgnoredValue),
    ("-G", Meaning::IgnoredValue),
    ("-m", Meaning::IgnoredValue),
    ("-cwd", Meaning::IgnoredValue),
    ("-outdir", Meaning::IgnoredValue),
    ("-E", Meaning::IgnoredValue),
    ("-Ep", Meaning::IgnoredValue),
    ("-M", Meaning::IgnoredValue),
    ("-c", Meaning::IgnoredValue),
    ("-F", Meaning::IgnoredValue),
    ("-D", Meaning::IgnoredValue),
    ("-S", Meaning::IgnoredValue),
    ("-v", Meaning::IgnoredValue),
    ("-k", Meaning::IgnoredValue),
    ("-L", Meaning::IgnoredValue),
    ("-app", Meaning::IgnoredValue),
    ("-sla", Meaning::IgnoredValue),
    ("-g", Meaning::IgnoredValue),
    ("-Lp", Meaning::IgnoredValue),
    ("-u", Meaning::IgnoredValue),
    ("-ext", Meaning::IgnoredValue),
    ("-env", Meaning::IgnoredValue),
    ("-i", Meaning::IgnoredValue),
    ("-is", Meaning::IgnoredValue),
    ("-f", Meaning::IgnoredValue),
    ("-x", Meaning::IgnoredFlag),
    ("-N", Meaning::IgnoredFlag),
    ("-B", Meaning::IgnoredFlag),
    ("-r", Meaning::IgnoredFlag),
    ("-rn", Meaning::IgnoredFlag),
    ("-hl", Meaning::IgnoredFlag),
    ("-w", Meaning::UnhonouredValue),
    ("-b", Meaning::UnhonouredValue),
    ("-t", Meaning::UnhonouredValue),
    ("-H", Meaning::UnhonouredFlag),
    ("-K", Meaning::UnhonouredFlag),
    ("-I", Meaning::Interactive),
    ("-Ip", Meaning::Interactive),
    ("-Is", Meaning::Interactive),
    ("-IS", Meaning::Interactive),
    ("-ISp", Meaning::Interactive),
    ("-ISs", Meaning::Interactive),
    ("-IX", Meaning::Interactive),
];

/// A submission being read: the options given (later ones win), the
/// command, what was ignored.
#[derive(Debug, Default)]
struct Request {
    /// mcfed `bsub` options with their values (or none, for a flag).
    options: Vec<(&'static str, Option<String>)>,
    output: Option<String>,
    estimate: Option<String>,
    limit: Option<String>,
    /// `#MCFED -run-time`.
    run_time: Option<String>,
    /// The options ignored though they change when a job runs.
    unhonoured: Vec<String>,
    command: Vec<String>,
}

impl Request {
    /// Reads `words` as options, then (with `command_allowed`) the command
    /// and its arguments; `origin` names where they come from in errors.
    fn read(
        &mut self,
        words: &[String],
        command_allowed: bool,
        origin: &str,
    ) -> anyhow::Result<()> {
        let mut at = 0;
        while at < words.len() {
            let word = &words[at];
            if word == "--" {
                at += 1;
                break;
            }
            if !word.starts_with('-') || word == "-" {
                break;
            }
            let meaning = OPTIONS
                .iter()
                .find(|(name, _)| name == word)
                .map(|(_, meaning)| *meaning)
                .ok_or_else(|| anyhow::anyhow!("{origin}: {}: Illegal option", shown(word)))?;
            let takes_value = !matches!(
                meaning,
                Meaning::Flag(_)
                    | Meaning::IgnoredFlag
                    | Meaning::UnhonouredFlag
                    | Meaning::Interactive
            );
            let value = if takes_value {
                at += 1;
                Some(
                    words
                        .get(at)
                        .cloned()
                        .ok_or_else(|| anyhow::anyhow!("{origin}: {word} needs a value"))?,
                )
            } else {
                None
            };
            at += 1;
            match meaning {
                Meaning::Value(flag) => self.set(flag, value),
                Meaning::Flag(flag) => self.set(flag, None),
                Meaning::Output => self.output = value,
                Meaning::Estimate => self.estimate = value,
                Meaning::Requirement => {
                    let given = value.unwrap_or_default();
                    let modelled = modelled_requirement(&given);
                    if squeezed(&modelled) != squeezed(&given) {
                        self.unhonoured
                            .push(format!("-R \"{}\" beyond \"{modelled}\"", shown(&given)));
                    }
                    self.set("-R", Some(modelled));
                }
                Meaning::Limit => self.limit = value,
                Meaning::IgnoredValue | Meaning::IgnoredFlag => {}
                Meaning::UnhonouredValue | Meaning::UnhonouredFlag => {
                    self.unhonoured.push(word.clone());
                }
                Meaning::Interactive => anyhow::bail!(
                    "{origin}: {word}: interactive jobs are not emulated (mcfed runs no command)"
                ),
            }
        }
        let rest = &words[at.min(words.len())..];
        if !rest.is_empty() {
            if !command_allowed {
                anyhow::bail!("{origin}: `{}` is not an option", shown(&rest.join(" ")));
            }
            self.command = rest.to_vec();
        }
        Ok(())
    }

    fn set(&mut self, flag: &'static str, value: Option<String>) {
        self.options.retain(|(known, _)| *known != flag);
        self.options.push((flag, value));
    }

    /// Reads a script's `#BSUB` and `#MCFED` lines, up to its first
    /// command (which names the job when `-J` does not).
    fn read_script(&mut self, script: &str) -> anyhow::Result<()> {
        for (index, line) in script.lines().enumerate() {
            let line = line.trim();
            let origin = format!("standard input:{}", index + 1);
            if let Some(directive) = line.strip_prefix("#BSUB") {
                self.read(&words(directive, &origin)?, false, &origin)?;
            } else if let Some(directive) = line.strip_prefix("#MCFED") {
                match words(directive, &origin)?.as_slice() {
                    [option, value] if option == "-run-time" || option == "--run-time" => {
                        self.run_time = Some(value.clone());
                    }
                    _ => anyhow::bail!("{origin}: an #MCFED line is `#MCFED -run-time DURATION`"),
                }
            } else if line.is_empty() || line.starts_with('#') {
                continue;
            } else {
                self.command = vec![line.to_owned()];
                break;
            }
        }
        Ok(())
    }

    /// The emulated run time, as mcfed's `--run-time` takes it.
    fn run_time(&self) -> anyhow::Result<String> {
        if let Some(explicit) = self.run_time.clone().or_else(|| {
            std::env::var("MCFED_RUN_TIME")
                .ok()
                .filter(|v| !v.is_empty())
        }) {
            return Ok(explicit);
        }
        match self.estimate.as_deref().or(self.limit.as_deref()) {
            Some(hint) => {
                let limit = crate::cli::lsf::run_limit(hint).map_err(anyhow::Error::msg)?;
                Ok(format!("{}s", limit.as_secs()))
            }
            None => Ok(DEFAULT_RUN_TIME.to_owned()),
        }
    }

    /// mcfed `bsub`'s job options for this request, submitted by `user`.
    fn job_args(&self, user: &str) -> anyhow::Result<Vec<String>> {
        let mut args = vec!["-u".to_owned(), user.to_owned()];
        for (flag, value) in &self.options {
            args.push((*flag).to_owned());
            args.extend(value.clone());
        }
        if let Some(estimate) = &self.estimate {
            args.extend(["--We".to_owned(), estimate.clone()]);
        }
        if let Some(limit) = &self.limit {
            args.extend(["-W".to_owned(), limit.clone()]);
        }
        if !self.options.iter().any(|(flag, _)| *flag == "-J") {
            let name = self.command.join(" ");
            let name: String = name.chars().take(4094).collect();
            args.extend(["-J".to_owned(), name]);
        }
        args.extend(["--run-time".to_owned(), self.run_time()?]);
        Ok(args)
    }
}

/// What mcfed models of an `-R` string, as mcfed's `-R` takes it: its
/// selection's boolean resources, host type and model, and its usage's
/// memory and swap (the
/// rest — comparisons, `order`, `span`, ... — is LSF's scheduling, not
/// modelled), read as a replayed lsb.acct's are.
fn modelled_requirement(given: &str) -> String {
    mcfed_trace::lsb_acct::requirements(given).to_string()
}

/// `text` without blanks (to compare requirements as written).
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A line's shell words.
fn words(text: &str, origin: &str) -> anyhow::Result<Vec<String>> {
    shlex::split(text).ok_or_else(|| anyhow::anyhow!("{origin}: a quote is not closed"))
}

/// mcfed `bsub`'s job options, parsed.
#[derive(Debug, clap::Args)]
struct Job {
    #[command(flatten)]
    job: JobArgs,
}

/// Runs `bsub` with LSF's `args`.
pub(crate) fn bsub(args: &[OsString]) -> anyhow::Result<ExitCode> {
    let words: Vec<String> = args
        .iter()
        .map(|arg| {
            arg.to_str()
                .map(str::to_owned)
                .ok_or_else(|| anyhow::anyhow!("an argument is not UTF-8"))
        })
        .collect::<anyhow::Result<_>>()?;
    let mut command_line = Request::default();
    command_line.read(&words, true, "bsub")?;
    let mut request = Request::default();
    if command_line.command.is_empty() {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            anyhow::bail!(
                "give a command (bsub [options] command [args]) or a script on standard input"
            );
        }
        let mut script = String::new();
        stdin
            .lock()
            .take(MAX_SCRIPT_BYTES)
            .read_to_string(&mut script)?;
        request.read_script(&script)?;
        if request.command.is_empty() {
            anyhow::bail!("the script on standard input has no command: Job not submitted.");
        }
    }
    // The command line's options win over the script's.
    for (flag, value) in command_line.options {
        request.set(flag, value);
    }
    if !command_line.command.is_empty() {
        request.command = command_line.command;
    }
    request.output = command_line.output.or(request.output);
    request.estimate = command_line.estimate.or(request.estimate);
    request.limit = command_line.limit.or(request.limit);
    request.unhonoured.extend(command_line.unhonoured);
    if !request.unhonoured.is_empty() {
        eprintln!(
            "bsub: mcfed does not emulate {} (ignored)",
            request.unhonoured.join(", ")
        );
    }
    let target = TargetArgs::from_env()?;
    let job_args = request.job_args(&current_user()?)?;
    let parsed = mcfed_job(&job_args)?;
    let default_queue = match parsed.job.queue {
        Some(_) => None,
        None => Some(default_queue(&target)?),
    };
    let (queue, spec) = parsed
        .job
        .job(default_queue.as_deref(), request.output.clone())?;
    let answer =
        mcfed_process::client::ask_once(&target.target()?, &AdminRequest::Submit { queue, spec });
    match answer {
        Ok(AdminResponse::Submitted(job)) => crate::cli::lsf::print(&format!(
            "Job <{}> is submitted to queue <{}>.",
            job.job_id,
            shown(&job.queue)
        )),
        Ok(_) => anyhow::bail!("cluster `{}` gave an unexpected answer", target.cluster),
        Err(ClientError::Refused { message, .. }) => {
            let reason = message.strip_prefix("job refused: ").unwrap_or(&message);
            eprintln!("{}. Job not submitted.", shown(reason));
            Ok(ExitCode::from(super::LSF_FAILURE))
        }
        Err(error) => Err(error.into()),
    }
}

/// mcfed `bsub`'s job options, parsed from `job_args`.
fn mcfed_job(job_args: &[String]) -> anyhow::Result<Job> {
    let mut command = Job::augment_args(clap::Command::new("bsub").no_binary_name(true));
    let matches = command.try_get_matches_from_mut(job_args)?;
    Ok(Job::from_arg_matches(&matches)?)
}

/// The queue of a submission that names none: `LSB_DEFAULTQUEUE`, else
/// the cluster's `normal`, else its first queue.
fn default_queue(target: &TargetArgs) -> anyhow::Result<String> {
    if let Some(queue) = std::env::var("LSB_DEFAULTQUEUE")
        .ok()
        .filter(|queue| !queue.is_empty())
    {
        return Ok(queue);
    }
    let AdminResponse::Queues(queues) = target.ask(&AdminRequest::Queues)? else {
        return Err(target.unexpected());
    };
    queues
        .iter()
        .find(|queue| queue.queue == "normal")
        .or(queues.first())
        .map(|queue| queue.queue.clone())
        .ok_or_else(|| anyhow::anyhow!("cluster `{}` has no queue", target.cluster))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(words: &[&str]) -> anyhow::Result<Request> {
        let mut request = Request::default();
        let words: Vec<String> = words.iter().map(|word| (*word).to_owned()).collect();
        request.read(&words, true, "bsub")?;
        Ok(request)
    }

    #[test]
    fn options_then_the_command_and_its_own_options() {
        let request =
            read(&["-q", "normal", "-n", "4", "-P", "proj", "sleep", "-n", "60"]).expect("reads");
        assert_eq!(request.command, ["sleep", "-n", "60"]);
        assert_eq!(
            request.options,
            [("-q", Some("normal".into())), ("-n", Some("4".into()))]
        );
        assert!(read(&["-Z", "x"]).is_err(), "an unknown option");
        assert!(read(&["-q"]).is_err(), "a missing value");
        assert!(read(&["-Is", "bash"]).is_err(), "interactive");
        let after_dashes = read(&["--", "-weird"]).expect("reads");
        assert_eq!(after_dashes.command, ["-weird"]);
    }

    #[test]
    fn scripts_give_directives_up_to_their_first_command() {
        let mut request = Request::default();
        request
            .read_script(
                "#!/bin/sh\n#BSUB -q short\n#BSUB -J \"my job\" -n 2\n#MCFED -run-time 5m\n# a comment\n\n./run.sh --fast\n#BSUB -q late\n",
            )
            .expect("reads");
        assert_eq!(request.command, ["./run.sh --fast"]);
        assert_eq!(
            request.options,
            [
                ("-q", Some("short".into())),
                ("-J", Some("my job".into())),
                ("-n", Some("2".into()))
            ]
        );
        assert_eq!(request.run_time().expect("a time"), "5m");
        let mut bad = Request::default();
        assert!(bad.read_script("#BSUB -q short extra\n").is_err());
        assert!(bad.read_script("#BSUB -J \"open\n").is_err());
    }

    #[test]
    fn requirements_keep_what_mcfed_models_and_say_what_it_does_not() {
        let plain = read(&["-R", "select[bigmem] rusage[mem=512]", "x"]).expect("reads");
        assert_eq!(
            plain.options,
            [("-R", Some("select[bigmem] rusage[mem=512]".into()))]
        );
        assert!(plain.unhonoured.is_empty());
        let site = read(&["-R", "select[mem>1000 && gpu] span[hosts=1]", "x"]).expect("reads");
        assert_eq!(site.options, [("-R", Some("select[gpu]".into()))]);
        assert_eq!(site.unhonoured.len(), 1, "{:?}", site.unhonoured);
    }

    #[test]
    fn host_types_models_and_a_reservation_reach_the_job() {
        let asked = read(&[
            "-R",
            "select[type == LINUX86 && model==XeonE5] order[r15s]",
            "-U",
            "maint",
            "x",
        ])
        .expect("reads");
        assert_eq!(
            asked.options,
            [
                ("-R", Some("select[type==LINUX86 && model==XeonE5]".into())),
                ("-U", Some("maint".into()))
            ]
        );
        assert_eq!(asked.unhonoured.len(), 1, "order[...] is said");
        let job = mcfed_job(&asked.job_args("alice").expect("args")).expect("mcfed's bsub");
        let (_, spec) = job.job.job(Some("normal"), None).expect("a job");
        assert_eq!(
            spec.resources,
            [
                "type==LINUX86".to_owned(),
                "model==XeonE5".to_owned(),
                mcfed_cluster::advance::reservation_word("maint")
            ]
        );
        let exact = read(&["-R", "select[type==LINUX86]", "x"]).expect("reads");
        assert!(exact.unhonoured.is_empty(), "{:?}", exact.unhonoured);
    }

    #[test]
    fn the_run_time_comes_from_we_then_w_then_the_default() {
        let estimate = read(&["-We", "10", "-W", "1:00", "x"]).expect("reads");
        assert_eq!(estimate.run_time().expect("a time"), "600s");
        let limit = read(&["-W", "1:30", "x"]).expect("reads");
        assert_eq!(limit.run_time().expect("a time"), "5400s");
        let none = read(&["x"]).expect("reads");
        assert_eq!(none.run_time().expect("a time"), DEFAULT_RUN_TIME);
        let args = none.job_args("alice").expect("args");
        assert!(args.windows(2).any(|pair| pair == ["-J", "x"]), "{args:?}");
        assert!(
            args.windows(2).any(|pair| pair == ["-u", "alice"]),
            "{args:?}"
        );
    }
}
