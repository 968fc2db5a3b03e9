//! `bjobs` as LSF prints it: the default columns, `-fwd`, `-l`, and
//! `-o "field[:width] ..."` with LSF's field names (also the keys of
//! `-json`).

use std::fmt::Write as _;

use super::JobRow;
use crate::table::{Table, clock, columns, dash, duration};

/// One field of `bjobs -o`: its LSF name, its column header, its value.
#[derive(Clone, Copy)]
pub struct JobField {
    /// The name `-o` takes (`jobid`).
    pub name: &'static str,
    /// The column header and `-json` key (`JOBID`).
    pub header: &'static str,
    /// The value for a job.
    pub value: fn(&JobRow) -> String,
}

impl std::fmt::Debug for JobField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for JobField {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

fn time_or_dash(time: Option<f64>) -> String {
    time.map_or_else(|| "-".to_owned(), clock)
}

/// Every field `bjobs -o` takes, with LSF's names.
pub const JOB_FIELDS: &[JobField] = &[
    JobField {
        name: "jobid",
        header: "JOBID",
        value: |r| r.job_id.to_string(),
    },
    JobField {
        name: "user",
        header: "USER",
        value: |r| r.user.clone(),
    },
    JobField {
        name: "stat",
        header: "STAT",
        value: |r| r.stat.clone(),
    },
    JobField {
        name: "queue",
        header: "QUEUE",
        value: |r| r.queue.clone(),
    },
    JobField {
        name: "from_host",
        header: "FROM_HOST",
        value: |r| r.from_host.clone(),
    },
    JobField {
        name: "exec_host",
        header: "EXEC_HOST",
        value: |r| dash(r.exec_host.clone()),
    },
    JobField {
        name: "job_name",
        header: "JOB_NAME",
        value: |r| r.job_name.clone(),
    },
    JobField {
        name: "submit_time",
        header: "SUBMIT_TIME",
        value: |r| clock(r.submit_time),
    },
    JobField {
        name: "start_time",
        header: "START_TIME",
        value: |r| time_or_dash(r.start_time),
    },
    JobField {
        name: "finish_time",
        header: "FINISH_TIME",
        value: |r| time_or_dash(r.finish_time),
    },
    JobField {
        name: "slots",
        header: "SLOTS",
        value: |r| r.slots.to_string(),
    },
    JobField {
        name: "pend_reason",
        header: "PEND_REASON",
        value: |r| dash(r.pending_reason.clone()),
    },
    JobField {
        name: "runtimelimit",
        header: "RUNTIMELIMIT",
        value: |r| r.run_limit.map_or_else(|| "-".to_owned(), duration),
    },
    JobField {
        name: "priority",
        header: "PRIORITY",
        value: |r| dash(r.user_priority),
    },
    JobField {
        name: "output_file",
        header: "OUTPUT_FILE",
        value: |r| dash(r.output_file.clone()),
    },
    JobField {
        name: "error_file",
        header: "ERROR_FILE",
        value: |r| dash(r.error_file.clone()),
    },
    JobField {
        name: "forward_cluster",
        header: "FORWARD_CLUSTER",
        value: |r| dash(r.forwarded_to.as_ref().map(|to| to.cluster.clone())),
    },
    JobField {
        name: "forward_time",
        header: "FORWARD_TIME",
        value: |r| time_or_dash(r.forwarded_to.as_ref().map(|to| to.forward_time)),
    },
    JobField {
        name: "dstjobid",
        header: "DSTJOBID",
        value: |r| dash(r.forwarded_to.as_ref().and_then(|to| to.dest_job)),
    },
    JobField {
        name: "source_cluster",
        header: "SOURCE_CLUSTER",
        value: |r| dash(r.forwarded_from.as_ref().map(|from| from.cluster.clone())),
    },
    JobField {
        name: "srcjobid",
        header: "SRCJOBID",
        value: |r| dash(r.forwarded_from.as_ref().map(|from| from.source_job)),
    },
];

/// The fields of the default `bjobs` columns (and of `bjobs -json`
/// without `-o`).
const DEFAULT_FIELDS: [&str; 8] = [
    "jobid",
    "user",
    "stat",
    "queue",
    "from_host",
    "exec_host",
    "job_name",
    "submit_time",
];

/// Reads `bjobs -o`'s field list: names separated by spaces, each
/// optionally with `:width` (the column's least width). Unknown names are
/// an error listing the known ones.
pub fn parse_fields(spec: &str) -> Result<Vec<(JobField, usize)>, String> {
    let mut fields = Vec::new();
    for word in spec.split_whitespace() {
        let (name, width) = match word.split_once(':') {
            Some((name, width)) => {
                let width = width
                    .trim_end_matches(['L', 'R'])
                    .parse::<usize>()
                    .map_err(|_| format!("`{word}`: the width after `:` is not a number"))?;
                (name, width)
            }
            None => (word, 0),
        };
        let name = name.to_ascii_lowercase();
        let field = JOB_FIELDS
            .iter()
            .find(|field| field.name == name)
            .copied()
            .ok_or_else(|| {
                let known: Vec<&str> = JOB_FIELDS.iter().map(|field| field.name).collect();
                format!(
                    "`{word}` is not a bjobs field (mcfed knows {})",
                    known.join(" ")
                )
            })?;
        fields.push((field, width));
    }
    if fields.is_empty() {
        return Err("bjobs -o needs at least one field".to_owned());
    }
    Ok(fields)
}

/// The jobs under the given `-o` fields (the default columns' fields when
/// none), as a table.
pub fn jobs_table(rows: &[JobRow], fields: &[(JobField, usize)]) -> Table {
    let defaults: Vec<(JobField, usize)>;
    let fields = if fields.is_empty() {
        defaults = DEFAULT_FIELDS
            .iter()
            .filter_map(|name| JOB_FIELDS.iter().find(|field| field.name == *name))
            .map(|field| (*field, 0))
            .collect();
        &defaults
    } else {
        fields
    };
    let headers: Vec<&str> = fields.iter().map(|(field, _)| field.header).collect();
    let mut table = Table::new("bjobs", "JOBS", &headers);
    table.rows = rows
        .iter()
        .map(|row| fields.iter().map(|(field, _)| (field.value)(row)).collect())
        .collect();
    table
}

/// `bjobs -o "fields"`: the jobs under the chosen fields, each column at
/// least its `:width`.
pub fn jobs_fields(rows: &[JobRow], fields: &[(JobField, usize)]) -> String {
    if rows.is_empty() {
        return "No job found\n".to_owned();
    }
    let mut table = jobs_table(rows, fields);
    for (header, (_, width)) in table.headers.iter_mut().zip(fields) {
        let pad = width.saturating_sub(header.len());
        header.push_str(&" ".repeat(pad));
    }
    table.text()
}

/// `bjobs`, `bjobs -fwd` (only jobs forwarded to another cluster) or
/// `bjobs -l`; `any` says what was asked for when nothing matches
/// (`unfinished`, or with `-a` nothing at all).
pub fn jobs(rows: &[JobRow], forwarded_only: bool, long: bool, all: bool) -> String {
    let rows: Vec<&JobRow> = rows
        .iter()
        .filter(|row| !forwarded_only || row.forwarded_to.is_some())
        .collect();
    if rows.is_empty() {
        return if all {
            "No job found\n".to_owned()
        } else {
            "No unfinished job found\n".to_owned()
        };
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
    let priority = row
        .user_priority
        .map(|priority| format!(", Job Priority <{priority}>"))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "{}: Submitted from <{}>, {} Task(s), Run Time <{}>{limit}{priority}{resources};",
        clock(row.submit_time),
        row.from_host,
        row.slots,
        duration(row.run_time)
    );
    for (what, file) in [
        ("Output File", &row.output_file),
        ("Error File", &row.error_file),
    ] {
        if let Some(file) = file {
            let _ = writeln!(text, "          {what} <{file}>;");
        }
    }
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
    if let Some(finish) = row.finish_time {
        let how = match row.stat.as_str() {
            "EXIT" => "Exited (killed)",
            _ => "Done successfully",
        };
        let _ = writeln!(text, "{}: {how};", clock(finish));
    }
    if let Some(reason) = &row.pending_reason {
        let _ = writeln!(text, " PENDING REASONS:\n {reason};");
    }
    text
}
