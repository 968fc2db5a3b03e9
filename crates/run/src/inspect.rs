//! `mcfed run SCENARIO --show queues --at T`: a cluster's queues at one
//! time, as `bqueues -l` prints them (text) or as JSON; and the `bqueues -l`
//! block itself ([`queue_long`]), which `mcfed bqueues -l` prints too.
//!
//! The figures come from a [`Snapshot`] the engine took at `T`, after
//! everything that happened at that instant: the cluster's
//! [`QueueReport`]s, the same model `mcfed bqueues` gets from a cluster
//! process. A snapshot is taken from the scheduler alone, so its send
//! queues show no MAX_RSCHED_TIME (`null` in JSON).

use std::fmt::Write as _;

use mcfed_cluster::{ClusterReport, QueueReport};
use mcfed_protocol::SimTime;
use serde::Serialize;

use crate::probe::Snapshot;

/// Why the queues cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// `--cluster` names no cluster of the scenario.
    #[error("no cluster named `{0}` in the scenario")]
    UnknownCluster(String),
    /// No snapshot was taken at that time (past `--until`).
    #[error("the run ended before {0}")]
    NoSnapshot(SimTime),
    /// JSON encoding failed.
    #[error("cannot encode as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The clusters to show: all, or the one named.
fn selected<'a>(
    snapshot: &'a Snapshot,
    cluster: Option<&str>,
) -> Result<Vec<&'a ClusterReport>, InspectError> {
    match cluster {
        None => Ok(snapshot.clusters.iter().map(|c| &c.report).collect()),
        Some(name) => snapshot
            .cluster(name)
            .map(|c| vec![&c.report])
            .ok_or_else(|| InspectError::UnknownCluster(name.to_owned())),
    }
}

