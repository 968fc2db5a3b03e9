//! A state directory: opening it (locked, so two processes never write the
//! same journal), reading what it holds, and writing its files so that a
//! crash at any point leaves a readable pair.
//!
//! Compaction writes the new snapshot (generation g + 1) to a temporary
//! file, syncs it and renames it over `snapshot`, then does the same for an
//! empty `journal` that follows generation g + 1. A crash between the two
//! leaves snapshot g + 1 and the journal of g, which is then ignored: its
//! records are in the snapshot. (The writer compacts without stopping the
//! journal, [`crate::compact`]: its snapshot says how much of journal g it
//! holds, and the records after that are read from journal g.) Temporary
//! files a crash left (`snapshot.new`, `journal.new`) are removed when the
//! directory is opened.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::format::{
    self, FormatError, HEADER_LEN, Header, JOURNAL_MAGIC, SNAPSHOT_MAGIC, decode_header,
    encode_header,
};
use crate::recover::{self, JournalRead, Recovery, Salvage, read_state_file};

/// Why a state directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A file or directory operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// Another process holds the directory.
    #[error("{path}: another process is using this state directory")]
    Locked {
        /// The directory.
        path: PathBuf,
    },
    /// A file is not readable as what it should be.
    #[error("{path}: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: FormatError,
    },
    /// The writer thread is gone (it failed to write; see its error).
    #[error("the journal's writer stopped: {0}")]
    WriterGone(String),
    /// A state file is not a regular file (a device, a FIFO, a link to
    /// one).
    #[error("{path}: not a regular file: refused as a state file")]
    NotAFile {
        /// The file.
        path: PathBuf,
    },
    /// Unreadable bytes with sound records after them: not a torn last
    /// write.
    #[error(
        "{path}: damaged at byte {offset}: {bytes} bytes cannot be read and {records_after} sound records follow them ({records_before} before), so this is not a record torn by a crash and acknowledged jobs may be in it: refusing to start. `mcfed cluster --salvage` keeps the damaged file aside and every sound record, and says what was lost"
    )]
    Damaged {
        /// The journal.
        path: PathBuf,
        /// Where the first unreadable stretch starts, in bytes from the
        /// start of the file.
        offset: u64,
        /// How long it is.
        bytes: u64,
        /// Sound records before it.
        records_before: usize,
        /// Sound records after it.
        records_after: usize,
    },
    /// The journal is shorter than its header (journals are created
    /// whole, header included).
    #[error(
        "{path}: the journal ends inside its header ({len} bytes): it was cut, and whatever it held is lost: refusing to start (`mcfed cluster --salvage` keeps it aside and starts from the snapshot)"
    )]
    CutHeader {
        /// The journal.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// A journal that follows a snapshot, with no snapshot.
    #[error(
        "{path}: the journal follows snapshot {generation}, but there is no snapshot in the directory (deleted or lost?): the jobs it held would be forgotten: refusing to start"
    )]
    MissingSnapshot {
        /// The journal.
        path: PathBuf,
        /// The generation of the snapshot it follows.
        generation: u64,
    },
    /// A journal that follows another snapshot than the one present (nor
    /// the one before it, which a compaction cut short leaves).
    #[error(
        "{path}: the journal follows snapshot {journal}, but the snapshot is generation {snapshot}: they do not belong together (a copy from elsewhere?): refusing to start"
    )]
    Generation {
        /// The journal.
        path: PathBuf,
        /// The generation it follows.
        journal: u64,
        /// The snapshot's.
        snapshot: u64,
    },
    /// A journal one generation behind its snapshot, shorter than the
    /// snapshot says it held when the snapshot was taken.
    #[error(
        "{path}: the journal is {len} bytes, but the snapshot was taken when it held {covered}: it was cut, and records appended after the snapshot was taken may be lost: refusing to start (remove the journal to start from the snapshot alone)"
    )]
    CutCovered {
        /// The journal.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// What the snapshot says it held.
        covered: u64,
    },
    /// A salvaged directory is appended to before a snapshot replaced the
    /// damaged journal.
    #[error(
        "{path}: the journal was salvaged: write a snapshot before appending (the damaged journal is still in place)"
    )]
    SnapshotFirst {
        /// The directory.
        path: PathBuf,
    },
}

/// Something to read with its path, for errors.
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What a state directory held when it was opened.
#[derive(Debug)]
pub struct Recovered<S, R> {
    /// The last snapshot, if there was one.
    pub snapshot: Option<S>,
    /// The records appended after it, in order.
    pub records: Vec<R>,
    /// Bytes that were dropped: a torn tail, or with a salvage every
    /// unreadable byte.
    pub dropped_bytes: u64,
    /// With [`Recovery::Salvage`], what a damaged journal lost and kept
    /// (`None`: it was sound, or only its tail was torn).
    pub salvage: Option<Salvage>,
}

