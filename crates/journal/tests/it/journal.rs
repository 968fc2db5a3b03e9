//! A state directory through crashes: records survive a reopen, a torn
//! last record is dropped, compaction cut short at any point leaves a
//! readable state, two processes cannot share a directory, and callbacks
//! run only after their records, in order.

use std::fs::OpenOptions;
use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use mcfed_journal::{JournalError, StateDir, Writer, encode_snapshot, read_journal_file};

type Snapshot = Vec<u32>;
type Record = u32;

const FORMAT: u32 = 7;

fn open(path: &std::path::Path) -> (StateDir, Option<Snapshot>, Vec<Record>, u64) {
    let (dir, recovered) = StateDir::open::<Snapshot, Record>(path, FORMAT).expect("opens");
    (
        dir,
        recovered.snapshot,
        recovered.records,
        recovered.dropped_bytes,
    )
}

/// Appends `records` in batches and waits until the last is durable.
fn append_all(writer: &Writer<Record>, records: &[Record]) {
    let (done, wait) = mpsc::channel();
    for chunk in records.chunks(3) {
        writer.append(chunk.to_vec(), Box::new(|| {}));
    }
    writer.append(
        Vec::new(),
        Box::new(move || done.send(()).expect("waiting")),
    );
    wait.recv().expect("durable");
}

#[test]
fn records_survive_a_reopen_and_a_snapshot_replaces_them() {
    let temp = tempfile::tempdir().expect("temp");
    let (dir, snapshot, records, dropped) = open(temp.path());
    assert_eq!((snapshot, records, dropped), (None, vec![], 0));
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[1, 2, 3, 4, 5]);
    drop(writer);
    let (dir, snapshot, records, _) = open(temp.path());
    assert_eq!((snapshot, records), (None, vec![1, 2, 3, 4, 5]));
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    writer.snapshot(encode_snapshot(&vec![15u32]).expect("encodes"));
    append_all(&writer, &[6]);
    drop(writer);
    let (dir, snapshot, records, _) = open(temp.path());
    assert_eq!((snapshot, records), (Some(vec![15]), vec![6]));
    assert_eq!(dir.generation(), 1);
}

/// Copies the state files of `from` into a fresh directory: what a kill
/// at this moment would leave.
fn killed_now(from: &std::path::Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("temp");
    for entry in std::fs::read_dir(from).expect("dir") {
        let entry = entry.expect("entry");
        if entry.file_name() != "lock" {
            std::fs::copy(entry.path(), copy.path().join(entry.file_name())).expect("copied");
        }
    }
    copy
}

#[test]
fn records_after_a_snapshot_are_durable_while_it_is_written_and_a_kill_then_loses_none() {
    let temp = tempfile::tempdir().expect("temp");
    let (mut dir, ..) = open(temp.path());
    dir.write_snapshot(&encode_snapshot(&vec![0u32]).expect("encodes"))
        .expect("snapshot");
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[1, 2]);
    // A snapshot whose making waits for the test: the writer must not.
    let (release, released) = mpsc::channel::<()>();
    writer.snapshot_with(Box::new(move || {
        released.recv().map_err(|_| "not released".to_owned())?;
        encode_snapshot(&vec![0u32, 1, 2]).map_err(|error| error.to_string())
    }));
    let (done, durable) = mpsc::channel();
    writer.append(
        vec![3, 4],
        Box::new(move || done.send(()).expect("waiting")),
    );
    // (A generous bound only so that a writer stalled behind the snapshot
    // fails the test instead of hanging it.)
    durable
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the records after the snapshot waited for it to be written");
    assert_eq!(
        writer.stats().snapshots,
        0,
        "the snapshot is not written yet"
    );
    // Killed now: the old snapshot and every record, none lost.
    let killed = killed_now(temp.path());
    let (_, snapshot, records, _) = open(killed.path());
    assert_eq!((snapshot, records), (Some(vec![0]), vec![1, 2, 3, 4]));
    release.send(()).expect("released");
    append_all(&writer, &[5]);
    drop(writer);
    let (dir, snapshot, records, _) = open(temp.path());
    assert_eq!((snapshot, records), (Some(vec![0, 1, 2]), vec![3, 4, 5]));
    assert_eq!(dir.generation(), 2);
}

#[test]
fn a_snapshot_that_does_not_encode_fails_the_writer() {
    let temp = tempfile::tempdir().expect("temp");
    let (dir, ..) = open(temp.path());
    let (failed, failure) = mpsc::channel();
    let writer = Writer::<Record>::start(dir, move |why| {
        let _ = failed.send(why);
    })
    .expect("writer");
    append_all(&writer, &[1]);
    writer.snapshot_with(Box::new(|| Err("no".to_owned())));
    let why = failure.recv().expect("the writer failed");
    assert!(why.contains("does not encode: no"), "{why}");
    assert!(writer.failure().is_some());
    drop(writer);
    let (_, snapshot, records, _) = open(temp.path());
    assert_eq!((snapshot, records), (None, vec![1]));
}

