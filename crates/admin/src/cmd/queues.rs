//! `bqueues`: every queue of the cluster (the cluster's own
//! [`QueueReport`], which `mcfed run --show queues` prints too), with
//! MAX_RSCHED_TIME filled in from the send queues.

use mcfed_federation::Member;
use mcfed_protocol::SimTime;

pub use mcfed_cluster::QueueReport;

use crate::table::fields::{Field, Selection};
use crate::table::{Table, dash};

/// Every queue of the cluster at `now`, in configuration order, as the
/// member reports them ([`Member::report`]: a send queue's jobs held at
/// the submission cluster included).
pub fn rows(member: &Member, now: SimTime) -> Vec<QueueReport> {
    member.report(now).queues
}

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

/// One field of `bqueues -o`.
pub type QueueField = Field<QueueReport>;

/// Every field `bqueues -o` takes, with LSF's names, aliases and
/// headers (the `-json` keys are the names in upper case).
pub const QUEUE_FIELDS: &[QueueField] = &[
    QueueField {
        name: "queue_name",
        alias: "qname",
        header: "QUEUE_NAME",
        width: 15,
        value: |q| q.queue.clone(),
    },
    QueueField {
        name: "priority",
        alias: "prio",
        header: "PRIO",
        width: 10,
        value: |q| q.priority.to_string(),
    },
    QueueField {
        name: "status",
        alias: "stat",
        header: "STATUS",
        width: 12,
        value: |q| q.status.clone(),
    },
    QueueField {
        name: "max",
        alias: "",
        header: "MAX",
        width: 10,
        value: |q| dash(q.max),
    },
    QueueField {
        name: "jl_u",
        alias: "jlu",
        header: "JL/U",
        width: 10,
        value: |q| dash(q.jl_u),
    },
    QueueField {
        name: "jl_p",
        alias: "jlp",
        header: "JL/P",
        width: 10,
        value: |_| "-".to_owned(),
    },
    QueueField {
        name: "jl_h",
        alias: "jlh",
        header: "JL/H",
        width: 10,
        value: |q| dash(q.jl_h),
    },
    QueueField {
        name: "njobs",
        alias: "",
        header: "NJOBS",
        width: 10,
        value: |q| q.njobs.to_string(),
    },
    QueueField {
        name: "pend",
        alias: "",
        header: "PEND",
        width: 10,
        value: |q| q.pend.to_string(),
    },
    QueueField {
        name: "run",
        alias: "",
        header: "RUN",
        width: 10,
        value: |q| q.run.to_string(),
    },
    QueueField {
        name: "susp",
        alias: "",
        header: "SUSP",
        width: 10,
        value: |q| q.susp.to_string(),
    },
    QueueField {
        name: "rsv",
        alias: "",
        header: "RSV",
        width: 10,
        value: |q| q.rsv.to_string(),
    },
];

/// The fields of `bqueues`' default columns.
const DEFAULT_QUEUE_FIELDS: [&str; 11] = [
    "queue_name",
    "priority",
    "status",
    "max",
    "jl_u",
    "jl_p",
    "jl_h",
    "njobs",
    "pend",
    "run",
    "susp",
];

/// Reads `bqueues -o`'s field list (see [`crate::table::fields`]).
pub fn parse_fields(spec: &str) -> Result<Selection<QueueReport>, String> {
    crate::table::fields::parse("bqueues", QUEUE_FIELDS, spec)
}

/// The default columns' fields, for LSF's `-json` without `-o`.
pub fn default_fields() -> Selection<QueueReport> {
    Selection::named(QUEUE_FIELDS, &DEFAULT_QUEUE_FIELDS)
}

