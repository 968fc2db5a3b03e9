//! `brsvadd` and `brsvdel` against a running cluster (issue 27 item 8):
//! LSF's options (`-N NAME`, `-m "HOSTS"`, `-n SLOTS`, `-u "USERS"`, `-b
//! BEGIN -e END`, `-o`; `brsvdel NAME...`), times in emulated time as a
//! scenario's reservations write them (`"10m"`, `"1h 30m"`, seconds) or as
//! `brsvs` shows them (`hour:minute[:second]`), and `--user USER`, the
//! user asking: without it the request is the cluster administrator's,
//! whom no reservation policy binds (the admin channel's certificate is
//! the administrator's; mcfed models no other identity).

use std::process::ExitCode;
use std::time::Duration;

use mcfed_admin::table::shown;
use mcfed_admin::{AdminRequest, AdminResponse};
use mcfed_cluster::AdvanceReservationConfig;
use mcfed_process::client::ClientError;
use mcfed_protocol::SimTime;

use super::{Dialect, TargetArgs, print};

/// `mcfed brsvadd`.
#[derive(Debug, clap::Args)]
pub(crate) struct BrsvaddArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The reservation's name, which jobs name (`bsub -U`).
    #[arg(short = 'N', value_name = "NAME")]
    name: String,
    /// Its hosts: `"hostA hostB"`.
    #[arg(short = 'm', value_name = "HOSTS")]
    hosts: String,
    /// How many of their slots (default: all).
    #[arg(short = 'n', value_name = "SLOTS", value_parser = clap::value_parser!(u32).range(1..))]
    slots: Option<u32>,
    /// The users whose jobs may use it: `"alice bob"` (`all`: any).
    #[arg(short = 'u', value_name = "USERS")]
    users: String,
    /// When it begins (emulated time: `10m`, `1h 30m`, `0:10`).
    #[arg(short = 'b', value_name = "BEGIN", value_parser = emulated_time)]
    begin: SimTime,
    /// When it ends.
    #[arg(short = 'e', value_name = "END", value_parser = emulated_time)]
    end: SimTime,
    /// An open reservation: its jobs still running at its end go on as
    /// ordinary jobs (closed, the default: they are killed).
    #[arg(short = 'o')]
    open: bool,
    /// The user asking, whom the reservation policies (lsb.resources'
    /// ResourceReservation) bind; without it, the cluster administrator.
    #[arg(long = "user", value_name = "USER")]
    by: Option<String>,
}

/// `mcfed brsvdel NAME...`.
#[derive(Debug, clap::Args)]
pub(crate) struct BrsvdelArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The reservations.
    #[arg(value_name = "NAME", required = true)]
    names: Vec<String>,
    /// Accepted for LSF's `brsvdel -f`: a deleted reservation's running
    /// jobs are always detached and go on as ordinary jobs.
    #[arg(short = 'f')]
    force: bool,
    /// The user asking, who may delete only the reservations that user
    /// made; without it, the cluster administrator.
    #[arg(long = "user", value_name = "USER")]
    by: Option<String>,
}

/// An emulated time: `hour:minute[:second]`, or a duration from time zero
/// (`10m`, `1h 30m`, a number of seconds).
pub(crate) fn emulated_time(text: &str) -> Result<SimTime, String> {
    let bad = || format!("`{text}` is not a time (e.g. 10m, 1h 30m, 0:10)");
    let duration = if text.contains(':') {
        let parts: Vec<u64> = text
            .split(':')
            .map(|part| part.trim().parse::<u64>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let seconds = match parts.as_slice() {
            [hours, minutes] if *minutes < 60 => hours
                .checked_mul(3600)
                .and_then(|h| h.checked_add(minutes * 60)),
            [hours, minutes, seconds] if *minutes < 60 && *seconds < 60 => hours
                .checked_mul(3600)
                .and_then(|h| h.checked_add(minutes * 60 + seconds)),
            _ => None,
        }
        .ok_or_else(bad)?;
        Duration::from_secs(seconds)
    } else if let Ok(seconds) = text.trim().parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        humantime::parse_duration(text).map_err(|_| bad())?
    };
    mcfed_protocol::bounds::JOB_DURATION
        .check_duration(duration)
        .map_err(|error| error.to_string())?;
    Ok(SimTime::from(duration))
}

/// Words of a list option: `"a b"` or `"a,b"`.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Runs `brsvadd` in `dialect`.
pub(crate) fn brsvadd(args: BrsvaddArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let request = AdminRequest::ReservationAdd {
        config: AdvanceReservationConfig {
            name: args.name.clone(),
            hosts: words(&args.hosts),
            slots: args.slots,
            start: args.begin,
            end: args.end,
            users: words(&args.users),
            open: args.open,
        },
        by: args.by.clone(),
    };
    let (code, _) = ask(&args.target, &request, dialect)?;
    Ok(code)
}

/// Runs `brsvdel` in `dialect`: each reservation in turn.
pub(crate) fn brsvdel(args: BrsvdelArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let _ = args.force;
    let mut code = ExitCode::SUCCESS;
    for name in &args.names {
        let request = AdminRequest::ReservationDelete {
            name: name.clone(),
            by: args.by.clone(),
        };
        let (this, refused) = ask(&args.target, &request, dialect)?;
        if refused {
            code = this;
        }
    }
    Ok(code)
}

/// Asks `request`, prints what it did or why it was refused; the exit
/// status and whether it was refused.
fn ask(
    target: &TargetArgs,
    request: &AdminRequest,
    dialect: Dialect,
) -> anyhow::Result<(ExitCode, bool)> {
    match mcfed_process::client::ask_once(&target.target()?, request) {
        Ok(AdminResponse::ReservationChanged(what)) => Ok((print(&shown(&what))?, false)),
        Ok(_) => Err(target.unexpected()),
        Err(ClientError::Refused { message, .. }) => {
            eprintln!("{}", shown(&message));
            Ok((dialect.failure(), true))
        }
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_scenarios_and_brsvs_write_them() {
        assert_eq!(emulated_time("10m"), Ok(SimTime::from_secs(600)));
        assert_eq!(emulated_time("1h 30m"), Ok(SimTime::from_secs(5400)));
        assert_eq!(emulated_time("0:10"), Ok(SimTime::from_secs(600)));
        assert_eq!(emulated_time("01:00:30"), Ok(SimTime::from_secs(3630)));
        assert_eq!(emulated_time("90"), Ok(SimTime::from_secs(90)));
        for bad in ["soon", "1:60", "1:2:3:4", "99999999999999999:0"] {
            assert!(emulated_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_take_spaces_or_commas() {
        assert_eq!(words("a b,c  "), ["a", "b", "c"]);
    }
}
