//! End-to-end: SWF traces in. `mcfed gen swf` writes a trace (plain or
//! gzip), `mcfed replay` runs it to drain on a federation built from flags
//! (one cluster, or a submission cluster forwarding to several), every job
//! is accounted for, `--print-scenario` prints a scenario `mcfed validate`
//! accepts, and a bad `[[workload]]` is refused with file:line and field.

mod common;

use common::mcfed;

fn stdout(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The numbers on the summary's `jobs started: S, finished: F` line.
fn started_finished(summary: &str) -> (u64, u64) {
    let line = summary
        .lines()
        .find(|line| line.starts_with("jobs started:"))
        .expect("a jobs started line");
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|word| word.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

#[test]
fn a_generated_trace_replays_to_drain_on_one_cluster_and_on_many() {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (name, extra) in [("t.swf", "0.9"), ("t.swf.gz", "1.6")] {
        let trace = dir.path().join(name);
        let trace = trace.to_str().expect("utf-8");
        let generated = mcfed(&[
            "gen",
            "swf",
            "-o",
            trace,
            "--jobs",
            "3000",
            "--processors",
            "16",
            "--max-width",
            "4",
            "--load",
            extra,
            "--seed",
            "7",
        ]);
        stdout(&generated);
        let one = stdout(&mcfed(&[
            "replay", trace, "--hosts", "4", "--mxj", "4", "--quiet",
        ]));
        assert_eq!(started_finished(&one), (3000, 3000), "{one}");
        assert!(one.contains("workload t ("), "{one}");
        assert!(one.contains("; MaxProcs: 16"), "{one}");
        let many = stdout(&mcfed(&[
            "replay",
            trace,
            "--hosts",
            "2",
            "--mxj",
            "4",
            "--clusters",
            "3",
        ]));
        assert_eq!(started_finished(&many), (3000, 3000), "{many}");
        assert!(many.contains(" (3000 forwarded, "), "{many}");
    }
}

#[test]
fn replay_prints_a_scenario_that_validates() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = dir.path().join("t.swf");
    let trace = trace.to_str().expect("utf-8");
    stdout(&mcfed(&["gen", "swf", "-o", trace, "--jobs", "50"]));
    let text = stdout(&mcfed(&[
        "replay",
        trace,
        "--hosts",
        "8",
        "--clusters",
        "2",
        "--print-scenario",
    ]));
    let file = dir.path().join("replay.toml");
    std::fs::write(&file, text).expect("write scenario");
    let validated = stdout(&mcfed(&["validate", file.to_str().expect("utf-8")]));
    assert!(validated.contains(": ok: "), "{validated}");
}

#[test]
fn a_bad_workload_is_refused_with_line_and_field() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "[[cluster]]\nname = \"C1\"\n[[cluster.host]]\nname = \"h\"\nMXJ = 1\n[[cluster.queue]]\nname = \"normal\"\n\n[[workload]]\nswf = \"missing.swf\"\ncluster = \"C1\"\nqueue = \"nosuch\"\n",
    )
    .expect("write scenario");
    let output = mcfed(&["validate", file.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(2));
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(errors.contains("bad.toml:10"), "{errors}");
    assert!(errors.contains("workload[0].swf"), "{errors}");
    assert!(errors.contains("cannot open"), "{errors}");
}

#[test]
fn replay_refuses_nonsense_flags_without_panicking() {
    let output = mcfed(&["replay", "/no/such/trace.swf", "--hosts", "0"]);
    assert_eq!(output.status.code(), Some(2));
    let output = mcfed(&["replay", "/no/such/trace.swf", "--hosts", "4"]);
    assert_eq!(output.status.code(), Some(2));
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(errors.contains("/no/such/trace.swf"), "{errors}");
}

/// The trace commands the README and docs/scenarios.md show, run as shown
/// (the trace written to a temporary directory instead).
#[test]
fn the_documented_trace_commands_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = dir.path().join("trace.swf");
    let trace = trace.to_str().expect("utf-8");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut commands = Vec::new();
    for doc in ["README.md", "docs/scenarios.md"] {
        let text = std::fs::read_to_string(root.join(doc)).expect("doc");
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or_default().trim();
            let command = line
                .strip_prefix("cargo run --release -- ")
                .or_else(|| line.strip_prefix("mcfed "));
            if let Some(command) =
                command.filter(|c| c.starts_with("gen swf") || c.starts_with("replay "))
            {
                commands.push(
                    command
                        .replace("/tmp/trace.swf", trace)
                        .replace("trace.swf", trace),
                );
            }
        }
    }
    assert!(commands.len() >= 5, "{commands:?}");
    for command in commands {
        let args: Vec<&str> = command
            .split_whitespace()
            .map(|arg| {
                if arg.ends_with("trace.swf") {
                    trace
                } else {
                    arg
                }
            })
            .collect();
        let output = mcfed(&args);
        stdout(&output);
    }
}
