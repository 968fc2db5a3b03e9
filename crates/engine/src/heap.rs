//! The event heap of the event loop: entries ordered by (time, phase,
//! sequence number); the envelopes of deliveries kept in a slab, so the
//! heap moves only small keys.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use mcfed_protocol::{Envelope, SimTime};

/// What an event does, as it is pushed. The heap keeps a small [`Event`]
/// per event and the envelopes of deliveries in its slab, so the size of
/// `Deliver` costs one move in and one out, not a move per sift of the
/// heap or per other event.
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

/// What an entry of the heap holds, and what [`EventHeap::pop`] gives: the
/// event itself, or for a delivery the slab slot of its envelope
/// ([`EventHeap::take_envelope`]) — so the heap and the events that are not
/// deliveries (most of a replay's) never move an envelope, in or out.
#[derive(Clone, Copy)]
pub(crate) enum Event {
    /// Submit the scenario's submission at this index.
    Submit(usize),
    /// Give the scenario's `[[action]]` at this index.
    Action(usize),
    /// Submit the next job of the workload at this index.
    Stream(usize),
    /// Deliver the envelope in this slot.
    Deliver(EnvelopeSlot),
    /// Wake the member at this index.
    Wake(usize),
    /// The member at this index publishes its counters.
    Publish(usize),
    /// Sample slot usage.
    Sample,
    /// Take a snapshot for expectations and `--show`.
    Probe,
}

/// Where the heap keeps a delivery's envelope until it is taken.
#[derive(Clone, Copy)]
pub(crate) struct EnvelopeSlot(u32);

struct Entry {
    at: SimTime,
    phase: u8,
    seq: u64,
    key: Event,
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
    /// Events in the heap that are work ([`EventHeap::is_work`]).
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
        let key = match kind {
            EventKind::Submit(index) => Event::Submit(index),
            EventKind::Action(index) => Event::Action(index),
            EventKind::Stream(index) => Event::Stream(index),
            EventKind::Deliver(envelope) => Event::Deliver(EnvelopeSlot(self.store(envelope))),
            EventKind::Wake(index) => Event::Wake(index),
            EventKind::Publish(index) => Event::Publish(index),
            EventKind::Sample => Event::Sample,
            EventKind::Probe => Event::Probe,
        };
        self.work += usize::from(self.is_work(&key));
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

    /// Takes the next event (a delivery's envelope stays in the slab until
    /// [`EventHeap::take_envelope`]).
    pub(crate) fn pop(&mut self) -> Option<(SimTime, Event)> {
        loop {
            let entry = self.heap.pop()?;
            if let Event::Deliver(EnvelopeSlot(slot)) = entry.key
                && self
                    .envelopes
                    .get(slot as usize)
                    .is_none_or(Option::is_none)
            {
                self.free_slots.push(slot);
                continue;
            }
            self.work -= usize::from(self.is_work(&entry.key));
            return Some((entry.at, entry.key));
        }
    }

    /// Whether `event` is work that can change a job's fate (as opposed
    /// to periodic publishing, sampling and probes). Counter updates are
    /// periodic, not work: a federation whose only traffic is updates is
    /// idle (see `EventLoop::drained`). A delivery is read in its slot.
    fn is_work(&self, event: &Event) -> bool {
        match event {
            Event::Submit(_) | Event::Action(_) | Event::Stream(_) | Event::Wake(_) => true,
            Event::Deliver(EnvelopeSlot(slot)) => self
                .envelopes
                .get(*slot as usize)
                .and_then(Option::as_ref)
                .is_some_and(|envelope| {
                    !matches!(envelope.message, mcfed_protocol::Message::CounterUpdate(_))
                }),
            Event::Publish(_) | Event::Sample | Event::Probe => false,
        }
    }

    /// The envelope of a delivery [`EventHeap::pop`] gave, taken out of
    /// the slab (its slot is free again).
    pub(crate) fn take_envelope(&mut self, EnvelopeSlot(slot): EnvelopeSlot) -> Option<Envelope> {
        self.free_slots.push(slot);
        self.envelopes.get_mut(slot as usize).and_then(Option::take)
    }

    /// Whether any work event is still to happen.
    pub(crate) fn has_work(&self) -> bool {
        self.work > 0
    }
}
