//! lsb.acct: records laid out exactly as LSF 10.1 writes them (written
//! here by hand from lsb.acct(5)), other records and versions skipped by
//! reason, errors at their line and field, the writer read back field by
//! field, the generator, gzip, and mangled input that never panics.

use std::io::Write as _;

use mcfed_trace::SyntheticTrace;
use mcfed_trace::lsb_acct::{
    AcctError, AcctReader, JobFinish, MAX_LINE_BYTES, STATUS_DONE, STATUS_EXIT, SyntheticAcct,
    generate, open, write_job_finish,
};
use proptest::prelude::*;

/// A finished parallel job as an LSF 10.1 fix pack logs it: two asked
/// hosts, four execution slots, quotes doubled inside strings, two
/// submitEXT pairs, two host usage entries, the allocated slots, and the
/// record ending after numGPURusages.
const LOCAL: &str = r#""JOB_FINISH" "10.1" 1700003600 4242 1001 33554450 4 1700000000 0 0 1700000120 "alice" "normal" "select[mem>1024] rusage[mem=1024]" "" "" "login1" "/home/alice/run ""a""" "" "/home/alice/out.%J" "" "1700000000.4242" 2 "hostA" "hostB" 4 "hostA" "hostA" "hostB" "hostB" 64 12.5 "sim ""quoted"" name" "./sim --steps 10" 3400.500000 12.250000 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" "proj1" 0 4 "" "" 0 204800 409600 "" "" "" "" 0 "" 0 "" -1 "" "" "" "" -1 "" "" 0 "" 1700000120 "" "" 2 1032 "0" 1033 "0" 2 "hostA" 102400 204800 1700 6 "hostB" 102400 204800 1700 6 0 7200 153600 "select[mem>1024] rusage[mem=1024] span[hosts=2]" "" -1 "" -1 0 "" 0 0 "" 3480 "" 0 "" 0.000000 0.00 0.00 0.00 0.00 4 "hostA" "hostA" "hostB" "hostB" -1 0 0 0"#;

/// A job forwarded from ClusterA and run at ClusterB that exited with
/// code 3, an array element, with every later list of the layout
/// present: a GPU usage entry, the storage count and a finish pair.
const FORWARDED: &str = r#""JOB_FINISH" "10.1" 1700007200 77 1002 33554434 2 1700005000 0 0 1700005100 "bob" "send" "" "" "" "login2" "/tmp" "" "" "" "1700005000.77" 0 2 "rhost1" "rhost1" 32 1.0 "" "exit 3" -1.000000 -1.000000 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" "default" 768 2 "" "" 3 0 0 "" "" "" "" 0 "" 1 "" -1 "" "" "" "" -1 "" "" 0 "" 0 "" "" 0 0 0 600 0 "" "ClusterA" 77 "ClusterB" 1203 1700005010 "" 0 0 "" 2100 "" 0 "" 0.000000 0.00 0.00 0.00 0.00 2 "rhost1" "rhost1" -1 0 0 1 "rhost1" 1 "gpu_util" "50" 0 1 "key" "value""#;

fn read(
    text: &str,
) -> (
    Vec<Result<JobFinish, AcctError>>,
    mcfed_trace::lsb_acct::Skipped,
) {
    let mut reader = AcctReader::new("lsb.acct", text.as_bytes());
    let records: Vec<_> = reader.by_ref().collect();
    (records, reader.skipped().clone())
}

