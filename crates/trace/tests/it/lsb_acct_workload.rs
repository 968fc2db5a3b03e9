//! An lsb.acct as a workload: records in finish order come out in submit
//! order (within the window), mapped as the module says — queue by name,
//! slots, run time = end − start, run limit, `-R`, user, name — and what
//! is skipped is counted by reason.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, SimTime};
use mcfed_trace::lsb_acct::{JobFinish, write_job_finish};
use mcfed_trace::workload::{AcctMapping, QueueTarget, TraceFormat, WorkloadSpec, WorkloadStream};

/// A record as LSF 10.1 writes it (see tests/lsb_acct.rs): job 4242 of
/// alice, 4 slots, submitted at 1700000000, run 3480 s, run limit 7200 s,
/// `select[mem>1024] rusage[mem=1024]`, queue `normal`.
const LOCAL: &str = r#""JOB_FINISH" "10.1" 1700003600 4242 1001 33554450 4 1700000000 0 0 1700000120 "alice" "normal" "select[mem>1024] rusage[mem=1024]" "" "" "login1" "/home/alice/run ""a""" "" "/home/alice/out.%J" "" "1700000000.4242" 2 "hostA" "hostB" 4 "hostA" "hostA" "hostB" "hostB" 64 12.5 "sim ""quoted"" name" "./sim --steps 10" 3400.500000 12.250000 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" "proj1" 0 4 "" "" 0 204800 409600 "" "" "" "" 0 "" 0 "" -1 "" "" "" "" -1 "" "" 0 "" 1700000120 "" "" 2 1032 "0" 1033 "0" 2 "hostA" 102400 204800 1700 6 "hostB" 102400 204800 1700 6 0 7200 153600 "select[mem>1024] rusage[mem=1024] span[hosts=2]" "" -1 "" -1 0 "" 0 0 "" 3480 "" 0 "" 0.000000 0.00 0.00 0.00 0.00 4 "hostA" "hostA" "hostB" "hostB" -1 0 0 0"#;

fn job(id: i64, submit: i64, start: i64, end: i64, queue: &str) -> JobFinish {
    JobFinish {
        job_id: id,
        submit_time: submit,
        start_time: start,
        event_time: end,
        queue: queue.to_owned(),
        user_name: format!("user{id}"),
        user_id: 1000 + id,
        num_processors: 1,
        ..JobFinish::default()
    }
}

fn log(dir: &Path, lines: &[String]) -> std::path::PathBuf {
    let path = dir.join("lsb.acct");
    std::fs::write(&path, lines.concat()).expect("write the log");
    path
}

fn line(job: &JobFinish) -> String {
    let mut out = Vec::new();
    write_job_finish(&mut out, job).expect("writes");
    String::from_utf8(out).expect("UTF-8")
}

fn spec(path: &Path, window: usize, clusters: &[&str]) -> Arc<WorkloadSpec> {
    Arc::new(WorkloadSpec {
        name: "acct".into(),
        swf: path.to_owned(),
        format: TraceFormat::LsbAcct(AcctMapping {
            queue_map: vec![(
                "night".to_owned(),
                QueueTarget {
                    queue: "long".to_owned(),
                    cluster: None,
                },
            )],
            queues: vec!["normal".to_owned(), "long".to_owned(), "short".to_owned()],
            clusters: clusters
                .iter()
                .map(|name| ClusterName::new(name).expect("name"))
                .collect(),
            window,
            epoch: None,
        }),
        cluster: ClusterName::new("east").expect("name"),
        queue: "short".into(),
        queue_map: Vec::new(),
        partition_map: Vec::new(),
        user: "{user}".into(),
        limit: None,
        time_scale: 1.0,
    })
}

