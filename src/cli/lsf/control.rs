//! The job control commands: `bkill`, `bstop`, `bresume`, `brequeue`,
//! `bswitch`, `bmod`, `bmig` and `bresize release`, and host failures
//! (`host-fail`, `host-recover`). Each acts on jobs by id (or `-J NAME`) at the
//! cluster asked; a job that cluster forwarded elsewhere is acted on where
//! it is, as LSF does. Each job's outcome is printed as LSF prints it; a
//! refused one goes to standard error and the exit status is 1.

use std::process::ExitCode;
use std::time::Duration;

use mcfed_admin::table::shown;
use mcfed_admin::{AdminRequest, AdminResponse};
use mcfed_federation::JobRef;
use mcfed_process::client::ClientError;
use mcfed_protocol::{JobAction, JobChanges, QueueName};

use super::{Dialect, TargetArgs, print, run_limit};

/// Which jobs a command acts on.
#[derive(Debug, clap::Args)]
pub(crate) struct JobsArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The jobs, by id.
    #[arg(value_name = "JOBID", required_unless_present = "name")]
    jobs: Vec<u64>,
    /// The job of this name (the one with the lowest id).
    #[arg(short = 'J', value_name = "NAME")]
    name: Option<String>,
}

impl JobsArgs {
    fn refs(&self) -> Vec<JobRef> {
        self.jobs
            .iter()
            .map(|&id| JobRef::Id(id))
            .chain(self.name.iter().map(|name| JobRef::Name(name.clone())))
            .collect()
    }

    /// Gives `action` for every job; prints what each did.
    fn apply(&self, action: &JobAction) -> anyhow::Result<ExitCode> {
        self.apply_in(action, Dialect::Mcfed)
    }

    /// Gives `action` for every job; prints what each did; a refusal
    /// fails with `dialect`'s status.
    pub(crate) fn apply_in(
        &self,
        action: &JobAction,
        dialect: Dialect,
    ) -> anyhow::Result<ExitCode> {
        let mut code = ExitCode::SUCCESS;
        for job in self.refs() {
            let request = AdminRequest::Control {
                job,
                action: action.clone(),
            };
            match mcfed_process::client::ask_once(&self.target.target()?, &request) {
                Ok(AdminResponse::Controlled(done)) => {
                    print(&shown(&done.message))?;
                }
                Ok(_) => return Err(self.target.unexpected()),
                Err(ClientError::Refused { message, .. }) => {
                    eprintln!("{}", shown(&message));
                    code = dialect.failure();
                }
                Err(error) => return Err(error.into()),
            }
        }
        Ok(code)
    }
}

/// Runs `mcfed bkill`.
pub(crate) fn bkill(args: JobsArgs) -> anyhow::Result<ExitCode> {
    args.apply(&JobAction::Kill)
}

/// Runs `mcfed bstop`.
pub(crate) fn bstop(args: JobsArgs) -> anyhow::Result<ExitCode> {
    args.apply(&JobAction::Stop)
}

/// Runs `mcfed bresume`.
pub(crate) fn bresume(args: JobsArgs) -> anyhow::Result<ExitCode> {
    args.apply(&JobAction::Resume)
}

/// Runs `mcfed brequeue`.
pub(crate) fn brequeue(args: JobsArgs) -> anyhow::Result<ExitCode> {
    args.apply(&JobAction::Requeue)
}

/// `mcfed bswitch QUEUE JOBID...`.
#[derive(Debug, clap::Args)]
pub(crate) struct BswitchArgs {
    /// The queue to move the jobs to.
    #[arg(value_name = "QUEUE")]
    queue: String,
    #[command(flatten)]
    jobs: JobsArgs,
}

/// Runs `mcfed bswitch`.
pub(crate) fn bswitch(args: BswitchArgs) -> anyhow::Result<ExitCode> {
    bswitch_in(args, Dialect::Mcfed)
}

/// Runs `bswitch` in `dialect`.
pub(crate) fn bswitch_in(args: BswitchArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let queue = QueueName::new(&args.queue).map_err(|error| anyhow::anyhow!("{error}"))?;
    args.jobs.apply_in(&JobAction::Switch(queue), dialect)
}

