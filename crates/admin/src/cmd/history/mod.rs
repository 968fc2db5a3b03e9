//! `bjobs -a`, `bhist`, `bacct`: the jobs a cluster holds and those that
//! ended within CLEAN_PERIOD, with their events.

use mcfed_federation::Member;
use mcfed_federation::history::{GONE, JobRecord, RecordOrigin};
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::cmd::jobs::{ForwardedFrom, JobRow, secs};

pub mod page;
mod print;

pub use page::HistoryPage;
pub use print::{bacct, bacct_table, bhist, bhist_long, bhist_table};

/// The jobs a cluster process knows: those it holds and those that ended
/// within CLEAN_PERIOD.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryReply {
    /// The cluster.
    pub cluster: String,
    /// Its emulated time, seconds.
    pub now: f64,
    /// CLEAN_PERIOD, seconds.
    pub clean_period: f64,
    /// The jobs, by id.
    pub jobs: Vec<HistoryRow>,
}

/// One job's history, as `bhist -l` shows it; `bjobs -a` and `bacct` read
/// it too. Its field names are a public contract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryRow {
    /// The job's id in this cluster.
    pub job_id: u64,
    /// The job's name.
    pub job_name: String,
    /// The submitting user.
    pub user: String,
    /// Its queue here (the send queue for a job forwarded from here).
    pub queue: String,
    /// PEND, RUN, SSUSP, USUSP, PSUSP, DONE, EXIT, or GONE (forwarded
    /// here and sent back).
    pub stat: String,
    /// `bundled` (present at start), `submitted`, `sent` (submitted to a
    /// send queue here) or `forwarded_in`.
    pub origin: String,
    /// For a job forwarded here: the submission cluster and its id there.
    pub forwarded_from: Option<ForwardedFrom>,
    /// Slots.
    pub slots: u32,
    /// When it entered this cluster (emulated seconds).
    pub submit_time: f64,
    /// When it was first submitted anywhere.
    pub first_submit_time: f64,
    /// When it first started, if it has.
    pub start_time: Option<f64>,
    /// When it ended (DONE, EXIT), if it has.
    pub end_time: Option<f64>,
    /// Where it ran: hosts here, or the execution cluster.
    pub exec_host: Option<String>,
    /// For a job forwarded from here: `queue@cluster`, the id there, how
    /// many times.
    pub forwarded_to: Option<String>,
    /// Its id at the execution cluster.
    pub dest_job: Option<u64>,
    /// How many times it was forwarded.
    pub forwards: u32,
    /// Run limit, seconds.
    pub run_limit: Option<f64>,
    /// `bsub -o`.
    pub output_file: Option<String>,
    /// `bsub -e`.
    pub error_file: Option<String>,
    /// `bsub -sp`.
    pub user_priority: Option<u32>,
    /// Seconds spent in each state so far: PEND, PSUSP, RUN, USUSP, SSUSP,
    /// UNKWN.
    pub times: StateSeconds,
    /// What happened, in order.
    pub events: Vec<HistoryEventRow>,
    /// Events beyond the ones kept.
    pub more_events: u32,
}

/// Seconds a job spent in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateSeconds {
    /// PEND.
    pub pend: f64,
    /// PSUSP.
    pub psusp: f64,
    /// RUN.
    pub run: f64,
    /// USUSP.
    pub ususp: f64,
    /// SSUSP.
    pub ssusp: f64,
    /// UNKWN: time whose states are not known (before a restart from the
    /// state directory, which keeps no events; docs/reliability.md).
    #[serde(default)]
    pub unkwn: f64,
    /// All of them.
    pub total: f64,
}

/// One event of a job's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryEventRow {
    /// Emulated seconds.
    pub time: f64,
    /// What happened.
    pub event: String,
}

/// Every job in `member`'s history at `now`, by id, and its CLEAN_PERIOD
/// in seconds (none and 0 when it keeps no history).
/// `member`'s job history at `now`, if it keeps one.
pub fn apply(member: &Member, now: SimTime) -> crate::AdminResponse {
    if member.history().is_none() {
        return crate::AdminResponse::Error("no history".into());
    }
    let (jobs, clean_period) = history(member, now);
    crate::AdminResponse::History(HistoryReply {
        cluster: member.name().to_string(),
        now: now.as_secs_f64(),
        clean_period,
        jobs,
    })
}

