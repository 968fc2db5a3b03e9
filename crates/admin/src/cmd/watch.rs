//! What the live page (`--web`) shows of one cluster process, read in one
//! pass over its member: hosts, queues, the counters it holds of remote
//! queues, and its newest decision records.

use mcfed_forwarder::{DecisionRecord, ForwarderNode};
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::cmd::hosts::HostRow;
use crate::cmd::jobs::secs;
use crate::cmd::queues::QueueReport;

/// What the live page (`mcfed launch --web`, `mcfed cluster --web`)
/// shows of one cluster process, read in one pass over its member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchReply {
    /// The cluster.
    pub cluster: String,
    /// Where its process listens.
    pub address: String,
    /// Its incarnation (a process started again has a new one, and
    /// numbers its decision records from 0 again).
    pub incarnation: u64,
    /// Its emulated time, seconds.
    pub now: f64,
    /// Its hosts, as `bhosts` shows them.
    pub hosts: Vec<HostRow>,
    /// Its queues, as `bqueues` shows them (a receive queue with the
    /// counters it publishes now: the truth).
    pub queues: Vec<QueueReport>,
    /// The counters it holds of each remote queue its send queues send
    /// to (empty for a cluster without send queues).
    pub views: Vec<ViewRow>,
    /// Decision records from the index asked for.
    pub decisions: Vec<DecisionRecord>,
    /// How many decision records the process has written in all.
    pub decisions_total: usize,
}

/// The counters a submission cluster holds of one remote queue: the
/// figures of the last update applied, plus the jobs forwarded since that
/// the update does not reflect (what its next decision will read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewRow {
    /// The remote queue.
    pub queue: String,
    /// Its execution cluster.
    pub cluster: String,
    /// The figures, or `None` before the first update from the cluster.
    pub figures: Option<CountersRow>,
    /// When the execution cluster took the snapshot behind them
    /// (emulated seconds).
    pub taken_at: Option<f64>,
    /// Their age now (emulated seconds).
    pub age: Option<f64>,
    /// The sequence number of the last update applied from the cluster.
    pub last_update_seq: Option<u64>,
}

/// A queue's counter figures, as published (the truth) or as held by a
/// submission cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountersRow {
    /// PRIORITY.
    pub priority: u32,
    /// Total slots.
    pub total: u32,
    /// Free slots.
    pub available: u32,
    /// Running slots.
    pub running: u32,
    /// Pending slots.
    pub pending: u32,
    /// Slots reachable through preemption (free ones included).
    pub preemptable_available: u32,
    /// Imported jobs pending.
    pub imported_pending: u32,
    /// IMPT_JOBBKLG (`None`: infinit).
    pub impt_jobbklg: Option<u32>,
}

impl From<&mcfed_protocol::QueueCounters> for CountersRow {
    fn from(counters: &mcfed_protocol::QueueCounters) -> Self {
        CountersRow {
            priority: counters.priority,
            total: counters.total_slots,
            available: counters.available_slots,
            running: counters.running_slots,
            pending: counters.pending_slots,
            preemptable_available: counters.preemptable_available_slots,
            imported_pending: counters.imported_pending_jobs,
            impt_jobbklg: counters.impt_jobbklg,
        }
    }
}

/// The counters a forwarder holds of each remote queue it sends to, in
/// the order its send queues name them (each queue once), with their age
/// at `now`.
pub fn views(forwarder: &ForwarderNode, now: SimTime) -> Vec<ViewRow> {
    let view = forwarder.view();
    let mut seen = Vec::new();
    let mut rows = Vec::new();
    for (_, targets) in forwarder.send_queues() {
        for &target in targets {
            if seen.contains(&target) {
                continue;
            }
            seen.push(target);
            let at = view.queue_ref(target);
            rows.push(ViewRow {
                queue: at.queue.to_string(),
                cluster: at.cluster.to_string(),
                figures: view.figures(target).map(|figures| CountersRow {
                    priority: figures.priority,
                    total: figures.total,
                    available: figures.available,
                    running: figures.running,
                    pending: figures.pending,
                    preemptable_available: figures.preemptable_available,
                    imported_pending: figures.imported_pending,
                    impt_jobbklg: figures.impt_jobbklg,
                }),
                taken_at: view.taken_at(target).map(secs),
                age: view.view_age(target, now).map(|age| age.as_secs_f64()),
                last_update_seq: view.applied_seq(&at.cluster),
            });
        }
    }
    rows
}
