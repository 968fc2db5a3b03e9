//! `bqueues`, `bhosts`, `bclusters`, `lsid` and `bparams` as LSF prints
//! them, each a [`Table`] (so `-json` reads the same columns).

use std::fmt::Write as _;

use super::{Table, clock, dash};
use crate::admin::{HostRow, LinkRow, ParamsReply, QueueReport};

/// `bqueues`' columns.
pub fn queues_table(rows: &[QueueReport]) -> Table {
    let mut table = Table::new(
        "bqueues",
        "QUEUES",
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
    );
    table.rows = rows
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
    table
}

/// `bqueues`, or `bqueues -l` (the block `mcfed run --show queues` prints,
/// [`mcfed_run::inspect::queues_long`]).
pub fn queues(rows: &[QueueReport], long: bool) -> String {
    if long {
        return mcfed_run::inspect::queues_long(rows);
    }
    queues_table(rows).text()
}

/// `bhosts`' columns.
pub fn hosts_table(rows: &[HostRow]) -> Table {
    let mut table = Table::new(
        "bhosts",
        "HOSTS",
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
    );
    table.rows = rows
        .iter()
        .map(|row| {
            vec![
                row.host_name.clone(),
                row.status.clone(),
                dash(row.jl_u),
                row.max.to_string(),
                row.njobs.to_string(),
                row.run.to_string(),
                row.ssusp.to_string(),
                row.ususp.to_string(),
                "0".to_owned(),
            ]
        })
        .collect();
    table
}

/// `bhosts`.
pub fn hosts(rows: &[HostRow]) -> String {
    hosts_table(rows).text()
}

/// `bhosts -l`: a block per host, as LSF's: its status and slot counts,
/// then what mcfed knows of it (processors, resources, queues).
pub fn hosts_long(rows: &[HostRow]) -> String {
    let mut text = String::new();
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        let _ = writeln!(text, "HOST  {}", row.host_name);
        let _ = writeln!(
            text,
            "STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW"
        );
        let _ = writeln!(
            text,
            "{:<16} {:>4}  {:>4}  {:>5}  {:>5}  {:>5}  {:>5}  {:>5}  {:>5} -",
            row.status,
            "1.00",
            dash(row.jl_u),
            row.max,
            row.njobs,
            row.run,
            row.ssusp,
            row.ususp,
            0
        );
        let _ = writeln!(text, "\n NCPUS: {}", row.ncpus);
        let resources = if row.resources.is_empty() {
            "-".to_owned()
        } else {
            row.resources.join(" ")
        };
        let _ = writeln!(text, " RESOURCES: {resources}");
        let _ = writeln!(text, " QUEUES: {}", row.queues.join(" "));
    }
    text
}

/// `bclusters`' columns.
pub fn clusters_table(rows: &[LinkRow]) -> Table {
    let mut table = Table::new(
        "bclusters",
        "CLUSTERS",
        &["LOCAL_QUEUE", "JOB_FLOW", "REMOTE", "CLUSTER", "STATUS"],
    );
    table.rows = rows
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
    table
}

/// `bclusters`: the job forwarding links.
pub fn clusters(rows: &[LinkRow]) -> String {
    format!(
        "[Job Forwarding Information ]\n{}",
        clusters_table(rows).text()
    )
}

/// `lsid`'s one record.
pub fn lsid_table(reply: &ParamsReply) -> Table {
    let mut table = Table::new(
        "lsid",
        "CLUSTERS",
        &["VERSION", "CLUSTER_NAME", "MASTER_NAME", "EMULATED_TIME"],
    );
    table.rows.push(vec![
        format!("mcfed {}", env!("CARGO_PKG_VERSION")),
        reply.cluster.clone(),
        reply.address.clone(),
        clock(reply.now),
    ]);
    table
}

/// `lsid`: who answers, as LSF's says it.
pub fn lsid(reply: &ParamsReply) -> String {
    format!(
        "mcfed {}, an emulator of an IBM Spectrum LSF 10.1 multicluster federation\n\nMy cluster name is {}\nMy master name is {}\nEmulated time is {}\n",
        env!("CARGO_PKG_VERSION"),
        reply.cluster,
        reply.address,
        clock(reply.now)
    )
}

/// `bparams`' records: every parameter with its value.
pub fn params_table(reply: &ParamsReply) -> Table {
    let mut table = Table::new("bparams", "PARAMS", &["NAME", "VALUE", "MEANING"]);
    table.rows = reply
        .params
        .iter()
        .map(|param| {
            vec![
                param.name.clone(),
                param.value.clone(),
                param.meaning.clone(),
            ]
        })
        .collect();
    table
}

/// `bparams` (the scheduling cycle, as LSF's short form says it) or
/// `bparams -l` (every parameter, `NAME = value` under what it does).
pub fn params(reply: &ParamsReply, long: bool) -> String {
    let value = |name: &str| {
        reply
            .params
            .iter()
            .find(|param| param.name == name)
            .map_or("-", |param| param.value.as_str())
    };
    if !long {
        return format!(
            "MBD_SLEEP_TIME used for calculations: {}\nFinished jobs are kept for: {}\nCounter updates are sent every: {}\n",
            value("MBD_SLEEP_TIME"),
            value("CLEAN_PERIOD"),
            value("MC_PLUGIN_UPDATE_INTERVAL")
        );
    }
    let mut text = format!("System default parameters of cluster {}:\n", reply.cluster);
    for param in &reply.params {
        let _ = writeln!(
            text,
            "\n    {}:\n        {} = {}",
            param.meaning, param.name, param.value
        );
    }
    text
}
