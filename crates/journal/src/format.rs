//! The journal's files, byte by byte, and decoding them without trusting
//! them.
//!
//! A state directory holds two files:
//!
//! * `snapshot`: `MCFEDSNP`, the file format (`u32`), the content format
//!   (`u32`, the caller's), the generation (`u64`), the CRC-32 of those 24
//!   bytes (`u32`), then one frame: the snapshot; then, for a snapshot
//!   written while its journal went on ([`Covers`]), a second frame of 16
//!   bytes: the generation of that journal (`u64`) and how many of its
//!   bytes the snapshot holds (`u64`). A reader of a file without it (or
//!   one that predates it, which reads the first frame only) takes the
//!   snapshot to hold its whole journal.
//! * `journal`: `MCFEDJNL`, the file format, the content format, the
//!   generation of the snapshot it follows, the header's CRC-32, then
//!   frames, one per record.
//!
//! File format 2 added the header's checksum: a flipped bit in a journal's
//! generation would otherwise make it look like one a compaction left
//! behind, and its records would be ignored.
//!
//! A frame is its payload's length (`u32`), the payload's CRC-32 (`u32`),
//! then the payload (postcard); integers are little-endian. A record's
//! payload is never empty, so a run of zeros is never a frame.
//!
//! A frame whose length runs past the end of the file, or whose checksum
//! does not match, or that does not decode, is unreadable. If no sound
//! frame follows it, it is a *torn tail* — a record cut by a crash is the
//! last one, since every record is appended and synced before anything
//! after it is — and is dropped. If sound frames follow, it is *damage*
//! ([`scan_records`] resynchronizes on them and says where and how much):
//! never dropped silently (see [`crate::dir`]).

use serde::de::DeserializeOwned;

/// The version of the files' layout (2: the header has a checksum).
pub const FILE_FORMAT: u32 = 2;

/// The first bytes of a snapshot file.
pub const SNAPSHOT_MAGIC: &[u8; 8] = b"MCFEDSNP";

/// The first bytes of a journal file.
pub const JOURNAL_MAGIC: &[u8; 8] = b"MCFEDJNL";

/// Bytes in a file's header: magic, file format, content format,
/// generation, checksum.
pub const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 4;

/// Bytes before a frame's payload: length and checksum.
pub const FRAME_HEADER_LEN: usize = 8;

/// The largest payload a frame holds: what its `u32` length can say. The
/// reader accepts every record and snapshot the writer can write; the
/// writer refuses one that is larger (it could not be read back, so it is
/// never acknowledged).
pub const MAX_PAYLOAD: usize = u32::MAX as usize;

/// The largest record accepted: [`MAX_PAYLOAD`].
pub const MAX_RECORD: usize = MAX_PAYLOAD;

/// The largest snapshot accepted: [`MAX_PAYLOAD`].
pub const MAX_SNAPSHOT: usize = MAX_PAYLOAD;

/// The fewest bytes a record's frame takes (its header and one byte):
/// `n` unreadable bytes held at most `n / MIN_RECORD_FRAME` records.
pub const MIN_RECORD_FRAME: usize = FRAME_HEADER_LEN + 1;

/// What of the journal it replaces a snapshot holds, when it was written
/// while that journal went on taking records: the journal of generation
/// `generation` up to byte `journal_len` (its header included). Records
/// after that byte are not in the snapshot (see [`crate::compact`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Covers {
    /// The generation of the journal (the snapshot's, less one).
    pub generation: u64,
    /// The journal's length when the snapshot was taken.
    pub journal_len: u64,
}

/// Bytes of a [`Covers`] frame's payload.
pub const COVERS_LEN: usize = 16;

impl Covers {
    /// Appends the frame that says it.
    pub fn encode_frame(self, out: &mut Vec<u8>) {
        let mut payload = [0u8; COVERS_LEN];
        payload[..8].copy_from_slice(&self.generation.to_le_bytes());
        payload[8..].copy_from_slice(&self.journal_len.to_le_bytes());
        encode_frame(&payload, out);
    }
}

