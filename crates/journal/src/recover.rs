//! Reading a state directory back, without trusting it: what a restart
//! may take as it is, what it must refuse, and what `salvage` keeps.
//!
//! * A **torn tail** — unreadable bytes with no sound record after them —
//!   is what a crash in the middle of a write leaves: its record was never
//!   acknowledged (nothing leaves before its records are synced). It is
//!   dropped with a warning and the file cut back.
//! * **Damage** — unreadable bytes *followed by* sound records — is not a
//!   crash: acknowledged records may be in it. The journal is refused,
//!   naming the file, the offset, the bytes and how many records follow,
//!   unless [`Recovery::Salvage`] is asked for.
//! * A journal **cut inside its header** (journals are created whole,
//!   header included), a journal **without its snapshot**, or one that
//!   follows a **later snapshot** than the one present is refused likewise.
//! * A journal **one generation behind** its snapshot was left by a
//!   compaction cut short: its records are in the snapshot, and it is
//!   ignored — unless the snapshot says it holds only the journal's first
//!   bytes ([`format::Covers`], a snapshot written while the journal went
//!   on, [`crate::compact`]): then the records after those bytes are read,
//!   and a journal shorter than that (cut: records after it may be lost)
//!   is refused.
//!
//! **Salvage** keeps the damaged file aside (`journal.damaged-N`), keeps
//! every sound record it resynchronizes to, and reports exactly which bytes
//! were lost and how many records they can have held
//! ([`Salvage::records_lost_at_most`]), so the caller can move every
//! numbering past anything those records may have handed out. The
//! directory then wants a snapshot before anything is appended
//! ([`crate::StateDir::write_snapshot`]): until then the damaged journal
//! stays in place, and a crash meanwhile only refuses again.
//!
//! Every file is read whole, bounded by the bytes actually read and only
//! if it is a regular file ([`read_state_file`]).

use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::dir::{JournalError, io};
use crate::format::{self, Covers, Damage, HEADER_LEN, JOURNAL_MAGIC, decode_header};

/// The largest state file read: a snapshot of the most a frame holds,
/// and a journal grown to twice that before it is compacted.
pub const MAX_STATE_FILE: u64 = 2 * (format::MAX_PAYLOAD as u64 + HEADER_LEN as u64 + 8);

/// What to do with a damaged journal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// Refuse it (the default): nothing is read, nothing is changed.
    #[default]
    Refuse,
    /// Keep it aside and take every sound record ([`Salvage`]).
    Salvage,
}

/// What a salvage lost and kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Salvage {
    /// The journal.
    pub journal: PathBuf,
    /// Where the damaged journal is kept.
    pub kept_as: PathBuf,
    /// The unreadable stretches with sound records after them, in bytes
    /// from the start of the file.
    pub damage: Vec<Damage>,
    /// Bytes of a torn tail dropped after the last sound record.
    pub torn_bytes: u64,
    /// The file was cut inside its header: none of it could be read.
    pub cut_header: Option<u64>,
    /// Sound records kept.
    pub records_kept: usize,
}

impl Salvage {
    /// The most records the lost bytes can have held (each takes at
    /// least [`format::MIN_RECORD_FRAME`] bytes): move every numbering
    /// past this many, so nothing those records handed out is handed out
    /// again. `None` when the file was cut inside its header: how much it
    /// held is not known.
    pub fn records_lost_at_most(&self) -> Option<u64> {
        if self.cut_header.is_some() {
            return None;
        }
        let damaged: usize = self.damage.iter().map(Damage::records_at_most).sum();
        let torn = self.torn_bytes.div_ceil(format::MIN_RECORD_FRAME as u64);
        Some(damaged as u64 + torn)
    }

    /// What was lost and kept, in words.
    pub fn describe(&self) -> String {
        let mut text = format!("{}: salvaged: ", self.journal.display());
        if let Some(len) = self.cut_header {
            let _ = write!(
                text,
                "the file was cut inside its header ({len} bytes): every record it held is lost; "
            );
        }
        for damage in &self.damage {
            let _ = write!(
                text,
                "bytes {}..{} lost ({} bytes, at most {} records, after record {}); ",
                damage.offset,
                damage.offset + damage.len,
                damage.len,
                damage.records_at_most(),
                damage.records_before,
            );
        }
        if self.torn_bytes > 0 {
            let _ = write!(text, "a torn tail of {} bytes dropped; ", self.torn_bytes);
        }
        let _ = write!(
            text,
            "{} sound records kept; the damaged file is kept as {}",
            self.records_kept,
            self.kept_as.display()
        );
        text
    }
}

