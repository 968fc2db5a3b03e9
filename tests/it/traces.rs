//! End-to-end: SWF traces in. `mcfed gen swf` writes a trace (plain or
//! gzip), `mcfed replay` runs it to drain on a federation built from flags
//! (one cluster, or a submission cluster forwarding to several), every job
//! is accounted for, `--print-scenario` prints a scenario `mcfed validate`
//! accepts, and a bad `[[workload]]` is refused with file:line and field.

use crate::common;

use common::{mcfed, succeeded};

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
        succeeded(&generated);
        let one = succeeded(&mcfed(&[
            "replay", trace, "--hosts", "4", "--mxj", "4", "--quiet",
        ]));
        assert_eq!(started_finished(&one), (3000, 3000), "{one}");
        assert!(one.contains("workload t ("), "{one}");
        assert!(one.contains("; MaxProcs: 16"), "{one}");
        let many = succeeded(&mcfed(&[
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
    succeeded(&mcfed(&["gen", "swf", "-o", trace, "--jobs", "50"]));
    let text = succeeded(&mcfed(&[
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
    let validated = succeeded(&mcfed(&["validate", file.to_str().expect("utf-8")]));
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

/// Expectations may name a workload's jobs (`NAME-JOBNUMBER`); those that
/// cannot be checked are refused at their line.
#[test]
fn expectations_name_workload_jobs_or_say_why_not() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = dir.path().join("w.swf");
    std::fs::write(&trace, "1 0 -1 60 -1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n").expect("trace");
    let base = "[[cluster]]\nname = \"C1\"\n[[cluster.host]]\nname = \"h\"\nMXJ = 1\n[[cluster.queue]]\nname = \"normal\"\n\n[[workload]]\nswf = \"w.swf\"\ncluster = \"C1\"\nqueue = \"normal\"\n";
    let check = |expect: &str| {
        let file = dir.path().join("s.toml");
        std::fs::write(&file, format!("{base}{expect}")).expect("scenario");
        mcfed(&["run", file.to_str().expect("utf-8"), "--check"])
    };
    let held = check("\n[[expect]]\njob = \"w-1\"\nat = \"30s\"\nstate = \"RUN\"\n");
    assert!(succeeded(&held).contains("1 of 1 expectations held"));
    let failed = check("\n[[expect]]\njob = \"w-1\"\nat = \"30s\"\nstate = \"PEND\"\n");
    assert_eq!(failed.status.code(), Some(1), "a wrong state fails");
    for (expect, place, message) in [
        (
            "job = \"w-1\"\nat = \"2m\"\nstate = \"DONE\"",
            "s.toml:17:1: field `expect[0].state`",
            "DONE cannot be checked",
        ),
        (
            "job = \"v-1\"\nat = \"2m\"\nstate = \"RUN\"",
            "s.toml:15:1: field `expect[0].job`",
            "no job is named `v-1`",
        ),
        (
            "job = \"w-x\"\nat = \"2m\"\nstate = \"RUN\"",
            "s.toml:15:1: field `expect[0].job`",
            "no job is named `w-x`",
        ),
    ] {
        let output = check(&format!("\n[[expect]]\n{expect}\n"));
        assert_eq!(output.status.code(), Some(2), "{expect}");
        let errors = String::from_utf8_lossy(&output.stderr);
        assert!(errors.contains(place), "{errors}");
        assert!(errors.contains(message), "{errors}");
    }
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
/// (the files they write go to a temporary directory instead).
#[test]
fn the_documented_trace_commands_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = dir.path().join("trace.swf");
    let trace = trace.to_str().expect("utf-8");
    let csv_out = dir.path().join("jobs.csv");
    let csv_out = csv_out.to_str().expect("utf-8");
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
                commands.push(command.to_owned());
            }
        }
    }
    assert!(commands.len() >= 6, "{commands:?}");
    for command in commands {
        let args: Vec<&str> = command
            .split_whitespace()
            .map(|arg| {
                if arg.ends_with("trace.swf") {
                    trace
                } else if arg.ends_with(".csv") {
                    csv_out
                } else {
                    arg
                }
            })
            .collect();
        succeeded(&mcfed(&args));
    }
    assert!(std::path::Path::new(csv_out).exists(), "jobs.csv written");
}

/// A trace `mcfed gen swf FLAGS` writes in `dir`, and its path.
fn generated(dir: &tempfile::TempDir, flags: &[&str]) -> String {
    let trace = dir.path().join("t.swf");
    let trace = trace.to_str().expect("utf-8").to_owned();
    let mut args = vec!["gen", "swf", "-o", trace.as_str()];
    args.extend_from_slice(flags);
    succeeded(&mcfed(&args));
    trace
}

/// The slot numbers of an interval set such as `0-3 8`.
fn slots(set: &str) -> Vec<u64> {
    set.split_whitespace()
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u64, u64) = (a.parse().expect("number"), b.parse().expect("number"));
                (a..=b).collect::<Vec<_>>()
            }
            None => vec![part.parse().expect("number")],
        })
        .collect()
}