/// A file's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The caller's content format.
    pub content_format: u32,
    /// The snapshot's generation (a journal: the snapshot it follows).
    pub generation: u64,
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The file does not start with the expected magic bytes.
    #[error("not an mcfed {what} file (it does not start with {magic})")]
    NotOurs {
        /// "snapshot" or "journal".
        what: &'static str,
        /// The magic expected.
        magic: String,
    },
    /// The file's layout or content is of another version.
    #[error("{what} of format {found}/{found_content}, this mcfed reads {FILE_FORMAT}/{content}")]
    Version {
        /// "snapshot" or "journal".
        what: &'static str,
        /// The file format found.
        found: u32,
        /// The content format found.
        found_content: u32,
        /// The content format expected.
        content: u32,
    },
    /// The file ends inside its header.
    #[error("the {what} file ends inside its header")]
    ShortHeader {
        /// "snapshot" or "journal".
        what: &'static str,
    },
    /// The header's checksum does not match.
    #[error("the {what} file's header is damaged (its checksum does not match)")]
    HeaderChecksum {
        /// "snapshot" or "journal".
        what: &'static str,
    },
    /// The snapshot's frame is damaged.
    #[error("the snapshot is damaged: {0}")]
    Snapshot(String),
}

/// Encodes a header.
pub fn encode_header(magic: &[u8; 8], header: Header, out: &mut Vec<u8>) {
    out.extend_from_slice(magic);
    out.extend_from_slice(&FILE_FORMAT.to_le_bytes());
    out.extend_from_slice(&header.content_format.to_le_bytes());
    out.extend_from_slice(&header.generation.to_le_bytes());
    let checksum = crc32fast::hash(&out[out.len() - (HEADER_LEN - 4)..]);
    out.extend_from_slice(&checksum.to_le_bytes());
}

/// Decodes and checks a header for content format `content`.
pub fn decode_header(
    bytes: &[u8],
    magic: &[u8; 8],
    what: &'static str,
    content: u32,
) -> Result<Header, FormatError> {
    // The versions first, so a file of another version (whose header may
    // be shorter) says so.
    let Some(head) = bytes.get(..16) else {
        return Err(FormatError::ShortHeader { what });
    };
    if &head[..8] != magic {
        return Err(FormatError::NotOurs {
            what,
            magic: String::from_utf8_lossy(magic).into_owned(),
        });
    }
    let file_format = u32_at(head, 8);
    let content_format = u32_at(head, 12);
    if file_format != FILE_FORMAT || content_format != content {
        return Err(FormatError::Version {
            what,
            found: file_format,
            found_content: content_format,
            content,
        });
    }
    let Some(head) = bytes.get(..HEADER_LEN) else {
        return Err(FormatError::ShortHeader { what });
    };
    if crc32fast::hash(&head[..HEADER_LEN - 4]) != u32_at(head, HEADER_LEN - 4) {
        return Err(FormatError::HeaderChecksum { what });
    }
    Ok(Header {
        content_format,
        generation: u64::from_le_bytes(head[16..24].try_into().unwrap_or_default()),
    })
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// Appends one frame holding `payload`.
pub fn encode_frame(payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&frame_header(payload));
    out.extend_from_slice(payload);
}

/// The header of the frame holding `payload` (to write the payload after
/// it without copying it into one buffer).
pub fn frame_header(payload: &[u8]) -> [u8; FRAME_HEADER_LEN] {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let mut header = [0u8; FRAME_HEADER_LEN];
    header[..4].copy_from_slice(&len.to_le_bytes());
    header[4..].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    header
}

/// Fills in the header of a frame written as [`FRAME_HEADER_LEN`] bytes
/// of room followed by its payload (`frame` is the whole frame).
pub fn fill_frame_header(frame: &mut [u8]) {
    let (header, payload) = frame.split_at_mut(FRAME_HEADER_LEN);
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    header[..4].copy_from_slice(&len.to_le_bytes());
    header[4..].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
}

