//! The LSF-style commands against a running cluster process, over the
//! authenticated admin channel: submitting (`bsub`, in `submit`), looking
//! (`bjobs`, `bqueues`, `bhosts`, `bclusters`, `bhist`, `bacct`, `lsid`,
//! `bparams`, `brsvs`, in `query`), making and deleting advance
//! reservations (`brsvadd`, `brsvdel`, in `reservations`) and acting on
//! jobs (`bkill`, `bstop`, `bresume`, `brequeue`, `bswitch`, `bmod`, in
//! `control`).
//!
//! Every query command prints LSF's columns, LSF 10.1's JSON with `-json`,
//! or mcfed's own JSON rows with `-o json` (the spelling from before
//! `-json`, kept as an alias).

pub(crate) mod control;
pub(crate) mod query;
pub(crate) mod reservations;
pub(crate) mod submit;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcfed_admin::Table;
use mcfed_admin::table::fields::Selection;
use mcfed_admin::{AdminRequest, AdminResponse};
use mcfed_launch::DEFAULT_BASE_PORT;
use mcfed_process::client::{Target, ask_once};
use serde::Serialize;

/// Which cluster process to ask, and how.
#[derive(Debug, clap::Args)]
pub(crate) struct TargetArgs {
    /// The cluster to ask.
    #[arg(long, env = "MCFED_CLUSTER")]
    pub(crate) cluster: String,
    /// The certificate directory (its admin.pem and ca.pem).
    #[arg(long, env = "MCFED_CERTS", default_value = "certs")]
    certs: PathBuf,
    /// The scenario listing the cluster's address.
    #[arg(long, env = "MCFED_SCENARIO")]
    scenario: Option<PathBuf>,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses.
    #[arg(
        long = "hosts",
        id = "hosts_file",
        env = "MCFED_HOSTS",
        requires = "scenario"
    )]
    hosts_file: Option<PathBuf>,
    /// The cluster's address (HOST:PORT), instead of the scenario's.
    #[arg(long, env = "MCFED_ADDRESS")]
    address: Option<String>,
    /// The first cluster's port when the scenario gives no addresses.
    #[arg(long, default_value_t = DEFAULT_BASE_PORT)]
    base_port: u16,
}

impl TargetArgs {
    /// The cluster to ask: its address given, or the scenario's.
    pub(crate) fn target(&self) -> anyhow::Result<Target> {
        let address = mcfed_launch::address_of(
            &self.cluster,
            self.address.as_deref(),
            self.scenario.as_deref(),
            self.hosts_file.as_deref(),
            self.base_port,
        )?;
        Ok(Target {
            certs: self.certs.clone(),
            cluster: self.cluster.clone(),
            address,
        })
    }

    /// The cluster to ask as the environment names it (`MCFED_CLUSTER`,
    /// `MCFED_CERTS`, `MCFED_SCENARIO`, `MCFED_HOSTS`, `MCFED_ADDRESS`):
    /// LSF's command names take no mcfed option.
    pub(crate) fn from_env() -> anyhow::Result<Self> {
        use clap::{Args as _, FromArgMatches as _};
        if std::env::var_os("MCFED_CLUSTER").is_none_or(|cluster| cluster.is_empty()) {
            anyhow::bail!(
                "no cluster: set MCFED_CLUSTER (eval \"$(mcfed lsf-env --cluster NAME ...)\")"
            );
        }
        let command = TargetArgs::augment_args(clap::Command::new("target").no_binary_name(true));
        let matches = command.try_get_matches_from(Vec::<String>::new())?;
        Ok(TargetArgs::from_arg_matches(&matches)?)
    }

    /// Asks the cluster `request`.
    pub(crate) fn ask(&self, request: &AdminRequest) -> anyhow::Result<AdminResponse> {
        Ok(ask_once(&self.target()?, request)?)
    }

    /// The error of an answer that is not the one asked for.
    pub(crate) fn unexpected(&self) -> anyhow::Error {
        anyhow::anyhow!("cluster `{}` gave an unexpected answer", self.cluster)
    }
}

/// Whose conventions a command follows: `mcfed b...`'s (exit status 1 for
/// a refusal, 2 for an error), or LSF's under its own command names
/// (`mcfed lsf-env`: 255 for both, LSF's messages).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `mcfed bjobs ...`.
    #[default]
    Mcfed,
    /// `bjobs ...` through the directory `mcfed lsf-env` makes.
    Lsf,
}

impl Dialect {
    /// The exit status of a command that was refused something.
    pub(crate) fn failure(self) -> ExitCode {
        match self {
            Dialect::Mcfed => ExitCode::from(1),
            Dialect::Lsf => ExitCode::from(255),
        }
    }
}

/// `-o json` on the commands that take no field list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// mcfed's JSON rows (the alias from before `-json`).
    Json,
}

/// How a query command prints.
#[derive(Debug, clap::Args)]
pub(crate) struct OutputArgs {
    /// LSF 10.1's JSON: {"COMMAND": ..., "RECORDS": [...]}.
    #[arg(long = "json")]
    json: bool,
    /// `-o json`: mcfed's own JSON rows (an alias kept from before
    /// `-json`; their field names are documented and stable).
    #[arg(short = 'o', value_enum)]
    output: Option<Format>,
}

impl OutputArgs {
    /// Whether a JSON form was asked for (`-json` or `-o json`).
    fn is_json(&self) -> bool {
        self.json || self.output.is_some()
    }

