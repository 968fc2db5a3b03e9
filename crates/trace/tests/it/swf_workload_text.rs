//! An SWF workload's job names and users are held to their bounds
//! (`mcfed_protocol::bounds::JOB_NAME`, `USER_NAME`) though the reader
//! reads a user's text once and a name's from its workload's: a job whose
//! user or name is over-long or not printable is skipped as out of
//! bounds, every time, and one whose text is printable beyond ASCII is
//! still taken.

use std::path::Path;
use std::sync::Arc;

use mcfed_protocol::ClusterName;
use mcfed_trace::workload::{TraceFormat, WorkloadSpec, WorkloadStream};

/// A one-slot, ten-second job `job` of user `uid` submitted at `at`.
fn line(job: u64, at: usize, uid: u64) -> String {
    format!("{job} {at} 0 10 1 -1 -1 1 60 -1 1 {uid} 1 -1 1 -1 -1 -1\n")
}

/// The job numbers `name` and `user` take from a trace of jobs 1 and
/// 12345 of user 1 and of user 12345 (each twice: a user's verdict is
/// kept), and how many it skipped as out of bounds.
fn taken(dir: &Path, name: &str, user: &str) -> (Vec<String>, u64) {
    let path = dir.join(format!("{}.swf", name.len() + user.len()));
    let jobs = [(1, 1), (12345, 1), (2, 12345), (12346, 12345)];
    let text: String = jobs
        .iter()
        .enumerate()
        .map(|(at, &(job, uid))| line(job, at, uid))
        .collect();
    std::fs::write(&path, text).expect("write the trace");
    let spec = WorkloadSpec {
        name: name.to_owned(),
        swf: path,
        format: TraceFormat::Swf,
        cluster: ClusterName::new("east").expect("name"),
        queue: "normal".into(),
        queue_map: Vec::new(),
        partition_map: Vec::new(),
        user: user.to_owned(),
        limit: None,
        time_scale: 1.0,
    };
    let mut stream = WorkloadStream::open(Arc::new(spec)).expect("opens");
    let taken = stream
        .by_ref()
        .map(|submission| format!("{}@{}", submission.spec.name, submission.spec.user))
        .map(|name| {
            name.rsplit_once('-')
                .map_or(name.clone(), |(_, tail)| tail.to_owned())
        })
        .collect();
    (taken, stream.skipped().out_of_bounds)
}

#[test]
fn plain_names_and_users_are_taken() {
    let dir = tempfile::tempdir().expect("dir");
    let (taken, skipped) = taken(dir.path(), "w", "u{uid}");
    assert_eq!(taken, ["1@u1", "12345@u1", "2@u12345", "12346@u12345"]);
    assert_eq!(skipped, 0);
}

#[test]
fn a_user_past_its_length_is_skipped_for_each_of_its_jobs() {
    let dir = tempfile::tempdir().expect("dir");
    // 251 bytes and the uid: user 1 has 252 (within 255), user 12345 256.
    let pad = "x".repeat(251);
    let (taken, skipped) = taken(dir.path(), "w", &format!("{pad}{{uid}}"));
    assert_eq!(taken, [format!("1@{pad}1"), format!("12345@{pad}1")]);
    assert_eq!(skipped, 2);
}

#[test]
fn a_user_with_a_control_character_is_skipped() {
    let dir = tempfile::tempdir().expect("dir");
    let (taken, skipped) = taken(dir.path(), "w", "u\u{7}{uid}");
    assert!(taken.is_empty(), "{taken:?}");
    assert_eq!(skipped, 4);
}

#[test]
fn a_name_past_its_length_is_skipped() {
    let dir = tempfile::tempdir().expect("dir");
    // 4,089 bytes, a dash and the number: job 1 has 4,091 (within 4,094),
    // job 12345 4,095 and job 12346 too.
    let name = "n".repeat(4089);
    let (taken, skipped) = taken(dir.path(), &name, "u{uid}");
    assert_eq!(taken, ["1@u1", "2@u12345"]);
    assert_eq!(skipped, 2);
}

#[test]
fn a_name_with_a_control_character_is_skipped() {
    let dir = tempfile::tempdir().expect("dir");
    let (taken, skipped) = taken(dir.path(), "w\tx", "u{uid}");
    assert!(taken.is_empty(), "{taken:?}");
    assert_eq!(skipped, 4);
}

#[test]
fn printable_text_beyond_ascii_is_still_taken() {
    let dir = tempfile::tempdir().expect("dir");
    let (taken, skipped) = taken(dir.path(), "wé", "josé{uid}");
    assert_eq!(
        taken,
        ["1@josé1", "12345@josé1", "2@josé12345", "12346@josé12345"]
    );
    assert_eq!(skipped, 0);
}
