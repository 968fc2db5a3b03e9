//! Compaction that does not stop the journal: the writer thread hands the
//! new snapshot to a thread of its own ([`SnapshotFile::write`]: a
//! temporary file, written and synced) and goes on appending records to
//! the journal it replaces, with group commit as before; once the
//! snapshot is on disk it is put in place ([`StateDir::install_snapshot`])
//! and the records appended meanwhile are copied into the new journal.
//! So a snapshot of a million jobs (about 90 MB, half a second to write
//! and sync) no longer holds up every acknowledgement while it is written.
//!
//! Crash-safety, step by step (g: the generation replaced; P: the
//! journal's length when the snapshot was taken, every record before it
//! synced):
//!
//! 1. `snapshot.new` is written and synced while records go on into
//!    journal g. A crash: `snapshot.new` is removed at the next open, and
//!    snapshot g with journal g hold everything.
//! 2. `snapshot.new` is renamed over `snapshot` (g + 1). Its second frame
//!    ([`Covers`]) says it holds journal g up to P, so a crash here reads
//!    the snapshot, then the records of journal g from P
//!    ([`crate::recover`]), and the open makes them journal g + 1.
//! 3. Journal g + 1, holding the records after P, replaces `journal` (a
//!    temporary file, synced, renamed): the compaction is done.
//!
//! With `keep_journals`, journal g is kept as `journal.g` holding its
//! first P bytes (the records after P are in journal g + 1): copied to
//! `journal.g.new` and synced with the snapshot in step 1, renamed between
//! steps 2 and 3 — or, after a crash between them, when the directory is
//! next opened, before it makes the records after P journal g + 1.

use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;

use crate::dir::{JournalError, StateDir, io};
use crate::format::{self, Covers, HEADER_LEN, Header, JOURNAL_MAGIC, SNAPSHOT_MAGIC};

/// A snapshot of the next generation, to be written to its temporary file
/// away from the writer thread, then put in place by
/// [`StateDir::install_snapshot`].
#[derive(Debug)]
pub(crate) struct SnapshotFile {
    temporary: PathBuf,
    header: Header,
    covers: Covers,
    /// With `keep_journals`: the journal, whose first bytes (what the
    /// snapshot holds) are kept, and where (temporary, then kept).
    keep: Option<(PathBuf, PathBuf, PathBuf)>,
}

impl SnapshotFile {
    /// The generation of the snapshot.
    pub(crate) fn generation(&self) -> u64 {
        self.header.generation
    }

    /// Where it is written.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.temporary
    }

    /// Writes `snapshot` (encoded) to the temporary file and syncs it;
    /// the bytes the snapshot takes.
    pub(crate) fn write(&self, snapshot: &[u8]) -> Result<u64, JournalError> {
        if snapshot.len() > format::MAX_SNAPSHOT {
            return Err(io(&self.temporary)(std::io::Error::other(format!(
                "a snapshot of {} bytes cannot be written (at most {})",
                snapshot.len(),
                format::MAX_SNAPSHOT
            ))));
        }
        let mut head = Vec::with_capacity(HEADER_LEN + format::FRAME_HEADER_LEN);
        format::encode_header(SNAPSHOT_MAGIC, self.header, &mut head);
        head.extend_from_slice(&format::frame_header(snapshot));
        let mut tail = Vec::new();
        self.covers.encode_frame(&mut tail);
        let mut file = File::create(&self.temporary).map_err(io(&self.temporary))?;
        // The snapshot is written from where it was encoded: no copy.
        for part in [&head[..], snapshot, &tail] {
            file.write_all(part).map_err(io(&self.temporary))?;
        }
        file.sync_all().map_err(io(&self.temporary))?;
        if let Some((journal, temporary, _)) = &self.keep {
            // What the snapshot holds of the journal does not change.
            let copy = || -> std::io::Result<()> {
                let mut from = File::open(journal)?.take(self.covers.journal_len);
                let mut to = File::create(temporary)?;
                std::io::copy(&mut from, &mut to)?;
                to.sync_all()
            };
            copy().map_err(io(temporary))?;
        }
        Ok(snapshot.len() as u64)
    }
}