#[test]
fn records_in_finish_order_are_submitted_in_submit_order_and_mapped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut forwarded_in = job(9, 1_700_000_050, 1_700_000_060, 1_700_000_070, "recv");
    forwarded_in.src_cluster = "west".into();
    forwarded_in.src_job_id = 3;
    forwarded_in.dst_cluster = "east".into();
    let mut from_elsewhere = job(10, 1_700_000_055, 1_700_000_060, 1_700_000_080, "recv");
    from_elsewhere.src_cluster = "faraway".into();
    let mut sent = job(11, 1_700_000_040, 1_700_000_041, 1_700_000_900, "normal");
    sent.src_cluster = "east".into();
    sent.dst_cluster = "west".into();
    let mut array = job(7, 1_700_000_030, 1_700_000_031, 1_700_000_050, "night");
    array.array_index = 3;
    array.res_req = "select[bigmem && gpu] rusage[mem=2G:swp=512]".into();
    array.run_limit = 600;
    array.num_processors = 8;
    let never_started = job(8, 1_700_000_010, 0, 1_700_000_020, "normal");
    let lines = vec![
        // Finish order: 8 (never ran), 7, 9, 10, LOCAL (4242), 11.
        line(&never_started),
        line(&array),
        line(&forwarded_in),
        line(&from_elsewhere),
        "\"JOB_RESIZE\" \"10.1\" 1 2 3\n".to_owned(),
        format!("{LOCAL}\n"),
        line(&sent),
    ];
    let path = log(dir.path(), &lines);
    let mut stream = WorkloadStream::open(spec(&path, 100, &["east", "west"])).expect("opens");
    let submissions: Vec<_> = stream.by_ref().collect();
    let names: Vec<&str> = submissions.iter().map(|s| &*s.spec.name).collect();
    assert_eq!(
        names,
        ["acct-4242", "acct-7[3]", "acct-11", "acct-10"],
        "submit order"
    );
    let at: Vec<SimTime> = submissions.iter().map(|s| s.at).collect();
    assert_eq!(
        at,
        [0, 30, 40, 55].map(|s| SimTime::from_millis(s * 1000)),
        "times from the first job's"
    );
    let local = &submissions[0];
    assert_eq!((&*local.queue, local.cluster.as_str()), ("normal", "east"));
    assert_eq!(&*local.spec.user, "alice");
    assert_eq!(local.spec.slots, 4);
    assert_eq!(local.spec.run_time, Duration::from_secs(3480));
    assert_eq!(local.spec.run_limit, Some(Duration::from_secs(7200)));
    assert!(local.spec.resources.is_empty());
    assert_eq!(local.spec.options().mem_request_mb, Some(1024));
    let array = &submissions[1];
    assert_eq!(&*array.queue, "long", "mapped by queue_map");
    assert_eq!(array.spec.slots, 8);
    assert_eq!(array.spec.resources, ["bigmem", "gpu"]);
    assert_eq!(array.spec.options().mem_request_mb, Some(2048));
    assert_eq!(array.spec.options().swap_request_mb, Some(512));
    assert_eq!(array.spec.run_time, Duration::from_secs(19));
    assert_eq!(&*submissions[2].queue, "normal");
    assert_eq!(
        &*submissions[3].queue, "short",
        "an unknown queue: the default"
    );
    let skipped = stream.skipped();
    assert_eq!(skipped.no_run_time, 1);
    assert_eq!(skipped.forwarded_in, 1);
    assert_eq!(skipped.other_records, 1);
    assert_eq!(skipped.out_of_order, 0);
    assert_eq!(skipped.total(), 3);
    assert!(stream.header().fields.is_empty());
}

#[test]
fn a_job_submitted_before_one_already_let_out_is_skipped_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A window of 2: job 1 (submitted at 0) comes after three later ones.
    let lines: Vec<String> = [
        job(2, 100, 101, 110, "normal"),
        job(3, 200, 201, 210, "normal"),
        job(4, 300, 301, 310, "normal"),
        job(1, 0, 1, 400, "normal"),
        job(5, 250, 251, 500, "normal"),
    ]
    .iter()
    .map(line)
    .collect();
    let path = log(dir.path(), &lines);
    let mut stream = WorkloadStream::open(spec(&path, 2, &["east"])).expect("opens");
    let names: Vec<String> = stream.by_ref().map(|s| s.spec.name.to_string()).collect();
    assert_eq!(names, ["acct-2", "acct-3", "acct-5", "acct-4"]);
    assert_eq!(stream.skipped().out_of_order, 1);
    let error = stream.first_error().expect("the first one named");
    assert!(
        error.contains("lsb.acct:4: job 1: submitted at 0, before 200"),
        "{error}"
    );
    // With a window as long as the log, nothing is out of order.
    let mut stream = WorkloadStream::open(spec(&path, 10, &["east"])).expect("opens");
    assert_eq!(stream.by_ref().count(), 5);
    assert_eq!(stream.skipped().out_of_order, 0);
}