#[test]
fn a_torn_last_record_is_dropped_and_the_file_cut_back() {
    let temp = tempfile::tempdir().expect("temp");
    let (dir, ..) = open(temp.path());
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[10, 20, 30]);
    drop(writer);
    let journal = temp.path().join("journal");
    let whole = std::fs::metadata(&journal).expect("journal").len();
    // A crash in the middle of the next record's write.
    let mut file = OpenOptions::new()
        .append(true)
        .open(&journal)
        .expect("open");
    file.write_all(&[9, 0, 0, 0, 1, 2]).expect("write");
    drop(file);
    let (dir, _, records, dropped) = open(temp.path());
    assert_eq!((records, dropped), (vec![10, 20, 30], 6));
    assert_eq!(std::fs::metadata(&journal).expect("journal").len(), whole);
    // Appending goes on after the last sound record.
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[40]);
    drop(writer);
    let (_, _, records, dropped) = open(temp.path());
    assert_eq!((records, dropped), (vec![10, 20, 30, 40], 0));
}

#[test]
fn a_compaction_cut_short_leaves_a_readable_state() {
    let temp = tempfile::tempdir().expect("temp");
    let (dir, ..) = open(temp.path());
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[1, 2]);
    drop(writer);
    let journal_before = std::fs::read(temp.path().join("journal")).expect("journal");
    // The snapshot of generation 1 is in place, the journal still that of
    // generation 0 (a crash between the two renames): its records are in
    // the snapshot, so it is ignored.
    let (mut dir, ..) = open(temp.path());
    dir.write_snapshot(&encode_snapshot(&vec![3u32]).expect("encodes"))
        .expect("snapshot");
    drop(dir);
    std::fs::write(temp.path().join("journal"), &journal_before).expect("old journal back");
    let (_, snapshot, records, _) = open(temp.path());
    assert_eq!((snapshot, records), (Some(vec![3]), vec![]));
    // A leftover temporary file changes nothing.
    std::fs::write(temp.path().join("snapshot.new"), b"half written").expect("temp file");
    let (_, snapshot, _, _) = open(temp.path());
    assert_eq!(snapshot, Some(vec![3]));
}

#[test]
fn two_processes_cannot_share_a_state_directory() {
    let temp = tempfile::tempdir().expect("temp");
    let (_dir, ..) = open(temp.path());
    let second = StateDir::open::<Snapshot, Record>(temp.path(), FORMAT);
    assert!(
        matches!(second, Err(JournalError::Locked { .. })),
        "{second:?}"
    );
}

#[test]
fn a_journal_of_another_format_is_refused() {
    let temp = tempfile::tempdir().expect("temp");
    let (dir, ..) = open(temp.path());
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[1]);
    drop(writer);
    let other = StateDir::open::<Snapshot, Record>(temp.path(), FORMAT + 1);
    let error = other.expect_err("refused").to_string();
    assert!(error.contains("format"), "{error}");
}

#[test]
fn callbacks_run_after_their_records_in_order() {
    let temp = tempfile::tempdir().expect("temp");
    let (dir, ..) = open(temp.path());
    let writer = Arc::new(Writer::<Record>::start(dir, |_| {}).expect("writer"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (done, wait) = mpsc::channel();
    for batch in 0..200u32 {
        let seen = seen.clone();
        let done = done.clone();
        let records = if batch % 3 == 0 { vec![] } else { vec![batch] };
        writer.append(
            records,
            Box::new(move || {
                seen.lock().expect("lock").push(batch);
                if batch == 199 {
                    let _ = done.send(());
                }
            }),
        );
    }
    wait.recv().expect("all durable");
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen, (0..200).collect::<Vec<_>>());
    let stats = writer.stats();
    assert_eq!(
        stats.records,
        (0..200).filter(|b| b % 3 != 0).count() as u64
    );
    assert!(
        stats.syncs >= 1 && stats.syncs <= stats.records,
        "{stats:?}"
    );
    // Every callback ran after its records were on disk.
    drop(writer);
    let (_, _, records, _) = open(temp.path());
    assert_eq!(records.len() as u64, stats.records);
}

#[test]
fn kept_journals_hold_the_whole_history() {
    let temp = tempfile::tempdir().expect("temp");
    let (mut dir, ..) = open(temp.path());
    dir.keep_journals(true);
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    append_all(&writer, &[1, 2]);
    writer.snapshot(encode_snapshot(&vec![3u32]).expect("encodes"));
    append_all(&writer, &[4]);
    writer.snapshot(encode_snapshot(&vec![7u32]).expect("encodes"));
    append_all(&writer, &[8]);
    drop(writer);
    let read =
        |name: &str| read_journal_file::<Record>(&temp.path().join(name), FORMAT).expect("reads");
    assert_eq!(read("journal.0"), vec![1, 2]);
    assert_eq!(read("journal.1"), vec![4]);
    assert_eq!(read("journal"), vec![8]);
}
