//! The looking commands: `bjobs`, `bqueues`, `bhosts`, `bclusters`,
//! `bhist`, `bacct`, `lsid`, `bparams` and `brsvs`.

use std::process::ExitCode;

use mcfed_admin::cmd::{aps, clusters, history, hosts, jobs, params, queues, reservations};
use mcfed_admin::table::{json, shown};
use mcfed_admin::{
    AdminRequest, AdminResponse, Finished, HistoryReply, HistoryRow, JobRow, JobsQuery,
};

use super::{Dialect, FieldOutputArgs, OutputArgs, TargetArgs, print, user_filter};

/// `mcfed bjobs`.
#[derive(Debug, clap::Args)]
pub(crate) struct BjobsArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Only these jobs (any state, finished ones within CLEAN_PERIOD).
    #[arg(value_name = "JOBID")]
    jobs: Vec<u64>,
    /// Only jobs forwarded to another cluster (LSF's -fwd).
    #[arg(long = "fwd")]
    fwd: bool,
    /// Long format.
    #[arg(short = 'l')]
    long: bool,
    /// Finished jobs (DONE, EXIT, within CLEAN_PERIOD) as well.
    #[arg(short = 'a')]
    all: bool,
    /// Only finished jobs (within CLEAN_PERIOD).
    #[arg(short = 'd')]
    done: bool,
    /// Only running jobs.
    #[arg(short = 'r')]
    running: bool,
    /// Only pending jobs (PEND, PSUSP), with their pending reasons.
    #[arg(short = 'p')]
    pending: bool,
    /// Only suspended jobs (SSUSP, USUSP, PSUSP).
    #[arg(short = 's')]
    suspended: bool,
    /// Only this user's jobs (`all`: everyone's, the default).
    #[arg(short = 'u', value_parser = user_filter)]
    user: Option<String>,
    /// Only jobs of this queue.
    #[arg(short = 'q')]
    queue: Option<String>,
    /// Only jobs of this name (`*` matches any characters).
    #[arg(short = 'J', value_name = "JOB_NAME")]
    name: Option<String>,
    /// Wide format (mcfed never truncates a column).
    #[arg(short = 'w')]
    wide: bool,
    /// `-o "field[:[-][width]] ... [delimiter='c']"`: LSF's field names
    /// (`jobid stat queue`); `-o json`: mcfed's JSON rows (an alias kept
    /// from before `-json`).
    #[arg(short = 'o', value_name = "FIELDS")]
    output: Option<String>,
    /// LSF 10.1's JSON (the -o fields, or the default columns).
    #[arg(long = "json", conflicts_with = "noheader")]
    json: bool,
    /// No header line.
    #[arg(long = "noheader")]
    noheader: bool,
    /// Pending jobs with their APS values, in dispatch order (system
    /// values in parentheses first, then calculated values, then jobs of
    /// queues without APS).
    #[arg(long = "aps", conflicts_with = "prio")]
    aps: bool,
    /// Pending jobs' APS factor and sub-factor values, in dispatch order.
    #[arg(long = "prio")]
    prio: bool,
}

impl BjobsArgs {
    /// LSF's default: only `user`'s jobs, unless `-u` or job ids say
    /// otherwise.
    pub(crate) fn only_user_by_default(&mut self, user: &str) {
        if self.user.is_none() && self.jobs.is_empty() {
            self.user = Some(user.to_owned());
        }
    }

    /// The jobs asked for, as the cluster filters them.
    fn query(&self) -> JobsQuery {
        JobsQuery {
            ids: self.jobs.clone(),
            finished: match (self.all, self.done) {
                (_, true) => Finished::Only,
                (true, false) => Finished::Also,
                (false, false) => Finished::Not,
            },
            running: self.running,
            pending: self.pending,
            suspended: self.suspended,
            user: self.user.clone(),
            queue: self.queue.clone(),
            name: self.name.clone(),
            forwarded_only: self.fwd,
        }
    }
}

/// Runs `mcfed bjobs`.
pub(crate) fn bjobs(args: BjobsArgs) -> anyhow::Result<ExitCode> {
    bjobs_in(args, Dialect::Mcfed)
}