impl StateDir {
    /// The next generation's snapshot, taken when the journal holds
    /// `journal_len` bytes (every record before them synced).
    pub(crate) fn begin_snapshot(&self, journal_len: u64) -> SnapshotFile {
        SnapshotFile {
            temporary: self.snapshot_path().with_extension("new"),
            header: Header {
                content_format: self.content_format,
                generation: self.generation + 1,
            },
            covers: Covers {
                generation: self.generation,
                journal_len,
            },
            keep: self
                .keep_journals
                .then(|| self.kept_journal_paths(self.generation))
                .filter(|(_, kept)| !kept.exists())
                .map(|(temporary, kept)| (self.journal_path(), temporary, kept)),
        }
    }

    /// Where the journal of `generation` is kept (`journal.N`), and the
    /// temporary file written first.
    pub(crate) fn kept_journal_paths(&self, generation: u64) -> (PathBuf, PathBuf) {
        let kept = self.path().join(format!("journal.{generation}"));
        (kept.with_extension(format!("{generation}.new")), kept)
    }

    /// Renames the journal of `generation` kept in its temporary file into
    /// place, if there is one (written whole and synced before the
    /// snapshot after it was put in place).
    pub(crate) fn keep_written_journal(&self, generation: u64) -> Result<(), JournalError> {
        let (temporary, kept) = self.kept_journal_paths(generation);
        if temporary.exists() {
            std::fs::rename(&temporary, &kept).map_err(io(&kept))?;
            self.sync_dir()?;
        }
        Ok(())
    }

    /// Puts the snapshot `written` (by [`SnapshotFile::write`]) in place,
    /// then a journal after it holding `since`: the frames appended to the
    /// journal after the snapshot was taken. Returns the new journal, open
    /// for appending.
    pub(crate) fn install_snapshot(
        &mut self,
        written: SnapshotFile,
        since: &[u8],
    ) -> Result<File, JournalError> {
        let snapshot = self.snapshot_path();
        std::fs::rename(&written.temporary, &snapshot).map_err(io(&snapshot))?;
        self.sync_dir()?;
        if written.keep.is_some() {
            self.keep_written_journal(written.covers.generation)?;
        }
        self.generation = written.header.generation;
        let mut journal = Vec::with_capacity(HEADER_LEN + since.len());
        format::encode_header(JOURNAL_MAGIC, written.header, &mut journal);
        journal.extend_from_slice(since);
        self.replace(&self.journal_path(), &journal)?;
        self.open_journal()
    }