/// `bqueues`, or `bqueues -l` (the block `mcfed run --show queues` prints,
/// [`mcfed_run::inspect::queues_long`]).
pub fn queues(rows: &[QueueReport], long: bool) -> String {
    if long {
        return mcfed_run::inspect::queues_long(rows);
    }
    queues_table(rows).text()
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use mcfed_run::inspect::queues_json;
    use mcfed_run::probe::{Snapshot, snapshot};
    use serde_json::Value;

    use super::*;
    use crate::AdminResponse;

    fn bundled(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("scenarios") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                bundled(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "toml") {
                found.push(path);
            }
        }
    }

    /// The queues as `mcfed bqueues -o json` prints them: the admin
    /// answer, through a postcard frame.
    fn admin_view(member: &Member, now: SimTime) -> Vec<Value> {
        let answer = AdminResponse::Queues(rows(member, now));
        let bytes = crate::encode(&answer).expect("encodes");
        let AdminResponse::Queues(rows) = crate::decode(&bytes).expect("decodes") else {
            panic!("a queues answer");
        };
        let json: Value =
            serde_json::from_str(&crate::table::json(&rows)).expect("bqueues -o json is JSON");
        json.as_array().expect("an array").clone()
    }

    /// The queues as `mcfed run --show queues --report json` prints them.
    fn show_view(member: &Member, now: SimTime) -> Vec<Value> {
        let snapshot = Snapshot {
            time: now.as_secs_f64(),
            clusters: vec![snapshot(member, now, &Default::default())],
        };
        let json: Value =
            serde_json::from_str(&queues_json(&snapshot, None).expect("JSON")).expect("JSON");
        json["clusters"][0]["queues"]
            .as_array()
            .expect("an array")
            .clone()
    }

    fn keys(queue: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = queue
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys
    }

    /// Every queue of every bundled scenario reads the same through
    /// `--show queues` and through the admin `Queues` answer: the same
    /// fields with the same values, MAX_RSCHED_TIME included (one report,
    /// the member's).
    #[test]
    fn show_queues_and_bqueues_are_one_view() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut files = Vec::new();
        bundled(&root, &mut files);
        files.sort();
        assert!(files.len() > 10, "the bundled scenarios: {files:?}");
        let (mut queues_seen, mut rsched_seen, mut counters_seen) = (0, 0, 0);
        for file in &files {
            // Whether every bundled scenario is valid is checked elsewhere
            // (the engines' tests); this one looks at those that load.
            let Ok(scenario) = mcfed_scenario::load(file) else {
                continue;
            };
            for spec in &scenario.clusters {
                let (member, _) = Member::build(spec.member_spec()).expect("builds");
                let now = SimTime::ZERO;
                let admin = admin_view(&member, now);
                let show = show_view(&member, now);
                assert_eq!(admin.len(), show.len(), "{}", file.display());
                for (admin, show) in admin.into_iter().zip(show) {
                    queues_seen += 1;
                    assert_eq!(keys(&admin), keys(&show), "{}", file.display());
                    if !admin["max_rsched_time"].is_null() {
                        rsched_seen += 1;
                        assert!(!admin["sndjobs_to"].as_array().expect("list").is_empty());
                    }
                    if !admin["counters"].is_null() {
                        counters_seen += 1;
                    }
                    assert_eq!(admin, show, "{}", file.display());
                }
            }
        }
        assert!(queues_seen > 0 && rsched_seen > 0 && counters_seen > 0);
    }

    /// The documented `bqueues -o json` names and the `--show queues` ones
    /// are all there.
    #[test]
    fn the_queue_view_keeps_both_views_field_names() {
        let scenario = mcfed_scenario::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../scenarios/forwarding/recall-max-rsched-time.toml"),
        )
        .expect("loads");
        let spec = &scenario.clusters[0];
        let (member, _) = Member::build(spec.member_spec()).expect("builds");
        let queue = &admin_view(&member, SimTime::ZERO)[0];
        for key in [
            "queue_name",
            "prio",
            "status",
            "max",
            "jl_u",
            "jl_h",
            "njobs",
            "pend",
            "run",
            "susp",
            "rsv",
            "policies",
            "preemption",
            "hosts",
            "sndjobs_to",
            "max_rsched_time",
            "rcvjobs_from",
            "impt_jobbklg",
            "counters",
            "slot_pool",
            "fairshare",
            "aps_priority",
            "queue_group",
        ] {
            assert!(queue.get(key).is_some(), "no `{key}` in {queue}");
        }
        assert_eq!(keys(queue).len(), 23, "{queue}");
        assert_eq!(queue["status"], "Open:Active");
    }

    /// `bqueues` and `bqueues -l` print the one view, MAX_RSCHED_TIME
    /// included.
    #[test]
    fn bqueues_prints_the_one_view() {
        let scenario = mcfed_scenario::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../scenarios/forwarding/recall-max-rsched-time.toml"),
        )
        .expect("loads");
        let spec = &scenario.clusters[0];
        let (member, _) = Member::build(spec.member_spec()).expect("builds");
        let rows = super::rows(&member, SimTime::ZERO);
        let long = queues(&rows, true);
        assert!(
            long.starts_with("QUEUE: send\nPARAMETERS/STATISTICS\n"),
            "{long}"
        );
        assert!(
            long.contains("SNDJOBS_TO: HighPriority@Cluster2 HighPriority@Cluster3\n"),
            "{long}"
        );
        assert!(long.contains("MAX_RSCHED_TIME: 00:02:00\n"), "{long}");
        assert!(long.contains("HOSTS:  all\n"), "{long}");
        let short = queues(&rows, false);
        let lines: Vec<&str> = short.lines().collect();
        assert_eq!(
            lines[0],
            "QUEUE_NAME  PRIO  STATUS       MAX  JL/U  JL/P  JL/H  NJOBS  PEND  RUN  SUSP",
            "{short}"
        );
        assert!(
            lines[1].starts_with("send        1     Open:Active  -"),
            "{short}"
        );

        let spec = &scenario.clusters[1];
        let (member, _) = Member::build(spec.member_spec()).expect("builds");
        let long = queues(&super::rows(&member, SimTime::ZERO), true);
        assert!(long.contains("RCVJOBS_FROM: Cluster1\n"), "{long}");
        assert!(long.contains("IMPT_JOBBKLG: "), "{long}");
        assert!(long.contains("COUNTERS: total "), "{long}");
    }

    /// A job of a send queue that no remote queue can take waits at its
    /// submission cluster: `bqueues` counts it as PEND there, as LSF does
    /// (it showed NJOBS 0 PEND 0), and `--show queues` says the same.
    #[test]
    fn a_send_queues_waiting_jobs_are_pending_in_bqueues() {
        let scenario = mcfed_scenario::parse(
            "waiting.toml",
            r#"
name = "waiting"
end = "5m"
[params]
MC_PLUGIN_UPDATE_INTERVAL = "30s"

[[cluster]]
name = "C1"
params = { MC_PLUGIN_SCHEDULE_ENHANCE = "RESOURCE_ONLY" }

[[cluster.queue]]
name = "send"
SNDJOBS_TO = "normal@C2"

[[cluster]]
name = "C2"

[[cluster.host]]
name = "h"
MXJ = 2

[[cluster.queue]]
name = "normal"
RCVJOBS_FROM = "C1"
"#,
        )
        .expect("valid");
        let spec = &scenario.clusters[0];
        let (mut member, _) = Member::build(spec.member_spec()).expect("builds");
        let mut effects = mcfed_federation::Effects::default();
        let mut wide =
            mcfed_protocol::JobSpec::simple("wide", "u", std::time::Duration::from_secs(60));
        wide.slots = 3;
        member
            .submit(SimTime::ZERO, "send", wide, &mut effects)
            .expect("accepted");
        let now = SimTime::from_secs(60);
        member.step(now, &mut effects);
        let rows = super::rows(&member, now);
        let send = rows.iter().find(|row| row.queue == "send").expect("send");
        assert_eq!((send.njobs, send.pend, send.run), (3, 3, 0), "{send:?}");
        let show = show_view(&member, now);
        assert_eq!(show[0]["pend"], 3);
    }
}
