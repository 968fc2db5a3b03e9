//! Where a journaled member's records go ([`Durability`]): a cluster
//! process with a state directory gives its member actor one, and the
//! actor lets nothing an input produced out — envelopes to peers, a
//! submission's acknowledgement — until the records of that input are
//! durable.

use mcfed_federation::{JournalRecord, Member};

/// What to run once records are durable.
pub type AfterDurable = Box<dyn FnOnce() + Send>;

/// A journal, as the member actor uses it.
pub trait Durability: Send + Sync + 'static {
    /// Makes `records` durable, then runs `after` — after everything
    /// handed in before, and before everything handed in after.
    fn write(&self, records: Vec<JournalRecord>, after: AfterDurable);

    /// Whether the journal has grown enough to be replaced by a snapshot.
    fn wants_snapshot(&self) -> bool;

    /// Replaces the journal by a snapshot of `member` as it stands now
    /// (after everything handed in before). Called on the member's
    /// thread: it encodes from the borrowed member
    /// ([`Member::snapshot_view`]) rather than copying its state.
    fn snapshot(&self, member: &Member);
}