/// jobs.csv read back with a CSV library: one row per job, every row's
/// arithmetic right, as many slots as asked, and no slot held by two jobs
/// at once.
#[test]
fn jobs_csv_rows_add_up_and_slots_never_overlap() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = generated(
        &dir,
        &[
            "--jobs",
            "2000",
            "--processors",
            "16",
            "--max-width",
            "4",
            "--load",
            "1.2",
            "--seed",
            "3",
        ],
    );
    let trace = trace.as_str();
    let csv_path = dir.path().join("jobs.csv");
    let csv_text = csv_path.to_str().expect("utf-8");
    succeeded(&mcfed(&[
        "replay",
        trace,
        "--hosts",
        "4",
        "--mxj",
        "4",
        "--jobs-csv",
        csv_text,
        "--quiet",
    ]));
    let mut reader = csv::Reader::from_path(&csv_path).expect("jobs.csv opens");
    let headers = reader.headers().expect("header").clone();
    let column = |name: &str| headers.iter().position(|h| h == name).expect(name);
    let (submit, start, finish) = (
        column("submission_time"),
        column("starting_time"),
        column("finish_time"),
    );
    let (execution, waiting, turnaround) = (
        column("execution_time"),
        column("waiting_time"),
        column("turnaround_time"),
    );
    let (stretch, allocated, asked) = (
        column("stretch"),
        column("allocated_resources"),
        column("requested_number_of_resources"),
    );
    let mut intervals: Vec<(f64, f64, Vec<u64>)> = Vec::new();
    for row in reader.records() {
        let row = row.expect("a valid row");
        let number = |index: usize| row[index].parse::<f64>().expect("a number");
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * (1.0 + a.abs());
        assert!(
            close(number(execution), number(finish) - number(start)),
            "{row:?}"
        );
        assert!(
            close(number(waiting), number(start) - number(submit)),
            "{row:?}"
        );
        assert!(
            close(number(turnaround), number(finish) - number(submit)),
            "{row:?}"
        );
        assert!(
            close(number(stretch), number(turnaround) / number(execution)),
            "{row:?}"
        );
        let held = slots(&row[allocated]);
        assert_eq!(held.len() as f64, number(asked), "{row:?}");
        assert!(held.iter().all(|&slot| slot < 16), "{row:?}");
        intervals.push((number(start), number(finish), held));
    }
    assert_eq!(intervals.len(), 2000);
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (index, (start, finish, held)) in intervals.iter().enumerate() {
        for (other_start, _, other) in &intervals[index + 1..] {
            if other_start >= finish {
                break;
            }
            assert!(
                held.iter().all(|slot| !other.contains(slot)),
                "two jobs hold a slot at once: {start}..{finish} {held:?} and {other_start} {other:?}"
            );
        }
    }
}

