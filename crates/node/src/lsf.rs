//! Printing what a cluster process reports with LSF's columns
//! (`bjobs`, `bjobs -fwd`, `bjobs -l`, `bqueues`, `bqueues -l`, `bhosts`,
//! `bclusters`), or as JSON (`-o json`: an array of the rows of
//! [`crate::admin`], whose field names are a public contract).

use std::fmt::Write as _;

use mcfed_protocol::SimTime;
use serde::Serialize;

use crate::admin::{HostRow, JobRow, LinkRow, QueueReport, Submitted};

fn clock(secs: f64) -> String {
    SimTime::from_millis((secs * 1000.0).round().max(0.0) as u64).to_string()
}

fn duration(secs: f64) -> String {
    clock(secs)
}

/// Lays out rows under a header in left-aligned columns two spaces apart,
/// as LSF's commands do.
fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|title| title.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut text = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (index, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if index + 1 == cells.len() {
                out.push_str(cell);
            } else {
                let _ = write!(out, "{cell:<width$}  ");
            }
        }
        let _ = writeln!(text, "{}", out.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    text
}

/// Rows as pretty JSON (an array).
pub fn json<T: Serialize>(rows: &T) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_else(|error| format!("\"{error}\""))
}

/// `bsub`'s answer.
pub fn submitted(job: &Submitted) -> String {
    let whither = if job.forwarded {
        " (a send queue: the job will be forwarded)"
    } else {
        ""
    };
    format!(
        "Job <{}> is submitted to queue <{}> of cluster <{}>{whither}.\n",
        job.job_id, job.queue, job.cluster
    )
}

/// `bjobs`, `bjobs -fwd` (only jobs forwarded to another cluster) or
/// `bjobs -l`.
pub fn jobs(rows: &[JobRow], forwarded_only: bool, long: bool) -> String {
    let rows: Vec<&JobRow> = rows
        .iter()
        .filter(|row| !forwarded_only || row.forwarded_to.is_some())
        .collect();
    if rows.is_empty() {
        return "No unfinished job found\n".to_owned();
    }
    if long {
        return rows
            .iter()
            .map(|row| job_long(row))
            .collect::<Vec<_>>()
            .join("\n");
    }
    if forwarded_only {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|row| {
                let to = row.forwarded_to.as_ref();
                vec![
                    row.job_id.to_string(),
                    row.user.clone(),
                    row.stat.clone(),
                    row.queue.clone(),
                    row.exec_host.clone().unwrap_or_else(|| "-".to_owned()),
                    row.job_name.clone(),
                    to.map_or_else(|| "-".to_owned(), |to| to.cluster.clone()),
                    to.map_or_else(|| "-".to_owned(), |to| clock(to.forward_time)),
                ]
            })
            .collect();
        return columns(
            &[
                "JOBID",
                "USER",
                "STAT",
                "QUEUE",
                "EXEC_HOST",
                "JOB_NAME",
                "CLUSTER",
                "FORWARD_TIME",
            ],
            &table,
        );
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.job_id.to_string(),
                row.user.clone(),
                row.stat.clone(),
                row.queue.clone(),
                row.from_host.clone(),
                row.exec_host.clone().unwrap_or_default(),
                row.job_name.clone(),
                clock(row.submit_time),
            ]
        })
        .collect();
    columns(
        &[
            "JOBID",
            "USER",
            "STAT",
            "QUEUE",
            "FROM_HOST",
            "EXEC_HOST",
            "JOB_NAME",
            "SUBMIT_TIME",
        ],
        &table,
    )
}

