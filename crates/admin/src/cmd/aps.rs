//! `bjobs -aps` and `bjobs -prio`: a cluster's pending jobs (and running
//! jobs' pending resize requests) with their absolute priority scheduling
//! values, in dispatch order — system values first, then calculated
//! values, then jobs of queues without APS — followed by the jobs waiting
//! in the cluster's APS send queues in forwarding order, built from the
//! member ([`aps_rows`], run inside the actor) and printed as LSF prints
//! them.

use mcfed_cluster::{ApsEntry, ApsShown, ApsTerm, JobId};
use mcfed_federation::Member;
use mcfed_protocol::{JobSpec, SimTime};
use serde::{Deserialize, Serialize};

use crate::table::Table;

/// One row of `bjobs -aps` / `-prio` (`-o json` prints these; the field
/// names are a public contract).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApsRow {
    /// The job's id in this cluster.
    pub job_id: u64,
    /// The submitting user.
    pub user: String,
    /// PEND, or RUN for a running job's resize request.
    pub stat: String,
    /// Its queue.
    pub queue: String,
    /// The job's name.
    pub job_name: String,
    /// The APS value as `bjobs -aps` prints it: `(10)` for a system value,
    /// `109.00` for a calculated one, `-` outside APS queues.
    pub aps: String,
    /// `system`, `calculated` or `none`.
    pub aps_kind: String,
    /// The value, if it has one.
    pub aps_value: Option<f64>,
    /// Its JPRIORITY now (escalated, if JOB_PRIORITY_OVER_TIME is set).
    pub jpriority: u32,
    /// Migrated (`bmig`): scheduled before the pending jobs.
    pub migrated: bool,
    /// A running job's pending resize allocation request.
    pub resize: bool,
    /// For `bjobs -prio`: each factor and sub-factor (FS, RSRC, PROC, MEM,
    /// SWAP, WORK, JPRIORITY, QPRIORITY) with the figure it reads and what
    /// it adds after its weight, limit and grace period. Empty outside APS
    /// queues.
    pub factors: Vec<ApsFactorRow>,
    /// ADMIN (`bmod -aps "admin=V"`), added as is.
    pub admin: f64,
}

/// One factor or sub-factor of a job's APS value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApsFactorRow {
    /// FS, RSRC, PROC, MEM, SWAP, WORK, JPRIORITY or QPRIORITY.
    pub name: String,
    /// The figure it reads (0 for RSRC and WORK, whose figure is their
    /// sub-factors' sum).
    pub figure: f64,
    /// What it contributes: a sub-factor's weighted, limited value; a
    /// factor's weighted, limited sum.
    pub value: f64,
}

/// The rows of `bjobs -aps` for `member` at `now`: its scheduler's jobs in
/// dispatch order — queue by queue from the highest PRIORITY (as a
/// dispatch pass serves them), each queue in the order the dispatcher
/// tries its jobs (an APS group's by APS value) — then the jobs waiting at
/// this cluster in its APS send queues, each queue in the order its next
/// forwarding session decides them.
pub fn aps_rows(member: &Member, now: SimTime) -> Vec<ApsRow> {
    let cluster = member.cluster();
    let listing = cluster.aps_listing(now);
    let mut entries: rustc_hash::FxHashMap<JobId, ApsEntry> = listing
        .iter()
        .map(|entry| (entry.job, entry.clone()))
        .collect();
    let mut queues: Vec<(usize, u32)> = cluster
        .queue_configs()
        .enumerate()
        .map(|(index, config)| (index, config.priority))
        .collect();
    queues.sort_by_key(|&(index, priority)| (std::cmp::Reverse(priority), index));
    let mut rows = Vec::with_capacity(entries.len());
    for (queue, _) in queues {
        let order = cluster.dispatch_order(queue, now).unwrap_or_else(|| {
            // A fairshare queue picks by user priority as it goes: its
            // jobs in the order they came.
            let mut ids: Vec<JobId> = entries
                .keys()
                .copied()
                .filter(|id| cluster.job(*id).is_some_and(|job| job.queue == queue))
                .collect();
            ids.sort_unstable();
            ids
        });
        for id in order {
            let (Some(entry), Some(job)) = (entries.remove(&id), cluster.job(id)) else {
                continue;
            };
            let name = cluster.queue_config(job.queue).name.as_str();
            rows.push(row(&entry, &job.spec, job.state.as_str(), name));
        }
    }
    // Anything no queue's order named (none expected), as listed.
    for entry in listing
        .iter()
        .filter(|entry| entries.contains_key(&entry.job))
    {
        if let Some(job) = cluster.job(entry.job) {
            let name = cluster.queue_config(job.queue).name.as_str();
            rows.push(row(entry, &job.spec, job.state.as_str(), name));
        }
    }
    rows.extend(send_queue_rows(member, now));
    rows
}

/// The rows of the jobs waiting in `member`'s APS send queues.
fn send_queue_rows(member: &Member, now: SimTime) -> Vec<ApsRow> {
    let Some(forwarder) = member.forwarder() else {
        return Vec::new();
    };
    let mut seen = rustc_hash::FxHashSet::default();
    let mut rows = Vec::new();
    for (queue, _) in forwarder.send_queues() {
        for id in member
            .forwarding_order(queue.as_str(), now)
            .unwrap_or_default()
        {
            let (Some(job), true) = (forwarder.job(id), seen.insert(id)) else {
                continue;
            };
            let Some(entry) = member.send_queue_aps(id, now) else {
                continue;
            };
            let queue = forwarder.send_queue_name(job.send_queue_index());
            rows.push(row(&entry, &job.spec, job.state.as_str(), queue.as_str()));
        }
    }
    rows
}

