//! `bhosts`: every host of the cluster, with its slots by state.

use std::fmt::Write as _;

use mcfed_cluster::{ClusterNode, JobState};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::table::fields::{Field, Selection};
use crate::table::{Table, dash, shown};

/// One host, as `bhosts` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    /// HOST_NAME.
    pub host_name: String,
    /// STATUS: ok, closed (full), closed_Adm (closed by configuration),
    /// unavail (failed, as LSF shows a host that is down).
    pub status: String,
    /// MAX: its MXJ.
    pub max: u32,
    /// NJOBS: slots of jobs on it.
    pub njobs: u32,
    /// RUN slots.
    pub run: u32,
    /// SSUSP slots.
    pub ssusp: u32,
    /// Its boolean resources.
    pub resources: Vec<String>,
    /// USUSP slots (jobs stopped by `bstop`).
    #[serde(default)]
    pub ususp: u32,
    /// Processors (ncpus).
    #[serde(default)]
    pub ncpus: u32,
    /// JL/U: slots each user may hold on it.
    #[serde(default)]
    pub jl_u: Option<u32>,
    /// The queues that dispatch to it.
    #[serde(default)]
    pub queues: Vec<String>,
    /// RSV: free slots on it held by slot reservations (SLOT_RESERVE).
    #[serde(default)]
    pub rsv: u32,
}

/// Every host of the cluster, in configuration order.
pub fn rows(node: &ClusterNode) -> Vec<HostRow> {
    let cluster = node.cluster();
    // RUN, SSUSP and USUSP slots of each host.
    let mut usage: FxHashMap<usize, [u32; 3]> = FxHashMap::default();
    let reserved = cluster.reserved_slots_by_host();
    for job in cluster.jobs() {
        for place in &job.placement {
            let entry = usage.entry(place.host).or_default();
            match job.state {
                JobState::Running => entry[0] += place.slots,
                JobState::Suspended => entry[1] += place.slots,
                JobState::UserSuspended => entry[2] += place.slots,
                _ => {}
            }
        }
    }
    cluster
        .host_configs()
        .enumerate()
        .map(|(index, config)| {
            let [run, ssusp, ususp] = usage.get(&index).copied().unwrap_or_default();
            let status = if cluster.host_failed(index) {
                "unavail"
            } else if config.closed {
                "closed_Adm"
            } else if cluster.host_used_slots(index) >= config.max_slots {
                "closed"
            } else {
                "ok"
            };
            let queues = cluster
                .queue_configs()
                .filter(|queue| match &queue.hosts {
                    mcfed_cluster::HostSelection::All => true,
                    mcfed_cluster::HostSelection::Listed(hosts) => hosts.contains(&config.name),
                })
                .map(|queue| queue.name.to_string())
                .collect();
            HostRow {
                host_name: config.name.clone(),
                status: status.to_owned(),
                max: config.max_slots,
                njobs: run + ssusp + ususp,
                run,
                ssusp,
                resources: config.resources.clone(),
                ususp,
                ncpus: config.processor_count(),
                jl_u: config.user_slot_limit,
                queues,
                rsv: reserved.get(index).copied().unwrap_or(0),
            }
        })
        .collect()
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
                row.rsv.to_string(),
            ]
        })
        .collect();
    table
}

/// One field of `bhosts -o`.
pub type HostField = Field<HostRow>;

/// Every field `bhosts -o` takes, with LSF's names, aliases and headers
/// (the `-json` keys are the names in upper case).
pub const HOST_FIELDS: &[HostField] = &[
    HostField {
        name: "host_name",
        alias: "hname",
        header: "HOST_NAME",
        width: 20,
        value: |h| h.host_name.clone(),
    },
    HostField {
        name: "status",
        alias: "stat",
        header: "STATUS",
        width: 15,
        value: |h| h.status.clone(),
    },
    HostField {
        name: "cpuf",
        alias: "",
        header: "CPUF",
        width: 10,
        value: |_| "1.00".to_owned(),
    },
    HostField {
        name: "jl_u",
        alias: "jlu",
        header: "JL/U",
        width: 8,
        value: |h| dash(h.jl_u),
    },
    HostField {
        name: "max",
        alias: "",
        header: "MAX",
        width: 8,
        value: |h| h.max.to_string(),
    },
    HostField {
        name: "njobs",
        alias: "",
        header: "NJOBS",
        width: 8,
        value: |h| h.njobs.to_string(),
    },
    HostField {
        name: "run",
        alias: "",
        header: "RUN",
        width: 8,
        value: |h| h.run.to_string(),
    },
    HostField {
        name: "ssusp",
        alias: "",
        header: "SSUSP",
        width: 8,
        value: |h| h.ssusp.to_string(),
    },
    HostField {
        name: "ususp",
        alias: "",
        header: "USUSP",
        width: 8,
        value: |h| h.ususp.to_string(),
    },
    HostField {
        name: "rsv",
        alias: "",
        header: "RSV",
        width: 8,
        value: |h| h.rsv.to_string(),
    },
    HostField {
        name: "dispatch_window",
        alias: "dispwin",
        header: "DISPATCH_WINDOW",
        width: 50,
        value: |_| "-".to_owned(),
    },
];