/// Runs `bjobs` in `dialect`: LSF's own says "No unfinished job found" on
/// standard error and fails with 255 for a job it does not find.
pub(crate) fn bjobs_in(args: BjobsArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    if args.aps || args.prio {
        return bjobs_aps(&args);
    }
    let fields = match args.output.as_deref() {
        Some("json") | None => None,
        Some(spec) => Some(jobs::parse_fields(spec).map_err(anyhow::Error::msg)?),
    };
    let rows = mcfed_process::client::jobs_once(&args.target.target()?, &args.query())?;
    let mut code = ExitCode::SUCCESS;
    for id in &args.jobs {
        if !rows.iter().any(|row| row.job_id == *id) {
            eprintln!("Job <{id}> is not found");
            code = dialect.failure();
        }
    }
    // mcfed never cuts a column: -w changes nothing.
    let _ = args.wide;
    if args.json {
        let fields = fields.unwrap_or_else(jobs::default_fields);
        return print(&jobs::jobs_table(&rows, &fields).lsf_json()).map(|_| code);
    }
    if args.output.as_deref() == Some("json") {
        return print(&json(&rows)).map(|_| code);
    }
    let finished_too = args.all || args.done || !args.jobs.is_empty();
    if rows.is_empty() && dialect == Dialect::Lsf {
        // LSF says so on standard error (scripts read standard output).
        if args.jobs.is_empty() {
            eprint!("{}", jobs::jobs(&rows, args.fwd, false, finished_too));
        }
        return Ok(code);
    }
    let text = match &fields {
        Some(fields) => jobs::jobs_fields(&rows, fields, !args.noheader),
        None => {
            let mut text = jobs::jobs(&rows, args.fwd, args.long, finished_too);
            if args.noheader && !args.long && !rows.is_empty() {
                text = without_header(&text);
            }
            if args.pending && !args.long {
                text.push_str(&pending_reasons(&rows));
            }
            text
        }
    };
    print(&text)?;
    Ok(code)
}

/// `text` without its first line (`-noheader`).
fn without_header(text: &str) -> String {
    text.split_once('\n')
        .map_or_else(String::new, |(_, rest)| rest.to_owned())
}

/// `bjobs -aps` and `bjobs -prio`: pending jobs in dispatch order, with
/// the -u, -q and job id filters.
fn bjobs_aps(args: &BjobsArgs) -> anyhow::Result<ExitCode> {
    let mut rows = match args.target.ask(&AdminRequest::Aps)? {
        AdminResponse::Aps(rows) => rows,
        _ => return Err(args.target.unexpected()),
    };
    rows.retain(|row| {
        let user_ok = args
            .user
            .as_deref()
            .is_none_or(|user| user == "all" || user == row.user);
        let queue_ok = args.queue.as_deref().is_none_or(|queue| queue == row.queue);
        let job_ok = args.jobs.is_empty() || args.jobs.contains(&row.job_id);
        let name_ok = args
            .name
            .as_deref()
            .is_none_or(|pattern| mcfed_admin::cmd::jobs::name_matches(pattern, &row.job_name));
        user_ok && queue_ok && job_ok && name_ok
    });
    let table = if args.prio {
        aps::prio_table(&rows)
    } else {
        aps::aps_table(&rows)
    };
    if args.json {
        print(&table.lsf_json())
    } else if args.output.as_deref() == Some("json") {
        print(&json(&rows))
    } else if rows.is_empty() {
        eprintln!("No pending job found");
        Ok(ExitCode::SUCCESS)
    } else {
        print(&table.text())
    }
}

/// `bjobs -p`'s reasons, one line per pending job.
fn pending_reasons(rows: &[JobRow]) -> String {
    let reasons: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            let reason = row.pending_reason.as_deref()?;
            Some(format!(" Job <{}>: {};\n", row.job_id, shown(reason)))
        })
        .collect();
    if reasons.is_empty() {
        return String::new();
    }
    format!(" PENDING REASONS:\n{}", reasons.concat())
}

/// The cluster's job history, page after page (of any size).
fn history(target: &TargetArgs) -> anyhow::Result<HistoryReply> {
    Ok(mcfed_process::client::history_once(&target.target()?)?)
}

/// `mcfed bqueues`.
#[derive(Debug, clap::Args)]
pub(crate) struct BqueuesArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Only these queues.
    #[arg(value_name = "QUEUE")]
    queues: Vec<String>,
    /// Long format.
    #[arg(short = 'l')]
    long: bool,
    /// Wide format (mcfed never truncates a column).
    #[arg(short = 'w')]
    wide: bool,
    #[command(flatten)]
    output: FieldOutputArgs,
}

/// Runs `mcfed bqueues`.
pub(crate) fn bqueues(args: BqueuesArgs) -> anyhow::Result<ExitCode> {
    bqueues_in(args, Dialect::Mcfed)
}

