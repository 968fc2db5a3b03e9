//! A damaged state directory is never read silently: damage followed by
//! sound records, a journal cut inside its header, a journal without its
//! snapshot or ahead of it are refused, naming the file and the offset;
//! a salvage keeps the damaged file aside and every sound record, and says
//! what was lost. Every record the writer writes reads back, whatever its
//! size. And a property: random bytes of generated journals corrupted, no
//! intact record disappears without a refusal or a salvage report.

use std::path::Path;
use std::sync::mpsc;

use mcfed_journal::{JournalError, Recovered, Recovery, StateDir, Writer, encode_snapshot, format};
use proptest::prelude::*;

/// A job id and some of its data.
type Record = (u64, Vec<u8>);
type Snapshot = Vec<u64>;

const FORMAT: u32 = 3;

fn open(
    path: &Path,
    recovery: Recovery,
) -> Result<(StateDir, Recovered<Snapshot, Record>), JournalError> {
    StateDir::open_with::<Snapshot, Record>(path, FORMAT, recovery)
}

/// Writes `records` to a fresh state directory's journal (after a
/// snapshot, as a cluster process does) and returns each record's frame's
/// offset in the file.
fn write_journal(path: &Path, records: &[Record]) -> Vec<(usize, usize)> {
    let (mut dir, _) = open(path, Recovery::Refuse).expect("opens");
    dir.write_snapshot(&encode_snapshot(&Snapshot::new()).expect("encodes"))
        .expect("snapshot");
    let writer = Writer::<Record>::start(dir, |_| {}).expect("writer");
    let (done, wait) = mpsc::channel();
    writer.append(
        records.to_vec(),
        Box::new(move || done.send(()).expect("waiting")),
    );
    wait.recv().expect("durable");
    drop(writer);
    let mut at = format::HEADER_LEN;
    records
        .iter()
        .map(|record| {
            let len =
                format::FRAME_HEADER_LEN + postcard::to_allocvec(record).expect("encodes").len();
            at += len;
            (at - len, len)
        })
        .collect()
}

fn jobs(count: u64) -> Vec<Record> {
    (1..=count).map(|id| (id, vec![id as u8; 20])).collect()
}

fn flip(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).expect("journal");
    bytes[at] ^= 0x40;
    std::fs::write(path, bytes).expect("damaged");
}

#[test]
fn a_flipped_byte_in_the_middle_is_refused_naming_file_offset_and_what_follows() {
    let temp = tempfile::tempdir().expect("temp");
    let frames = write_journal(temp.path(), &jobs(200));
    let journal = temp.path().join("journal");
    let (offset, len) = frames[57];
    flip(&journal, offset + len / 2);
    let before = std::fs::read(&journal).expect("journal");
    let error = open(temp.path(), Recovery::Refuse).expect_err("refused");
    match &error {
        JournalError::Damaged {
            path,
            offset: at,
            bytes,
            records_before,
            records_after,
        } => {
            assert_eq!(path, &journal);
            assert_eq!(*at, offset as u64);
            assert_eq!(*bytes, len as u64);
            assert_eq!((*records_before, *records_after), (57, 142));
        }
        other => panic!("not refused as damage: {other}"),
    }
    let message = error.to_string();
    assert!(
        message.contains(&format!("damaged at byte {offset}")),
        "{message}"
    );
    assert!(message.contains("142 sound records follow"), "{message}");
    assert!(message.contains("--salvage"), "{message}");
    // Nothing was changed: the evidence stays.
    assert_eq!(std::fs::read(&journal).expect("journal"), before);
}

