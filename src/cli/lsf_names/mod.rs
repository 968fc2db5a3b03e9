//! LSF's own command names: `mcfed lsf-env` makes a directory of them
//! (links to the mcfed binary, in [`env`]), and mcfed run under one of
//! those names (argv\[0\]) speaks LSF 10.1's syntax to the cluster the
//! environment names (`MCFED_CLUSTER`, `MCFED_CERTS`, `MCFED_SCENARIO`,
//! `MCFED_HOSTS`, `MCFED_ADDRESS`): single-dash options, `bsub [options]
//! command [args]` or a script with `#BSUB` lines on standard input (in
//! [`bsub`]), LSF's messages, and LSF's exit status 255 for anything
//! refused or wrong (a usage error included). The `mcfed b...` forms are
//! unchanged.

pub(crate) mod bsub;
pub(crate) mod env;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, FromArgMatches};

use crate::cli::lsf::control::{self, BmodArgs, BswitchArgs, JobsArgs};
use crate::cli::lsf::query::{
    self, BacctArgs, BhistArgs, BhostsArgs, BjobsArgs, BparamsArgs, BqueuesArgs, ListArgs,
};
use crate::cli::lsf::reservations::{self, BrsvaddArgs, BrsvdelArgs};
use crate::cli::lsf::{Dialect, user_name};

/// The LSF commands a `mcfed lsf-env` directory holds.
pub(crate) const COMMANDS: [&str; 20] = [
    "bsub",
    "bjobs",
    "bqueues",
    "bhosts",
    "bclusters",
    "bhist",
    "bacct",
    "bkill",
    "bstop",
    "bresume",
    "brequeue",
    "bswitch",
    "bmod",
    "bmig",
    "bparams",
    "brsvs",
    "brsvadd",
    "brsvdel",
    "lsid",
    "lsclusters",
];

/// LSF's exit status for anything refused or wrong.
const LSF_FAILURE: u8 = 255;

/// If mcfed was run under one of LSF's command names, runs that command
/// with `args` (argv) and gives its exit status.
pub(crate) fn dispatch(args: &[OsString]) -> Option<ExitCode> {
    let name = Path::new(args.first()?).file_name()?.to_str()?;
    let name = COMMANDS.iter().find(|command| **command == name)?;
    Some(run(name, &args[1..]))
}

/// Runs LSF command `name` with `args`.
fn run(name: &'static str, args: &[OsString]) -> ExitCode {
    if args.len() == 1 && args[0] == "-V" {
        eprintln!(
            "IBM Spectrum LSF Standard 10.1.0.0, emulated by mcfed {}",
            env!("CARGO_PKG_VERSION")
        );
        return ExitCode::SUCCESS;
    }
    match command(name, args) {
        Ok(code) => code,
        Err(error)
            if error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|error| error.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            match error.downcast_ref::<clap::Error>() {
                Some(usage) if !usage.use_stderr() => {
                    let _ = usage.print();
                    return ExitCode::SUCCESS;
                }
                Some(usage) => {
                    let _ = usage.print();
                }
                None => eprintln!("{name}: {error:#}"),
            }
            ExitCode::from(LSF_FAILURE)
        }
    }
}

/// The user LSF would submit as: `MCFED_USER`, else `USER`, else
/// `LOGNAME`.
pub(crate) fn current_user() -> anyhow::Result<String> {
    let user = ["MCFED_USER", "USER", "LOGNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|user| !user.is_empty()))
        .ok_or_else(|| anyhow::anyhow!("no user: set USER (or MCFED_USER)"))?;
    user_name(&user).map_err(anyhow::Error::msg)
}

/// Parses `args` (LSF's one-dash long options respelled) as `A`, the
/// command named `name`.
fn parse<A: Args + FromArgMatches>(name: &'static str, args: &[OsString]) -> anyhow::Result<A> {
    let mut command =
        A::augment_args(clap::Command::new(name).no_binary_name(true)).disable_version_flag(true);
    let matches = command.try_get_matches_from_mut(crate::cli::lsf_spellings(args.to_vec()))?;
    Ok(A::from_arg_matches(&matches)?)
}

fn command(name: &'static str, args: &[OsString]) -> anyhow::Result<ExitCode> {
    let lsf = Dialect::Lsf;
    match name {
        "bsub" => bsub::bsub(args),
        "bjobs" => {
            let mut parsed: BjobsArgs = parse(name, args)?;
            parsed.only_user_by_default(&current_user()?);
            query::bjobs_in(parsed, lsf)
        }
        "bqueues" => query::bqueues_in(parse::<BqueuesArgs>(name, args)?, lsf),
        "bhosts" => query::bhosts_in(parse::<BhostsArgs>(name, args)?, lsf),
        "bclusters" => query::bclusters(parse::<ListArgs>(name, args)?),
        "bhist" => query::bhist(parse::<BhistArgs>(name, args)?),
        "bacct" => query::bacct(parse::<BacctArgs>(name, args)?),
        "bparams" => query::bparams(parse::<BparamsArgs>(name, args)?),
        "lsid" => query::lsid_in(parse::<ListArgs>(name, args)?, lsf),
        "lsclusters" => query::lsclusters(parse::<ListArgs>(name, args)?),
        "brsvs" => query::brsvs(parse::<ListArgs>(name, args)?),
        "brsvadd" => reservations::brsvadd(parse::<BrsvaddArgs>(name, args)?, lsf),
        "brsvdel" => reservations::brsvdel(parse::<BrsvdelArgs>(name, args)?, lsf),
        "bswitch" => control::bswitch_in(parse::<BswitchArgs>(name, args)?, lsf),
        "bmod" => control::bmod_in(parse::<BmodArgs>(name, args)?, lsf),
        _ => {
            let action = match name {
                "bkill" => mcfed_protocol::JobAction::Kill,
                "bstop" => mcfed_protocol::JobAction::Stop,
                "bresume" => mcfed_protocol::JobAction::Resume,
                "brequeue" => mcfed_protocol::JobAction::Requeue,
                "bmig" => mcfed_protocol::JobAction::Migrate,
                other => anyhow::bail!("`{other}` is not an LSF command mcfed emulates"),
            };
            parse::<JobsArgs>(name, args)?.apply_in(&action, lsf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own checks of each LSF command's arguments.
    #[test]
    fn every_lsf_command_is_well_formed() {
        fn check<A: Args>(name: &'static str) {
            A::augment_args(clap::Command::new(name).no_binary_name(true)).debug_assert();
        }
        check::<BjobsArgs>("bjobs");
        check::<BqueuesArgs>("bqueues");
        check::<BhostsArgs>("bhosts");
        check::<ListArgs>("lsid");
        check::<BhistArgs>("bhist");
        check::<BacctArgs>("bacct");
        check::<BparamsArgs>("bparams");
        check::<BswitchArgs>("bswitch");
        check::<BmodArgs>("bmod");
        check::<JobsArgs>("bkill");
        check::<BrsvaddArgs>("brsvadd");
        check::<BrsvdelArgs>("brsvdel");
    }

    #[test]
    fn only_lsf_names_are_dispatched() {
        assert!(dispatch(&["/x/mcfed".into(), "bjobs".into()]).is_none());
        assert!(dispatch(&[]).is_none());
        assert!(COMMANDS.contains(&"lsid"));
    }
}
