//! Bad scenarios are refused with a message naming the file, the line and
//! the field, and never panic.

use crate::common;

use common::{line_of, problems};
use mcfed_scenario::{ScenarioError, parse};

/// A valid two-cluster scenario to break in the tests below.
const GOOD: &str = r#"
name = "good"

[params]
MC_PLUGIN_UPDATE_INTERVAL = "30s"

[[cluster]]
name = "C1"
params = { MC_PLUGIN_SCHEDULE_ENHANCE = "COUNT_PREEMPTABLE" }

[[cluster.queue]]
name = "send"
SNDJOBS_TO = ["high@C2"]

[[cluster]]
name = "C2"

[[cluster.host]]
name = "h"
count = 2
MXJ = 4

[[cluster.queue]]
name = "high"
PRIORITY = 40
RCVJOBS_FROM = "C1"

[[submit]]
at = "45s"
cluster = "C1"
queue = "send"
name = "job1"
slots = 2

[[expect]]
job = "job1"
forwarded_to = "high@C2"
"#;

#[test]
fn the_good_scenario_is_accepted() {
    let scenario = parse("good.toml", GOOD).expect("valid");
    assert_eq!(scenario.clusters.len(), 2);
    assert_eq!(scenario.submissions.len(), 1);
    assert_eq!(scenario.expectations.len(), 1);
}

#[test]
fn misspelt_key() {
    let source = GOOD.replace("PRIORITY = 40", "PRIORTY = 40");
    let found = problems(&source);
    assert_eq!(found.len(), 1);
    let (line, field, message) = &found[0];
    assert_eq!(*line, line_of(&source, "PRIORTY"));
    assert_eq!(field, "cluster[1].queue[0].PRIORTY");
    assert!(message.contains("unknown field `PRIORTY`"), "{message}");
    assert!(
        message.contains("PRIORITY"),
        "lists the valid keys: {message}"
    );
}

#[test]
fn unknown_mode_keyword() {
    let source = GOOD.replace(
        "\"COUNT_PREEMPTABLE\"",
        "\"COUNT_PREEMPTABLE HIGH_PRIORITY\"",
    );
    let found = problems(&source);
    assert_eq!(found.len(), 1);
    let (line, field, message) = &found[0];
    assert_eq!(*line, line_of(&source, "HIGH_PRIORITY"));
    assert_eq!(field, "cluster[0].params.MC_PLUGIN_SCHEDULE_ENHANCE");
    assert!(message.contains("`HIGH_PRIORITY`"), "{message}");
}

#[test]
fn queue_sending_to_an_unknown_cluster() {
    let source = GOOD.replace(
        "SNDJOBS_TO = [\"high@C2\"]",
        "SNDJOBS_TO = [\"high@C2\", \"high@C9\"]",
    );
    let found = problems(&source);
    assert_eq!(found.len(), 1);
    let (line, field, message) = &found[0];
    assert_eq!(*line, line_of(&source, "high@C9"));
    assert_eq!(field, "cluster[0].queue[0].SNDJOBS_TO[1]");
    assert!(message.contains("unknown cluster `C9`"), "{message}");
}

#[test]
fn negative_slot_count() {
    let source = GOOD.replace("slots = 2", "slots = -2");
    let found = problems(&source);
    assert_eq!(found.len(), 1);
    let (line, field, message) = &found[0];
    assert_eq!(*line, line_of(&source, "slots = -2"));
    assert_eq!(field, "submit[0].slots");
    assert!(message.contains("-2"), "{message}");
}

#[test]
fn negative_mxj_and_zero_slots() {
    let source = GOOD.replace("MXJ = 4", "MXJ = -4");
    let (line, field, _) = &problems(&source)[0];
    assert_eq!(
        (*line, field.as_str()),
        (line_of(&source, "MXJ = -4"), "cluster[1].host[0].MXJ")
    );
    let source = GOOD.replace("slots = 2", "slots = 0");
    let (_, field, message) = &problems(&source)[0];
    assert_eq!(field, "submit[0].slots");
    // The one bounds rule's words (mcfed_protocol::bounds::JOB_SLOTS).
    assert!(message.contains("slots = 0 is out of bounds"), "{message}");
}

