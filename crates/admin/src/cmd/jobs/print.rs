//! `bjobs` as LSF prints it: the default columns, `-fwd`, `-l`, and
//! `-o "field[:width] ..."` with LSF's field names (also the keys of
//! `-json`).

use std::fmt::Write as _;

use super::JobRow;
use crate::table::fields::{Field, Selection};
use crate::table::{Table, clock, columns, dash, duration, shown};

/// One field of `bjobs -o`: its LSF name, its column header (also its
/// `-json` key), its recommended width, its value.
pub type JobField = Field<JobRow>;

fn time_or_dash(time: Option<f64>) -> String {
    time.map_or_else(|| "-".to_owned(), clock)
}

/// Every field `bjobs -o` takes, with LSF's names.
pub const JOB_FIELDS: &[JobField] = &[
    JobField {
        name: "jobid",
        alias: "id",
        header: "JOBID",
        width: 7,
        value: |r| r.job_id.to_string(),
    },
    JobField {
        name: "user",
        alias: "",
        header: "USER",
        width: 7,
        value: |r| r.user.clone(),
    },
    JobField {
        name: "stat",
        alias: "",
        header: "STAT",
        width: 5,
        value: |r| r.stat.clone(),
    },
    JobField {
        name: "queue",
        alias: "",
        header: "QUEUE",
        width: 10,
        value: |r| r.queue.clone(),
    },
    JobField {
        name: "from_host",
        alias: "",
        header: "FROM_HOST",
        width: 11,
        value: |r| r.from_host.clone(),
    },
    JobField {
        name: "exec_host",
        alias: "",
        header: "EXEC_HOST",
        width: 11,
        value: |r| dash(r.exec_host.clone()),
    },
    JobField {
        name: "job_name",
        alias: "name",
        header: "JOB_NAME",
        width: 10,
        value: |r| r.job_name.clone(),
    },
    JobField {
        name: "submit_time",
        alias: "",
        header: "SUBMIT_TIME",
        width: 15,
        value: |r| clock(r.submit_time),
    },
    JobField {
        name: "start_time",
        alias: "",
        header: "START_TIME",
        width: 15,
        value: |r| time_or_dash(r.start_time),
    },
    JobField {
        name: "finish_time",
        alias: "",
        header: "FINISH_TIME",
        width: 16,
        value: |r| time_or_dash(r.finish_time),
    },
    JobField {
        name: "slots",
        alias: "",
        header: "SLOTS",
        width: 5,
        value: |r| r.slots.to_string(),
    },
    JobField {
        name: "pend_reason",
        alias: "",
        header: "PEND_REASON",
        width: 11,
        value: |r| dash(r.pending_reason.clone()),
    },
    JobField {
        name: "runtimelimit",
        alias: "rtlimit",
        header: "RUNTIMELIMIT",
        width: 12,
        value: |r| r.run_limit.map_or_else(|| "-".to_owned(), duration),
    },
    JobField {
        name: "priority",
        alias: "",
        header: "PRIORITY",
        width: 10,
        value: |r| dash(r.user_priority),
    },
    JobField {
        name: "output_file",
        alias: "",
        header: "OUTPUT_FILE",
        width: 11,
        value: |r| dash(r.output_file.clone()),
    },
    JobField {
        name: "error_file",
        alias: "",
        header: "ERROR_FILE",
        width: 10,
        value: |r| dash(r.error_file.clone()),
    },
    JobField {
        name: "forward_cluster",
        alias: "fwd_cluster",
        header: "FORWARD_CLUSTER",
        width: 15,
        value: |r| dash(r.forwarded_to.as_ref().map(|to| to.cluster.clone())),
    },
    JobField {
        name: "forward_time",
        alias: "fwd_time",
        header: "FORWARD_TIME",
        width: 15,
        value: |r| time_or_dash(r.forwarded_to.as_ref().map(|to| to.forward_time)),
    },
    JobField {
        name: "dstjobid",
        alias: "",
        header: "DSTJOBID",
        width: 8,
        value: |r| dash(r.forwarded_to.as_ref().and_then(|to| to.dest_job)),
    },
    JobField {
        name: "source_cluster",
        alias: "srcluster",
        header: "SOURCE_CLUSTER",
        width: 15,
        value: |r| dash(r.forwarded_from.as_ref().map(|from| from.cluster.clone())),
    },
    JobField {
        name: "srcjobid",
        alias: "",
        header: "SRCJOBID",
        width: 8,
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

/// Reads `bjobs -o`'s field list (see [`crate::table::fields`]).
pub fn parse_fields(spec: &str) -> Result<Selection<JobRow>, String> {
    crate::table::fields::parse("bjobs", JOB_FIELDS, spec)
}

/// The default columns' fields (those of `bjobs -json` without `-o`).
pub fn default_fields() -> Selection<JobRow> {
    Selection::named(JOB_FIELDS, &DEFAULT_FIELDS)
}

/// The jobs under the given `-o` fields, as a table (its `-json` keys the
/// fields' names in upper case).
pub fn jobs_table(rows: &[JobRow], fields: &Selection<JobRow>) -> Table {
    fields.table("bjobs", "JOBS", rows)
}

/// `bjobs -o "fields"`: the jobs under the chosen fields, each column as
/// its width says, with the header unless `header` is false
/// (`-noheader`).
pub fn jobs_fields(rows: &[JobRow], fields: &Selection<JobRow>, header: bool) -> String {
    if rows.is_empty() {
        return "No job found\n".to_owned();
    }
    fields.text(&jobs_table(rows, fields), header)
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
        row.job_id,
        shown(&row.job_name),
        shown(&row.user),
        row.stat,
        shown(&row.queue)
    );
    let resources = if row.resources.is_empty() {
        String::new()
    } else {
        format!(
            ", Requested Resources <{}>",
            shown(&row.resources.join(" "))
        )
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
        shown(&row.from_host),
        row.slots,
        duration(row.run_time)
    );
    for (what, file) in [
        ("Output File", &row.output_file),
        ("Error File", &row.error_file),
    ] {
        if let Some(file) = file {
            let _ = writeln!(text, "          {what} <{}>;", shown(file));
        }
    }
    if let Some(from) = &row.forwarded_from {
        let _ = writeln!(
            text,
            "          Forwarded from cluster <{}>, where it is job <{}>;",
            shown(&from.cluster),
            from.source_job
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
            shown(&to.queue),
            shown(&to.cluster),
            to.forwards
        );
    }
    if let Some(start) = row.start_time {
        let _ = writeln!(
            text,
            "{}: Started on <{}>;",
            clock(start),
            shown(row.exec_host.as_deref().unwrap_or_default())
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
        let _ = writeln!(text, " PENDING REASONS:\n {};", shown(reason));
    }
    text
}