/// One frame at the front of `bytes`, if whole and sound: its payload and
/// the bytes it took.
pub fn decode_frame(bytes: &[u8], max: usize) -> Option<(&[u8], usize)> {
    let head = bytes.get(..FRAME_HEADER_LEN)?;
    let len = usize::try_from(u32_at(head, 0)).ok()?;
    if len > max {
        return None;
    }
    let payload = bytes.get(FRAME_HEADER_LEN..FRAME_HEADER_LEN + len)?;
    (crc32fast::hash(payload) == u32_at(head, 4)).then_some((payload, FRAME_HEADER_LEN + len))
}

/// The record in the frame at the front of `bytes`, if the frame is whole,
/// not empty, decodes exactly to a record and its checksum matches; and
/// the bytes it took. Decoding comes before the checksum: when
/// resynchronizing over damage, most offsets fail to decode within a few
/// bytes, while a checksum would read as far as a garbage length says.
fn record_at<R: DeserializeOwned>(bytes: &[u8]) -> Option<(R, usize)> {
    let head = bytes.get(..FRAME_HEADER_LEN)?;
    let len = usize::try_from(u32_at(head, 0)).ok()?;
    if len == 0 {
        return None;
    }
    let payload = bytes.get(FRAME_HEADER_LEN..FRAME_HEADER_LEN.checked_add(len)?)?;
    let (record, rest) = postcard::take_from_bytes::<R>(payload).ok()?;
    if !rest.is_empty() || crc32fast::hash(payload) != u32_at(head, 4) {
        return None;
    }
    Some((record, FRAME_HEADER_LEN + len))
}

/// A stretch of a journal's body that holds no sound frame, with sound
/// frames after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Where it starts, in bytes from the start of the body.
    pub offset: usize,
    /// How long it is.
    pub len: usize,
    /// Sound records read before it.
    pub records_before: usize,
}

impl Damage {
    /// The most records the stretch can have held.
    pub fn records_at_most(&self) -> usize {
        self.len.div_ceil(MIN_RECORD_FRAME)
    }
}

/// What a journal's body holds: every sound record, in order, and where it
/// is damaged or torn.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan<R> {
    /// Every sound record, before and after any damage.
    pub records: Vec<R>,
    /// Unreadable stretches followed by sound records, in order.
    pub damage: Vec<Damage>,
    /// Where the torn tail starts (the end of the last sound record), or
    /// the body's length when there is none.
    pub sound_end: usize,
    /// The body's length.
    pub len: usize,
}

impl<R> Scan<R> {
    /// Bytes of the torn tail.
    pub fn torn_bytes(&self) -> usize {
        self.len - self.sound_end
    }

    /// Records read after the first damaged stretch (0 when there is none).
    pub fn records_after_damage(&self) -> usize {
        self.damage
            .first()
            .map_or(0, |first| self.records.len() - first.records_before)
    }
}

/// Reads every sound record of a journal file's body (after its header),
/// resynchronizing past unreadable stretches: at each offset after one, a
/// frame is sought that is whole, decodes and matches its checksum. An
/// unreadable stretch with no sound frame after it is the torn tail.
pub fn scan_records<R: DeserializeOwned>(body: &[u8]) -> Scan<R> {
    let mut records = Vec::new();
    let mut damage = Vec::new();
    let mut at = 0;
    while at < body.len() {
        if let Some((record, len)) = record_at(&body[at..]) {
            records.push(record);
            at += len;
            continue;
        }
        let next = (at + 1..body.len().saturating_sub(MIN_RECORD_FRAME - 1))
            .find_map(|offset| record_at::<R>(&body[offset..]).map(|found| (offset, found)));
        let Some((offset, (record, len))) = next else {
            break;
        };
        damage.push(Damage {
            offset: at,
            len: offset - at,
            records_before: records.len(),
        });
        records.push(record);
        at = offset + len;
    }
    Scan {
        records,
        damage,
        sound_end: at.min(body.len()),
        len: body.len(),
    }
}