/// Host types (issue 27 item 9): a host's `type` must be a name, a job's
/// `type==X` must read and, in a local queue, be met by some host.
#[test]
fn host_types_are_names_and_job_types_are_met() {
    let typed = GOOD.replace("MXJ = 4", "MXJ = 4\ntype = \"LINUX86\"");
    assert!(parse("typed.toml", &typed).is_ok(), "a typed host");
    let source = GOOD.replace("MXJ = 4", "MXJ = 4\ntype = \"LINUX 86\"");
    let (line, field, message) = &problems(&source)[0];
    assert_eq!(*line, line_of(&source, "type = "));
    assert_eq!(field, "cluster[1].host[0].type");
    assert!(message.contains("is not a host type"), "{message}");
    let asks = |resource: &str| {
        typed.replace(
            "slots = 2",
            &format!("slots = 2\nresources = [\"{resource}\"]"),
        )
    };
    assert!(parse("asks.toml", &asks("type == LINUX86")).is_ok());
    let source = asks("mem==4");
    let (_, field, message) = &problems(&source)[0];
    assert_eq!(field, "submit[0].resources");
    assert!(message.contains("type and model"), "{message}");
    let local = format!(
        "{typed}\n[[cluster.job]]\nqueue = \"high\"\nname = \"ppc\"\nresources = [\"type==PPC\"]\n"
    );
    let (_, field, message) = &problems(&local)[0];
    assert!(field.ends_with(".resources"), "{field}");
    assert!(message.contains("is of `type==PPC`"), "{message}");
}

/// Advance reservations (issue 27 item 8): a bad one is refused at its
/// field, and a job may name only one of its cluster's, for its user.
#[test]
fn advance_reservations_are_checked_at_their_fields() {
    let with = |reservation: &str, job: &str| {
        GOOD.replace(
            "RCVJOBS_FROM = \"C1\"",
            &format!("RCVJOBS_FROM = \"C1\"\n\n[[cluster.reservation]]\n{reservation}"),
        ) + &format!("\n[[submit]]\nat = \"1m\"\ncluster = \"C2\"\nqueue = \"high\"\n{job}\n")
    };
    let good = "name = \"r\"\nhosts = \"h\"\nstart = \"10m\"\nend = \"20m\"\nusers = \"alice\"";
    assert!(
        parse(
            "ok.toml",
            &with(good, "user = \"alice\"\nreservation = \"r\"")
        )
        .is_ok()
    );
    let source = with(&good.replace("hosts = \"h\"", "hosts = \"h9\""), "");
    let (line, field, message) = &problems(&source)[0];
    assert_eq!(field, "cluster[1].reservation[0].hosts");
    assert_eq!(*line, line_of(&source, "hosts = \"h9\""));
    assert!(message.contains("no host named `h9`"), "{message}");
    let source = with(good, "user = \"bob\"\nreservation = \"r\"");
    let (_, field, message) = &problems(&source)[0];
    assert_eq!(field, "submit[1].reservation");
    assert!(message.contains("not for user `bob`"), "{message}");
    let source = with(good, "reservation = \"nosuch\"");
    let (_, field, _) = &problems(&source)[0];
    assert_eq!(field, "submit[1].reservation");
}

#[test]
fn semantic_problems_are_all_reported_at_once() {
    let source = GOOD
        .replace("RCVJOBS_FROM = \"C1\"", "RCVJOBS_FROM = \"C7\"")
        .replace(
            "PRIORITY = 40",
            "PRIORITY = 40\nPREEMPTION = \"PREEMPTIVE[nosuch]\"",
        );
    let found = problems(&source);
    let fields: Vec<&str> = found.iter().map(|(_, field, _)| field.as_str()).collect();
    assert!(
        fields.contains(&"cluster[1].queue[0].RCVJOBS_FROM[0]"),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"cluster[0].queue[0].SNDJOBS_TO[0]"),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"cluster[1].queue[0].PREEMPTION"),
        "{fields:?}"
    );
}

#[test]
fn expectation_that_can_never_hold() {
    let source = GOOD.replace("forwarded_to = \"high@C2\"", "forwarded_to = \"low@C2\"");
    let (line, field, message) = &problems(&source)[0];
    assert_eq!(*line, line_of(&source, "low@C2"));
    assert_eq!(field, "expect[0].forwarded_to");
    assert!(message.contains("SNDJOBS_TO"), "{message}");
}

