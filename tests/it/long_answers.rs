//! Admin answers past the admin channel's 64 MiB bound (issue 26, Deliver
//! 3): a cluster process holding more than 64 MiB of `bjobs` rows — 16,600
//! jobs with names of LSF's largest size, 4,094 bytes — answers `bjobs`,
//! `bjobs JOBID`, `-u`, `-q` and `-J` (in pages of a few MiB, over one
//! connection); one answer of the whole table failed with "stream too
//! long".

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

#[test]
fn bjobs_lists_a_table_past_the_admin_message_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), HELD, &["Held"]);
    let _process = live.start_plain("Held", &[]);
    let lines: Vec<String> = (0..JOBS)
        .map(|n| {
            let (user, queue) = if n % 100 == 7 {
                ("rare", "other")
            } else {
                ("common", "normal")
            };
            format!("-J {} -u {user} -q {queue} --run-time 100h", name(n))
        })
        .collect();
    let file = dir.path().join("jobs.txt");
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

    let rows = ask(&live, &["bjobs"]);
    assert_eq!(rows.len(), JOBS);
    let names: usize = rows
        .iter()
        .map(|row| row["job_name"].as_str().expect("name").len())
        .sum();
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