#[test]
fn a_salvage_keeps_the_file_aside_and_every_sound_record_and_says_what_was_lost() {
    let temp = tempfile::tempdir().expect("temp");
    let records = jobs(200);
    let frames = write_journal(temp.path(), &records);
    let journal = temp.path().join("journal");
    let (offset, len) = frames[57];
    flip(&journal, offset + 3);
    let damaged = std::fs::read(&journal).expect("journal");
    let (dir, recovered) = open(temp.path(), Recovery::Salvage).expect("salvaged");
    let mut expected = records.clone();
    expected.remove(57);
    assert_eq!(recovered.records, expected);
    let salvage = recovered.salvage.expect("a salvage report");
    assert_eq!(salvage.damage.len(), 1);
    assert_eq!(
        (salvage.damage[0].offset, salvage.damage[0].len),
        (offset, len)
    );
    assert_eq!(salvage.records_kept, 199);
    assert!(salvage.records_lost_at_most() >= Some(1));
    assert_eq!(
        std::fs::read(&salvage.kept_as).expect("kept aside"),
        damaged
    );
    let words = salvage.describe();
    assert!(
        words.contains(&format!("bytes {offset}..{} lost", offset + len)),
        "{words}"
    );
    assert!(words.contains("199 sound records kept"), "{words}");
    // Nothing is appended before a snapshot replaces the damaged journal.
    let refused = Writer::<Record>::start(dir, |_| {});
    assert!(matches!(refused, Err(JournalError::SnapshotFirst { .. })));
    let (mut dir, _) = open(temp.path(), Recovery::Salvage).expect("salvaged again");
    dir.write_snapshot(&encode_snapshot(&vec![1u64]).expect("encodes"))
        .expect("snapshot");
    drop(dir);
    let (_, recovered) = open(temp.path(), Recovery::Refuse).expect("sound now");
    assert_eq!(
        (recovered.snapshot, recovered.records.len()),
        (Some(vec![1]), 0)
    );
    // Both salvages kept the damaged file.
    assert!(temp.path().join("journal.damaged-1").exists());
    assert!(temp.path().join("journal.damaged-2").exists());
}

#[test]
fn a_torn_last_record_is_still_dropped_without_a_refusal() {
    let temp = tempfile::tempdir().expect("temp");
    let frames = write_journal(temp.path(), &jobs(20));
    let journal = temp.path().join("journal");
    let (offset, len) = frames[19];
    flip(&journal, offset + len - 1);
    let (_, recovered) = open(temp.path(), Recovery::Refuse).expect("a torn tail");
    assert_eq!(recovered.records, jobs(19));
    assert_eq!(recovered.dropped_bytes, len as u64);
    assert!(recovered.salvage.is_none());
    // Zeros where the last write went (a crash before the data reached
    // the disk) are no record either.
    let mut bytes = std::fs::read(&journal).expect("journal");
    bytes.extend_from_slice(&[0; 4096]);
    std::fs::write(&journal, bytes).expect("zeros");
    let (_, recovered) = open(temp.path(), Recovery::Refuse).expect("a torn tail");
    assert_eq!(recovered.records, jobs(19));
}

#[test]
fn a_journal_cut_inside_its_header_is_refused_and_salvage_starts_from_the_snapshot() {
    for cut in [0, 10, format::HEADER_LEN - 1] {
        let temp = tempfile::tempdir().expect("temp");
        write_journal(temp.path(), &jobs(3));
        let journal = temp.path().join("journal");
        let bytes = std::fs::read(&journal).expect("journal");
        std::fs::write(&journal, &bytes[..cut]).expect("cut");
        let error = open(temp.path(), Recovery::Refuse).expect_err("refused");
        assert!(
            matches!(error, JournalError::CutHeader { len, .. } if len == cut as u64),
            "{error}"
        );
        assert!(
            error.to_string().contains("ends inside its header"),
            "{error}"
        );
        let (_, recovered) = open(temp.path(), Recovery::Salvage).expect("salvaged");
        let salvage = recovered.salvage.expect("reported");
        assert_eq!(salvage.cut_header, Some(cut as u64));
        assert_eq!(salvage.records_lost_at_most(), None);
        assert_eq!(recovered.snapshot, Some(Vec::new()));
    }
}