#[test]
fn bad_values_of_lsf_parameters() {
    for (from, to, field) in [
        ("count = 2", "count = 0", "cluster[1].host[0].count"),
        ("at = \"45s\"", "at = \"soon\"", "submit[0].at"),
        (
            "RCVJOBS_FROM = \"C1\"",
            "RCVJOBS_FROM = \"C1\"\nIMPT_JOBBKLG = \"lots\"",
            "cluster[1].queue[0].IMPT_JOBBKLG",
        ),
        (
            "RCVJOBS_FROM = \"C1\"",
            "RCVJOBS_FROM = \"C1\"\nIMPT_JOBBKLG = -1",
            "cluster[1].queue[0].IMPT_JOBBKLG",
        ),
        (
            "RCVJOBS_FROM = \"C1\"",
            "RCVJOBS_FROM = \"C1\"\nQJOB_LIMIT = 0",
            "cluster[1].queue[0].QJOB_LIMIT",
        ),
        (
            "PRIORITY = 40",
            "PRIORITY = 40\nPREEMPTION = \"PREEMPT\"",
            "cluster[1].queue[0].PREEMPTION",
        ),
        (
            "MC_PLUGIN_UPDATE_INTERVAL = \"30s\"",
            "MC_PLUGIN_UPDATE_INTERVAL = \"0s\"",
            "params.MC_PLUGIN_UPDATE_INTERVAL",
        ),
        ("queue = \"send\"", "queue = \"nosuch\"", "submit[0].queue"),
        (
            "name = \"job1\"",
            "name = \"job1\"\nstate = \"running\"",
            "submit[0].state",
        ),
        (
            "SNDJOBS_TO = [\"high@C2\"]",
            "SNDJOBS_TO = [\"high\"]",
            "cluster[0].queue[0].SNDJOBS_TO[0]",
        ),
    ] {
        let source = GOOD.replace(from, to);
        let found = problems(&source);
        assert!(
            found.iter().any(|(line, f, _)| f == field && *line > 0),
            "{to}: expected a located problem at {field}, got {found:?}"
        );
    }
}

/// The scheduling-policy keys: each bad value is a problem at its field,
/// with its line.
#[test]
fn bad_values_of_scheduling_policies() {
    let queue_key = |line: &str| format!("PRIORITY = 40\n{line}");
    for (to, field) in [
        (
            queue_key("FAIRSHARE = \"USER_SHARES[[alice 1]]\""),
            "cluster[1].queue[0].FAIRSHARE",
        ),
        (
            queue_key("SLOT_POOL = \"p\""),
            "cluster[1].queue[0].SLOT_POOL",
        ),
        (
            queue_key("SLOT_POOL = \"p\"\nSLOT_SHARE = 150"),
            "cluster[1].queue[0].SLOT_SHARE",
        ),
        (
            queue_key("SLOT_POOL = \"p\"\nSLOT_SHARE = 50\nPREEMPTION = \"PREEMPTIVE\""),
            "cluster[1].queue[0].PREEMPTION",
        ),
        (
            queue_key("SLOT_RESERVE = \"MAX_RESERVE_TIME[0]\""),
            "cluster[1].queue[0].SLOT_RESERVE",
        ),
        (
            queue_key("TERMINATE_WHEN = \"WINDOW\""),
            "cluster[1].queue[0].TERMINATE_WHEN",
        ),
        (
            queue_key("NO_PREEMPT_RUN_TIME = 60"),
            "cluster[1].queue[0].NO_PREEMPT_RUN_TIME",
        ),
        (
            queue_key("RUN_JOB_FACTOR = -1.0"),
            "cluster[1].queue[0].RUN_JOB_FACTOR",
        ),
        (
            queue_key("UJOB_LIMIT = 0"),
            "cluster[1].queue[0].UJOB_LIMIT",
        ),
        (
            queue_key("BACKFILL = \"maybe\""),
            "cluster[1].queue[0].BACKFILL",
        ),
    ] {
        let source = GOOD.replacen("PRIORITY = 40", &to, 1);
        let found = problems(&source);
        assert!(
            found.iter().any(|(line, f, _)| f == field && *line > 0),
            "{to}: expected a located problem at {field}, got {found:?}"
        );
    }
    for (to, field) in [
        (
            "MC_PLUGIN_UPDATE_INTERVAL = \"30s\"\nPREEMPT_FOR = \"MINI_JOB\"",
            "params.PREEMPT_FOR",
        ),
        (
            "MC_PLUGIN_UPDATE_INTERVAL = \"30s\"\nHIST_HOURS = -5.0",
            "params.HIST_HOURS",
        ),
        (
            "MC_PLUGIN_UPDATE_INTERVAL = \"30s\"\nFAIRSHARE_ADJUSTMENT_PLUGIN = \"cpu\"",
            "params.FAIRSHARE_ADJUSTMENT_PLUGIN",
        ),
        (
            "MC_PLUGIN_UPDATE_INTERVAL = \"30s\"\nPREEMPT_JOBTYPE = \"EXCLUSIVE\"",
            "params.PREEMPT_JOBTYPE",
        ),
    ] {
        let source = GOOD.replacen("MC_PLUGIN_UPDATE_INTERVAL = \"30s\"", to, 1);
        let found = problems(&source);
        assert!(
            found.iter().any(|(line, f, _)| f == field && *line > 0),
            "{to}: expected a located problem at {field}, got {found:?}"
        );
    }
    // lsb.users: a JL/P of 0 is refused at its line.
    let source = format!(
        "{GOOD}\n[[cluster]]\nname = \"C3\"\n[[cluster.user]]\nname = \"alice\"\n\"JL/P\" = 0.0\n"
    );
    let found = problems(&source);
    assert!(
        found
            .iter()
            .any(|(line, f, _)| f == "cluster[2].user[0].JL/P" && *line > 0),
        "{found:?}"
    );
}

