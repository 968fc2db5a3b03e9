//! The job history as the commands show it (`bhist`, `bacct`, `bjobs -a`),
//! and the cluster's parameters (`bparams`, `lsid`).

use mcfed_federation::Member;
use mcfed_federation::history::{GONE, JobRecord, RecordOrigin};
use mcfed_protocol::SimTime;
use mcfed_scenario::model::ClusterSpec;

use super::secs;
use crate::admin::{ForwardedFrom, HistoryEventRow, HistoryRow, JobRow, ParamRow, StateSeconds};

/// Every job in `member`'s history at `now`, by id, and its CLEAN_PERIOD
/// in seconds (none and 0 when it keeps no history).
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

fn history_row(record: &JobRecord, now: SimTime) -> HistoryRow {
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
        queue: record.queue.clone(),
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
            total: times.total().as_secs_f64(),
        },
        events: record
            .events
            .iter()
            .map(|event| HistoryEventRow {
                time: secs(event.at),
                event: event.text.clone(),
            })
            .collect(),
        more_events: record.more_events,
    }
}

/// The jobs of `rows` that ended (DONE, EXIT), as `bjobs -a` lists them.
pub fn finished_jobs(cluster: &str, rows: &[HistoryRow]) -> Vec<JobRow> {
    rows.iter()
        .filter(|row| row.end_time.is_some() && row.stat != GONE)
        .map(|row| JobRow {
            job_id: row.job_id,
            user: row.user.clone(),
            stat: row.stat.clone(),
            queue: row.queue.clone(),
            from_host: row.forwarded_from.as_ref().map_or_else(
                || cluster.to_owned(),
                |from| format!("{}@{}", from.source_job, from.cluster),
            ),
            exec_host: row.exec_host.clone(),
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
        })
        .collect()
}

/// The cluster's lsb.params as mcfed uses them, with what each does.
pub fn params(spec: &ClusterSpec) -> Vec<ParamRow> {
    let config = &spec.config;
    let params = &config.params;
    let factors = params.fairshare_factors.resolve();
    let duration = |value: Option<std::time::Duration>| {
        value.map_or_else(
            || "-".to_owned(),
            |value| humantime::format_duration(value).to_string(),
        )
    };
    let row = |name: &str, value: String, meaning: &str| ParamRow {
        name: name.to_owned(),
        value,
        meaning: meaning.to_owned(),
    };
    let forwarder = spec.forwarder.as_ref();
    vec![
        row(
            "MBD_SLEEP_TIME",
            duration(Some(
                params
                    .sleep_time
                    .unwrap_or(mcfed_cluster::DEFAULT_SLEEP_TIME),
            )),
            "one scheduling cycle (the unit of SLOT_RESERVE)",
        ),
        row(
            "CLEAN_PERIOD",
            duration(Some(
                params
                    .clean_period
                    .unwrap_or(mcfed_cluster::DEFAULT_CLEAN_PERIOD),
            )),
            "how long finished jobs are kept for bjobs -a, bhist and bacct",
        ),
        row(
            "MC_PLUGIN_UPDATE_INTERVAL",
            duration(config.update_interval),
            "how often this cluster sends its queue counters to submission clusters",
        ),
        row(
            "MC_PLUGIN_SCHEDULE_ENHANCE",
            forwarder.map_or_else(|| "-".to_owned(), |f| f.mode.to_string()),
            "how this cluster's send queues choose a remote queue",
        ),
        row(
            "MAX_FORWARDS",
            forwarder.map_or_else(|| "-".to_owned(), |f| f.max_forwards.to_string()),
            "mcfed: how many times one job may be forwarded",
        ),
        row(
            "MAX_USER_PRIORITY",
            params
                .max_user_priority
                .map_or_else(|| "-".to_owned(), |max| max.to_string()),
            "the highest job priority bsub -sp and bmod -sp take (unset: job priorities are off)",
        ),
        row(
            "PREEMPT_FOR",
            params.preempt_for.to_string(),
            "which limits preemption relieves",
        ),
        row(
            "HIST_HOURS",
            factors.hist_hours.to_string(),
            "decay of past usage in fairshare, hours",
        ),
        row(
            "CPU_TIME_FACTOR",
            factors.cpu_time.to_string(),
            "fairshare: weight of CPU time",
        ),
        row(
            "RUN_TIME_FACTOR",
            factors.run_time.to_string(),
            "fairshare: weight of run time",
        ),
        row(
            "RUN_JOB_FACTOR",
            factors.run_job.to_string(),
            "fairshare: weight of running job slots",
        ),
    ]
}