#[test]
fn records_as_lsf_10_1_writes_them_are_read_field_by_field() {
    let (records, reader) = read(&format!("{LOCAL}\n{FORWARDED}\n"));
    assert_eq!(records.len(), 2);
    let local = records[0].as_ref().expect("the local job");
    assert_eq!(local.version, "10.1");
    assert_eq!((local.job_id, local.user_id), (4242, 1001));
    assert_eq!(local.user_name, "alice");
    assert_eq!(local.queue, "normal");
    assert_eq!(local.slots(), Some(4));
    assert_eq!(local.submit_time, 1_700_000_000);
    assert_eq!(local.start_time, 1_700_000_120);
    assert_eq!(local.event_time, 1_700_003_600);
    assert_eq!(local.original_run_time(), Some(3480));
    assert_eq!(local.run_time, 3480);
    assert_eq!(local.run_limit_seconds(), Some(7200));
    assert_eq!(
        local.requirements(),
        Some("select[mem>1024] rusage[mem=1024]")
    );
    assert_eq!(local.cwd, r#"/home/alice/run "a""#);
    assert_eq!(local.job_name, r#"sim "quoted" name"#);
    assert_eq!(local.command, "./sim --steps 10");
    assert_eq!(local.asked_hosts, ["hostA", "hostB"]);
    assert_eq!(local.exec_hosts, ["hostA", "hostA", "hostB", "hostB"]);
    assert_eq!(local.alloc_slots, local.exec_hosts);
    assert_eq!(local.status, STATUS_DONE);
    assert_eq!(local.host_factor, 12.5);
    assert_eq!(local.user_cpu_time, 3400.5);
    assert_eq!(local.project_name, "proj1");
    assert_eq!((local.max_rmem, local.max_rswap), (204_800, 409_600));
    assert_eq!(
        local.effective_res_req,
        "select[mem>1024] rusage[mem=1024] span[hosts=2]"
    );
    assert_eq!(local.submission_cluster(), None);
    assert_eq!(local.execution_cluster(), None);

    let forwarded = records[1].as_ref().expect("the forwarded job");
    assert_eq!(forwarded.submission_cluster(), Some("ClusterA"));
    assert_eq!(forwarded.execution_cluster(), Some("ClusterB"));
    assert_eq!((forwarded.src_job_id, forwarded.dst_job_id), (77, 1203));
    assert_eq!(forwarded.forward_time, 1_700_005_010);
    assert_eq!(forwarded.status, STATUS_EXIT);
    assert_eq!(forwarded.exit_status, 768);
    assert_eq!(forwarded.array_index, 3);
    assert_eq!(forwarded.requirements(), None);
    assert_eq!(forwarded.run_limit_seconds(), Some(600));
    assert_eq!(forwarded.original_run_time(), Some(2100));
    assert_eq!(reader.total(), 0);
}

#[test]
fn other_records_and_versions_are_skipped_and_counted_by_reason() {
    let old = LOCAL.replacen("\"10.1\"", "\"9.1\"", 1);
    let fix_pack = LOCAL.replacen("\"10.1\"", "\"10.1.0.13\"", 1);
    let text = format!(
        "{LOCAL}\n\"JOB_RESIZE\" \"10.1\" 1700000000 4242 1\n{old}\n\n{old}\n\"EVENT_ADRSV_FINISH\" \"10.1\" 1 2 3\n\"JOB_RESIZE\" \"10.1\" 5\n{fix_pack}\n"
    );
    let (records, reader) = read(&text);
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(records.iter().all(Result::is_ok));
    assert_eq!(records[1].as_ref().expect("read").version, "10.1.0.13");
    let skipped = reader;
    assert_eq!(skipped.total(), 5);
    assert_eq!(
        skipped.reasons(),
        [
            "2 JOB_RESIZE records",
            "1 EVENT_ADRSV_FINISH record",
            "2 JOB_FINISH records of version 9.1",
        ]
    );
}

#[test]
fn malformed_records_are_errors_at_their_line_and_field_and_reading_goes_on() {
    let bad_slots = LOCAL.replacen(" 4 1700000000 ", " four 1700000000 ", 1);
    let cut = &LOCAL[..LOCAL.find(" 7200 ").expect("runLimit")];
    let unclosed = LOCAL.replacen("\"alice\"", "\"alice", 1);
    let huge_count = LOCAL.replacen(" 2 \"hostA\" \"hostB\" 4 ", " 99999999 \"hostA\" ", 1);
    let text = format!("{bad_slots}\n{cut}\n{unclosed}\n{huge_count}\n{FORWARDED}\n");
    let (records, _) = read(&text);
    let messages: Vec<String> = records
        .iter()
        .filter_map(|record| record.as_ref().err().map(ToString::to_string))
        .collect();
    assert_eq!(
        messages,
        [
            "lsb.acct:1: field 7 (numProcessors): expected a whole number, found `four`",
            "lsb.acct:2: field 101 (runLimit): missing: the record ends before it",
            "lsb.acct:3: field 12 (userName): a quoted string is followed by more text without a blank",
            "lsb.acct:4: field 23 (numAskedHosts): 99999999 items, more than the record holds or the limit of 1000000",
        ]
    );
    assert_eq!(
        records.last().expect("five").as_ref().expect("read").job_id,
        77
    );
}

#[test]
fn an_overlong_line_is_refused_without_holding_it() {
    let mut text = "\"JOB_FINISH\" \"10.1\" ".to_owned();
    text.push_str(&"9".repeat(MAX_LINE_BYTES + 10));
    text.push('\n');
    text.push_str(FORWARDED);
    let (records, _) = read(&text);
    assert!(matches!(
        records[0],
        Err(AcctError::LineTooLong { line: 1, .. })
    ));
    assert_eq!(records[1].as_ref().expect("next line").job_id, 77);
}

/// What the writer writes for the records above reads back the same.
#[test]
fn the_writer_lays_records_out_as_lsf_does() {
    let (records, _) = read(&format!("{LOCAL}\n{FORWARDED}\n"));
    for record in records {
        let job = record.expect("read");
        let mut written = Vec::new();
        write_job_finish(&mut written, &job).expect("writes");
        let text = String::from_utf8(written).expect("UTF-8");
        let (again, _) = read(&text);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].as_ref().expect("reads back"), &job);
    }
    // The forwarded record's own layout, field for field, but for the
    // usage, submitEXT, GPU and key-value entries mcfed does not keep.
    let (records, _) = read(FORWARDED);
    let mut written = Vec::new();
    write_job_finish(&mut written, records[0].as_ref().expect("read")).expect("writes");
    let written = String::from_utf8(written).expect("UTF-8");
    let expected = FORWARDED.replace(
        "-1 0 0 1 \"rhost1\" 1 \"gpu_util\" \"50\" 0 1 \"key\" \"value\"",
        "-1 0 0 0 0 0",
    );
    assert_eq!(written.trim_end(), expected);
}