/// Every kind of [[expect]], and keys that do not belong to its kind.
#[test]
fn expectations_of_every_kind_are_checked() {
    let with = |expect: &str| format!("{GOOD}\n[[expect]]\n{expect}\n");
    let scenario = parse(
        "good.toml",
        &with("at = \"1m\"\ncluster = \"C2\"\nqueue = \"high\"\nrunning_slots = 0"),
    )
    .expect("a queue's slots");
    assert_eq!(scenario.expectations.len(), 2);
    assert_eq!(
        scenario.probe_times(),
        vec![mcfed_protocol::SimTime::from_secs(60)]
    );
    for (expect, field, needle) in [
        (
            "at = \"1m\"\ncluster = \"C2\"\nqueue = \"high\"\nrunning_slots = 0\nuser = \"x\"",
            "expect[1].user",
            "does not belong",
        ),
        (
            "at = \"1m\"\ncluster = \"C2\"\nqueue = \"nosuch\"\nrunning_slots = 0",
            "expect[1].queue",
            "no queue",
        ),
        (
            "at = \"1m\"\ncluster = \"C2\"\nqueue = \"high\"\ndeserved_slots = 1",
            "expect[1].deserved_slots",
            "SLOT_POOL",
        ),
        (
            "at = \"1m\"\ncluster = \"C2\"\nqueue = \"high\"\nuser = \"a\"\npriority = 1.0",
            "expect[1].queue",
            "no FAIRSHARE",
        ),
        (
            "job = \"job1\"\nat = \"1m\"\nstate = \"RUN\"",
            "expect[1].job",
            "give `cluster`",
        ),
        (
            "job = \"job1\"\nat = \"1m\"\nstate = \"RUNNING-ISH\"",
            "expect[1].state",
            "PEND, RUN",
        ),
        (
            "job = \"nosuch\"\npreempted = true",
            "expect[1].job",
            "no job",
        ),
        (
            "job = \"job1\"\ncluster = \"C2\"\npreempted = false\npreempted_by = \"job1\"",
            "expect[1].preempted_by",
            "never hold",
        ),
        ("cluster = \"C2\"", "expect[1]", "needs one of"),
    ] {
        let source = with(expect);
        let found = problems(&source);
        assert!(
            found
                .iter()
                .any(|(line, f, message)| f == field && *line > 0 && message.contains(needle)),
            "{expect}: expected a problem at {field} containing {needle:?}, got {found:?}"
        );
    }
}

/// Settings LSF accepts with a warning are kept, located.
#[test]
fn warnings_are_located() {
    let source = GOOD.replacen(
        "PRIORITY = 40",
        "PRIORITY = 40\nSLOT_POOL = \"p\"\nSLOT_SHARE = 50\nSLOT_RESERVE = \"MAX_RESERVE_TIME[2]\"",
        1,
    );
    let scenario = parse("warn.toml", &source).expect("only a warning");
    assert_eq!(scenario.warnings.len(), 1);
    let warning = &scenario.warnings[0];
    assert_eq!(
        warning.field.to_string(),
        "cluster[1].queue[0].SLOT_RESERVE"
    );
    assert_eq!(warning.line, line_of(&source, "SLOT_RESERVE"));
    assert!(warning.render("warn.toml").starts_with("warn.toml:"));
}