/// The row of `entry`, a job with `spec` in `state` in `queue`.
fn row(entry: &ApsEntry, spec: &JobSpec, state: &str, queue: &str) -> ApsRow {
    let (kind, value) = match entry.shown {
        ApsShown::System(value) => ("system", Some(value)),
        ApsShown::Calculated(value) => ("calculated", Some(value)),
        ApsShown::None => ("none", None),
    };
    let factors = entry
        .breakdown
        .map(|breakdown| {
            ApsTerm::ALL
                .iter()
                .map(|term| ApsFactorRow {
                    name: term.name().to_owned(),
                    figure: breakdown.figures[term.index()],
                    value: breakdown.terms[term.index()],
                })
                .collect()
        })
        .unwrap_or_default();
    ApsRow {
        job_id: entry.job.0,
        user: spec.user.to_string(),
        stat: state.to_owned(),
        queue: queue.to_owned(),
        job_name: spec.name.to_string(),
        aps: entry.shown.render(),
        aps_kind: kind.to_owned(),
        aps_value: value,
        jpriority: entry.jpriority,
        migrated: entry.migrated,
        resize: entry.resize,
        factors,
        admin: entry.breakdown.map_or(0.0, |breakdown| breakdown.admin),
    }
}

/// `bjobs -aps`: one line per job in dispatch order, its APS value last.
pub fn aps_table(rows: &[ApsRow]) -> Table {
    let mut table = Table::new(
        "bjobs",
        "JOBS",
        &[
            "JOBID",
            "USER",
            "STAT",
            "QUEUE",
            "JOB_NAME",
            "JPRIORITY",
            "APS",
        ],
    );
    for row in rows {
        let name = if row.resize {
            format!("{} (resize)", row.job_name)
        } else if row.migrated {
            format!("{} (migrated)", row.job_name)
        } else {
            row.job_name.clone()
        };
        table.rows.push(vec![
            row.job_id.to_string(),
            row.user.clone(),
            row.stat.clone(),
            row.queue.clone(),
            name,
            row.jpriority.to_string(),
            row.aps.clone(),
        ]);
    }
    table
}

/// `bjobs -prio`: each job's factor and sub-factor values (what each
/// adds), ADMIN and the APS value, in dispatch order.
pub fn prio_table(rows: &[ApsRow]) -> Table {
    let mut header = vec!["JOBID", "QUEUE"];
    header.extend(ApsTerm::ALL.iter().map(|term| term.name()));
    header.extend(["ADMIN", "APS"]);
    let mut table = Table::new("bjobs", "JOBS", &header);
    for row in rows {
        let mut cells = vec![row.job_id.to_string(), row.queue.clone()];
        if row.factors.is_empty() {
            cells.extend(std::iter::repeat_n("-".to_owned(), ApsTerm::ALL.len() + 1));
        } else {
            cells.extend(row.factors.iter().map(|factor| number(factor.value)));
            cells.push(number(row.admin));
        }
        cells.push(row.aps.clone());
        table.rows.push(cells);
    }
    table
}

/// A value with two decimals, as `bjobs -aps` prints values.
fn number(value: f64) -> String {
    format!("{value:.2}")
}

#[cfg(test)]
mod tests {
    use mcfed_federation::{Effects, Member};
    use mcfed_protocol::SimTime;

    /// Jobs of a PRIORITY 20 queue are listed before those of a PRIORITY
    /// 10 queue, whatever their APS values, as a dispatch pass tries them
    /// (the listing was one sort by APS value across queues).
    #[test]
    fn bjobs_aps_lists_queue_by_queue_in_dispatch_order() {
        let scenario = mcfed_scenario::parse(
            "aps-order.toml",
            r#"
name = "aps order"
end = "1h"

[[cluster]]
name = "C"
params = { MAX_USER_PRIORITY = 100 }

[[cluster.host]]
name = "h"
MXJ = 1

[[cluster.queue]]
name = "low"
PRIORITY = 10
APS_PRIORITY = "WEIGHT[[JPRIORITY, 10]]"

[[cluster.queue]]
name = "high"
PRIORITY = 20
APS_PRIORITY = "WEIGHT[[JPRIORITY, 1]]"

[[cluster.job]]
queue = "high"
name = "runner"
run_time = "1h"
state = "running"
"#,
        )
        .expect("valid");
        let (mut member, _) = Member::build(scenario.clusters[0].member_spec()).expect("builds");
        let mut effects = Effects::default();
        member.take_start(&mut effects);
        for (queue, name, priority) in [("low", "big", 90), ("high", "small", 1)] {
            let mut spec =
                mcfed_protocol::JobSpec::simple(name, "u", std::time::Duration::from_secs(60));
            spec.options
                .get_or_insert_with(Default::default)
                .user_priority = Some(priority);
            member
                .submit(SimTime::ZERO, queue, spec, &mut effects)
                .expect("accepted");
        }
        let now = SimTime::from_secs(10);
        member.step(now, &mut effects);
        let rows = super::aps_rows(&member, now);
        let order: Vec<&str> = rows.iter().map(|row| row.queue.as_str()).collect();
        assert_eq!(order, ["high", "low"], "{rows:?}");
    }
}
