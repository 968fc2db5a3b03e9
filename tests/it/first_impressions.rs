//! What a new user sees first (issue 29): an error chain said once, with
//! control characters escaped; numbers in human units with the right
//! number on their nouns; `mcfed report -` reading standard input;
//! `mcfed replay` errors that name the trace or the flag, never a file the
//! user did not write.

use std::process::Command;

use crate::common;
use common::{Mcfed, mcfed, stderr, stdout, succeeded};

/// How many times `needle` occurs in `text`.
fn occurrences(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn a_missing_file_is_said_once() {
    let output = mcfed(&["report", "/nonexistent.jsonl"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert_eq!(
        text.trim_end(),
        "mcfed: cannot read /nonexistent.jsonl: No such file or directory (os error 2)"
    );
    let output = mcfed(&["replay", "/nonexistent.swf", "--hosts", "2"]);
    let text = stderr(&output);
    assert_eq!(occurrences(&text, "(os error 2)"), 1, "{text}");
}

#[test]
fn control_characters_in_an_error_are_shown_escaped() {
    let output = mcfed(&["report", "/nonexistent/\u{1b}[31mred\u{7}.jsonl"]);
    let text = stderr(&output);
    assert!(text.contains("\\u{1b}[31mred\\u{7}.jsonl"), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
}

#[test]
fn validate_counts_with_the_right_number() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("one.toml");
    std::fs::write(
        &path,
        "name = \"one\"\n[[cluster]]\nname = \"C1\"\n[[cluster.host]]\nname = \"h\"\nMXJ = 1\n\
         [[cluster.queue]]\nname = \"normal\"\n[[submit]]\nat = 0\ncluster = \"C1\"\nqueue = \"normal\"\n",
    )
    .expect("write");
    let output = mcfed(&["validate", path.to_str().expect("utf-8")]);
    let text = succeeded(&output);
    assert!(
        text.contains("(1 cluster, 1 submission, 0 expectations)"),
        "{text}"
    );
    assert!(text.contains("(1 job, 1 host"), "{text}");
}

#[test]
fn a_huge_end_is_refused_in_human_units() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("end.toml");
    std::fs::write(
        &path,
        "name = \"end\"\nend = 1e300\n[[cluster]]\nname = \"C1\"\n[[cluster.host]]\nname = \"h\"\nMXJ = 1\n\
         [[cluster.queue]]\nname = \"normal\"\n",
    )
    .expect("write");
    for verb in ["validate", "run"] {
        let output = mcfed(&[verb, path.to_str().expect("utf-8")]);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(text.contains("end.toml:2:7: field `end`: duration = 1e300 seconds is out of bounds: mcfed accepts 0s to 36500d (100 years)"), "{text}");
        assert!(text.len() < 300, "no 300-digit number: {text}");
    }
}

#[test]
fn report_dash_reads_standard_input() {
    let run = mcfed(&[
        "run",
        "scenarios/forwarding/example1-count-preemptable.toml",
        "--report",
        "json",
        "--events",
    ]);
    succeeded(&run);
    let from_file = {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.jsonl");
        std::fs::write(&path, &run.stdout).expect("write");
        mcfed(&["report", path.to_str().expect("utf-8"), "--format", "json"])
    };
    succeeded(&from_file);
    let from_stdin = Mcfed::new(&["report", "-", "--format", "json"])
        .stdin(run.stdout.clone())
        .run();
    succeeded(&from_stdin);
    assert_eq!(stdout(&from_stdin), stdout(&from_file));
    let twice = mcfed(&["report", "-", "-"]);
    assert!(stderr(&twice).contains("`-` (standard input) can be given once"));
}

#[test]
fn replay_errors_name_the_flag_or_the_trace_not_a_file_never_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("t.swf");
    let trace_text = trace.to_str().expect("utf-8");
    let made = mcfed(&["gen", "swf", "-o", trace_text, "--jobs", "20"]);
    succeeded(&made);
    let missing = dir.path().join("missing.swf");
    let missing_text = missing.to_str().expect("utf-8");
    for (args, says) in [
        (
            vec![trace_text, "--hosts", "2000000"],
            "mcfed: --hosts = 2000000 is out of bounds: mcfed accepts 1 to 1000000".to_owned(),
        ),
        (
            vec![trace_text, "--hosts", "0"],
            "mcfed: --hosts = 0 is out of bounds".to_owned(),
        ),
        (
            vec![trace_text, "--hosts", "2", "--mxj", "0"],
            "mcfed: --mxj = 0 is out of bounds".to_owned(),
        ),
        (
            vec![trace_text, "--hosts", "99999", "--mxj", "99999"],
            "mcfed: --hosts × --mxj, the slots of a cluster = 9999800001 is out of bounds".to_owned(),
        ),
        (
            vec![trace_text, "--hosts", "2", "--limit", "0"],
            "mcfed: --limit = 0 is out of bounds".to_owned(),
        ),
        (
            vec![missing_text, "--hosts", "2"],
            format!("mcfed: cannot open trace {missing_text}: No such file or directory (os error 2)"),
        ),
        (
            vec![trace_text, "--hosts", "1000000", "--clusters", "1000"],
            "mcfed: the federation built from --hosts, --mxj, --clusters and --limit is refused (--print-scenario shows it): this scenario needs about".to_owned(),
        ),
    ] {
        let mut full = vec!["replay"];
        full.extend(&args);
        let output = mcfed(&full);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.starts_with(&says), "{args:?}: {text}");
        assert!(!text.contains("replay.toml"), "{args:?}: {text}");
    }
}

#[cfg(unix)]
#[test]
fn replay_refuses_a_device_or_a_fifo_as_a_trace_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("trace.swf");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for path in [fifo.to_str().expect("utf-8"), "/dev/zero"] {
        let output = mcfed(&["replay", path, "--hosts", "2"]);
        let text = stderr(&output);
        assert!(
            text.starts_with(&format!("mcfed: cannot open trace {path}: is a ")),
            "{text}"
        );
        assert_eq!(occurrences(&text, "not a regular file"), 1, "{text}");
    }
}

#[test]
fn what_a_trace_holds_is_printed_escaped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("odd.swf");
    std::fs::write(
        &trace,
        "; Note: \u{1b}[31mred\u{7}\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n\u{1b}[2J 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n",
    )
    .expect("write");
    let output = mcfed(&["replay", trace.to_str().expect("utf-8"), "--hosts", "1"]);
    let text = succeeded(&output);
    assert!(text.contains("; Note: \\u{1b}[31mred\\u{7}"), "{text}");
    assert!(text.contains("first malformed line: "), "{text}");
    assert!(
        text.contains("1 job read and handed to the federation"),
        "{text}"
    );
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
}
