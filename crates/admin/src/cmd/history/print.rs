//! `bhist` and `bacct` from a cluster's job history: time spent in each
//! state, each job's timed events (`bhist -l`), and accounting of finished
//! jobs per user and queue (`bacct`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::HistoryRow;
use crate::table::{Table, clock, pad, shown};

/// `bhist`'s columns: seconds in each state.
pub fn bhist_table(rows: &[HistoryRow]) -> Table {
    let mut table = Table::new(
        "bhist",
        "JOBS",
        &[
            "JOBID", "USER", "JOB_NAME", "PEND", "PSUSP", "RUN", "USUSP", "SSUSP", "UNKWN", "TOTAL",
        ],
    );
    let secs = |value: f64| format!("{}", value.round() as u64);
    table.rows = rows
        .iter()
        .map(|row| {
            let times = &row.times;
            vec![
                row.job_id.to_string(),
                row.user.clone(),
                row.job_name.clone(),
                secs(times.pend),
                secs(times.psusp),
                secs(times.run),
                secs(times.ususp),
                secs(times.ssusp),
                secs(times.unkwn),
                secs(times.total),
            ]
        })
        .collect();
    table
}

/// `bhist`: the summary of time in seconds each job spent in each state.
pub fn bhist(rows: &[HistoryRow]) -> String {
    if rows.is_empty() {
        return "No matching job found\n".to_owned();
    }
    format!(
        "Summary of time in seconds spent in various states:\n{}",
        bhist_table(rows).text()
    )
}

/// `bhist -l`: each job's events with their times, then its time in each
/// state by `now`.
pub fn bhist_long(rows: &[HistoryRow], now: f64) -> String {
    if rows.is_empty() {
        return "No matching job found\n".to_owned();
    }
    let mut text = String::new();
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            text.push_str("------------------------------------------------------------------------------\n\n");
        }
        let _ = writeln!(
            text,
            "Job <{}>, Job Name <{}>, User <{}>, Status <{}>, Queue <{}>",
            row.job_id,
            shown(&row.job_name),
            shown(&row.user),
            row.stat,
            shown(&row.queue)
        );
        for event in &row.events {
            let _ = writeln!(text, "{}: {};", clock(event.time), shown(&event.event));
        }
        if row.more_events > 0 {
            let _ = writeln!(text, "... and {} more events (not kept);", row.more_events);
        }
        let _ = writeln!(
            text,
            "\nSummary of time in seconds spent in various states by {}",
            clock(row.end_time.unwrap_or(now))
        );
        let times = &row.times;
        text.push_str("  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL\n ");
        for value in [
            times.pend,
            times.psusp,
            times.run,
            times.ususp,
            times.ssusp,
            times.unkwn,
        ] {
            let cell = format!(" {}", value.round());
            pad_to(&mut text, &cell, 9);
        }
        let _ = writeln!(text, " {}", times.total.round());
        text.push('\n');
    }
    text
}

/// `cell` then blanks up to `width` characters.
fn pad_to(text: &mut String, cell: &str, width: usize) {
    text.push_str(cell);
    pad(text, width.saturating_sub(cell.len()));
}

/// The figures of finished jobs, per user and queue.
#[derive(Default)]
struct Accounting {
    done: u64,
    exited: u64,
    forwarded: u64,
    forwarded_in: u64,
    waits: Vec<f64>,
    turnarounds: Vec<f64>,
    run_times: Vec<f64>,
}

impl Accounting {
    fn add(&mut self, row: &HistoryRow) {
        match row.stat.as_str() {
            "DONE" => self.done += 1,
            _ => self.exited += 1,
        }
        self.forwarded += u64::from(row.forwards > 0);
        self.forwarded_in += u64::from(row.forwarded_from.is_some());
        if let Some(start) = row.start_time {
            self.waits.push(start - row.first_submit_time);
        }
        if let Some(end) = row.end_time {
            self.turnarounds.push(end - row.first_submit_time);
        }
        self.run_times.push(row.times.run);
    }

    fn jobs(&self) -> u64 {
        self.done + self.exited
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn extreme(values: &[f64], max: bool) -> Option<f64> {
    values
        .iter()
        .copied()
        .reduce(|a, b| if (b > a) == max { b } else { a })
}

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| format!("{value:.0}"))
}