#[test]
fn a_journal_without_its_snapshot_or_ahead_of_it_is_refused() {
    let temp = tempfile::tempdir().expect("temp");
    write_journal(temp.path(), &jobs(3));
    let snapshot = std::fs::read(temp.path().join("snapshot")).expect("snapshot");
    std::fs::remove_file(temp.path().join("snapshot")).expect("deleted");
    for recovery in [Recovery::Refuse, Recovery::Salvage] {
        let error = open(temp.path(), recovery).expect_err("refused");
        assert!(
            matches!(error, JournalError::MissingSnapshot { generation: 1, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("no snapshot"), "{error}");
    }
    // The snapshot of generation 1 back, the journal claiming generation 2.
    std::fs::write(temp.path().join("snapshot"), snapshot).expect("back");
    let journal = temp.path().join("journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    let mut ahead = Vec::new();
    format::encode_header(
        format::JOURNAL_MAGIC,
        format::Header {
            content_format: FORMAT,
            generation: 2,
        },
        &mut ahead,
    );
    bytes[..format::HEADER_LEN].copy_from_slice(&ahead);
    std::fs::write(&journal, bytes).expect("ahead");
    let error = open(temp.path(), Recovery::Salvage).expect_err("refused");
    assert!(
        matches!(
            error,
            JournalError::Generation {
                journal: 2,
                snapshot: 1,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn state_files_that_are_not_regular_files_are_refused() {
    let temp = tempfile::tempdir().expect("temp");
    write_journal(temp.path(), &jobs(1));
    let journal = temp.path().join("journal");
    std::fs::remove_file(&journal).expect("removed");
    std::os::unix::fs::symlink("/dev/zero", &journal).expect("symlink");
    let error = open(temp.path(), Recovery::Salvage).expect_err("refused");
    assert!(matches!(error, JournalError::NotAFile { .. }), "{error}");
}

#[test]
fn every_record_the_writer_writes_reads_back_whatever_its_size() {
    // Records were read back only up to 16 MiB: a 17 MB job was
    // acknowledged, then lost with every record after it.
    let temp = tempfile::tempdir().expect("temp");
    let mut records = jobs(2);
    records.push((3, vec![b'j'; 17 << 20]));
    records.extend((4..=6).map(|id| (id, vec![1; 8])));
    write_journal(temp.path(), &records);
    let (_, recovered) = open(temp.path(), Recovery::Refuse).expect("opens");
    assert_eq!(recovered.records.len(), 6);
    assert_eq!(recovered.records, records);
    assert_eq!(recovered.dropped_bytes, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random bytes of a generated journal corrupted: opened without
    /// salvage, it is refused, or every intact record is read back; with
    /// salvage, every intact record is read back, and a report says so
    /// whenever a record with an intact one after it was lost.
    #[test]
    fn no_intact_record_disappears_without_a_refusal_or_a_salvage_report(
        sizes in proptest::collection::vec(0usize..60, 1..40),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let temp = tempfile::tempdir().expect("temp");
        let records: Vec<Record> = sizes
            .iter()
            .enumerate()
            .map(|(id, &size)| (id as u64 + 1, vec![(id * 7) as u8; size]))
            .collect();
        let frames = write_journal(temp.path(), &records);
        let journal = temp.path().join("journal");
        let mut bytes = std::fs::read(&journal).expect("journal");
        let mut hit = vec![false; records.len()];
        let mut header_hit = false;
        for (index, mask) in &flips {
            let at = index.index(bytes.len());
            bytes[at] ^= mask;
            match frames.iter().position(|&(start, len)| (start..start + len).contains(&at)) {
                Some(record) => hit[record] = true,
                None => header_hit = true,
            }
        }
        std::fs::write(&journal, &bytes).expect("corrupted");
        let intact: Vec<Record> = records
            .iter()
            .zip(&hit)
            .filter(|(_, hit)| !**hit)
            .map(|(record, _)| record.clone())
            .collect();
        let lost = hit.iter().filter(|hit| **hit).count() as u64;
        // Only a tail was hit: no intact record after a damaged one.
        let tail_only = hit.iter().skip_while(|hit| !**hit).all(|hit| *hit);

        match open(temp.path(), Recovery::Refuse) {
            Ok((_, recovered)) => {
                prop_assert!(!header_hit);
                prop_assert!(tail_only, "damage read as a torn tail");
                prop_assert_eq!(&recovered.records, &intact);
            }
            Err(JournalError::Io { .. }) => prop_assert!(false, "an I/O error"),
            Err(_) => {}
        }
        std::fs::write(&journal, &bytes).expect("corrupted again");
        match open(temp.path(), Recovery::Salvage) {
            Ok((_, recovered)) => {
                prop_assert!(!header_hit);
                prop_assert_eq!(&recovered.records, &intact);
                match recovered.salvage {
                    Some(salvage) => prop_assert!(salvage.records_lost_at_most() >= Some(lost)),
                    None => prop_assert!(tail_only),
                }
            }
            // A damaged header is refused even with salvage (another
            // format, another generation: not ours to guess).
            Err(error) => prop_assert!(header_hit, "{}", error),
        }
    }
}