    /// Prints `text()`, the table as LSF's JSON, or `rows` as mcfed's JSON.
    fn print<T: Serialize>(
        &self,
        rows: &T,
        table: impl FnOnce() -> Table,
        text: impl FnOnce() -> String,
    ) -> anyhow::Result<ExitCode> {
        if self.json {
            print(&table().lsf_json())
        } else if self.output == Some(Format::Json) {
            print(&mcfed_admin::table::json(rows))
        } else {
            print(&text())
        }
    }
}

/// How `bqueues` and `bhosts` print: their columns, `-o` fields, LSF's
/// JSON or mcfed's.
#[derive(Debug, clap::Args)]
pub(crate) struct FieldOutputArgs {
    /// LSF 10.1's JSON: {"COMMAND": ..., "RECORDS": [...]} (the -o
    /// fields, keyed by their names in upper case; without -o, the
    /// default columns).
    #[arg(long = "json", conflicts_with = "noheader")]
    json: bool,
    /// `-o "field[:[-][width]] ... [delimiter='c']"`: LSF's field names;
    /// `-o json`: mcfed's own JSON rows (the alias from before `-json`).
    #[arg(short = 'o', value_name = "FIELDS")]
    output: Option<String>,
    /// No header line.
    #[arg(long = "noheader")]
    noheader: bool,
}

impl FieldOutputArgs {
    /// Prints `rows` as asked: the `-o` fields (read by `parse`), mcfed's
    /// JSON, or `text()`. `-json` without `-o` keys the default columns
    /// by their headers in the `mcfed` form (`table()`, as before `-o`
    /// was taken) and by their field names in LSF's (`defaults`).
    #[allow(clippy::too_many_arguments)]
    fn print<R: Serialize + 'static>(
        &self,
        dialect: Dialect,
        rows: &[R],
        parse: fn(&str) -> Result<Selection<R>, String>,
        defaults: fn() -> Selection<R>,
        (command, plural): (&'static str, &'static str),
        table: impl FnOnce() -> Table,
        text: impl FnOnce() -> String,
    ) -> anyhow::Result<ExitCode> {
        let fields = match self.output.as_deref() {
            Some("json") => return print(&mcfed_admin::table::json(&rows)),
            Some(spec) => Some(parse(spec).map_err(anyhow::Error::msg)?),
            None => None,
        };
        match (fields, self.json) {
            (Some(fields), true) => print(&fields.table(command, plural, rows).lsf_json()),
            (Some(fields), false) => {
                print(&fields.text(&fields.table(command, plural, rows), !self.noheader))
            }
            (None, true) if dialect == Dialect::Lsf => {
                print(&defaults().table(command, plural, rows).lsf_json())
            }
            (None, true) => print(&table().lsf_json()),
            (None, false) if self.noheader => {
                let text = text();
                print(text.split_once('\n').map_or("", |(_, rest)| rest))
            }
            (None, false) => print(&text()),
        }
    }
}

/// Writes `text` to standard output, with a final newline.
pub(crate) fn print(text: &str) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// LSF's run limit: `[hour:]minute`, or a duration such as `90m`; more
/// than zero.
pub(crate) fn run_limit(text: &str) -> Result<Duration, String> {
    let minutes = |text: &str| text.parse::<u64>().map_err(|_| ());
    let parsed = match text.split_once(':') {
        Some((hours, mins)) => minutes(hours)
            .and_then(|hours| {
                hours
                    .checked_mul(60)
                    .and_then(|hours| hours.checked_add(minutes(mins).ok()?))
                    .ok_or(())
            })
            .ok()
            .and_then(|total| total.checked_mul(60))
            .map(Duration::from_secs),
        None => minutes(text)
            .ok()
            .and_then(|total| total.checked_mul(60))
            .map(Duration::from_secs),
    };
    let limit = match parsed {
        Some(limit) => limit,
        None => humantime::parse_duration(text)
            .map_err(|_| format!("`{text}` is not a run limit ([hour:]minute, or e.g. 90m)"))?,
    };
    if limit.is_zero() {
        return Err("a run limit must be longer than zero".to_owned());
    }
    mcfed_protocol::bounds::JOB_DURATION
        .check_duration(limit)
        .map_err(|error| error.to_string())
}

/// `-u USER` of the looking commands: a user name or `all`, never empty
/// (LSF refuses `-u ""`).
fn user_filter(text: &str) -> Result<String, String> {
    user_name(text).map_err(|_| {
        format!(
            "`{}` is not a user name: give a user, or `all`",
            mcfed_admin::table::shown(text)
        )
    })
}

/// A user name: not empty, no spaces.
pub(crate) fn user_name(text: &str) -> Result<String, String> {
    if text.is_empty() || text.contains(char::is_whitespace) {
        Err(format!(
            "`{text}` is not a user name (empty, or with spaces)"
        ))
    } else {
        Ok(text.to_owned())
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
        assert!(run_limit("0").is_err());
        assert!(run_limit("0:00").is_err());
        // Out of bounds, and past u64 minutes: refused, not a panic.
        assert!(run_limit("99999999999999999:0").is_err());
        assert!(run_limit("999999999999999999").is_err());
    }

    #[test]
    fn user_names_are_words() {
        assert_eq!(user_name("alice"), Ok("alice".to_owned()));
        assert!(user_name("").is_err());
        assert!(user_name("a b").is_err());
        assert_eq!(user_filter("all"), Ok("all".to_owned()));
        assert!(user_filter("").is_err());
    }
}