/// The fields of `bhosts`' default columns.
const DEFAULT_HOST_FIELDS: [&str; 9] = [
    "host_name",
    "status",
    "jl_u",
    "max",
    "njobs",
    "run",
    "ssusp",
    "ususp",
    "rsv",
];

/// Reads `bhosts -o`'s field list (see [`crate::table::fields`]).
pub fn parse_fields(spec: &str) -> Result<Selection<HostRow>, String> {
    crate::table::fields::parse("bhosts", HOST_FIELDS, spec)
}

/// The default columns' fields, for LSF's `-json` without `-o`.
pub fn default_fields() -> Selection<HostRow> {
    Selection::named(HOST_FIELDS, &DEFAULT_HOST_FIELDS)
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
        let _ = writeln!(text, "HOST  {}", shown(&row.host_name));
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
            row.rsv
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

#[cfg(test)]
mod tests {
    use mcfed_federation::{Effects, Member};
    use mcfed_protocol::{JobSpec, SimTime};

    use super::*;

    /// Two hosts of 2 slots; queue `r` reserves slots (SLOT_RESERVE).
    const SCENARIO: &str = r#"
name = "rsv"
end = "1h"

[[cluster]]
name = "C1"

[[cluster.host]]
name = "h0"
MXJ = 2

[[cluster.host]]
name = "h1"
MXJ = 2

[[cluster.queue]]
name = "r"
SLOT_RESERVE = "MAX_RESERVE_TIME[100]"
"#;

    /// `bhosts` RSV (issue 27 item 10) shows each host's slots held by a
    /// slot reservation, in every printer: the columns, `-l`, `-o rsv`.
    /// A one-slot job runs on h0; a 4-slot job reserves the 3 free slots,
    /// h1's 2 first (most free), then h0's 1.
    #[test]
    fn rsv_shows_the_reserved_slots_of_each_host() {
        let scenario = mcfed_scenario::parse("rsv.toml", SCENARIO).expect("valid");
        let (mut member, _) = Member::build(scenario.clusters[0].member_spec()).expect("builds");
        let mut effects = Effects::default();
        let spec = |name: &str, slots: u32| {
            let mut spec = JobSpec::simple(name, "u", std::time::Duration::from_secs(600));
            spec.slots = slots;
            spec
        };
        member
            .submit(SimTime::ZERO, "r", spec("small", 1), &mut effects)
            .expect("accepted");
        member.step(SimTime::ZERO, &mut effects);
        let now = SimTime::from_secs(60);
        member
            .submit(now, "r", spec("wide", 4), &mut effects)
            .expect("accepted");
        member.step(now, &mut effects);
        let rows = rows(member.node());
        let rsv: Vec<(&str, u32, u32)> = rows
            .iter()
            .map(|row| (row.host_name.as_str(), row.run, row.rsv))
            .collect();
        assert_eq!(rsv, vec![("h0", 1, 1), ("h1", 0, 2)]);
        let table = hosts(&rows);
        let h1 = table
            .lines()
            .find(|line| line.starts_with("h1"))
            .expect("h1");
        assert!(h1.trim_end().ends_with(" 2"), "{table}");
        assert!(
            hosts_long(&rows).contains("      0      2 -"),
            "{}",
            hosts_long(&rows)
        );
        let fields = parse_fields("host_name rsv").expect("fields");
        let picked = fields.table("bhosts", "HOSTS", &rows).rows;
        assert_eq!(picked[1], vec!["h1".to_owned(), "2".to_owned()]);
    }
}