#[test]
fn the_limit_counts_records_and_malformed_ones_are_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines: Vec<String> = (1..=10)
        .map(|id| line(&job(id, id * 10, id * 10 + 1, id * 10 + 5, "normal")))
        .collect();
    lines.insert(3, "\"JOB_FINISH\" \"10.1\" 1 2 x\n".to_owned());
    let path = log(dir.path(), &lines);
    let limited = WorkloadSpec {
        limit: Some(4),
        ..WorkloadSpec::clone(&spec(&path, 100, &["east"]))
    };
    let mut stream = WorkloadStream::open(Arc::new(limited)).expect("opens");
    assert_eq!(stream.by_ref().count(), 4);
    assert_eq!(stream.skipped().malformed, 1);
    assert!(
        stream
            .first_error()
            .is_some_and(|error| error.contains("lsb.acct:4: field")),
        "{:?}",
        stream.first_error()
    );
}

/// A job's host type, model and advance reservation reach its JobSpec:
/// `-R "select[type==X && model==Y]"` as the cluster's words, and rsvId
/// (in either of the two places lsb.acct(5) gives it) as `rsv==NAME`.
#[test]
fn host_types_models_and_reservations_are_replayed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut typed = job(1, 1_700_000_000, 1_700_000_010, 1_700_000_100, "normal");
    typed.res_req = "select[type == LINUX86 && model==XeonE5] order[r15s:pg]".into();
    typed.rsv_id = "maint".into();
    // LSF 10.1's layout with only the later rsvId filled.
    let later = LOCAL.replacen(
        "1700000120 \"\" \"\" 2 1032",
        "1700000120 \"alice#3\" \"\" 2 1032",
        1,
    );
    assert_ne!(later, LOCAL);
    let path = log(dir.path(), &[line(&typed), format!("{later}\n")]);
    let mut stream = WorkloadStream::open(spec(&path, 100, &["east"])).expect("opens");
    let submissions: Vec<_> = stream.by_ref().collect();
    assert_eq!(submissions.len(), 2);
    let by_name = |name: &str| {
        submissions
            .iter()
            .find(|s| &*s.spec.name == name)
            .expect("submitted")
    };
    assert_eq!(
        by_name("acct-1").spec.resources,
        ["type==LINUX86", "model==XeonE5", "rsv==maint"]
    );
    assert_eq!(by_name("acct-4242").spec.resources, ["rsv==alice#3"]);
}

/// A record whose job is beyond mcfed's bounds (a user name or a resource
/// longer than 255 bytes, as lsb.acct's fields allow up to 64 KiB) is
/// skipped and counted, the first named by file, line and field; the
/// records around it are submitted.
#[test]
fn a_record_beyond_the_job_bounds_is_refused_with_its_line_and_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut long_user = job(2, 20, 21, 30, "normal");
    long_user.user_name = "u".repeat(300);
    let mut long_resource = job(3, 30, 31, 40, "normal");
    long_resource.res_req = format!("select[{}]", "r".repeat(300));
    let lines: Vec<String> = [
        job(1, 10, 11, 20, "normal"),
        long_user,
        long_resource,
        job(4, 40, 41, 50, "normal"),
    ]
    .iter()
    .map(line)
    .collect();
    let path = log(dir.path(), &lines);
    let mut stream = WorkloadStream::open(spec(&path, 100, &["east"])).expect("opens");
    let names: Vec<String> = stream.by_ref().map(|s| s.spec.name.to_string()).collect();
    assert_eq!(names, ["acct-1", "acct-4"]);
    assert_eq!(stream.skipped().out_of_bounds, 2);
    let error = stream.first_error().expect("the first one named");
    assert!(
        error.contains("lsb.acct:2: job 2: field userName: ") && error.contains("user name"),
        "{error}"
    );

    // The resource alone: named by its field too.
    let path = log(dir.path(), &lines[2..3]);
    let mut stream = WorkloadStream::open(spec(&path, 100, &["east"])).expect("opens");
    assert_eq!(stream.by_ref().count(), 0);
    let error = stream.first_error().expect("named");
    assert!(
        error.contains("lsb.acct:1: job 3: field resReq: ") && error.contains("resource name"),
        "{error}"
    );
}
