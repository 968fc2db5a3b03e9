//! Names from outside in every text printer (issue 26 item 4): a name of
//! more than 65,535 bytes (past the formatting machinery's widths) is laid
//! out, not a panic; a name with a line break or an escape sequence is
//! shown escaped, so it forges no row and controls no terminal; `-json`
//! stays JSON (escaped by JSON itself). And issue 28's smaller gaps that
//! live in the printers: `-o` widths, an ended forwarded job's `@`.

use mcfed_admin::cmd::history::{bacct, bhist, bhist_long, finished_jobs};
use mcfed_admin::cmd::jobs::{jobs, jobs_fields, jobs_table, parse_fields};
use mcfed_admin::{ForwardedFrom, HistoryEventRow, HistoryRow, JobRow, StateSeconds};

const FORGED: &str = "evil\n9999  user9  RUN   normal  \u{1b}[2J\u{1b}]0;pwned\u{7}";

fn job(id: u64, name: &str) -> JobRow {
    JobRow {
        job_id: id,
        user: "user1".into(),
        stat: "RUN".into(),
        queue: "normal".into(),
        from_host: "Cluster1".into(),
        exec_host: Some("1*h1".into()),
        job_name: name.into(),
        submit_time: 1.0,
        slots: 1,
        forwarded_to: None,
        forwarded_from: None,
        pending_reason: None,
        run_time: 60.0,
        run_limit: None,
        resources: Vec::new(),
        start_time: Some(2.0),
        finish_time: None,
        output_file: Some(format!("out-{name}")),
        error_file: None,
        user_priority: None,
    }
}

fn history(id: u64, name: &str) -> HistoryRow {
    HistoryRow {
        job_id: id,
        job_name: name.into(),
        user: name.into(),
        queue: "send".into(),
        stat: "DONE".into(),
        origin: "sent".into(),
        forwarded_from: None,
        slots: 1,
        submit_time: 0.0,
        first_submit_time: 0.0,
        start_time: Some(1.0),
        end_time: Some(61.0),
        exec_host: Some("Cluster2".into()),
        forwarded_to: Some("high@Cluster2".into()),
        dest_job: Some(7),
        forwards: 1,
        run_limit: None,
        output_file: None,
        error_file: None,
        user_priority: None,
        times: StateSeconds {
            run: 60.0,
            total: 61.0,
            ..StateSeconds::default()
        },
        events: vec![HistoryEventRow {
            time: 0.0,
            event: format!("Submitted, Job Name <{name}>"),
        }],
        more_events: 0,
    }
}

/// No control character reaches the terminal, and every line is one of
/// the `expected` rows (or a header or block line the printer writes).
fn no_control(text: &str) {
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "a control character is printed raw: {text:?}"
    );
}

#[test]
fn names_past_65535_bytes_are_laid_out_by_every_printer() {
    let long = "x".repeat(70_000);
    let rows = vec![job(1, &long), job(2, "short")];
    let text = jobs(&rows, false, false, false);
    assert_eq!(text.lines().count(), 3);
    assert!(text.lines().nth(1).expect("a row").contains(&long));
    let long_block = jobs(&rows, false, true, false);
    assert!(long_block.contains(&long));
    let fields = parse_fields("jobid job_name stat").expect("fields");
    let text = jobs_fields(&rows, &fields, true);
    assert_eq!(text.lines().count(), 3);
    let histories = vec![history(1, &long)];
    assert!(bhist(&histories).contains(&long));
    assert!(bhist_long(&histories, 100.0).contains(&long));
    assert!(bacct(&histories, &format!("submitted by user {long}"), 3600.0).contains(&long));
}

#[test]
fn names_with_line_breaks_and_escapes_are_shown_escaped() {
    let rows = vec![job(1, FORGED)];
    for text in [
        jobs(&rows, false, false, false),
        jobs(&rows, false, true, false),
        jobs_fields(
            &rows,
            &parse_fields("jobid job_name output_file").expect("fields"),
            true,
        ),
    ] {
        no_control(&text);
        assert!(!text.lines().any(|line| line.starts_with("9999")), "{text}");
        assert!(text.contains("evil\\n9999"), "{text}");
    }
    // The default columns: a header and one row, whatever the name holds.
    assert_eq!(jobs(&rows, false, false, false).lines().count(), 2);
    let histories = vec![history(1, FORGED)];
    for text in [
        bhist(&histories),
        bhist_long(&histories, 100.0),
        bacct(&histories, &format!("submitted by user {FORGED}"), 3600.0),
    ] {
        no_control(&text);
        assert!(!text.lines().any(|line| line.starts_with("9999")), "{text}");
    }
    // -json: the name is in the JSON whole, escaped by JSON.
    let json = jobs_table(&rows, &parse_fields("jobid job_name").expect("fields")).lsf_json();
    no_control(&json);
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(value["RECORDS"][0]["JOB_NAME"], FORGED);
}

#[test]
fn job_name_widths_cut_at_the_front_as_lsf_does() {
    let rows = vec![job(1, "a_long_job_name"), job(22, "short")];
    let fields = parse_fields("jobid job_name:10 queue:4").expect("fields");
    let text = jobs_fields(&rows, &fields, true);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "JOBID  JOB_NAME    QUEU");
    assert_eq!(lines[1], "1      *_job_name  norm");
    assert_eq!(lines[2], "22     short       norm");
    let no_header = jobs_fields(&rows, &fields, false);
    assert_eq!(no_header.lines().next(), Some("1   *_job_name  norm"));
}

#[test]
fn an_ended_forwarded_job_shows_its_execution_cluster_with_an_at() {
    let mut forwarded_in = history(3, "in");
    forwarded_in.origin = "forwarded_in".into();
    forwarded_in.forwarded_from = Some(ForwardedFrom {
        cluster: "Cluster0".into(),
        source_job: 5,
    });
    forwarded_in.exec_host = Some("1*h1".into());
    let rows = finished_jobs("Cluster1", &[history(1, "away"), forwarded_in]);
    assert_eq!(rows[0].exec_host.as_deref(), Some("@Cluster2"));
    assert_eq!(rows[1].exec_host.as_deref(), Some("1*h1"));
}
