//! The figures of one remote queue as the submission cluster believes
//! them to be (from counters or a hello's facts), and how a forward
//! changes them.

use mcfed_protocol::{QueueCounters, QueueFacts, SimTime};

/// The counter figures of one remote queue, as the submission cluster
/// believes them to be now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// The queue's PRIORITY.
    pub priority: u32,
    /// Total slots.
    pub total: u32,
    /// Available (free) slots.
    pub available: u32,
    /// Running slots.
    pub running: u32,
    /// Pending slots.
    pub pending: u32,
    /// Preemptable available slots (free slots included).
    pub preemptable_available: u32,
    /// PRIORITY of the lowest-priority queue it can preempt now.
    pub victim_priority: Option<u32>,
    /// IMPT_JOBBKLG (`None`: infinit).
    pub impt_jobbklg: Option<u32>,
    /// Imported jobs pending in the queue.
    pub imported_pending: u32,
    /// When the execution cluster took the snapshot these figures start from
    /// (for figures from a hello, when the hello came).
    pub taken_at: SimTime,
    /// Whether the figures start from a counter update (`false`: from the
    /// static facts of a hello, with the remote workload unknown).
    pub from_counters: bool,
}

/// Where a forward's slots came from, as the local increment counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Took {
    /// Free slots.
    Free,
    /// Slots reached by preemption.
    Preempted,
    /// None: the job pends there.
    Pending,
}

impl Figures {
    /// The figures without the time they were taken at: what a decision
    /// compares.
    pub(super) fn untimed(self) -> Figures {
        Figures {
            taken_at: SimTime::ZERO,
            ..self
        }
    }

    /// The static facts of a hello, received at `at`: every slot free,
    /// nothing running or pending.
    pub(super) fn from_facts(facts: &QueueFacts, at: SimTime) -> Self {
        Figures {
            taken_at: at,
            from_counters: false,
            priority: facts.priority,
            total: facts.total_slots,
            available: facts.total_slots,
            running: 0,
            pending: 0,
            preemptable_available: facts.total_slots,
            victim_priority: None,
            impt_jobbklg: facts.impt_jobbklg,
            imported_pending: 0,
        }
    }

    pub(super) fn from_counters(counters: &QueueCounters, taken_at: SimTime) -> Self {
        Figures {
            taken_at,
            from_counters: true,
            priority: counters.priority,
            total: counters.total_slots,
            available: counters.available_slots,
            running: counters.running_slots,
            pending: counters.pending_slots,
            preemptable_available: counters.preemptable_available_slots,
            victim_priority: counters.lowest_preemptable_priority,
            impt_jobbklg: counters.impt_jobbklg,
            imported_pending: counters.imported_pending_jobs,
        }
    }

    /// Accounts locally for a job of `slots` slots just forwarded to the
    /// queue: it takes free slots if there are enough, else slots it can
    /// preempt, else it pends there as an imported job. Says which.
    pub fn count_forward(&mut self, slots: u32) -> Took {
        if self.available >= slots {
            self.take_free(slots);
            self.running += slots;
            Took::Free
        } else if self.preemptable_available >= slots {
            self.preemptable_available -= slots;
            self.running += slots;
            self.follow_victims();
            Took::Preempted
        } else {
            self.pending += slots;
            self.imported_pending += 1;
            Took::Pending
        }
    }

    /// `slots` free slots of the queue's hosts are taken (by a job of this
    /// queue, or of another queue of the same slot group).
    pub fn take_free(&mut self, slots: u32) {
        self.available = self.available.saturating_sub(slots);
        self.preemptable_available = self.preemptable_available.saturating_sub(slots);
        self.follow_victims();
    }

    /// The victim priority follows the slots it is derived from (issue 27,
    /// item 7): once the preemptable available slots are no more than the
    /// free ones, nothing is left to preempt, and the queue has no victim —
    /// as its cluster would report (`mcfed_cluster`'s counters). While some
    /// are left, the lowest priority stays: the counters do not say which
    /// victim queue's slots a forward took.
    pub fn follow_victims(&mut self) {
        if self.preemptable_available <= self.available {
            self.victim_priority = None;
        }
    }
}