/// A run's JSON records end with its summary, and `mcfed report` shows its
/// metrics.
#[test]
fn the_summary_record_reaches_mcfed_report() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let records = succeeded(&mcfed(&[
        "run",
        "scenarios/traces/small-trace.toml",
        "--report",
        "json",
        "--events",
    ]));
    let last = records.lines().last().expect("records");
    let summary: serde_json::Value = serde_json::from_str(last).expect("JSON");
    assert_eq!(summary["record"], "summary");
    assert_eq!(summary["finished"], 10);
    assert_eq!(summary["workloads"][0]["skipped"]["no_run_time"], 1);
    let file = dir.path().join("run.jsonl");
    std::fs::write(&file, records).expect("write records");
    let report = succeeded(&mcfed(&["report", file.to_str().expect("utf-8")]));
    assert!(report.contains("## Metrics"), "{report}");
    assert!(report.contains("C1           short"), "{report}");
}

/// The numbers a summary record gives of every queue: cluster, queue,
/// submitted, started, finished, forwarded in and out.
fn queue_counts(summary: &serde_json::Value) -> Vec<(String, String, u64, u64, u64, u64, u64)> {
    summary["metrics"]["queues"]
        .as_array()
        .expect("queues")
        .iter()
        .map(|queue| {
            let count = |field: &str| queue[field].as_u64().expect(field);
            (
                queue["cluster"].as_str().expect("cluster").to_owned(),
                queue["queue"].as_str().expect("queue").to_owned(),
                count("submitted"),
                count("started"),
                count("finished"),
                count("forwarded_in"),
                count("forwarded_out"),
            )
        })
        .collect()
}

/// `mcfed launch` replays a workload too (it once ignored `[[workload]]`
/// and stopped at the last scenario submission): processes get the
/// trace's jobs at their times, the run goes on until nothing is left
/// (`end = "drain"`), and its summary record has the same metrics and
/// totals as an in-process run's — every job submitted, forwarded,
/// started and finished.
#[test]
fn a_launched_run_replays_a_workload_to_drain_with_metrics() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = generated(
        &dir,
        &[
            "--jobs",
            "100",
            "--processors",
            "8",
            "--max-width",
            "2",
            "--load",
            "0.9",
            "--seed",
            "3",
        ],
    );
    let trace = trace.as_str();
    let scenario = succeeded(&mcfed(&[
        "replay",
        trace,
        "--hosts",
        "2",
        "--mxj",
        "2",
        "--clusters",
        "2",
        "--print-scenario",
    ]));
    let path = dir.path().join("s.toml");
    std::fs::write(&path, scenario).expect("write scenario");
    let path = path.to_str().expect("utf-8");
    let last = |output: &std::process::Output| -> serde_json::Value {
        let records = succeeded(output);
        serde_json::from_str(records.lines().last().expect("records")).expect("JSON")
    };
    let launched = last(&mcfed(&[
        "launch",
        path,
        "--speed",
        "500",
        "--base-port",
        "0",
        "--report",
        "json",
    ]));
    let emulated = last(&mcfed(&["run", path, "--report", "json"]));
    assert_eq!(launched["record"], "summary");
    for field in ["submitted", "started", "finished"] {
        assert_eq!(launched[field], 100, "{field}: {launched}");
    }
    assert_eq!(launched["jobs"]["finished"]["forwarded_in"], 100);
    assert_eq!(launched["workloads"][0]["submitted"], 100, "{launched}");
    // Where each job runs may differ (the processes' counters travel in
    // wall time); how many each queue saw in all may not.
    let totals = |summary: &serde_json::Value| {
        let mut sent = (0, 0, 0);
        let mut ran = (0, 0, 0);
        for (cluster, _, submitted, started, finished, forwarded_in, forwarded_out) in
            queue_counts(summary)
        {
            if cluster == "Sub" {
                sent = (submitted, forwarded_out, started);
            } else {
                ran.0 += started;
                ran.1 += finished;
                ran.2 += forwarded_in;
            }
        }
        (sent, ran)
    };
    assert_eq!(totals(&launched), ((100, 100, 0), (100, 100, 100)));
    assert_eq!(totals(&launched), totals(&emulated));
    let end = launched["end"].as_f64().expect("end");
    let last_finish = launched["metrics"]["makespan"].as_f64().expect("makespan");
    assert!(
        end >= last_finish,
        "ran to {end}, last job finished at {last_finish}"
    );
}