/// Runs `bqueues` in `dialect`.
pub(crate) fn bqueues_in(args: BqueuesArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let AdminResponse::Queues(mut rows) = args.target.ask(&AdminRequest::Queues)? else {
        return Err(args.target.unexpected());
    };
    only_named(&mut rows, &args.queues, |row| &row.queue, "queue")?;
    let _ = args.wide;
    args.output.print(
        dialect,
        &rows,
        queues::parse_fields,
        queues::default_fields,
        ("bqueues", "QUEUES"),
        || queues::queues_table(&rows),
        || queues::queues(&rows, args.long),
    )
}

/// Keeps the rows named in `names` (all when none is), or says which name
/// is not one (`nosuch: No such queue`, as LSF does).
fn only_named<T>(
    rows: &mut Vec<T>,
    names: &[String],
    name: impl Fn(&T) -> &String,
    what: &str,
) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    if let Some(missing) = names
        .iter()
        .find(|wanted| !rows.iter().any(|row| name(row) == *wanted))
    {
        anyhow::bail!("{}: No such {what}", shown(missing));
    }
    rows.retain(|row| names.contains(name(row)));
    Ok(())
}

/// `mcfed bhosts`.
#[derive(Debug, clap::Args)]
pub(crate) struct BhostsArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Only these hosts.
    #[arg(value_name = "HOST")]
    hosts: Vec<String>,
    /// Long format: a block per host.
    #[arg(short = 'l')]
    long: bool,
    /// Wide format (mcfed never truncates a column).
    #[arg(short = 'w')]
    wide: bool,
    #[command(flatten)]
    output: FieldOutputArgs,
}

/// Runs `mcfed bhosts`.
pub(crate) fn bhosts(args: BhostsArgs) -> anyhow::Result<ExitCode> {
    bhosts_in(args, Dialect::Mcfed)
}

/// Runs `bhosts` in `dialect`.
pub(crate) fn bhosts_in(args: BhostsArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let AdminResponse::Hosts(mut rows) = args.target.ask(&AdminRequest::Hosts)? else {
        return Err(args.target.unexpected());
    };
    only_named(&mut rows, &args.hosts, |row| &row.host_name, "host")?;
    let _ = args.wide;
    args.output.print(
        dialect,
        &rows,
        hosts::parse_fields,
        hosts::default_fields,
        ("bhosts", "HOSTS"),
        || hosts::hosts_table(&rows),
        || match args.long {
            true => hosts::hosts_long(&rows),
            false => hosts::hosts(&rows),
        },
    )
}

/// `mcfed bclusters` and `mcfed lsid`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `mcfed bclusters`.
pub(crate) fn bclusters(args: ListArgs) -> anyhow::Result<ExitCode> {
    let AdminResponse::Clusters(rows) = args.target.ask(&AdminRequest::Clusters)? else {
        return Err(args.target.unexpected());
    };
    args.output.print(
        &rows,
        || clusters::clusters_table(&rows),
        || clusters::clusters(&rows),
    )
}

/// Runs `mcfed lsid`.
pub(crate) fn lsid(args: ListArgs) -> anyhow::Result<ExitCode> {
    lsid_in(args, Dialect::Mcfed)
}

/// Runs `lsid` in `dialect` (LSF's prints LSF 10.1's six lines).
pub(crate) fn lsid_in(args: ListArgs, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let AdminResponse::Params(reply) = args.target.ask(&AdminRequest::Params)? else {
        return Err(args.target.unexpected());
    };
    args.output.print(
        &reply,
        || params::lsid_table(&reply),
        || match dialect {
            Dialect::Mcfed => params::lsid(&reply),
            Dialect::Lsf => params::lsid_lsf(&reply),
        },
    )
}

/// Runs `lsclusters`: the cluster asked, its management host and its
/// hosts.
pub(crate) fn lsclusters(args: ListArgs) -> anyhow::Result<ExitCode> {
    let AdminResponse::Params(reply) = args.target.ask(&AdminRequest::Params)? else {
        return Err(args.target.unexpected());
    };
    let AdminResponse::Hosts(hosts) = args.target.ask(&AdminRequest::Hosts)? else {
        return Err(args.target.unexpected());
    };
    print(&params::lsclusters(&reply, hosts.len()))
}

/// `mcfed bparams`.
#[derive(Debug, clap::Args)]
pub(crate) struct BparamsArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Every parameter with what it does.
    #[arg(short = 'l')]
    long: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `mcfed bparams`.