    /// Syncs the directory (its renames and links).
    pub(crate) fn sync_dir(&self) -> Result<(), JournalError> {
        File::open(self.path())
            .and_then(|dir| dir.sync_all())
            .map_err(io(self.path()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode_snapshot;

    type Snapshot = Vec<u32>;
    type Record = u32;

    const FORMAT: u32 = 7;

    /// Frames of `records`, as the writer appends them.
    fn frames(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        for record in records {
            format::encode_frame(&postcard::to_allocvec(record).expect("encodes"), &mut out);
        }
        out
    }

    fn append(dir: &StateDir, records: &[Record]) -> u64 {
        let mut journal = dir.open_journal().expect("journal");
        journal.write_all(&frames(records)).expect("written");
        journal.sync_all().expect("synced");
        journal.metadata().expect("metadata").len()
    }

    fn open(path: &std::path::Path) -> (StateDir, Option<Snapshot>, Vec<Record>) {
        let (dir, recovered) = StateDir::open::<Snapshot, Record>(path, FORMAT).expect("opens");
        (dir, recovered.snapshot, recovered.records)
    }

    /// A directory with snapshot 1 (`[1]`) and records 2, 3 after it; a
    /// snapshot of generation 2 (`[1, 2, 3]`) taken then and written to
    /// its temporary file; records 4, 5 appended meanwhile.
    fn compaction_under_way(path: &std::path::Path) -> (StateDir, SnapshotFile, Vec<u8>) {
        let (mut dir, ..) = open(path);
        dir.keep_journals(true);
        dir.write_snapshot(&encode_snapshot(&vec![1u32]).expect("encodes"))
            .expect("snapshot");
        let taken_at = append(&dir, &[2, 3]);
        let file = dir.begin_snapshot(taken_at);
        file.write(&encode_snapshot(&vec![1u32, 2, 3]).expect("encodes"))
            .expect("written");
        append(&dir, &[4, 5]);
        (dir, file, frames(&[4, 5]))
    }

    #[test]
    fn a_crash_before_the_snapshot_is_renamed_recovers_the_old_pair_and_removes_it() {
        let temp = tempfile::tempdir().expect("temp");
        let (dir, file, _) = compaction_under_way(temp.path());
        // Killed in the middle of writing it: half the file.
        let whole = std::fs::read(file.path()).expect("temporary");
        std::fs::write(file.path(), &whole[..whole.len() / 2]).expect("cut");
        let temporary = file.path().to_owned();
        drop(dir);
        let (_, snapshot, records) = open(temp.path());
        assert_eq!((snapshot, records), (Some(vec![1]), vec![2, 3, 4, 5]));
        assert!(!temporary.exists(), "the temporary file is removed");
        let kept = temp.path().join("journal.1");
        assert!(!kept.exists() && !kept.with_extension("1.new").exists());
    }

    #[test]
    fn a_crash_after_the_snapshot_is_renamed_reads_the_old_journal_after_what_it_holds() {
        let temp = tempfile::tempdir().expect("temp");
        let (dir, file, _) = compaction_under_way(temp.path());
        std::fs::rename(file.path(), temp.path().join("snapshot")).expect("renamed");
        drop(dir);
        let (dir, snapshot, records) = open(temp.path());
        assert_eq!((snapshot, records), (Some(vec![1, 2, 3]), vec![4, 5]));
        // What the snapshot holds of the journal it replaces is kept.
        let kept = crate::read_journal_file::<Record>(&temp.path().join("journal.1"), FORMAT);
        assert_eq!(kept.expect("reads"), vec![2, 3]);
        assert!(!temp.path().join("journal.1.new").exists());
        // The open made those records the snapshot's journal: appending
        // and compacting again (generation 3) goes on from there.
        assert_eq!(
            append(&dir, &[6]) as usize,
            HEADER_LEN + frames(&[4, 5, 6]).len()
        );
        drop(dir);
        let (mut dir, snapshot, records) = open(temp.path());
        assert_eq!((snapshot, records), (Some(vec![1, 2, 3]), vec![4, 5, 6]));
        dir.write_snapshot(&encode_snapshot(&vec![9u32]).expect("encodes"))
            .expect("snapshot");
        drop(dir);
        assert_eq!(open(temp.path()).1, Some(vec![9]));
    }

    #[test]
    fn a_journal_cut_below_what_the_snapshot_holds_is_refused() {
        let temp = tempfile::tempdir().expect("temp");
        let (dir, file, _) = compaction_under_way(temp.path());
        std::fs::rename(file.path(), temp.path().join("snapshot")).expect("renamed");
        drop(dir);
        let journal = temp.path().join("journal");
        let bytes = std::fs::read(&journal).expect("journal");
        std::fs::write(&journal, &bytes[..HEADER_LEN + 3]).expect("cut");
        let error = StateDir::open::<Snapshot, Record>(temp.path(), FORMAT)
            .expect_err("refused")
            .to_string();
        assert!(error.contains("was cut"), "{error}");
    }

    #[test]
    fn an_installed_snapshot_takes_the_records_appended_meanwhile() {
        let temp = tempfile::tempdir().expect("temp");
        let (mut dir, file, since) = compaction_under_way(temp.path());
        let mut journal = dir.install_snapshot(file, &since).expect("installed");
        journal.write_all(&frames(&[6])).expect("written");
        drop((journal, dir));
        let (_, snapshot, records) = open(temp.path());
        assert_eq!((snapshot, records), (Some(vec![1, 2, 3]), vec![4, 5, 6]));
        // The journal kept holds what the snapshot took of it, no more.
        let kept = crate::read_journal_file::<Record>(&temp.path().join("journal.1"), FORMAT);
        assert_eq!(kept.expect("reads"), vec![2, 3]);
    }
}
