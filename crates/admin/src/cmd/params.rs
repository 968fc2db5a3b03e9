//! `bparams` and `lsid`: the cluster's lsb.params as mcfed uses them,
//! with what each does.

use std::fmt::Write as _;

use mcfed_federation::MemberConfig;
use serde::{Deserialize, Serialize};

use crate::table::{Table, clock, shown};

/// A cluster's parameters, for `bparams` and `lsid`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamsReply {
    /// The cluster.
    pub cluster: String,
    /// Where its process listens.
    pub address: String,
    /// Its emulated time, seconds.
    pub now: f64,
    /// Each parameter: its lsb.params name, its value, and what it does.
    pub params: Vec<ParamRow>,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamRow {
    /// Its name in lsb.params.
    pub name: String,
    /// Its value (`-` when not set).
    pub value: String,
    /// What it does.
    pub meaning: String,
}

/// The cluster's lsb.params as mcfed uses them, with what each does.
pub fn rows(spec: &MemberConfig) -> Vec<ParamRow> {
    let config = &spec.cluster;
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
        shown(&reply.cluster),
        shown(&reply.address),
        clock(reply.now)
    )
}

/// The host part of a process's address (`127.0.0.1:7870` → `127.0.0.1`,
/// `[::1]:7870` → `::1`): the cluster's management host, as LSF names it.
pub fn master_host(address: &str) -> &str {
    let host = address
        .rsplit_once(':')
        .filter(|(host, port)| !host.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
        .map_or(address, |(host, _)| host);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// `lsid` under LSF's own command name: LSF 10.1's six lines (a version
/// banner, two lines about it, a blank line, then `My cluster name is
/// NAME` and `My master name is HOST`), which tools parse.
pub fn lsid_lsf(reply: &ParamsReply) -> String {
    format!(
        "IBM Spectrum LSF Standard 10.1.0.0, emulated by mcfed {}\nmcfed emulates an LSF multicluster federation; it is not IBM software.\nEmulated time of cluster {}: {}\n\nMy cluster name is {}\nMy master name is {}\n",
        env!("CARGO_PKG_VERSION"),
        shown(&reply.cluster),
        clock(reply.now),
        shown(&reply.cluster),
        shown(master_host(&reply.address))
    )
}

/// `lsclusters`: the cluster, its status, its management host and its
/// hosts (all of them servers), as LSF prints them.
pub fn lsclusters(reply: &ParamsReply, hosts: usize) -> String {
    let mut table = Table::new(
        "lsclusters",
        "CLUSTERS",
        &[
            "CLUSTER_NAME",
            "STATUS",
            "MASTER_HOST",
            "ADMIN",
            "HOSTS",
            "SERVERS",
        ],
    );
    table.rows.push(vec![
        reply.cluster.clone(),
        "ok".to_owned(),
        master_host(&reply.address).to_owned(),
        "mcfed".to_owned(),
        hosts.to_string(),
        hosts.to_string(),
    ]);
    table.text()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_master_host_is_the_address_without_its_port() {
        assert_eq!(master_host("127.0.0.1:7870"), "127.0.0.1");
        assert_eq!(master_host("[::1]:7870"), "::1");
        assert_eq!(master_host("hostA"), "hostA");
        assert_eq!(master_host("hostA.example:1"), "hostA.example");
    }

    #[test]
    fn lsid_prints_lsf_s_six_lines() {
        let reply = ParamsReply {
            cluster: "Cluster1".into(),
            address: "127.0.0.1:7870".into(),
            now: 61.0,
            params: Vec::new(),
        };
        let text = lsid_lsf(&reply);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert!(
            lines[0].starts_with("IBM Spectrum LSF Standard 10.1"),
            "{text}"
        );
        assert_eq!(lines[3], "");
        assert_eq!(lines[4], "My cluster name is Cluster1");
        assert_eq!(lines[5], "My master name is 127.0.0.1");
    }
}