fn job_long(row: &JobRow) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Job <{}>, Job Name <{}>, User <{}>, Status <{}>, Queue <{}>",
        row.job_id, row.job_name, row.user, row.stat, row.queue
    );
    let resources = if row.resources.is_empty() {
        String::new()
    } else {
        format!(", Requested Resources <{}>", row.resources.join(" "))
    };
    let limit = row
        .run_limit
        .map(|limit| format!(", Run Limit <{}>", duration(limit)))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "{}: Submitted from <{}>, {} Task(s), Run Time <{}>{limit}{resources};",
        clock(row.submit_time),
        row.from_host,
        row.slots,
        duration(row.run_time)
    );
    if let Some(from) = &row.forwarded_from {
        let _ = writeln!(
            text,
            "          Forwarded from cluster <{}>, where it is job <{}>;",
            from.cluster, from.source_job
        );
    }
    if let Some(to) = &row.forwarded_to {
        let dest = to
            .dest_job
            .map_or_else(|| "not yet accepted".to_owned(), |id| format!("job <{id}>"));
        let _ = writeln!(
            text,
            "{}: Forwarded to queue <{}@{}> ({dest}); forwarded {} time(s);",
            clock(to.forward_time),
            to.queue,
            to.cluster,
            to.forwards
        );
    }
    if let Some(start) = row.start_time {
        let _ = writeln!(
            text,
            "{}: Started on <{}>;",
            clock(start),
            row.exec_host.clone().unwrap_or_default()
        );
    }
    if let Some(reason) = &row.pending_reason {
        let _ = writeln!(text, " PENDING REASONS:\n {reason};");
    }
    text
}

/// `bqueues`, or `bqueues -l` (the block `mcfed run --show queues` prints,
/// [`mcfed_scenario::inspect::queue_long`]).
pub fn queues(rows: &[QueueReport], long: bool) -> String {
    if long {
        return mcfed_scenario::inspect::queues_long(rows);
    }
    let dash = |value: Option<u32>| value.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.queue.clone(),
                row.priority.to_string(),
                row.status.clone(),
                dash(row.max),
                dash(row.jl_u),
                "-".to_owned(),
                dash(row.jl_h),
                row.njobs.to_string(),
                row.pend.to_string(),
                row.run.to_string(),
                row.susp.to_string(),
            ]
        })
        .collect();
    columns(
        &[
            "QUEUE_NAME",
            "PRIO",
            "STATUS",
            "MAX",
            "JL/U",
            "JL/P",
            "JL/H",
            "NJOBS",
            "PEND",
            "RUN",
            "SUSP",
        ],
        &table,
    )
}

/// `bhosts`.
pub fn hosts(rows: &[HostRow]) -> String {
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.host_name.clone(),
                row.status.clone(),
                "-".to_owned(),
                row.max.to_string(),
                row.njobs.to_string(),
                row.run.to_string(),
                row.ssusp.to_string(),
                "0".to_owned(),
                "0".to_owned(),
            ]
        })
        .collect();
    columns(
        &[
            "HOST_NAME",
            "STATUS",
            "JL/U",
            "MAX",
            "NJOBS",
            "RUN",
            "SSUSP",
            "USUSP",
            "RSV",
        ],
        &table,
    )
}

/// `bclusters`: the job forwarding links.
pub fn clusters(rows: &[LinkRow]) -> String {
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.local_queue.clone(),
                row.job_flow.clone(),
                row.remote.clone(),
                row.cluster.clone(),
                row.status.clone(),
            ]
        })
        .collect();
    format!(
        "[Job Forwarding Information ]\n{}",
        columns(
            &["LOCAL_QUEUE", "JOB_FLOW", "REMOTE", "CLUSTER", "STATUS"],
            &table
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_under_lsf_headers() {
        let text = clusters(&[LinkRow {
            local_queue: "send".into(),
            job_flow: "send".into(),
            remote: "HighPriority".into(),
            cluster: "Cluster2".into(),
            status: "ok".into(),
            incarnation: None,
            last_update_seq: None,
            last_update_at: None,
        }]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[Job Forwarding Information ]");
        assert_eq!(
            lines[1],
            "LOCAL_QUEUE  JOB_FLOW  REMOTE        CLUSTER   STATUS"
        );
        assert_eq!(
            lines[2],
            "send         send      HighPriority  Cluster2  ok"
        );
    }
}
