//! A state directory: opening it (locked, so two processes never write the
//! same journal), reading what it holds, and writing its files so that a
//! crash at any point leaves a readable pair.
//!
//! Compaction writes the new snapshot (generation g + 1) to a temporary
//! file, syncs it and renames it over `snapshot`, then does the same for an
//! empty `journal` that follows generation g + 1. A crash between the two
//! leaves snapshot g + 1 and the journal of g, which is then ignored: its
//! records are in the snapshot.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::format::{
    self, FormatError, HEADER_LEN, Header, JOURNAL_MAGIC, SNAPSHOT_MAGIC, decode_header,
    encode_header,
};

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
}

/// Something to read with its path, for errors.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
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
    /// Bytes of a torn or damaged tail that were dropped.
    pub dropped_bytes: u64,
}

/// An open, locked state directory.
#[derive(Debug)]
pub struct StateDir {
    path: PathBuf,
    /// Held open for its lock, released when the directory is dropped.
    _lock: File,
    content_format: u32,
    generation: u64,
    /// Keep each replaced journal as `journal.N` (N: the generation it
    /// followed), like LSF's `lsb.events.N`.
    keep_journals: bool,
}

impl StateDir {
    /// Opens (creating if needed) and locks the state directory `path`,
    /// whose records and snapshot are of format `content_format`, and reads
    /// what it holds. A torn last record is dropped and the journal file
    /// cut back to the last sound record.
    pub fn open<S: DeserializeOwned, R: DeserializeOwned>(
        path: &Path,
        content_format: u32,
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
        };
        let (snapshot, generation) = dir.read_snapshot()?;
        dir.generation = generation;
        let (records, dropped_bytes) = dir.read_journal(generation)?;
        Ok((
            dir,
            Recovered {
                snapshot,
                records,
                dropped_bytes,
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

    fn snapshot_path(&self) -> PathBuf {
        self.path.join("snapshot")
    }

    pub(crate) fn journal_path(&self) -> PathBuf {
        self.path.join("journal")
    }

    fn read_snapshot<S: DeserializeOwned>(&self) -> Result<(Option<S>, u64), JournalError> {
        let path = self.snapshot_path();
        let Some(bytes) = read_if_exists(&path)? else {
            return Ok((None, 0));
        };
        let format = |source| JournalError::Format {
            path: path.clone(),
            source,
        };
        let header = decode_header(&bytes, SNAPSHOT_MAGIC, "snapshot", self.content_format)
            .map_err(format)?;
        let snapshot = format::decode_snapshot(&bytes[HEADER_LEN..]).map_err(format)?;
        Ok((Some(snapshot), header.generation))
    }

    /// The records of the journal file that follows snapshot `generation`;
    /// a journal of an older generation was compacted into the snapshot
    /// and is ignored.
    fn read_journal<R: DeserializeOwned>(
        &self,
        generation: u64,
    ) -> Result<(Vec<R>, u64), JournalError> {
        let path = self.journal_path();
        let Some(bytes) = read_if_exists(&path)? else {
            return Ok((Vec::new(), 0));
        };
        if bytes.len() < HEADER_LEN {
            // Torn while it was being created: nothing was in it.
            return Ok((Vec::new(), bytes.len() as u64));
        }
        let header = decode_header(&bytes, JOURNAL_MAGIC, "journal", self.content_format).map_err(
            |source| JournalError::Format {
                path: path.clone(),
                source,
            },
        )?;
        if header.generation != generation {
            tracing::info!(path = %path.display(), journal = header.generation, snapshot = generation, "the journal precedes the snapshot (a compaction was cut short): ignored");
            return Ok((Vec::new(), 0));
        }
        let body = &bytes[HEADER_LEN..];
        let (records, used) = format::decode_records(body);
        let dropped = (body.len() - used) as u64;
        if dropped > 0 {
            tracing::warn!(path = %path.display(), bytes = dropped, records = records.len(), "a torn or damaged last record was dropped");
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io(&path))?;
            file.set_len((HEADER_LEN + used) as u64)
                .map_err(io(&path))?;
            file.sync_all().map_err(io(&path))?;
        }
        Ok((records, dropped))
    }

    /// Writes `snapshot` (already encoded) as the next generation, then an
    /// empty journal after it; returns the journal file, open for appending.
    pub fn write_snapshot(&mut self, snapshot: &[u8]) -> Result<File, JournalError> {
        let generation = self.generation + 1;
        let header = Header {
            content_format: self.content_format,
            generation,
        };
        let mut bytes = Vec::with_capacity(HEADER_LEN + snapshot.len() + 8);
        encode_header(SNAPSHOT_MAGIC, header, &mut bytes);
        format::encode_frame(snapshot, &mut bytes);
        self.replace(&self.snapshot_path(), &bytes)?;
        if self.keep_journals {
            self.archive_journal()?;
        }
        self.generation = generation;
        let mut empty = Vec::with_capacity(HEADER_LEN);
        encode_header(JOURNAL_MAGIC, header, &mut empty);
        self.replace(&self.journal_path(), &empty)?;
        self.open_journal()
    }

    /// Renames the journal file to `journal.N`, N its generation (a journal
    /// already archived under that name is left alone).
    fn archive_journal(&self) -> Result<(), JournalError> {
        let path = self.journal_path();
        let Some(bytes) = read_if_exists(&path)? else {
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
    fn replace(&self, path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
        let temporary = path.with_extension("new");
        let mut file = File::create(&temporary).map_err(io(&temporary))?;
        file.write_all(bytes).map_err(io(&temporary))?;
        file.sync_all().map_err(io(&temporary))?;
        std::fs::rename(&temporary, path).map_err(io(path))?;
        File::open(&self.path)
            .and_then(|dir| dir.sync_all())
            .map_err(io(&self.path))
    }
}

fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, JournalError> {
    match File::open(path) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map_err(io(path))?;
            Ok(Some(bytes))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(JournalError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The records of one journal file (the current one or a kept
/// `journal.N`) of content format `content_format`, up to a torn or
/// damaged tail.
pub fn read_journal_file<R: DeserializeOwned>(
    path: &Path,
    content_format: u32,
) -> Result<Vec<R>, JournalError> {
    let bytes = read_if_exists(path)?.unwrap_or_default();
    if bytes.len() < HEADER_LEN {
        return Ok(Vec::new());
    }
    decode_header(&bytes, JOURNAL_MAGIC, "journal", content_format).map_err(|source| {
        JournalError::Format {
            path: path.to_owned(),
            source,
        }
    })?;
    Ok(format::decode_records(&bytes[HEADER_LEN..]).0)
}