/// Every job of `member`'s history at `now`, and its CLEAN_PERIOD in
/// seconds.
pub fn history(member: &Member, now: SimTime) -> (Vec<HistoryRow>, f64) {
    let Some(history) = member.history() else {
        return (Vec::new(), 0.0);
    };
    let rows = history
        .jobs()
        .into_iter()
        .map(|record| history_row(record, now))
        .collect();
    (rows, history.clean_period().as_secs_f64())
}

pub(crate) fn history_row(record: &JobRecord, now: SimTime) -> HistoryRow {
    let times = record.times_at(now);
    let (origin, forwarded_from) = match &record.origin {
        RecordOrigin::Bundled => ("bundled", None),
        RecordOrigin::Submitted => ("submitted", None),
        RecordOrigin::Sent => ("sent", None),
        RecordOrigin::ForwardedIn { from, source_job } => (
            "forwarded_in",
            Some(ForwardedFrom {
                cluster: from.to_string(),
                source_job: *source_job,
            }),
        ),
    };
    let options = record.spec.options();
    let forward = record.forwarded.as_ref();
    HistoryRow {
        job_id: record.id,
        job_name: record.spec.name.to_string(),
        user: record.spec.user.to_string(),
        queue: record.queue.to_string(),
        stat: record.state.to_owned(),
        origin: origin.to_owned(),
        forwarded_from,
        slots: record.spec.slots,
        submit_time: secs(record.submitted_at),
        first_submit_time: secs(record.first_submitted_at),
        start_time: record.started_at.map(secs),
        end_time: record.ended_at.map(secs),
        exec_host: record.exec.clone(),
        forwarded_to: forward.map(|forward| forward.target.clone()),
        dest_job: forward.and_then(|forward| forward.dest_job),
        forwards: forward.map_or(0, |forward| forward.forwards),
        run_limit: record.spec.run_limit.map(|limit| limit.as_secs_f64()),
        output_file: options.output_file,
        error_file: options.error_file,
        user_priority: options.user_priority,
        times: StateSeconds {
            pend: times.pend.as_secs_f64(),
            psusp: times.psusp.as_secs_f64(),
            run: times.run.as_secs_f64(),
            ususp: times.ususp.as_secs_f64(),
            ssusp: times.ssusp.as_secs_f64(),
            unkwn: times.unknown.as_secs_f64(),
            total: times.total().as_secs_f64(),
        },
        events: record
            .events()
            .into_iter()
            .map(|event| HistoryEventRow {
                time: secs(event.at),
                event: event.text,
            })
            .collect(),
        more_events: record.more_events,
    }
}

/// The jobs of `rows` that ended (DONE, EXIT), as `bjobs -a` lists them.
pub fn finished_jobs(cluster: &str, rows: &[HistoryRow]) -> Vec<JobRow> {
    rows.iter()
        .filter(|row| row.end_time.is_some() && row.stat != GONE)
        .map(|row| finished_row(cluster, row))
        .collect()
}

/// One job that ended, as `bjobs -a` lists it.
pub fn finished_row(cluster: &str, row: &HistoryRow) -> JobRow {
    JobRow {
        job_id: row.job_id,
        user: row.user.clone(),
        stat: row.stat.clone(),
        queue: row.queue.clone(),
        from_host: row.forwarded_from.as_ref().map_or_else(
            || cluster.to_owned(),
            |from| format!("{}@{}", from.source_job, from.cluster),
        ),
        // A job sent to another cluster ran there: `@cluster`, as
        // `bjobs` shows it while it runs.
        exec_host: match (row.origin.as_str(), &row.exec_host) {
            ("sent", Some(cluster)) if !cluster.starts_with('@') => Some(format!("@{cluster}")),
            (_, exec) => exec.clone(),
        },
        job_name: row.job_name.clone(),
        submit_time: row.submit_time,
        slots: row.slots,
        forwarded_to: None,
        forwarded_from: row.forwarded_from.clone(),
        pending_reason: None,
        run_time: row.times.run,
        run_limit: row.run_limit,
        resources: Vec::new(),
        start_time: row.start_time,
        finish_time: row.end_time,
        output_file: row.output_file.clone(),
        error_file: row.error_file.clone(),
        user_priority: row.user_priority,
    }
}