#[test]
fn line_breaks_in_strings_are_written_as_blanks() {
    let job = JobFinish {
        command: "#!/bin/sh\necho \"hi\"\r\n".to_owned(),
        ..JobFinish::default()
    };
    let mut written = Vec::new();
    write_job_finish(&mut written, &job).expect("writes");
    assert_eq!(written.iter().filter(|&&byte| byte == b'\n').count(), 1);
    let (records, _) = read(std::str::from_utf8(&written).expect("UTF-8"));
    assert_eq!(
        records[0].as_ref().expect("reads").command,
        "#!/bin/sh echo \"hi\"  "
    );
}

#[test]
fn what_the_writer_cannot_say_is_refused_and_nothing_written() {
    let jobs = [
        JobFinish {
            command: "x".repeat(70_000),
            ..JobFinish::default()
        },
        JobFinish {
            host_factor: f64::NAN,
            ..JobFinish::default()
        },
    ];
    for job in jobs {
        let mut written = Vec::new();
        let error = write_job_finish(&mut written, &job).expect_err("refused");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(written.is_empty());
    }
}

fn small_trace(jobs: u64, seed: u64) -> SyntheticAcct {
    SyntheticAcct {
        trace: SyntheticTrace {
            jobs,
            seed,
            ..SyntheticTrace::default()
        },
        queues: vec!["normal".into(), "short".into()],
        cluster: "ClusterA".into(),
        remote_clusters: vec!["ClusterB".into(), "ClusterC".into()],
        forwarded: 0.3,
        ..SyntheticAcct::default()
    }
}

#[test]
fn the_generator_is_seeded_logs_in_finish_order_and_reads_back() {
    let settings = small_trace(400, 7);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    assert_eq!(generate(&settings, &mut a).expect("writes"), 400);
    generate(&settings, &mut b).expect("writes");
    generate(&small_trace(400, 8), &mut c).expect("writes");
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut reader = AcctReader::new("gen", a.as_slice());
    let read: Vec<JobFinish> = reader.by_ref().map(|r| r.expect("valid")).collect();
    assert_eq!(read.len(), 400);
    assert_eq!(reader.skipped().total(), 0);
    let expected: Vec<JobFinish> = settings.records().expect("valid").collect();
    assert_eq!(read, expected);
    assert!(read.windows(2).all(|w| w[0].event_time <= w[1].event_time));
    assert!(
        read.iter()
            .any(|job| job.submission_cluster() == Some("ClusterA"))
    );
    assert!(read.iter().any(|job| job.execution_cluster().is_none()));
    assert!(read.iter().any(|job| job.queue == "short"));
    assert!(read.iter().any(|job| job.status == STATUS_EXIT));
    assert!(read.iter().any(|job| job.requirements().is_some()));
    for job in &read {
        assert!(job.submit_time <= job.start_time && job.start_time < job.event_time);
        assert_eq!(job.original_run_time(), u64::try_from(job.run_time).ok());
        assert!(
            job.run_limit_seconds()
                .is_some_and(|limit| limit >= job.run_time as u64)
        );
        assert_eq!(job.exec_hosts.len() as i64, job.num_processors);
    }
    let mut ids: Vec<i64> = read.iter().map(|job| job.job_id).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=400).collect::<Vec<_>>());
}