fn dash(value: Option<u32>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn duration(secs: f64) -> SimTime {
    SimTime::from_millis((secs * 1000.0).round().max(0.0) as u64)
}

/// The line between two queues of `bqueues -l`.
const SEPARATOR: &str =
    "------------------------------------------------------------------------------";

/// One queue as `bqueues -l` prints it: `mcfed bqueues -l` and `mcfed run
/// --show queues` both print this block.
pub fn queue_long(queue: &QueueReport) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "QUEUE: {}", queue.queue);
    let _ = writeln!(text, "PARAMETERS/STATISTICS");
    let _ = writeln!(
        text,
        "{:>4}  {:<11} {:>5} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "PRIO", "STATUS", "MAX", "JL/U", "JL/H", "NJOBS", "PEND", "RUN", "SUSP", "RSV"
    );
    let _ = writeln!(
        text,
        "{:>4}  {:<11} {:>5} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6}",
        queue.priority,
        queue.status,
        dash(queue.max),
        dash(queue.jl_u),
        dash(queue.jl_h),
        queue.njobs,
        queue.pend,
        queue.run,
        queue.susp,
        queue.rsv
    );
    if !queue.policies.is_empty() {
        let _ = writeln!(text, "SCHEDULING POLICIES:  {}", queue.policies.join(" "));
    }
    if let Some(preemption) = &queue.preemption {
        let _ = writeln!(text, "PREEMPTION:  {preemption}");
    }
    if let Some(aps) = &queue.aps_priority {
        let _ = writeln!(text, "APS_PRIORITY: {aps}");
    }
    if !queue.queue_group.is_empty() {
        let _ = writeln!(text, "QUEUE_GROUP: {}", queue.queue_group.join(" "));
    }
    if let Some(pool) = &queue.slot_pool {
        let _ = writeln!(
            text,
            "SLOT_POOL: {}  SLOT_SHARE: {}%  DESERVED: {} of {} slots  MAX_SLOTS_IN_POOL: {}  USE_PRIORITY_IN_POOL: {}  USED: {:.2} slot-hours (decayed)",
            pool.pool,
            pool.slot_share,
            pool.deserved_slots,
            pool.pool_slots,
            dash(pool.max_slots_in_pool),
            if pool.use_priority_in_pool { "Y" } else { "N" },
            pool.accumulated_slot_hours
        );
    }
    if !queue.sndjobs_to.is_empty() {
        let _ = writeln!(text, "SNDJOBS_TO: {}", queue.sndjobs_to.join(" "));
    }
    if let Some(limit) = queue.max_rsched_time {
        let _ = writeln!(text, "MAX_RSCHED_TIME: {}", duration(limit));
    }
    if !queue.rcvjobs_from.is_empty() {
        let _ = writeln!(text, "RCVJOBS_FROM: {}", queue.rcvjobs_from.join(" "));
        let _ = writeln!(
            text,
            "IMPT_JOBBKLG: {}",
            queue
                .impt_jobbklg
                .map_or_else(|| "infinit".to_owned(), |limit| limit.to_string())
        );
    }
    if let Some(counters) = &queue.counters {
        let _ = writeln!(
            text,
            "COUNTERS: total {} available {} running {} pending {} preemptable_available {} imported_pending {}",
            counters.total_slots,
            counters.available_slots,
            counters.running_slots,
            counters.pending_slots,
            counters.preemptable_available_slots,
            counters.imported_pending_jobs
        );
    }
    if let Some(fairshare) = &queue.fairshare {
        let _ = writeln!(
            text,
            "USER_SHARES:  {}",
            fairshare
                .user_shares
                .strip_prefix("USER_SHARES[")
                .and_then(|inner| inner.strip_suffix(']'))
                .unwrap_or(&fairshare.user_shares)
        );
        let _ = writeln!(text);
        let _ = writeln!(text, "SHARE_INFO_FOR: {}/", queue.queue);
        let _ = writeln!(
            text,
            " USER/GROUP      SHARES   PRIORITY  STARTED  RESERVED   CPU_TIME   RUN_TIME    ADJUST"
        );
        for row in &fairshare.users {
            let _ = writeln!(
                text,
                " {:<14} {:>7} {:>10.3} {:>8} {:>9} {:>10.1} {:>10.0} {:>9.3}",
                row.user,
                row.shares,
                row.priority,
                row.started,
                row.reserved,
                row.cpu_time,
                row.run_time,
                row.adjust
            );
        }
    }
    let _ = writeln!(text);
    let _ = writeln!(text, "HOSTS:  {}", queue.hosts);
    text
}

/// Queues as `bqueues -l` prints them: each block, then a dashed line and
/// an empty line.
pub fn queues_long(queues: &[QueueReport]) -> String {
    let mut text = String::new();
    for queue in queues {
        text.push_str(&queue_long(queue));
        let _ = writeln!(text, "{SEPARATOR}");
        let _ = writeln!(text);
    }
    text
}

/// The queues of `cluster` (or of every cluster) as `bqueues -l` text.
pub fn queues_text(snapshot: &Snapshot, cluster: Option<&str>) -> Result<String, InspectError> {
    let mut text = String::new();
    let at = SimTime::from_millis((snapshot.time * 1000.0).round() as u64);
    for report in selected(snapshot, cluster)? {
        let _ = writeln!(text, "# cluster {} at {at}", report.cluster);
        let _ = writeln!(text);
        text.push_str(&queues_long(&report.queues));
    }
    Ok(text)
}

/// The JSON `--show queues --report json` prints: the time and the
/// selected clusters' reports.
#[derive(Serialize)]
struct QueuesJson<'a> {
    time: f64,
    clusters: Vec<&'a ClusterReport>,
}

/// The queues of `cluster` (or of every cluster) as one JSON object.
pub fn queues_json(snapshot: &Snapshot, cluster: Option<&str>) -> Result<String, InspectError> {
    Ok(serde_json::to_string(&QueuesJson {
        time: snapshot.time,
        clusters: selected(snapshot, cluster)?,
    })?)
}