pub(crate) fn bparams(args: BparamsArgs) -> anyhow::Result<ExitCode> {
    let AdminResponse::Params(reply) = args.target.ask(&AdminRequest::Params)? else {
        return Err(args.target.unexpected());
    };
    args.output.print(
        &reply,
        || params::params_table(&reply),
        || params::params(&reply, args.long),
    )
}

/// Runs `mcfed brsvs`: the cluster's advance reservations. With none,
/// LSF's "No reservation found" goes to standard error (scripts read
/// standard output) and the status is still success.
pub(crate) fn brsvs(args: ListArgs) -> anyhow::Result<ExitCode> {
    let AdminResponse::Reservations(rows) = args.target.ask(&AdminRequest::Reservations)? else {
        return Err(args.target.unexpected());
    };
    if rows.is_empty() && !args.output.is_json() {
        eprint!("{}", reservations::reservations(&rows));
        return Ok(ExitCode::SUCCESS);
    }
    args.output.print(
        &rows,
        || reservations::reservations_table(&rows),
        || reservations::reservations(&rows),
    )
}

/// Which jobs `bhist` and `bacct` look at.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryFilter {
    /// Only these jobs.
    #[arg(value_name = "JOBID")]
    jobs: Vec<u64>,
    /// Only this user's jobs (`all`: everyone's, the default).
    #[arg(short = 'u', value_parser = user_filter)]
    user: Option<String>,
    /// Only jobs of this queue.
    #[arg(short = 'q')]
    queue: Option<String>,
}

impl HistoryFilter {
    fn keeps(&self, row: &HistoryRow) -> bool {
        (self.jobs.is_empty() || self.jobs.contains(&row.job_id))
            && self
                .user
                .as_deref()
                .is_none_or(|user| user == "all" || user == row.user)
            && self.queue.as_deref().is_none_or(|queue| queue == row.queue)
    }

    /// The filters in bacct's words.
    fn describe(&self) -> String {
        let mut parts = vec![match &self.user {
            Some(user) if user != "all" => format!("submitted by user {user}"),
            _ => "submitted by all users".to_owned(),
        }];
        if let Some(queue) = &self.queue {
            parts.push(format!("submitted to queue {queue}"));
        }
        if !self.jobs.is_empty() {
            let ids: Vec<String> = self.jobs.iter().map(u64::to_string).collect();
            parts.push(format!("jobs {}", ids.join(" ")));
        }
        parts.join(", ")
    }
}

/// `mcfed bhist`.
#[derive(Debug, clap::Args)]
pub(crate) struct BhistArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    filter: HistoryFilter,
    /// Long format: every event with its time.
    #[arg(short = 'l')]
    long: bool,
    /// Finished jobs too (without job ids, bhist shows unfinished ones).
    #[arg(short = 'a')]
    all: bool,
    /// Only finished jobs.
    #[arg(short = 'd')]
    done: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `mcfed bhist`.
pub(crate) fn bhist(args: BhistArgs) -> anyhow::Result<ExitCode> {
    let reply = history(&args.target)?;
    let explicit = !args.filter.jobs.is_empty();
    let rows: Vec<HistoryRow> = reply
        .jobs
        .into_iter()
        .filter(|row| args.filter.keeps(row))
        .filter(|row| {
            let ended = row.end_time.is_some();
            explicit || args.all || (args.done == ended)
        })
        .collect();
    if explicit {
        for id in &args.filter.jobs {
            if !rows.iter().any(|row| row.job_id == *id) {
                eprintln!("Job <{id}> is not found");
            }
        }
    }
    let now = reply.now;
    args.output.print(
        &rows,
        || history::bhist_table(&rows),
        || match args.long {
            true => history::bhist_long(&rows, now),
            false => history::bhist(&rows),
        },
    )
}

/// `mcfed bacct`.
#[derive(Debug, clap::Args)]
pub(crate) struct BacctArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    filter: HistoryFilter,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `mcfed bacct`.
pub(crate) fn bacct(args: BacctArgs) -> anyhow::Result<ExitCode> {
    let reply = history(&args.target)?;
    let rows: Vec<HistoryRow> = reply
        .jobs
        .into_iter()
        .filter(|row| args.filter.keeps(row) && row.end_time.is_some())
        .collect();
    let filters = args.filter.describe();
    args.output.print(
        &rows,
        || history::bacct_table(&rows),
        || history::bacct(&rows, &filters, reply.clean_period),
    )
}
