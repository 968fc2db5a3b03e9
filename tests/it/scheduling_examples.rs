//! End-to-end: the `mcfed` binary on the scheduling scenarios: `--show
//! queues` as text and JSON, under both engines, and configuration warnings.

use serde_json::Value;

use crate::common::{mcfed, stdout, succeeded};

const POOL: &str = "scenarios/fairshare/pool-three-queues-12-slots.toml";
const USERS: &str = "scenarios/fairshare/user-dynamic-priority.toml";
const BACKFILL: &str = "scenarios/preemption/backfill-preemption.toml";

#[test]
fn show_queues_prints_bqueues_l() {
    let output = mcfed(&["run", POOL, "--show", "queues", "--at", "30m"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout(&output);
    assert!(text.contains("# cluster C1 at 00:30:00"), "{text}");
    assert!(text.contains("QUEUE: queue1"), "{text}");
    assert!(
        text.contains("SLOT_POOL: poolA  SLOT_SHARE: 50%  DESERVED: 8 of 12 slots"),
        "{text}"
    );
    assert!(
        text.contains("SLOT_SHARE: 30%  DESERVED: 0 of 12 slots"),
        "{text}"
    );
    assert!(
        !text.contains("decisions"),
        "the queues replace the decisions"
    );

    let output = mcfed(&["run", USERS, "--show", "queues", "--at", "30m"]);
    let text = stdout(&output);
    assert!(text.contains("SHARE_INFO_FOR: normal/"), "{text}");
    assert!(
        text.contains(
            "USER/GROUP      SHARES   PRIORITY  STARTED  RESERVED   CPU_TIME   RUN_TIME    ADJUST"
        ),
        "{text}"
    );
    // alice: 10 shares, priority 1.501, 1 slot, 0.4466 h of CPU, 1800 s run.
    let alice = text
        .lines()
        .find(|line| line.trim_start().starts_with("alice"))
        .expect("a row for alice");
    let fields: Vec<&str> = alice.split_whitespace().collect();
    assert_eq!(fields[..4], ["alice", "10", "1.501", "1"], "{alice}");
    assert_eq!(fields[6], "1800", "{alice}");
}

#[test]
fn show_queues_as_json_is_the_same_under_both_engines() {
    let mut seen = Vec::new();
    for engine in ["events", "actors"] {
        let output = mcfed(&[
            "run", USERS, "--show", "queues", "--at", "30m", "--report", "json", "--engine", engine,
        ]);
        assert!(output.status.success(), "{engine}");
        let json: Value = serde_json::from_str(stdout(&output).trim()).expect("one JSON object");
        assert_eq!(json["time"], 1800.0);
        let users = &json["clusters"][0]["queues"][0]["fairshare"]["users"];
        let alice = users
            .as_array()
            .and_then(|rows| rows.iter().find(|row| row["user"] == "alice"))
            .expect("alice's row");
        let priority = alice["priority"].as_f64().expect("a number");
        assert!((priority - 1.5009).abs() < 1e-3, "{priority}");
        seen.push(json);
    }
    assert_eq!(seen[0], seen[1], "both engines see the same queues");
}

#[test]
fn show_queues_picks_one_cluster_or_says_it_is_unknown() {
    let output = mcfed(&[
        "run",
        "scenarios/fairshare/pool-max-slots-use-priority.toml",
        "--show",
        "queues",
        "--cluster",
        "C2",
        "--report",
        "json",
    ]);
    succeeded(&output);
    let json: Value = serde_json::from_str(stdout(&output).trim()).expect("one JSON object");
    let clusters = json["clusters"].as_array().expect("clusters");
    assert_eq!(clusters.len(), 1);
    assert_eq!(clusters[0]["cluster"], "C2");
    let pool = &clusters[0]["queues"][0]["slot_pool"];
    assert_eq!(pool["max_slots_in_pool"], 8);
    assert_eq!(pool["use_priority_in_pool"], false);

    let output = mcfed(&["run", POOL, "--show", "queues", "--cluster", "nosuch"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no cluster named `nosuch`"));

    let output = mcfed(&["run", POOL, "--at", "10m"]);
    assert_eq!(output.status.code(), Some(2), "--at needs --show");
}

#[test]
fn warnings_name_file_line_and_field() {
    for command in ["validate", "run"] {
        let output = mcfed(&[command, BACKFILL]);
        assert!(output.status.success(), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let warning = stderr
            .lines()
            .find(|line| line.starts_with("warning: "))
            .unwrap_or_else(|| panic!("{command} warns: {stderr}"));
        assert!(
            warning.contains(&format!("{BACKFILL}:"))
                && warning.contains("field `cluster[0].queue[1].PREEMPTION`")
                && warning.contains("may delay jobs with slot reservations"),
            "{warning}"
        );
        assert_eq!(
            stderr.matches("warning: ").count(),
            1,
            "only C1 warns: {stderr}"
        );
    }
}

#[test]
fn failing_scheduling_expectations_say_what_happened() {
    let source =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(POOL))
            .expect("scenario exists")
            .replacen("running_slots = 6", "running_slots = 7", 1);
    let dir = std::env::temp_dir().join(format!("mcfed-sched-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("pool.toml");
    std::fs::write(&path, source).expect("scratch scenario");
    let output = mcfed(&["run", path.to_str().expect("utf-8"), "--check"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(
            "FAIL expect[0]: at 00:00:00 queue queue1@C1 has 7 running, 6 deserved slots"
        ),
        "{text}"
    );
    assert!(
        text.contains("actual: 6 running, 14 pending, 0 suspended, 6 deserved, 0 reserved slots"),
        "{text}"
    );
}
