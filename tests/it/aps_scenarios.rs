//! End-to-end: what turning absolute priority scheduling on changes
//! (seed 001, "Preemption", "Resource reservation", "Backfill
//! scheduling"): the same federation with and without APS_PRIORITY
//! dispatches its jobs in a different order, but the preemption picks the
//! same victim, and the reservation and backfill act the same.

use crate::common;

const PREEMPTION: &str = "scenarios/aps/preemption-unaffected.toml";

/// The scenario at `path` with its APS_PRIORITY lines removed and its
/// preemptor's name swapped in its expectations.
fn without_aps(text: &str) -> String {
    text.lines()
        .filter(|line| !line.starts_with("APS_PRIORITY"))
        .map(|line| match line {
            "job = \"h-second\"" => "job = \"h-first\"",
            "job = \"h-first\"" => "job = \"h-second\"",
            "preempted_by = \"h-second\"" => "preempted_by = \"h-first\"",
            other => other,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn aps_changes_the_dispatch_order_but_not_the_victim() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(PREEMPTION)).expect("scenario");
    let with_aps = common::mcfed(&["run", PREEMPTION, "--check"]);
    let held = common::succeeded(&with_aps);
    assert!(held.contains("5 of 5 expectations held"), "{held}");

    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("no-aps.toml");
    let changed = without_aps(&text);
    assert!(
        !changed.lines().any(|line| line.starts_with("APS_PRIORITY")),
        "{changed}"
    );
    std::fs::write(&plain, &changed).expect("write");
    // First come, first served: h-first runs (and preempts), h-second
    // pends; the victim is young again, old is left alone.
    let output = common::mcfed(&["run", plain.to_str().expect("utf-8"), "--check"]);
    let held = common::succeeded(&output);
    assert!(held.contains("5 of 5 expectations held"), "{held}");
    assert!(held.contains("job young is preempted by h-first"), "{held}");
}

const RESERVATION: &str = "scenarios/aps/reservation-backfill-unaffected.toml";

#[test]
fn aps_changes_which_job_backfills_first_but_not_the_reservation() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(RESERVATION)).expect("scenario");
    let held = common::succeeded(&common::mcfed(&["run", RESERVATION, "--check"]));
    assert!(held.contains("9 of 9 expectations held"), "{held}");

    // Without APS, first come, first served: bf-first backfills first;
    // wide still reserves and starts at 200s, long still waits for it.
    let changed: String = text
        .lines()
        .filter(|line| !line.starts_with("APS_PRIORITY"))
        .map(|line| match line {
            "job = \"bf-second\"" => "job = \"bf-first\"",
            "job = \"bf-first\"" => "job = \"bf-second\"",
            other => other,
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(changed, text);
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("no-aps.toml");
    std::fs::write(&plain, &changed).expect("write");
    let output = common::mcfed(&["run", plain.to_str().expect("utf-8"), "--check"]);
    let held = common::succeeded(&output);
    assert!(held.contains("9 of 9 expectations held"), "{held}");
    assert!(held.contains("job bf-first is RUN"), "{held}");
}

const SEND_QUEUE: &str = "scenarios/aps/send-queue-aps-order.toml";

/// The decision records `mcfed run --report json` prints for `path`.
fn decisions(args: &[&str]) -> Vec<serde_json::Value> {
    let output = common::mcfed(args);
    common::succeeded(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is a JSON object"))
        .filter(|record: &serde_json::Value| record["record"] == "decision")
        .collect()
}

/// The first job each run forwards, with its record.
fn first_forward(records: &[serde_json::Value]) -> &serde_json::Value {
    records
        .iter()
        .find(|record| record["outcome"] == "forwarded")
        .expect("a job is forwarded")
}

#[test]
fn a_send_queue_with_aps_forwards_by_value_and_the_record_cites_it() {
    // Both engines check the scenario's expectations.
    for engine in ["events", "actors"] {
        let output = common::mcfed(&["run", SEND_QUEUE, "--check", "--engine", engine]);
        let held = common::succeeded(&output);
        assert!(
            held.contains("11 of 11 expectations held"),
            "{engine}: {held}"
        );
    }
    let records = decisions(&["run", SEND_QUEUE, "--report", "json"]);
    let first = first_forward(&records);
    assert_eq!(first["job"], "high");
    assert_eq!(first["aps_value"], 90.0);
    assert_eq!(first["aps_kind"], "calculated");
    assert_eq!(first["aps_ahead_of"], 2);
    assert!(
        records.iter().all(|record| record["aps_value"].is_number()),
        "every decision of the APS send queue cites its value"
    );

    // Without APS_PRIORITY the same queue goes first come, first served:
    // low takes the slot, and no record cites a value.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(SEND_QUEUE)).expect("scenario");
    let plain_text: String = text
        .lines()
        .filter(|line| !line.starts_with("APS_PRIORITY"))
        .collect::<Vec<_>>()
        .join("\n");
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("fcfs.toml");
    std::fs::write(&plain, plain_text).expect("write");
    let path = plain.to_str().expect("utf-8");
    let records = decisions(&["run", path, "--report", "json"]);
    let first = first_forward(&records);
    assert_eq!(first["job"], "low", "first come, first served");
    assert!(records.iter().all(|record| record["aps_value"].is_null()));
    let output = common::mcfed(&["run", path, "--check"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("FAIL expect[3]: job high is forwarded"),
        "the scenario's checks see the difference: {text}"
    );
}
