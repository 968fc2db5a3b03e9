//! `bjobs -aps` and `bjobs -prio`: a cluster's pending jobs (and running
//! jobs' pending resize requests) with their absolute priority scheduling
//! values, in dispatch order — system values first, then calculated
//! values, then jobs of queues without APS — built from the cluster
//! ([`aps_rows`], run inside the actor) and printed as LSF prints them.

use mcfed_cluster::{ApsShown, ApsTerm, Cluster};
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use super::Table;

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

/// The rows of `bjobs -aps` for `cluster` at `now`, in dispatch order.
pub fn aps_rows(cluster: &Cluster, now: SimTime) -> Vec<ApsRow> {
    cluster
        .aps_listing(now)
        .into_iter()
        .filter_map(|entry| {
            let job = cluster.job(entry.job)?;
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
            Some(ApsRow {
                job_id: job.id.0,
                user: job.spec.user.to_string(),
                stat: job.state.as_str().to_owned(),
                queue: cluster.queue_config(job.queue).name.to_string(),
                job_name: job.spec.name.to_string(),
                aps: entry.shown.render(),
                aps_kind: kind.to_owned(),
                aps_value: value,
                jpriority: entry.jpriority,
                migrated: entry.migrated,
                resize: entry.resize,
                factors,
                admin: entry.breakdown.map_or(0.0, |breakdown| breakdown.admin),
            })
        })
        .collect()
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