#[test]
fn plain_and_gzip_logs_read_alike_and_a_cut_gzip_ends_with_one_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = Vec::new();
    generate(&small_trace(300, 3), &mut text).expect("writes");
    let plain = dir.path().join("lsb.acct");
    std::fs::write(&plain, &text).expect("write");
    let zipped = dir.path().join("lsb.acct.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&text).expect("compress");
    let compressed = encoder.finish().expect("finish");
    std::fs::write(&zipped, &compressed).expect("write");
    let all = |path: &std::path::Path| -> Vec<Result<JobFinish, AcctError>> {
        open(path).expect("opens").collect()
    };
    let a = all(&plain);
    let b = all(&zipped);
    assert_eq!(a.len(), 300);
    assert_eq!(
        a.iter().map(|r| r.as_ref().ok()).collect::<Vec<_>>(),
        b.iter().map(|r| r.as_ref().ok()).collect::<Vec<_>>()
    );
    let cut = dir.path().join("cut.acct.gz");
    std::fs::write(&cut, &compressed[..compressed.len() / 2]).expect("write");
    let read = all(&cut);
    let errors: Vec<&AcctError> = read.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(matches!(errors[0], AcctError::Io { .. }));
    assert!(read.len() < 300);
}

fn text_field() -> impl Strategy<Value = String> {
    prop::string::string_regex("[a-zA-Z0-9 \"'#@\\[\\]=.:/_é-]{0,24}").expect("regex")
}

fn job_finish() -> impl Strategy<Value = JobFinish> {
    let times = prop::array::uniform8(-1i64..4_000_000_000);
    let strings = prop::collection::vec(text_field(), 13);
    let hosts = (
        prop::collection::vec(text_field(), 0..5),
        prop::collection::vec(text_field(), 0..5),
        prop::collection::vec(text_field(), 0..5),
    );
    let small = (any::<i32>(), any::<i32>(), any::<i32>(), -1i64..100_000);
    let floats = (-1i64..1_000_000, -1i64..1_000_000, 1u32..4000);
    (times, strings, hosts, small, floats).prop_map(
        |(t, s, (asked, exec, alloc), (status, exit_status, exit_info, n), (u, y, f))| JobFinish {
            version: "10.1".into(),
            event_time: t[0],
            job_id: t[1],
            user_id: t[2],
            options: t[3],
            num_processors: n,
            submit_time: t[4],
            begin_time: t[5],
            term_time: t[6],
            start_time: t[7],
            user_name: s[0].clone(),
            queue: s[1].clone(),
            res_req: s[2].clone(),
            depend_cond: s[3].clone(),
            from_host: s[4].clone(),
            cwd: s[5].clone(),
            job_file: s[6].clone(),
            asked_hosts: asked,
            exec_hosts: exec,
            status,
            host_factor: f64::from(f) / 8.0,
            job_name: s[7].clone(),
            command: s[8].clone(),
            user_cpu_time: u as f64 / 4.0,
            system_cpu_time: y as f64,
            project_name: s[9].clone(),
            exit_status,
            max_num_processors: n + 1,
            array_index: t[1] % 1000,
            max_rmem: t[2],
            max_rswap: t[3],
            rsv_id: s[12].clone(),
            exit_info,
            run_limit: t[4] % 100_000,
            effective_res_req: s[10].clone(),
            src_cluster: s[11].clone(),
            src_job_id: t[5],
            dst_cluster: s[0].clone(),
            dst_job_id: t[6],
            forward_time: t[7],
            run_time: t[0] % 1_000_000,
            alloc_slots: alloc,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every field the writer writes reads back the same.
    #[test]
    fn the_reader_reads_back_everything_the_writer_writes(jobs in prop::collection::vec(job_finish(), 1..4)) {
        let mut written = Vec::new();
        for job in &jobs {
            write_job_finish(&mut written, job).expect("writes");
        }
        let mut reader = AcctReader::new("w", written.as_slice());
        let read: Vec<JobFinish> = reader.by_ref().map(|r| r.expect("reads back")).collect();
        prop_assert_eq!(read, jobs);
    }

    /// Mangled records — cut, bytes changed, quotes and blanks inserted,
    /// lines joined — never panic; every error names the file and line.
    #[test]
    fn mangled_input_never_panics(
        base in prop::sample::select(vec![LOCAL, FORWARDED]),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 0..12),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = format!("{base}\n{base}\n").into_bytes();
        for (at, byte, kind) in edits {
            let position = at.index(bytes.len());
            match kind {
                0 => bytes[position] = byte,
                1 => bytes.insert(position, b'"'),
                2 => bytes.insert(position, b' '),
                _ => { bytes.remove(position); }
            }
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let mut reader = AcctReader::new("m", bytes.as_slice());
        for record in reader.by_ref() {
            if let Err(error) = record {
                prop_assert!(error.to_string().starts_with("m:"), "{}", error);
            }
        }
        let _ = reader.skipped().reasons();
    }

    /// Random bytes never panic either.
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let reader = AcctReader::new("r", bytes.as_slice());
        for job in reader.flatten() {
            let _ = (job.slots(), job.original_run_time(), job.requirements().map(str::len));
        }
    }
}
