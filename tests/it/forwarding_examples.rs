//! End-to-end: the `mcfed` binary on the seed's four forwarding examples.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common;
use common::{mcfed, succeeded};

fn example(name: &str) -> String {
    format!("scenarios/forwarding/{name}.toml")
}

const EXAMPLES: [&str; 4] = [
    "example1-count-preemptable",
    "example2-preemptable-queue-priority",
    "example3-high-queue-priority",
    "example4-preemptable-slots",
];

/// The decision records of `--report json` (every line is a JSON object;
/// a `summary` record closes the output).
fn json_lines(output: &Output) -> Vec<Value> {
    let records: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is a JSON object"))
        .collect();
    if let Some(last) = records.last() {
        assert_eq!(
            last["record"], "summary",
            "the output ends with its summary"
        );
    }
    records
        .into_iter()
        .filter(|record| record["record"] == "decision")
        .collect()
}

#[test]
fn every_example_passes_its_checks() {
    for name in EXAMPLES {
        let output = mcfed(&["run", &example(name), "--check"]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{name}:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!stdout.contains("FAIL"), "{name}: {stdout}");
        assert!(stdout.contains("expectations held"), "{name}: {stdout}");
    }
}

/// The decision each example must reach, and the candidate figures behind
/// it: (queue, total, available, running, pending, preemptable available).
#[test]
fn json_lines_carry_the_seed_figures() {
    type Row = (&'static str, u64, u64, u64, u64, u64);
    let cases: [(&str, &str, &str, [Row; 2]); 4] = [
        (
            EXAMPLES[0],
            "COUNT_PREEMPTABLE",
            "HighPriority@Cluster2",
            [
                ("HighPriority@Cluster2", 100, 30, 70, 20, 30),
                ("HighPriority@Cluster3", 100, 10, 90, 5, 10),
            ],
        ),
        (
            EXAMPLES[1],
            "COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY",
            "HighPriority@Cluster3",
            [
                ("HighPriority@Cluster2", 100, 0, 20, 5, 80),
                ("HighPriority@Cluster3", 100, 0, 30, 20, 70),
            ],
        ),
        (
            EXAMPLES[2],
            "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY",
            "HighPriority@Cluster3",
            [
                ("HighPriority@Cluster2", 100, 30, 70, 20, 30),
                ("HighPriority@Cluster3", 100, 10, 90, 5, 10),
            ],
        ),
        (
            EXAMPLES[3],
            "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY",
            "HighPriority@Cluster3",
            [
                ("HighPriority@Cluster2", 100, 0, 20, 20, 80),
                ("HighPriority@Cluster3", 100, 0, 30, 5, 70),
            ],
        ),
    ];
    for (name, mode, target, rows) in cases {
        let output = mcfed(&["run", &example(name), "--report", "json"]);
        assert!(output.status.success(), "{name}");
        let lines = json_lines(&output);
        assert_eq!(lines.len(), 1, "{name}: one decision");
        let decision = &lines[0];
        for field in [
            "time",
            "job",
            "cluster",
            "mode",
            "outcome",
            "target",
            "reason",
            "view_age",
            "candidates",
        ] {
            assert!(
                decision.get(field).is_some(),
                "{name}: field {field} missing"
            );
        }
        assert_eq!(decision["time"], 45.0, "{name}");
        assert_eq!(decision["job"], "job1", "{name}");
        assert_eq!(decision["cluster"], "Cluster1", "{name}");
        assert_eq!(decision["mode"], mode, "{name}");
        assert_eq!(decision["outcome"], "forwarded", "{name}");
        assert_eq!(decision["target"], target, "{name}");
        assert_eq!(
            decision["view_age"], 15.0,
            "{name}: updates at 30s, decision at 45s"
        );
        assert!(
            decision["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with(target)),
            "{name}"
        );
        let candidates = decision["candidates"]
            .as_array()
            .expect("candidates is an array");
        assert_eq!(candidates.len(), 2, "{name}");
        for (candidate, (queue, total, available, running, pending, preemptable)) in
            candidates.iter().zip(rows)
        {
            for field in [
                "queue",
                "priority",
                "total",
                "available",
                "running",
                "pending",
                "preemptable_available",
                "eligible",
                "score",
            ] {
                assert!(
                    candidate.get(field).is_some(),
                    "{name}: candidate field {field} missing"
                );
            }
            assert_eq!(candidate["queue"], queue, "{name}");
            assert_eq!(candidate["total"], total, "{name} {queue}");
            assert_eq!(candidate["available"], available, "{name} {queue}");
            assert_eq!(candidate["running"], running, "{name} {queue}");
            assert_eq!(candidate["pending"], pending, "{name} {queue}");
            assert_eq!(
                candidate["preemptable_available"], preemptable,
                "{name} {queue}"
            );
            assert_eq!(candidate["eligible"], true, "{name} {queue}");
            let verdict = if queue == target { "won" } else { "lost" };
            assert_eq!(candidate["verdict"], verdict, "{name} {queue}");
        }
    }
}

#[test]
fn the_actor_engine_reaches_the_same_decisions() {
    for name in EXAMPLES {
        let events = mcfed(&["run", &example(name), "--report", "json"]);
        let actors = mcfed(&[
            "run",
            &example(name),
            "--report",
            "json",
            "--engine",
            "actors",
        ]);
        assert!(events.status.success() && actors.status.success(), "{name}");
        assert_eq!(json_lines(&events), json_lines(&actors), "{name}");
    }
}

fn scratch_copy(name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(example(name)))
        .expect("example exists");
    let dir = std::env::temp_dir().join(format!("mcfed-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}-{}.toml", source.len() % 97));
    std::fs::write(&path, edit(source)).expect("write scratch scenario");
    path
}

#[test]
fn check_fails_and_names_an_expectation_that_does_not_hold() {
    let path = scratch_copy(EXAMPLES[0], |s| {
        s.replace(
            "forwarded_to = \"HighPriority@Cluster2\"",
            "forwarded_to = \"HighPriority@Cluster3\"",
        )
    });
    let output = mcfed(&["run", path.to_str().expect("utf-8 path"), "--check"]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("FAIL expect[0]: job job1 is forwarded to HighPriority@Cluster3"),
        "{stdout}"
    );
    assert!(
        stdout.contains("actual: at 00:00:45 forwarded to HighPriority@Cluster2"),
        "{stdout}"
    );
}

#[test]
fn check_in_json_mode_keeps_stdout_pure() {
    let output = mcfed(&["run", &example(EXAMPLES[1]), "--report", "json", "--check"]);
    succeeded(&output);
    assert_eq!(json_lines(&output).len(), 1);
    assert!(String::from_utf8_lossy(&output.stderr).contains("expectations held"));
}

#[test]
fn validate_accepts_examples_and_refuses_bad_files_with_their_line() {
    for name in EXAMPLES {
        let output = mcfed(&["validate", &example(name)]);
        assert!(output.status.success(), "{name}");
    }
    let path = scratch_copy(EXAMPLES[0], |s| s.replace("PRIORITY = 40", "PRIORTY = 40"));
    let output = mcfed(&["validate", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{}:", path.display())), "{stderr}");
    assert!(
        stderr.contains("field `cluster[1].queue[0].PRIORTY`"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_command_line_arguments_are_refused_clearly() {
    let output = mcfed(&["run", &example(EXAMPLES[0]), "--report", "xml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--report"));
    let output = mcfed(&["run", "no/such/file.toml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no/such/file.toml"));
}

fn scenario_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("scenario directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            scenario_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "toml") {
            found.push(path);
        }
    }
}

/// Every scenario shipped under `scenarios/` runs and its expectations hold,
/// with both in-process engines (chaos scenarios need the event loop).
#[test]
fn every_bundled_scenario_passes_its_checks() {
    let mut files = Vec::new();
    scenario_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"),
        &mut files,
    );
    assert!(files.len() >= 6, "found {files:?}");
    for file in files {
        let file = file.to_str().expect("utf-8 path");
        let engines: &[&str] = if file.contains("/chaos/") {
            &["events"]
        } else {
            &["events", "actors"]
        };
        for &engine in engines {
            let output = mcfed(&["run", file, "--check", "--engine", engine]);
            assert!(
                output.status.success(),
                "{file} ({engine}):\n{}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}