/// The finished jobs of `rows` (DONE, EXIT), per (user, queue).
fn accounting(rows: &[HistoryRow]) -> (Accounting, BTreeMap<(String, String), Accounting>) {
    let mut all = Accounting::default();
    let mut groups: BTreeMap<(String, String), Accounting> = BTreeMap::new();
    for row in rows
        .iter()
        .filter(|row| matches!(row.stat.as_str(), "DONE" | "EXIT"))
    {
        all.add(row);
        groups
            .entry((row.user.clone(), row.queue.clone()))
            .or_default()
            .add(row);
    }
    (all, groups)
}

/// `bacct`'s per user and queue records.
pub fn bacct_table(rows: &[HistoryRow]) -> Table {
    let (_, groups) = accounting(rows);
    let mut table = Table::new(
        "bacct",
        "ACCOUNTS",
        &[
            "USER",
            "QUEUE",
            "JOBS",
            "DONE",
            "EXIT",
            "FORWARDED",
            "FROM_REMOTE",
            "AVG_WAIT",
            "AVG_TURNAROUND",
            "RUN_TIME",
        ],
    );
    table.rows = groups
        .iter()
        .map(|((user, queue), group)| {
            vec![
                user.clone(),
                queue.clone(),
                group.jobs().to_string(),
                group.done.to_string(),
                group.exited.to_string(),
                group.forwarded.to_string(),
                group.forwarded_in.to_string(),
                seconds(mean(&group.waits)),
                seconds(mean(&group.turnarounds)),
                format!("{:.0}", group.run_times.iter().sum::<f64>()),
            ]
        })
        .collect();
    table
}

/// `bacct`: accounting of the finished jobs (those ended within
/// CLEAN_PERIOD), as LSF's summary says it, then per user and queue;
/// `filters` says which jobs were asked for.
pub fn bacct(rows: &[HistoryRow], filters: &str, clean_period: f64) -> String {
    let (all, _) = accounting(rows);
    let filters = shown(filters);
    let mut text = format!(
        "Accounting information about jobs that are:\n  - {filters}\n  - completed normally or exited within CLEAN_PERIOD ({}) of now.\n------------------------------------------------------------------------------\n\n",
        clock(clean_period)
    );
    if all.jobs() == 0 {
        text.push_str("No matching job found\n");
        return text;
    }
    let _ = writeln!(text, "SUMMARY:      ( time unit: second )");
    let _ = writeln!(
        text,
        " Total number of done jobs: {:>8}      Total number of exited jobs: {:>8}",
        all.done, all.exited
    );
    let _ = writeln!(
        text,
        " Jobs forwarded to other clusters: {:>2}      Jobs from other clusters: {:>11}",
        all.forwarded, all.forwarded_in
    );
    let total_run: f64 = all.run_times.iter().sum();
    let _ = writeln!(
        text,
        " Total run time consumed: {:>10.0}      Average run time consumed: {:>9}",
        total_run,
        seconds(mean(&all.run_times))
    );
    let _ = writeln!(
        text,
        " Maximum run time of a job: {:>8}      Minimum run time of a job: {:>9}",
        seconds(extreme(&all.run_times, true)),
        seconds(extreme(&all.run_times, false))
    );
    let _ = writeln!(
        text,
        " Average wait time in queue: {:>7}\n Maximum wait time in queue: {:>7}      Minimum wait time in queue: {:>8}",
        seconds(mean(&all.waits)),
        seconds(extreme(&all.waits, true)),
        seconds(extreme(&all.waits, false))
    );
    let _ = writeln!(
        text,
        " Average turnaround time: {:>10} (seconds/job)\n Maximum turnaround time: {:>10}      Minimum turnaround time: {:>11}",
        seconds(mean(&all.turnarounds)),
        seconds(extreme(&all.turnarounds, true)),
        seconds(extreme(&all.turnarounds, false))
    );
    let _ = writeln!(text, "\nPER USER AND QUEUE:");
    text.push_str(&bacct_table(rows).text());
    text
}