/// An open, locked state directory.
#[derive(Debug)]
pub struct StateDir {
    path: PathBuf,
    /// Held open for its lock, released when the directory is dropped.
    _lock: File,
    pub(crate) content_format: u32,
    pub(crate) generation: u64,
    /// Keep each replaced journal as `journal.N` (N: the generation it
    /// followed), like LSF's `lsb.events.N`.
    pub(crate) keep_journals: bool,
    /// The journal was salvaged: it is replaced by the next snapshot's
    /// before anything is appended.
    pub(crate) salvaged: bool,
}

impl StateDir {
    /// Opens (creating if needed) and locks the state directory `path`,
    /// whose records and snapshot are of format `content_format`, and reads
    /// what it holds. A torn last record is dropped and the journal file
    /// cut back to the last sound record; damage is refused
    /// ([`crate::recover`]).
    pub fn open<S: DeserializeOwned, R: DeserializeOwned>(
        path: &Path,
        content_format: u32,
    ) -> Result<(StateDir, Recovered<S, R>), JournalError> {
        Self::open_with(path, content_format, Recovery::Refuse)
    }

    /// [`StateDir::open`], a damaged journal refused or salvaged as
    /// `recovery` says. After a salvage, write a snapshot
    /// ([`StateDir::write_snapshot`]) before appending.
    pub fn open_with<S: DeserializeOwned, R: DeserializeOwned>(
        path: &Path,
        content_format: u32,
        recovery: Recovery,
    ) -> Result<(StateDir, Recovered<S, R>), JournalError> {
        std::fs::create_dir_all(path).map_err(io(path))?;
        let lock_path = path.join("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        // An advisory lock held for the process's life: a second process
        // on the same directory is refused, and a killed one's lock goes
        // with it.
        match rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(JournalError::Locked {
                    path: path.to_owned(),
                });
            }
            Err(errno) => {
                return Err(JournalError::Io {
                    path: lock_path,
                    source: errno.into(),
                });
            }
        }
        let mut dir = StateDir {
            path: path.to_owned(),
            _lock: lock,
            content_format,
            generation: 0,
            keep_journals: false,
            salvaged: false,
        };
        let (snapshot, generation, covers) = dir.read_snapshot()?;
        dir.generation = generation;
        let read = dir.read_journal(snapshot.is_some().then_some(generation), covers, recovery)?;
        dir.remove_temporaries()?;
        dir.salvaged = read.salvage.is_some();
        Ok((
            dir,
            Recovered {
                snapshot,
                records: read.records,
                dropped_bytes: read.dropped_bytes,
                salvage: read.salvage,
            },
        ))
    }

    /// Keeps every journal a snapshot replaces, as `journal.N` (N: the
    /// generation of the snapshot it followed): the whole history of the
    /// records, for audits and tests, at the cost of never reclaiming the
    /// space.
    pub fn keep_journals(&mut self, keep: bool) {
        self.keep_journals = keep;
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The generation of the current snapshot (0: none yet).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn snapshot_path(&self) -> PathBuf {
        self.path.join("snapshot")
    }

    pub(crate) fn journal_path(&self) -> PathBuf {
        self.path.join("journal")
    }

    /// Removes the temporary files a crash in the middle of replacing a
    /// file left (never renamed over it, so never read): `snapshot.new`,
    /// `journal.new`, and a journal being kept (`journal.N.new`).
    fn remove_temporaries(&self) -> Result<(), JournalError> {
        let entries = std::fs::read_dir(&self.path).map_err(io(&self.path))?;
        for entry in entries {
            let name = entry.map_err(io(&self.path))?.file_name();
            let name = name.to_string_lossy();
            let temporary = matches!(&*name, "snapshot.new" | "journal.new")
                || name
                    .strip_prefix("journal.")
                    .and_then(|rest| rest.strip_suffix(".new"))
                    .is_some_and(|generation| generation.parse::<u64>().is_ok());
            if !temporary {
                continue;
            }
            let temporary = self.path.join(&*name);
            match std::fs::remove_file(&temporary) {
                Ok(()) => {
                    tracing::info!(path = %temporary.display(), "a temporary file left by a crash was removed");
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(io(&temporary)(source)),
            }
        }
        Ok(())
    }

    fn read_snapshot<S: DeserializeOwned>(
        &self,
    ) -> Result<(Option<S>, u64, Option<format::Covers>), JournalError> {
        let path = self.snapshot_path();
        let Some(bytes) = read_state_file(&path)? else {
            return Ok((None, 0, None));
        };
        let format = |source| JournalError::Format {
            path: path.clone(),
            source,
        };
        let header = decode_header(&bytes, SNAPSHOT_MAGIC, "snapshot", self.content_format)
            .map_err(format)?;
        let (snapshot, covers) =
            format::decode_snapshot_covers(&bytes[HEADER_LEN..]).map_err(format)?;
        Ok((Some(snapshot), header.generation, covers))
    }

    /// The records of the journal file that follows snapshot `generation`
    /// (`None`: there is none), which holds what `covers` says of the
    /// journal before it, as [`crate::recover`] reads them; a torn tail is
    /// cut off the file, and records read from the journal before the
    /// snapshot are made the snapshot's journal.
    fn read_journal<R: DeserializeOwned>(
        &self,
        generation: Option<u64>,
        covers: Option<format::Covers>,
        recovery: Recovery,
    ) -> Result<JournalRead<R>, JournalError> {
        let path = self.journal_path();
        let Some(bytes) = read_state_file(&path)? else {
            return Ok(JournalRead {
                records: Vec::new(),
                cut_to: None,
                dropped_bytes: 0,
                salvage: None,
                behind: None,
            });
        };
        let read = recover::read_journal(
            &path,
            &bytes,
            self.content_format,
            generation,
            covers,
            recovery,
        )?;
        if let Some(records) = read.behind.clone() {
            // The next compaction replaces the journal of this generation:
            // one two generations behind would be refused. What the
            // snapshot holds of it, kept (`keep_journals`), is put in
            // place first.
            self.keep_written_journal(self.generation - 1)?;
            let mut journal = Vec::with_capacity(HEADER_LEN + records.len());
            encode_header(
                JOURNAL_MAGIC,
                Header {
                    content_format: self.content_format,
                    generation: self.generation,
                },
                &mut journal,
            );
            journal.extend_from_slice(&bytes[records]);
            self.replace(&path, &journal)?;
            return Ok(read);
        }
        if let Some(len) = read.cut_to {
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io(&path))?;
            file.set_len(len).map_err(io(&path))?;
            file.sync_all().map_err(io(&path))?;
        }
        Ok(read)
    }

    /// Writes `snapshot` (already encoded) as the next generation, then an
    /// empty journal after it; returns the journal file, open for appending.
    pub fn write_snapshot(&mut self, snapshot: &[u8]) -> Result<File, JournalError> {
        if snapshot.len() > format::MAX_SNAPSHOT {
            return Err(JournalError::Io {
                path: self.snapshot_path(),
                source: std::io::Error::other(format!(
                    "a snapshot of {} bytes cannot be written (at most {})",
                    snapshot.len(),
                    format::MAX_SNAPSHOT
                )),
            });
        }
        let generation = self.generation + 1;
        let header = Header {
            content_format: self.content_format,
            generation,
        };
        let mut bytes = Vec::with_capacity(HEADER_LEN + snapshot.len() + 8);
        encode_header(SNAPSHOT_MAGIC, header, &mut bytes);
        format::encode_frame(snapshot, &mut bytes);
        self.replace(&self.snapshot_path(), &bytes)?;
        if self.keep_journals && !self.salvaged {
            self.archive_journal()?;
        }
        self.generation = generation;
        let mut empty = Vec::with_capacity(HEADER_LEN);
        encode_header(JOURNAL_MAGIC, header, &mut empty);
        self.replace(&self.journal_path(), &empty)?;
        self.salvaged = false;
        self.open_journal()
    }

    /// Renames the journal file to `journal.N`, N its generation (a journal
    /// already archived under that name is left alone).
    fn archive_journal(&self) -> Result<(), JournalError> {
        let path = self.journal_path();
        let Some(bytes) = read_state_file(&path)? else {
            return Ok(());
        };
        let Ok(header) = decode_header(&bytes, JOURNAL_MAGIC, "journal", self.content_format)
        else {
            return Ok(());
        };
        let archived = self.path.join(format!("journal.{}", header.generation));
        if !archived.exists() {
            std::fs::rename(&path, &archived).map_err(io(&path))?;
        }
        Ok(())
    }

    /// The journal file, open for appending at its end (created with its
    /// header if missing).
    pub fn open_journal(&self) -> Result<File, JournalError> {
        if self.salvaged {
            return Err(JournalError::SnapshotFirst {
                path: self.path.clone(),
            });
        }
        let path = self.journal_path();
        if !path.exists() || std::fs::metadata(&path).map_err(io(&path))?.len() < HEADER_LEN as u64
        {
            let mut header = Vec::with_capacity(HEADER_LEN);
            encode_header(
                JOURNAL_MAGIC,
                Header {
                    content_format: self.content_format,
                    generation: self.generation,
                },
                &mut header,
            );
            self.replace(&path, &header)?;
        }
        let mut file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        file.seek(SeekFrom::End(0)).map_err(io(&path))?;
        Ok(file)
    }

    /// Replaces `path` by `bytes` atomically: a temporary file, synced,
    /// renamed over it, and the directory synced.
    pub(crate) fn replace(&self, path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
        let temporary = path.with_extension("new");
        let mut file = File::create(&temporary).map_err(io(&temporary))?;
        file.write_all(bytes).map_err(io(&temporary))?;
        file.sync_all().map_err(io(&temporary))?;
        std::fs::rename(&temporary, path).map_err(io(path))?;
        self.sync_dir()
    }
}
