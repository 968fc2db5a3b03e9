//! Admin answers past the admin channel's 64 MiB bound (issue 26, Deliver
//! 3): a cluster process holding more than 64 MiB of `bjobs` rows — 16,600
//! jobs with names of LSF's largest size, 4,094 bytes — answers `bjobs`,
//! `bjobs JOBID`, `-u`, `-q` and `-J` (in pages of a few MiB, over one
//! connection); one answer of the whole table failed with "stream too
//! long". Likewise `bhist` and `bacct` over a history of as many jobs that
//! ended.

use std::time::Duration;

use crate::common;
use crate::common::journaled::Live;
use serde_json::Value;

const HELD: &str = r#"
name = "held jobs"
[[cluster]]
name = "Held"
[[cluster.host]]
name = "h"
MXJ = 1
[[cluster.queue]]
name = "normal"
[[cluster.queue]]
name = "other"
"#;

/// One host that runs every job at once: they all end within seconds,
/// and are kept long after (CLEAN_PERIOD).
const ENDING: &str = r#"
name = "ended jobs"
[[cluster]]
name = "Held"
params = { CLEAN_PERIOD = "1000h" }
[[cluster.host]]
name = "h"
MXJ = 20000
[[cluster.queue]]
name = "normal"
[[cluster.queue]]
name = "other"
"#;

/// More than 64 MiB of names alone.
const JOBS: usize = 16_600;

/// The name of job `n`: 4,094 bytes (LSF's bound), ending with its number.
fn name(n: usize) -> String {
    let tail = format!("-{n}");
    format!("{}{tail}", "x".repeat(4094 - tail.len()))
}

/// `mcfed ARGS... -o json` against the cluster, parsed.
fn ask(live: &Live, args: &[&str]) -> Vec<Value> {
    let address = live.address("Held");
    let mut all = vec![
        args[0],
        "--cluster",
        "Held",
        "--address",
        &address,
        "--certs",
        live.certs.to_str().expect("utf-8"),
        "-o",
        "json",
    ];
    all.extend_from_slice(&args[1..]);
    let output = common::Mcfed::new(&all)
        .within(Duration::from_secs(600))
        .run();
    assert!(
        output.status.success(),
        "mcfed {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    value.as_array().expect("rows").clone()
}

/// Submits the 16,600 jobs with `bsub --from` (one in a hundred of user
/// `rare` in queue `other`), each running `run_time`.
fn submit_all(live: &Live, dir: &std::path::Path, run_time: &str) {
    let lines: Vec<String> = (0..JOBS)
        .map(|n| {
            let (user, queue) = if n % 100 == 7 {
                ("rare", "other")
            } else {
                ("common", "normal")
            };
            format!("-J {} -u {user} -q {queue} --run-time {run_time}", name(n))
        })
        .collect();
    let file = dir.join("jobs.txt");
    std::fs::write(&file, lines.join("\n")).expect("jobs file");
    let address = live.address("Held");
    let output = common::Mcfed::new(&[
        "bsub",
        "--cluster",
        "Held",
        "--address",
        &address,
        "--certs",
        live.certs.to_str().expect("utf-8"),
        "--from",
        file.to_str().expect("utf-8"),
        "-o",
        "json",
    ])
    .within(Duration::from_secs(600))
    .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The total bytes of the `job_name` of `rows`.
fn name_bytes(rows: &[Value]) -> usize {
    rows.iter()
        .map(|row| row["job_name"].as_str().expect("name").len())
        .sum()
}

#[test]
fn bjobs_lists_a_table_past_the_admin_message_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), HELD, &["Held"]);
    let _process = live.start_plain("Held", &[]);
    submit_all(&live, dir.path(), "100h");

    let rows = ask(&live, &["bjobs"]);
    assert_eq!(rows.len(), JOBS);
    let names = name_bytes(&rows);
    assert!(
        names > 64 << 20,
        "the names alone pass 64 MiB: {names} bytes"
    );
    let ids: Vec<u64> = rows
        .iter()
        .map(|row| row["job_id"].as_u64().expect("id"))
        .collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "by id, each once"
    );

    let last = ids[JOBS - 1].to_string();
    let one = ask(&live, &["bjobs", &last]);
    assert_eq!(one.len(), 1);
    // `bsub --from` sends its batches side by side, so ids need not
    // follow the file's order: the row asked for by id is the one the
    // whole listing shows under that id.
    assert_eq!(one[0], rows[JOBS - 1]);

    let rare = ask(&live, &["bjobs", "-u", "rare"]);
    assert_eq!(rare.len(), JOBS / 100);
    assert!(rare.iter().all(|row| row["user"] == "rare"));
    let other = ask(&live, &["bjobs", "-q", "other"]);
    assert_eq!(other.len(), JOBS / 100);
    let pattern = format!("*-{}", JOBS - 2);
    let named = ask(&live, &["bjobs", "-J", &pattern]);
    assert_eq!(named.len(), 1);
    assert_eq!(named[0]["job_name"], name(JOBS - 2).as_str());
}

#[test]
fn bhist_and_bacct_list_a_history_past_the_admin_message_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), ENDING, &["Held"]);
    let _process = live.start_plain("Held", &["--speed", "60"]);
    submit_all(&live, dir.path(), "1m");
    // Every job has ended once `bjobs` lists none left.
    for _ in 0..600 {
        if ask(&live, &["bjobs"]).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(ask(&live, &["bjobs"]).is_empty(), "every job ended");

    let hist = ask(&live, &["bhist", "-a"]);
    assert_eq!(hist.len(), JOBS);
    assert!(name_bytes(&hist) > 64 << 20, "the names alone pass 64 MiB");
    let ids: Vec<u64> = hist
        .iter()
        .map(|row| row["job_id"].as_u64().expect("id"))
        .collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "by id, each once"
    );
    assert!(hist.iter().all(|row| row["stat"] == "DONE"));
    assert!(
        hist.iter()
            .all(|row| !row["events"].as_array().expect("events").is_empty())
    );
    let last = ids[JOBS - 1].to_string();
    let one = ask(&live, &["bhist", &last]);
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["job_id"], hist[JOBS - 1]["job_id"]);

    let acct = ask(&live, &["bacct"]);
    assert_eq!(acct.len(), JOBS);
    assert!(name_bytes(&acct) > 64 << 20);
    assert!(acct.iter().all(|row| row["end_time"].is_number()));
    let rare = ask(&live, &["bacct", "-u", "rare"]);
    assert_eq!(rare.len(), JOBS / 100);
    assert!(rare.iter().all(|row| row["user"] == "rare"));
    let other = ask(&live, &["bacct", "-q", "other"]);
    assert_eq!(other.len(), JOBS / 100);
}