/// The records of a journal file's body (after its header) up to the first
/// unreadable frame, and how many bytes they took (what follows is torn or
/// damaged: [`scan_records`] tells which).
pub fn decode_records<R: DeserializeOwned>(body: &[u8]) -> (Vec<R>, usize) {
    let mut records = Vec::new();
    let mut used = 0;
    while let Some((record, len)) = record_at(&body[used..]) {
        records.push(record);
        used += len;
    }
    (records, used)
}

/// The snapshot in a snapshot file's body (after its header).
pub fn decode_snapshot<S: DeserializeOwned>(body: &[u8]) -> Result<S, FormatError> {
    decode_snapshot_covers(body).map(|(snapshot, _)| snapshot)
}

/// The snapshot in a snapshot file's body (after its header), and what of
/// its journal it holds when it says so ([`Covers`]; `None`: the whole).
pub fn decode_snapshot_covers<S: DeserializeOwned>(
    body: &[u8],
) -> Result<(S, Option<Covers>), FormatError> {
    let (payload, used) = decode_frame(body, MAX_SNAPSHOT).ok_or_else(|| {
        FormatError::Snapshot("its frame is cut short or its checksum does not match".to_owned())
    })?;
    let snapshot =
        postcard::from_bytes(payload).map_err(|error| FormatError::Snapshot(error.to_string()))?;
    let rest = &body[used..];
    if rest.is_empty() {
        return Ok((snapshot, None));
    }
    let covers = decode_frame(rest, COVERS_LEN)
        .filter(|&(payload, len)| payload.len() == COVERS_LEN && len == rest.len())
        .map(|(payload, _)| Covers {
            generation: u64::from_le_bytes(payload[..8].try_into().unwrap_or_default()),
            journal_len: u64::from_le_bytes(payload[8..].try_into().unwrap_or_default()),
        })
        .ok_or_else(|| {
            FormatError::Snapshot(format!(
                "the {} bytes after it are not the frame that says what of its journal it holds",
                rest.len()
            ))
        })?;
    Ok((snapshot, Some(covers)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn frames(records: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for record in records {
            let payload = postcard::to_allocvec(record).expect("encodes");
            encode_frame(&payload, &mut out);
        }
        out
    }

    #[test]
    fn a_torn_last_record_is_dropped_and_the_rest_kept() {
        let records = vec![vec![1u8, 2], vec![3], vec![4, 5, 6]];
        let whole = frames(&records);
        for cut in 0..whole.len() {
            let (read, used) = decode_records::<Vec<u8>>(&whole[..cut]);
            assert!(read.len() < records.len());
            assert_eq!(read, records[..read.len()].to_vec());
            assert!(used <= cut);
        }
        let (read, used) = decode_records::<Vec<u8>>(&whole);
        assert_eq!((read, used), (records, whole.len()));
    }

    #[test]
    fn a_header_filled_in_place_is_the_header_encode_frame_writes() {
        let payload = [1u8, 2, 3, 250];
        let mut framed = Vec::new();
        encode_frame(&payload, &mut framed);
        let mut in_place = vec![0u8; FRAME_HEADER_LEN];
        in_place.extend_from_slice(&payload);
        fill_frame_header(&mut in_place);
        assert_eq!(in_place, framed);
    }

    #[test]
    fn a_flipped_bit_ends_the_journal_there() {
        let records = vec![vec![1u8, 2], vec![3], vec![4, 5, 6]];
        let mut damaged = frames(&records);
        let last = damaged.len() - 1;
        damaged[last] ^= 0x10;
        let (read, _) = decode_records::<Vec<u8>>(&damaged);
        assert_eq!(read, records[..2].to_vec());
    }

    #[test]
    fn headers_of_another_version_or_file_are_refused() {
        let mut out = Vec::new();
        let header = Header {
            content_format: 7,
            generation: 3,
        };
        encode_header(JOURNAL_MAGIC, header, &mut out);
        assert_eq!(decode_header(&out, JOURNAL_MAGIC, "journal", 7), Ok(header));
        assert!(matches!(
            decode_header(&out, JOURNAL_MAGIC, "journal", 8),
            Err(FormatError::Version { .. })
        ));
        assert!(matches!(
            decode_header(&out, SNAPSHOT_MAGIC, "snapshot", 7),
            Err(FormatError::NotOurs { .. })
        ));
        assert!(matches!(
            decode_header(&out[..5], JOURNAL_MAGIC, "journal", 7),
            Err(FormatError::ShortHeader { .. })
        ));
        // A file of format 1 (a 24-byte header, no checksum) says so.
        let mut old = out[..24].to_vec();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(
            decode_header(&old, JOURNAL_MAGIC, "journal", 7),
            Err(FormatError::Version { found: 1, .. })
        ));
    }

    #[test]
    fn a_flipped_bit_in_a_header_is_refused() {
        let mut out = Vec::new();
        let header = Header {
            content_format: 7,
            generation: 1,
        };
        encode_header(JOURNAL_MAGIC, header, &mut out);
        for at in 16..HEADER_LEN {
            let mut damaged = out.clone();
            damaged[at] ^= 1;
            assert_eq!(
                decode_header(&damaged, JOURNAL_MAGIC, "journal", 7),
                Err(FormatError::HeaderChecksum { what: "journal" }),
                "byte {at}"
            );
        }
    }

    #[test]
    fn a_scan_resynchronizes_past_damage_and_tells_it_from_a_torn_tail() {
        let records: Vec<Vec<u8>> = (1..=6u8).map(|n| vec![n; usize::from(n)]).collect();
        let whole = frames(&records);
        let second = FRAME_HEADER_LEN + 2;
        let mut damaged = whole.clone();
        damaged[second + 4] ^= 0xff;
        let scan = scan_records::<Vec<u8>>(&damaged);
        let mut expected = records.clone();
        expected.remove(1);
        assert_eq!(scan.records, expected);
        assert_eq!(
            scan.damage,
            vec![Damage {
                offset: second,
                len: FRAME_HEADER_LEN + 3,
                records_before: 1,
            }]
        );
        assert_eq!((scan.records_after_damage(), scan.torn_bytes()), (4, 0));
        // The same damage in the last record is a torn tail.
        let mut torn = whole.clone();
        let last = torn.len() - 1;
        torn[last] ^= 0xff;
        let scan = scan_records::<Vec<u8>>(&torn);
        assert!(scan.damage.is_empty());
        assert_eq!(scan.records, records[..5].to_vec());
        assert_eq!(scan.torn_bytes(), FRAME_HEADER_LEN + 7);
    }

    #[test]
    fn a_snapshot_says_what_of_its_journal_it_holds_and_a_bad_trailer_is_refused() {
        let mut body = Vec::new();
        encode_frame(
            &postcard::to_allocvec(&vec![7u8]).expect("encodes"),
            &mut body,
        );
        let alone = body.clone();
        assert_eq!(
            decode_snapshot_covers::<Vec<u8>>(&alone),
            Ok((vec![7], None))
        );
        let covers = Covers {
            generation: 4,
            journal_len: 1234,
        };
        covers.encode_frame(&mut body);
        assert_eq!(
            decode_snapshot_covers::<Vec<u8>>(&body),
            Ok((vec![7], Some(covers)))
        );
        // A reader that knows only the snapshot's frame still reads it.
        assert_eq!(decode_snapshot::<Vec<u8>>(&body), Ok(vec![7]));
        let mut flipped = body.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(decode_snapshot_covers::<Vec<u8>>(&flipped).is_err());
        let mut longer = body.clone();
        longer.push(0);
        assert!(decode_snapshot_covers::<Vec<u8>>(&longer).is_err());
    }

    proptest! {
        #[test]
        fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let (records, used) = decode_records::<Vec<u8>>(&bytes);
            prop_assert!(used <= bytes.len());
            let scan = scan_records::<Vec<u8>>(&bytes);
            prop_assert!(scan.sound_end <= bytes.len());
            prop_assert!(scan.records.len() >= records.len());
            prop_assert!(records.len() <= bytes.len());
            let _ = decode_snapshot_covers::<Vec<u8>>(&bytes);
            let _ = decode_header(&bytes, JOURNAL_MAGIC, "journal", 1);
        }
    }
}
