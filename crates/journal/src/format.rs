//! The journal's files, byte by byte, and decoding them without trusting
//! them.
//!
//! A state directory holds two files:
//!
//! * `snapshot`: `MCFEDSNP`, the file format (`u32`), the content format
//!   (`u32`, the caller's), the generation (`u64`), then one frame: the
//!   snapshot.
//! * `journal`: `MCFEDJNL`, the file format, the content format, the
//!   generation of the snapshot it follows, then frames, one per record.
//!
//! A frame is its payload's length (`u32`), the payload's CRC-32 (`u32`),
//! then the payload (postcard); integers are little-endian. A frame whose
//! length runs past the end of the file, whose length is over the limit, or
//! whose checksum does not match ends the readable journal: what follows is
//! dropped (a record torn by a crash is the last one, since every record is
//! appended and synced before anything after it is).

use serde::de::DeserializeOwned;

/// The version of the files' layout.
pub const FILE_FORMAT: u32 = 1;

/// The first bytes of a snapshot file.
pub const SNAPSHOT_MAGIC: &[u8; 8] = b"MCFEDSNP";

/// The first bytes of a journal file.
pub const JOURNAL_MAGIC: &[u8; 8] = b"MCFEDJNL";

/// Bytes in a file's header: magic, file format, content format,
/// generation.
pub const HEADER_LEN: usize = 8 + 4 + 4 + 8;

/// Bytes before a frame's payload: length and checksum.
pub const FRAME_HEADER_LEN: usize = 8;

/// The largest record accepted (a journal record is a job or two; more is
/// damage).
pub const MAX_RECORD: usize = 16 << 20;

/// The largest snapshot accepted (about ten million jobs).
pub const MAX_SNAPSHOT: usize = 4 << 30;

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
}

/// Decodes and checks a header for content format `content`.
pub fn decode_header(
    bytes: &[u8],
    magic: &[u8; 8],
    what: &'static str,
    content: u32,
) -> Result<Header, FormatError> {
    let Some(head) = bytes.get(..HEADER_LEN) else {
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
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
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

/// The records of a journal file's body (after its header): every sound
/// frame that decodes, up to the first that does not, and how many bytes
/// were read (the rest is a torn or damaged tail).
pub fn decode_records<R: DeserializeOwned>(body: &[u8]) -> (Vec<R>, usize) {
    let mut records = Vec::new();
    let mut used = 0;
    while let Some((payload, len)) = decode_frame(&body[used..], MAX_RECORD) {
        match postcard::from_bytes::<R>(payload) {
            Ok(record) => records.push(record),
            Err(_) => break,
        }
        used += len;
    }
    (records, used)
}

/// The snapshot in a snapshot file's body (after its header).
pub fn decode_snapshot<S: DeserializeOwned>(body: &[u8]) -> Result<S, FormatError> {
    let (payload, _) = decode_frame(body, MAX_SNAPSHOT).ok_or_else(|| {
        FormatError::Snapshot("its frame is cut short or its checksum does not match".to_owned())
    })?;
    postcard::from_bytes(payload).map_err(|error| FormatError::Snapshot(error.to_string()))
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
    }

    proptest! {
        #[test]
        fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let (records, used) = decode_records::<Vec<u8>>(&bytes);
            prop_assert!(used <= bytes.len());
            prop_assert!(records.len() <= bytes.len());
            let _ = decode_snapshot::<Vec<u8>>(&bytes);
            let _ = decode_header(&bytes, JOURNAL_MAGIC, "journal", 1);
        }
    }
}