#[test]
fn not_toml_at_all() {
    let found = problems("name = \"x\"\n[[cluster]\nname = 3");
    assert_eq!(found[0].0, 2);
    assert!(found[0].2.contains("not valid TOML"));
}

#[test]
fn unreadable_file() {
    let error = mcfed_scenario::load(std::path::Path::new("/nonexistent/scenario.toml"))
        .expect_err("missing file");
    assert!(matches!(error, ScenarioError::Read { .. }));
    assert!(error.to_string().contains("/nonexistent/scenario.toml"));
}

mod fuzz {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Mangled scenarios are refused or accepted, never a panic.
        #[test]
        fn mangled_scenarios_never_panic(cut in 0usize..super::GOOD.len(), insert in "[ -~\n]{0,12}") {
            let mut source = super::GOOD.to_owned();
            let cut = (0..=cut).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(0);
            source.insert_str(cut, &insert);
            let _ = mcfed_scenario::parse("fuzz.toml", &source);
        }
    }
}

#[test]
fn bad_chaos_tables_are_located() {
    for (addition, field) in [
        ("[chaos.links]\nloss = 2.0\n", "chaos.links.loss"),
        (
            "[[chaos.link]]\nfrom = \"C1\"\nto = \"C9\"\n",
            "chaos.link[0].to",
        ),
        (
            "[[chaos.partition]]\nbetween = [\"C1\"]\nfrom = \"1m\"\nuntil = \"2m\"\n",
            "chaos.partition[0].between",
        ),
        (
            "[[chaos.outage]]\ncluster = \"C2\"\nat = \"1m\"\ndown_for = \"0s\"\n",
            "chaos.outage[0].down_for",
        ),
        ("[[chaos.skew]]\ncluster = \"C2\"\n", "chaos.skew[0]"),
        ("[chaos]\nsed = 3\n", "chaos.sed"),
    ] {
        let source = format!("{GOOD}\n{addition}");
        let found = problems(&source);
        assert!(
            found.iter().any(|(line, f, _)| f == field && *line > 0),
            "{addition}: expected a located problem at {field}, got {found:?}"
        );
    }
    let source = format!("{GOOD}\n[[expect]]\nmetric = \"stale\"\nat_least = 1\n");
    let found = problems(&source);
    assert!(
        found
            .iter()
            .any(|(_, f, m)| f == "expect[1].metric" && m.contains("stale_decisions")),
        "{found:?}"
    );
}

#[test]
fn addresses_and_max_rsched_time_are_read_and_checked() {
    let source = GOOD
        .replace(
            "name = \"C2\"\n",
            "name = \"C2\"\naddress = \"127.0.0.1:7202\"\n",
        )
        .replace(
            "SNDJOBS_TO = [\"high@C2\"]",
            "SNDJOBS_TO = [\"high@C2\"]\nMAX_RSCHED_TIME = \"5m\"",
        );
    let scenario = parse("good.toml", &source).expect("valid");
    assert_eq!(
        scenario.clusters[1].address.as_deref(),
        Some("127.0.0.1:7202")
    );
    let send = &scenario.clusters[0]
        .forwarder
        .as_ref()
        .expect("forwarder")
        .send_queues[0];
    assert_eq!(
        send.max_rsched_time,
        Some(std::time::Duration::from_secs(300))
    );

    let source = GOOD
        .replace(
            "name = \"C2\"\n",
            "name = \"C2\"\naddress = \"localhost\"\n",
        )
        .replace(
            "RCVJOBS_FROM = \"C1\"",
            "RCVJOBS_FROM = \"C1\"\nMAX_RSCHED_TIME = \"5m\"",
        );
    let found = problems(&source);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].1, "cluster[1].address");
    assert_eq!(found[0].0, line_of(&source, "address = \"localhost\""));
    assert!(found[0].2.contains("host:port"), "{}", found[0].2);
    assert_eq!(found[1].1, "cluster[1].queue[0].MAX_RSCHED_TIME");
    assert!(found[1].2.contains("send queues"), "{}", found[1].2);
}