/// Reads the regular file `path` whole, at most [`MAX_STATE_FILE`] bytes
/// (`None`: there is no such file). What is not a regular file — a device,
/// a FIFO, a link to one — is refused before a byte is read; the size is
/// the bytes read, not what metadata says.
///
/// (`mcfed_protocol::bounds::FileBound` does the same for the rest of
/// mcfed; the journal depends on no other mcfed crate.)
pub fn read_state_file(path: &Path) -> Result<Option<Vec<u8>>, JournalError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let nonblock = i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).unwrap_or(0);
    let file = match File::options().read(true).custom_flags(nonblock).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io(path)(source)),
    };
    if !file.metadata().map_err(io(path))?.is_file() {
        return Err(JournalError::NotAFile {
            path: path.to_owned(),
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_STATE_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > MAX_STATE_FILE {
        return Err(io(path)(std::io::Error::other(format!(
            "larger than {MAX_STATE_FILE} bytes: not a state file"
        ))));
    }
    Ok(Some(bytes))
}

/// A journal file read: its records and what became of its unreadable
/// parts.
pub(crate) struct JournalRead<R> {
    pub(crate) records: Vec<R>,
    /// Torn tail to cut off: the length the file is cut back to.
    pub(crate) cut_to: Option<u64>,
    pub(crate) dropped_bytes: u64,
    pub(crate) salvage: Option<Salvage>,
    /// Read from a journal one generation behind its snapshot, after what
    /// the snapshot holds: where its sound records lie in the file (to be
    /// made the snapshot's journal).
    pub(crate) behind: Option<std::ops::Range<usize>>,
}

impl<R> JournalRead<R> {
    /// Nothing read.
    fn empty() -> JournalRead<R> {
        JournalRead {
            records: Vec::new(),
            cut_to: None,
            dropped_bytes: 0,
            salvage: None,
            behind: None,
        }
    }
}

/// Reads the journal `bytes` (of `path`) that follows snapshot
/// `generation` (`None`: there is no snapshot), which holds what `covers`
/// says of the journal before it, refusing or salvaging it as `recovery`
/// says. A salvage keeps the file aside first.
pub(crate) fn read_journal<R: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    content_format: u32,
    snapshot: Option<u64>,
    covers: Option<Covers>,
    recovery: Recovery,
) -> Result<JournalRead<R>, JournalError> {
    if bytes.len() < HEADER_LEN {
        let len = bytes.len() as u64;
        if recovery == Recovery::Refuse {
            return Err(JournalError::CutHeader {
                path: path.to_owned(),
                len,
            });
        }
        let salvage = Salvage {
            journal: path.to_owned(),
            kept_as: keep_aside(path)?,
            damage: Vec::new(),
            torn_bytes: 0,
            cut_header: Some(len),
            records_kept: 0,
        };
        return Ok(JournalRead {
            dropped_bytes: len,
            salvage: Some(salvage),
            ..JournalRead::empty()
        });
    }
    let header =
        decode_header(bytes, JOURNAL_MAGIC, "journal", content_format).map_err(|source| {
            JournalError::Format {
                path: path.to_owned(),
                source,
            }
        })?;
    match snapshot {
        // A journal of generation 0 needs no snapshot (one was never
        // written); any later one follows the snapshot it names.
        None if header.generation > 0 => {
            return Err(JournalError::MissingSnapshot {
                path: path.to_owned(),
                generation: header.generation,
            });
        }
        // Compaction writes snapshot g + 1, then journal g + 1: a journal
        // one generation behind was left by a compaction cut short.
        Some(snapshot)
            if header.generation > snapshot || header.generation.saturating_add(1) < snapshot =>
        {
            return Err(JournalError::Generation {
                path: path.to_owned(),
                journal: header.generation,
                snapshot,
            });
        }
        Some(snapshot) if header.generation < snapshot => {
            let Some(covers) = covers.filter(|covers| covers.generation == header.generation)
            else {
                tracing::info!(path = %path.display(), journal = header.generation, snapshot, "the journal precedes the snapshot (a compaction was cut short): ignored");
                return Ok(JournalRead::empty());
            };
            let start = usize::try_from(covers.journal_len).unwrap_or(usize::MAX);
            if start < HEADER_LEN || start > bytes.len() {
                return Err(JournalError::CutCovered {
                    path: path.to_owned(),
                    len: bytes.len() as u64,
                    covered: covers.journal_len,
                });
            }
            tracing::info!(path = %path.display(), journal = header.generation, snapshot, from = start, "the journal precedes the snapshot, which holds its first bytes (a compaction was cut short): the records after them are read");
            let mut read = scan_body(path, bytes, start, recovery)?;
            if read.salvage.is_none() {
                let end = read.cut_to.map_or(bytes.len(), |len| len as usize);
                read.behind = Some(start..end);
            }
            return Ok(read);
        }
        _ => {}
    }
    scan_body(path, bytes, HEADER_LEN, recovery)
}

/// Reads the records of the journal `bytes` (of `path`) from byte `start`
/// (a frame's start), refusing or salvaging damage as `recovery` says.
fn scan_body<R: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    start: usize,
    recovery: Recovery,
) -> Result<JournalRead<R>, JournalError> {
    let scan = format::scan_records::<R>(&bytes[start..]);
    let torn = scan.torn_bytes() as u64;
    let Some(first) = scan.damage.first() else {
        if torn > 0 {
            tracing::warn!(path = %path.display(), bytes = torn, records = scan.records.len(), "a torn last record was dropped (no sound record follows it: a crash in the middle of a write)");
        }
        return Ok(JournalRead {
            records: scan.records,
            cut_to: (torn > 0).then_some((start + scan.sound_end) as u64),
            dropped_bytes: torn,
            ..JournalRead::empty()
        });
    };
    if recovery == Recovery::Refuse {
        return Err(JournalError::Damaged {
            path: path.to_owned(),
            offset: (start + first.offset) as u64,
            bytes: first.len as u64,
            records_before: first.records_before,
            records_after: scan.records_after_damage(),
        });
    }
    let damage: Vec<Damage> = scan
        .damage
        .iter()
        .map(|damage| Damage {
            offset: start + damage.offset,
            ..*damage
        })
        .collect();
    let salvage = Salvage {
        journal: path.to_owned(),
        kept_as: keep_aside(path)?,
        damage,
        torn_bytes: torn,
        cut_header: None,
        records_kept: scan.records.len(),
    };
    let lost: usize = scan.damage.iter().map(|damage| damage.len).sum();
    Ok(JournalRead {
        records: scan.records,
        dropped_bytes: lost as u64 + torn,
        salvage: Some(salvage),
        ..JournalRead::empty()
    })
}

