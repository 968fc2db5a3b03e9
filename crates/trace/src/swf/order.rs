//! Submit order: the sorting window of [`super::SwfReader`] (and of an
//! lsb.acct workload, whose records come in finish order) and the choice
//! between sorting and refusing ([`SubmitOrder`]).

use std::collections::{BinaryHeap, VecDeque};

use super::SwfRecord;

/// What the window sorts by: a submit time, in any unit.
pub(crate) trait Submitted {
    /// When it was submitted.
    fn submitted(&self) -> f64;
}

impl Submitted for SwfRecord {
    fn submitted(&self) -> f64 {
        self.submit_time
    }
}

/// Jobs a sorting reader holds at once by default (about 1.5 MB).
pub const DEFAULT_SORT_WINDOW: usize = 10_000;

/// What the reader does with submit times that go backwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitOrder {
    /// Holds up to `window` jobs and lets out the earliest each time, so
    /// jobs out of order by fewer than `window` lines come out in submit
    /// order (equal times in file order); a job earlier than one already
    /// let out is refused with its line.
    Sort {
        /// Jobs held at once (at least 1).
        window: usize,
    },
    /// Refuses, with its line, every job earlier than the latest before it.
    Refuse,
}

impl Default for SubmitOrder {
    fn default() -> Self {
        SubmitOrder::Sort {
            window: DEFAULT_SORT_WINDOW,
        }
    }
}

/// The jobs a sorting reader holds: those that came in order in a queue
/// (the common case costs a push and a pop), those that came earlier
/// than the last queued in a heap.
pub(crate) struct Window<T = SwfRecord> {
    in_order: VecDeque<Held<T>>,
    stragglers: BinaryHeap<Held<T>>,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            in_order: VecDeque::new(),
            stragglers: BinaryHeap::new(),
        }
    }
}

impl<T: Submitted> Window<T> {
    pub(crate) fn len(&self) -> usize {
        self.in_order.len() + self.stragglers.len()
    }

    pub(crate) fn push(&mut self, held: Held<T>) {
        match self.in_order.back() {
            Some(last) if held.record.submitted() < last.record.submitted() => {
                self.stragglers.push(held);
            }
            _ => self.in_order.push_back(held),
        }
    }

    /// The earliest job held (the first read among equal times).
    pub(crate) fn pop(&mut self) -> Option<Held<T>> {
        match (self.in_order.front(), self.stragglers.peek()) {
            // The heap orders earliest as greatest.
            (Some(queued), Some(straggler)) if straggler > queued => self.stragglers.pop(),
            (Some(_), _) => self.in_order.pop_front(),
            (None, _) => self.stragglers.pop(),
        }
    }
}

/// A job held in the sorting window, ordered earliest first (then by
/// line, so equal times keep the file's order).
pub(crate) struct Held<T = SwfRecord> {
    pub(crate) record: T,
    pub(crate) line: u64,
}

impl<T: Submitted> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl<T: Submitted> Eq for Held<T> {}

impl<T: Submitted> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Submitted> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: BinaryHeap is a max-heap.
        other
            .record
            .submitted()
            .total_cmp(&self.record.submitted())
            .then(other.line.cmp(&self.line))
    }
}