/// `mcfed bmod`.
#[derive(Debug, clap::Args)]
pub(crate) struct BmodArgs {
    /// The new run limit: [hour:]minute.
    #[arg(short = 'W', value_parser = run_limit, conflicts_with = "no_limit")]
    run_limit: Option<Duration>,
    /// No run limit (LSF's -Wn).
    #[arg(long = "Wn")]
    no_limit: bool,
    /// The new slots (pending jobs only).
    #[arg(short = 'n', value_parser = clap::value_parser!(u32).range(1..))]
    slots: Option<u32>,
    /// The new job priority (LSF's -sp; needs MAX_USER_PRIORITY).
    #[arg(long = "sp", value_name = "PRIORITY")]
    priority: Option<u32>,
    /// Absolute priority scheduling: `"system=V"` (ahead of every
    /// calculated value) or `"admin=V"` (added to the calculated value).
    #[arg(
        long = "aps",
        value_name = "system=V|admin=V",
        conflicts_with = "no_aps"
    )]
    aps: Option<mcfed_protocol::ApsChange>,
    /// Removes a value set with -aps.
    #[arg(long = "apsn")]
    no_aps: bool,
    #[command(flatten)]
    jobs: JobsArgs,
}

/// Runs `mcfed bmod`.
pub(crate) fn bmod(args: BmodArgs) -> anyhow::Result<ExitCode> {
    bmod_in(args, Dialect::Mcfed)
}

/// Runs `bmod` in `dialect`.
pub(crate) fn bmod_in(args: BmodArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let changes = JobChanges {
        run_limit: match (args.run_limit, args.no_limit) {
            (Some(limit), _) => Some(Some(limit)),
            (None, true) => Some(None),
            (None, false) => None,
        },
        slots: args.slots,
        user_priority: args.priority,
        aps: match (args.aps, args.no_aps) {
            (Some(aps), _) => Some(aps),
            (None, true) => Some(mcfed_protocol::ApsChange::Clear),
            (None, false) => None,
        },
    };
    if changes.is_empty() {
        anyhow::bail!("bmod needs something to change: -W, -Wn, -n, -sp, -aps or -apsn");
    }
    args.jobs.apply_in(&JobAction::Modify(changes), dialect)
}

/// Runs `mcfed bmig`: the running jobs (of RERUNNABLE queues) pend again
/// to be dispatched before the pending jobs, keeping their priority.
pub(crate) fn bmig(args: JobsArgs) -> anyhow::Result<ExitCode> {
    args.apply(&JobAction::Migrate)
}

/// `mcfed bresize release SPEC JOBID...`.
#[derive(Debug, clap::Args)]
pub(crate) struct BresizeArgs {
    /// The subcommand: `release`.
    #[arg(value_name = "release", value_parser = ["release"])]
    verb: String,
    /// What to release: `all` (every slot but the first allocation's), or
    /// LSF's `"N*host ..."`.
    #[arg(value_name = "all|\"N*host ...\"", value_parser = slot_release)]
    release: mcfed_protocol::SlotRelease,
    #[command(flatten)]
    jobs: JobsArgs,
}

fn slot_release(text: &str) -> Result<mcfed_protocol::SlotRelease, String> {
    text.parse()
}

/// Runs `mcfed bresize release`.
pub(crate) fn bresize(args: BresizeArgs) -> anyhow::Result<ExitCode> {
    let _ = args.verb;
    args.jobs.apply(&JobAction::Release(args.release))
}

/// `mcfed host-fail HOST` / `mcfed host-recover HOST`.
#[derive(Debug, clap::Args)]
pub(crate) struct HostArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The host.
    #[arg(value_name = "HOST")]
    host: String,
}

/// Runs `mcfed host-fail` (`fail`) or `mcfed host-recover`: the host's
/// jobs rerun (RERUNNABLE queues) or exit, and it takes no job until it
/// recovers.
pub(crate) fn host_event(args: HostArgs, fail: bool) -> anyhow::Result<ExitCode> {
    let request = AdminRequest::Host {
        host: args.host.clone(),
        event: if fail {
            mcfed_admin::HostEvent::Fail
        } else {
            mcfed_admin::HostEvent::Recover
        },
    };
    match mcfed_process::client::ask_once(&args.target.target()?, &request) {
        Ok(AdminResponse::HostChanged(what)) => print(&what),
        Ok(_) => Err(args.target.unexpected()),
        Err(ClientError::Refused { message, .. }) => {
            eprintln!("{message}");
            Ok(ExitCode::from(1))
        }
        Err(error) => Err(error.into()),
    }
}