/// Keeps the journal `path` as `journal.damaged-N` (the first N free),
/// linked (or copied) beside it, the directory synced.
fn keep_aside(path: &Path) -> Result<PathBuf, JournalError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "journal".into(), |name| name.to_string_lossy());
    let aside = (1u32..)
        .map(|n| dir.join(format!("{name}.damaged-{n}")))
        .find(|candidate| !candidate.exists())
        .unwrap_or_else(|| dir.join(format!("{name}.damaged")));
    if std::fs::hard_link(path, &aside).is_err() {
        std::fs::copy(path, &aside).map_err(io(&aside))?;
        File::open(&aside)
            .and_then(|file| file.sync_all())
            .map_err(io(&aside))?;
    }
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(io(dir))?;
    Ok(aside)
}

/// The records of one journal file (the current one or a kept
/// `journal.N`) of content format `content_format`, up to a torn tail;
/// damage (sound records after unreadable bytes) and a cut header are
/// refused.
pub fn read_journal_file<R: DeserializeOwned>(
    path: &Path,
    content_format: u32,
) -> Result<Vec<R>, JournalError> {
    let Some(bytes) = read_state_file(path)? else {
        return Ok(Vec::new());
    };
    let header = decode_header(&bytes, JOURNAL_MAGIC, "journal", content_format);
    let generation = header.map_or(None, |header| Some(header.generation));
    Ok(read_journal(
        path,
        &bytes,
        content_format,
        generation,
        None,
        Recovery::Refuse,
    )?
    .records)
}
