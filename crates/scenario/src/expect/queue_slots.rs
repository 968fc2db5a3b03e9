//! A queue's slots at a time: `at`, `cluster`, `queue`, and any of
//! `running_slots`, `pending_slots`, `suspended_slots`, `deserved_slots`
//! (for a queue in a SLOT_POOL) and `reserved_slots` (`bqueues` RSV).

use mcfed_protocol::{ClusterName, QueueName, SimTime};

use super::{Entry, Kind};
use crate::format::RawExpect;

/// At `at`, a queue's slot figures are these (each one given).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSlots {
    /// The cluster.
    pub cluster: ClusterName,
    /// The queue.
    pub queue: QueueName,
    /// When.
    pub at: SimTime,
    /// The figures.
    pub figures: QueueFigures,
}

/// A queue's slot figures an expectation checks; unset ones are not
/// checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueFigures {
    /// Running slots.
    pub running: Option<u32>,
    /// Pending slots.
    pub pending: Option<u32>,
    /// Suspended slots.
    pub suspended: Option<u32>,
    /// Deserved slots in the queue's pool.
    pub deserved: Option<u32>,
    /// Free slots held by the queue's slot reservation (RSV).
    pub reserved: Option<u32>,
}

impl Kind for QueueSlots {
    const NAME: &'static str = "a queue's slots";
    const KEYS: &'static [&'static str] = &[
        "at",
        "cluster",
        "queue",
        "running_slots",
        "pending_slots",
        "suspended_slots",
        "deserved_slots",
        "reserved_slots",
    ];

    fn claims(raw: &RawExpect) -> bool {
        raw.running_slots.is_some()
            || raw.pending_slots.is_some()
            || raw.suspended_slots.is_some()
            || raw.deserved_slots.is_some()
            || raw.reserved_slots.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let (cluster, queue, at) = entry.queue_at()?;
        if raw.deserved_slots.is_some() {
            let pooled = entry
                .queue_config(&cluster, &queue)
                .is_some_and(|(_, config)| config.slot_pool.is_some());
            if !pooled {
                entry.problem(
                    "deserved_slots",
                    format!("queue `{queue}` is in no SLOT_POOL, so it deserves no slots"),
                );
                return None;
            }
        }
        Some(QueueSlots {
            cluster,
            queue,
            at,
            figures: QueueFigures {
                running: raw.running_slots,
                pending: raw.pending_slots,
                suspended: raw.suspended_slots,
                deserved: raw.deserved_slots,
                reserved: raw.reserved_slots,
            },
        })
    }
}
