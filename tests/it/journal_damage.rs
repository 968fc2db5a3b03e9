//! A cluster process whose journal was damaged (issue 26, item 2): a
//! flipped byte in the middle of a 200-job journal is refused, naming the
//! file, the offset and the records that follow; `--salvage` keeps the
//! damaged file aside and every sound record, says what was lost, and
//! hands out no id that may have been acknowledged; a deleted snapshot and
//! a journal cut inside its header are refused.

use crate::common;

use std::path::Path;

use common::journaled::Live;
use common::{mcfed, succeeded};
use mcfed_journal::format::{FRAME_HEADER_LEN, HEADER_LEN};

/// One cluster, one slot: the first job runs, the others wait.
const SCENARIO: &str = r#"
name = "damage"
[[cluster]]
name = "Solo"
[[cluster.host]]
name = "solohost"
MXJ = 1
[[cluster.queue]]
name = "normal"
"#;

const JOBS: u64 = 200;

/// `mcfed cluster` on `live`'s scenario and Solo's state directory, with
/// `extra`, run to its end (standard input closed: a process that starts
/// stops at once).
fn run_cluster(live: &Live, extra: &[&str]) -> std::process::Output {
    let state = live.state("Solo");
    let mut args = vec![
        "cluster",
        "--scenario",
        live.scenario.to_str().expect("utf-8"),
        "--name",
        "Solo",
        "--certs",
        live.certs.to_str().expect("utf-8"),
        "--report",
        "none",
        "--exit-on-stdin-eof",
        "--listen",
        "127.0.0.1:0",
        "--state",
        state.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    mcfed(&args)
}

/// The job ids `bjobs` lists.
fn job_ids(live: &Live) -> Vec<u64> {
    let jobs = live.ask("bjobs", "Solo", &[]);
    let mut ids: Vec<u64> = jobs
        .as_array()
        .expect("rows")
        .iter()
        .map(|job| job["job_id"].as_u64().expect("id"))
        .collect();
    ids.sort_unstable();
    ids
}

/// Every frame of the journal file: (offset, length).
fn frames(journal: &Path) -> Vec<(usize, usize)> {
    let bytes = std::fs::read(journal).expect("journal");
    let mut at = HEADER_LEN;
    let mut frames = Vec::new();
    while at + FRAME_HEADER_LEN <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        frames.push((at, FRAME_HEADER_LEN + len));
        at += FRAME_HEADER_LEN + len;
    }
    frames
}

#[test]
fn a_damaged_journal_is_refused_and_salvage_keeps_every_sound_job_and_no_id_is_reused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), SCENARIO, &["Solo"]);
    let mut solo = live.start("Solo", &[]);
    let lines: String = (1..=JOBS)
        .map(|n| format!("-q normal -J job{n} --run-time 10h\n"))
        .collect();
    let file = dir.path().join("jobs.txt");
    std::fs::write(&file, lines).expect("jobs");
    let address = live.address("Solo");
    let submitted = mcfed(&[
        "bsub",
        "--cluster",
        "Solo",
        "--address",
        &address,
        "--certs",
        live.certs.to_str().expect("utf-8"),
        "--from",
        file.to_str().expect("utf-8"),
        "--batch",
        "1",
        "--window",
        "1",
    ]);
    succeeded(&submitted);
    assert_eq!(job_ids(&live), (1..=JOBS).collect::<Vec<_>>());
    solo.kill();

    // One byte flipped in the journal's first third: the record of a job
    // that waited (written once), with well over a hundred after it.
    let journal = live.state("Solo").join("journal");
    let frames = frames(&journal);
    assert!(frames.len() >= JOBS as usize, "{} frames", frames.len());
    let (offset, len) = frames[frames.len() / 3];
    let mut bytes = std::fs::read(&journal).expect("journal");
    bytes[offset + len - 2] ^= 0x20;
    std::fs::write(&journal, &bytes).expect("damaged");
    let after = frames.len() - frames.len() / 3 - 1;

    let refused = run_cluster(&live, &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "started on a damaged journal: {stderr}"
    );
    assert!(stderr.contains(&journal.display().to_string()), "{stderr}");
    assert!(
        stderr.contains(&format!("damaged at byte {offset}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{after} sound records follow")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&journal).expect("journal"),
        bytes,
        "the evidence changed"
    );

    let _salvaged = live.start("Solo", &["--salvage"]);
    let ids = job_ids(&live);
    assert_eq!(
        ids.len(),
        JOBS as usize - 1,
        "one job's only record was lost"
    );
    let log = std::fs::read_to_string(live.log("Solo")).expect("log");
    assert!(log.contains("salvaged"), "{log}");
    assert!(
        log.contains(&format!("bytes {offset}..{} lost", offset + len)),
        "{log}"
    );
    let kept = live.state("Solo").join("journal.damaged-1");
    assert_eq!(std::fs::read(kept).expect("kept aside"), bytes);
    // The lost job's id may have been acknowledged: never handed out again.
    let next = live.ask(
        "bsub",
        "Solo",
        &["-q", "normal", "-J", "after", "--run-time", "10h"],
    );
    let id = next["job_id"].as_u64().expect("id");
    assert!(id > JOBS, "id {id} handed out again");
}

#[test]
fn a_deleted_snapshot_or_a_journal_cut_inside_its_header_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), SCENARIO, &["Solo"]);
    let mut solo = live.start("Solo", &[]);
    live.ask("bsub", "Solo", &["-q", "normal", "-J", "one"]);
    solo.kill();
    let state = live.state("Solo");
    let snapshot = std::fs::read(state.join("snapshot")).expect("snapshot");
    std::fs::remove_file(state.join("snapshot")).expect("deleted");
    let refused = run_cluster(&live, &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "started without its snapshot: {stderr}"
    );
    assert!(stderr.contains("there is no snapshot"), "{stderr}");

    std::fs::write(state.join("snapshot"), snapshot).expect("back");
    let journal = state.join("journal");
    let bytes = std::fs::read(&journal).expect("journal");
    std::fs::write(&journal, &bytes[..10]).expect("cut");
    let refused = run_cluster(&live, &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "started on a cut journal: {stderr}"
    );
    assert!(stderr.contains("ends inside its header"), "{stderr}");
    let salvaged = run_cluster(&live, &["--salvage"]);
    assert!(
        salvaged.status.success(),
        "{}",
        String::from_utf8_lossy(&salvaged.stderr)
    );
    assert!(state.join("journal.damaged-1").exists());
}
