//! The event heap of the event loop: entries ordered by (time, phase,
//! sequence number); the envelopes of deliveries kept in a slab, so the
//! heap moves only small keys.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use mcfed_protocol::{Envelope, SimTime};

/// What an event does. Only passed in and out of the heap: the heap keeps a
/// small [`Key`] per event and the envelopes of deliveries in its slab, so
/// the size of `Deliver` costs one move in and one out, not a move per
/// sift of the heap or per other event.
#[allow(clippy::large_enum_variant)]
pub(crate) enum EventKind {
    /// Submit the scenario's submission at this index.
    Submit(usize),
    /// Submit the next job of the workload at this index.
    Stream(usize),
    /// Give the scenario's `[[action]]` at this index.
    Action(usize),
    /// Deliver an envelope.
    Deliver(Envelope),
    /// Wake the member at this index.
    Wake(usize),
    /// The member at this index publishes its counters.
    Publish(usize),
    /// Sample slot usage.
    Sample,
    /// Take a snapshot for expectations and `--show`.
    Probe,
}

impl EventKind {
    /// Whether the event is work that can change a job's fate (as opposed
    /// to periodic publishing, sampling and probes).
    /// Counter updates are periodic, not work: a federation whose only
    /// traffic is updates is idle (see `EventLoop::drained`).
    fn is_work(&self) -> bool {
        match self {
            EventKind::Submit(_)
            | EventKind::Stream(_)
            | EventKind::Action(_)
            | EventKind::Wake(_) => true,
            EventKind::Deliver(envelope) => {
                !matches!(envelope.message, mcfed_protocol::Message::CounterUpdate(_))
            }
            EventKind::Publish(_) | EventKind::Sample | EventKind::Probe => false,
        }
    }
}

/// The scenario's submissions and actions, first at their instant.
pub(crate) const PHASE_SUBMIT: u8 = 0;
/// The workloads' jobs, workload by workload ([`EventHeap::push_ranked`]).
pub(crate) const PHASE_STREAM: u8 = 1;
/// Deliveries and wake-ups.
pub(crate) const PHASE_EVENTS: u8 = 2;
/// Counter snapshots, after everything at the instant settled.
pub(crate) const PHASE_PUBLISH: u8 = 3;
/// Probes, last.
pub(crate) const PHASE_PROBE: u8 = 4;

/// What an entry of the heap holds: the event itself, or for a delivery
/// the slab slot of its envelope — so the heap and the events that are not
/// deliveries (most of a replay's) never move an envelope.
#[derive(Clone, Copy)]
enum Key {
    Submit(usize),
    Action(usize),
    Stream(usize),
    Deliver(u32),
    Wake(usize),
    Publish(usize),
    Sample,
    Probe,
}

struct Entry {
    at: SimTime,
    phase: u8,
    seq: u64,
    key: Key,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap yields the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.phase, other.seq).cmp(&(self.at, self.phase, self.seq))
    }
}

/// The events still to happen.
#[derive(Default)]
pub(crate) struct EventHeap {
    heap: BinaryHeap<Entry>,
    /// The envelopes of pending deliveries.
    envelopes: Vec<Option<Envelope>>,
    free_slots: Vec<u32>,
    next_seq: u64,
    /// Events in the heap that are work ([`EventKind::is_work`]).
    work: usize,
}

impl EventHeap {
    /// Schedules `kind` at `at` in `phase`, after what is already there.
    pub(crate) fn push(&mut self, at: SimTime, phase: u8, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(at, phase, seq, kind);
    }

    /// Schedules `kind` at `at` in `phase`, ordered by `rank` among the
    /// events of its phase at `at` (each ranked event has a rank of its
    /// own: a workload's index).
    pub(crate) fn push_ranked(&mut self, at: SimTime, phase: u8, rank: u64, kind: EventKind) {
        self.insert(at, phase, rank, kind);
    }

    fn insert(&mut self, at: SimTime, phase: u8, seq: u64, kind: EventKind) {
        self.work += usize::from(kind.is_work());
        let key = match kind {
            EventKind::Submit(index) => Key::Submit(index),
            EventKind::Action(index) => Key::Action(index),
            EventKind::Stream(index) => Key::Stream(index),
            EventKind::Deliver(envelope) => Key::Deliver(self.store(envelope)),
            EventKind::Wake(index) => Key::Wake(index),
            EventKind::Publish(index) => Key::Publish(index),
            EventKind::Sample => Key::Sample,
            EventKind::Probe => Key::Probe,
        };
        self.heap.push(Entry {
            at,
            phase,
            seq,
            key,
        });
    }

    fn store(&mut self, envelope: Envelope) -> u32 {
        match self.free_slots.pop() {
            Some(slot) => {
                self.envelopes[slot as usize] = Some(envelope);
                slot
            }
            None => {
                self.envelopes.push(Some(envelope));
                u32::try_from(self.envelopes.len() - 1).unwrap_or(u32::MAX)
            }
        }
    }

    /// The time and phase of the next event.
    pub(crate) fn peek(&self) -> Option<(SimTime, u8)> {
        self.heap.peek().map(|entry| (entry.at, entry.phase))
    }

    /// Takes the next event.
    pub(crate) fn pop(&mut self) -> Option<(SimTime, EventKind)> {
        loop {
            let entry = self.heap.pop()?;
            let kind = match entry.key {
                Key::Submit(index) => EventKind::Submit(index),
                Key::Action(index) => EventKind::Action(index),
                Key::Stream(index) => EventKind::Stream(index),
                Key::Deliver(slot) => {
                    let envelope = self.envelopes.get_mut(slot as usize).and_then(Option::take);
                    self.free_slots.push(slot);
                    match envelope {
                        Some(envelope) => EventKind::Deliver(envelope),
                        None => continue,
                    }
                }
                Key::Wake(index) => EventKind::Wake(index),
                Key::Publish(index) => EventKind::Publish(index),
                Key::Sample => EventKind::Sample,
                Key::Probe => EventKind::Probe,
            };
            self.work -= usize::from(kind.is_work());
            return Some((entry.at, kind));
        }
    }

    /// Whether any work event is still to happen.
    pub(crate) fn has_work(&self) -> bool {
        self.work > 0
    }
}
