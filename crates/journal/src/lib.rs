//! mcfed's write-ahead journal: what a cluster process writes so that
//! nothing it acknowledged is lost when it is killed.
//!
//! - [`format`]: the files byte by byte — checksummed frames (CRC-32,
//!   with the `crc32fast` crate), a torn last record detected and dropped;
//! - [`dir`]: a locked state directory, reading its snapshot and journal,
//!   and atomic compaction (a new snapshot, then an empty journal);
//! - [`recover`]: what a restart takes, refuses (damage, a cut header, a
//!   journal without its snapshot) or salvages;
//! - [`writer`]: the writer thread, appending with group commit (one sync
//!   per batch of whatever was queued) and running each batch's callbacks
//!   only once it is durable;
//! - [`compact`]: its compaction, the snapshot written on a thread of its
//!   own while records go on into the journal it replaces.
//!
//! The journal knows nothing of what it stores: records and snapshots are
//! any serde types (postcard on disk), tagged with the caller's content
//! format so that a journal of another version is refused, not misread.

pub mod compact;
pub mod dir;
pub mod format;
pub mod recover;
pub mod writer;

pub use dir::{JournalError, Recovered, StateDir};
pub use format::FormatError;
pub use recover::{Recovery, Salvage, read_journal_file};
pub use writer::{AfterDurable, Writer, WriterStats};

/// Encodes a snapshot for [`Writer::snapshot`] or [`StateDir::write_snapshot`].
pub fn encode_snapshot<S: serde::Serialize>(snapshot: &S) -> Result<Vec<u8>, postcard::Error> {
    postcard::to_allocvec(snapshot)
}
