//! `jobs.csv` as Batsim writes it, for evalys and other tools: one row per
//! finished job, written as the run goes (nothing kept per finished job).
//!
//! Columns: Batsim's (job_id, workload_name, submission_time,
//! requested_number_of_resources, requested_time, success, final_state,
//! starting_time, execution_time, finish_time, waiting_time,
//! turnaround_time, stretch, allocated_resources, consumed_energy) and
//! mcfed's (cluster, queue, user, source_cluster). Resources are slots,
//! numbered across the federation in scenario order — cluster by cluster,
//! host by host, MXJ slots each — and a job's `allocated_resources` is an
//! interval set of those numbers (`0-3 8`): the lowest free slots of each
//! host it was placed on, held from its start (or resumption) to its
//! suspension or finish. `submission_time` is the job's first submission
//! (for a forwarded job, at its submission cluster, named in
//! `source_cluster`). Jobs that never started have no row (the summary counts
//! them).

use std::io::Write;

use mcfed_cluster::{Cluster, JobId, JobOrigin, Placement, Transition};
use mcfed_protocol::{ClusterName, JobEvent};
use rustc_hash::FxHashMap;

/// The columns, in order.
pub const COLUMNS: [&str; 19] = [
    "job_id",
    "workload_name",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "cluster",
    "queue",
    "user",
    "source_cluster",
];

/// One cluster's slots: where its numbering starts, and which slots of each
/// host are taken.
struct ClusterSlots {
    name: ClusterName,
    host_first: Vec<u64>,
    taken: Vec<Vec<bool>>,
}

/// Writes `jobs.csv` rows as jobs finish.
pub struct JobsCsv<W: Write> {
    writer: csv::Writer<W>,
    clusters: Vec<ClusterSlots>,
    /// The slots each running job holds, by (cluster, job).
    held: FxHashMap<(usize, JobId), Vec<u64>>,
    /// What each running job's row needs from its start.
    facts: FxHashMap<(usize, JobId), Facts>,
    workload_name: String,
    /// A reused buffer for formatting fields.
    scratch: String,
}

struct Facts {
    requested_time: Option<f64>,
    user: std::sync::Arc<str>,
}

impl<W: Write> JobsCsv<W> {
    /// A writer for the federation of `clusters` (in scenario order), rows
    /// naming `workload_name`; writes the header.
    pub fn new<'a>(
        out: W,
        clusters: impl IntoIterator<Item = &'a Cluster>,
        workload_name: &str,
    ) -> csv::Result<Self> {
        let mut next = 0u64;
        let clusters = clusters
            .into_iter()
            .map(|cluster| {
                let mut host_first = Vec::new();
                let mut taken = Vec::new();
                for host in cluster.host_configs() {
                    host_first.push(next);
                    next += u64::from(host.max_slots);
                    taken.push(vec![false; host.max_slots as usize]);
                }
                ClusterSlots {
                    name: cluster.name().clone(),
                    host_first,
                    taken,
                }
            })
            .collect();
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(COLUMNS)?;
        Ok(JobsCsv {
            writer,
            clusters,
            held: FxHashMap::default(),
            facts: FxHashMap::default(),
            workload_name: workload_name.to_owned(),
            scratch: String::with_capacity(64),
        })
    }

    /// Takes the lowest free slots of each host of `placement`.
    fn take(&mut self, cluster: usize, placement: &[Placement]) -> Vec<u64> {
        let slots = &mut self.clusters[cluster];
        let mut held = Vec::new();
        for place in placement {
            let Some(taken) = slots.taken.get_mut(place.host) else {
                continue;
            };
            let first = slots.host_first[place.host];
            let mut wanted = place.slots;
            for (index, used) in taken.iter_mut().enumerate() {
                if wanted == 0 {
                    break;
                }
                if !*used {
                    *used = true;
                    held.push(first + index as u64);
                    wanted -= 1;
                }
            }
        }
        held
    }

    fn release(&mut self, cluster: usize, held: &[u64]) {
        let slots = &mut self.clusters[cluster];
        for &slot in held {
            let host = slots.host_first.partition_point(|&first| first <= slot) - 1;
            let index = (slot - slots.host_first[host]) as usize;
            if let Some(used) = slots.taken[host].get_mut(index) {
                *used = false;
            }
        }
    }

    /// Records a transition of cluster `cluster` (its index in scenario
    /// order); `cluster_state` is the cluster right after it, for a start's
    /// placement. Writes the job's row when it finishes.
    pub fn transition(
        &mut self,
        cluster: usize,
        cluster_state: &Cluster,
        transition: &Transition,
    ) -> csv::Result<()> {
        let key = (cluster, transition.job);
        match transition.event {
            JobEvent::Started | JobEvent::Resumed | JobEvent::Resized => {
                if let Some(job) = cluster_state.job(transition.job) {
                    let placement = job.placement.clone();
                    let held = self.take(cluster, &placement);
                    if let Some(previous) = self.held.insert(key, held) {
                        self.release(cluster, &previous);
                    }
                    self.facts.entry(key).or_insert_with(|| Facts {
                        requested_time: job.spec.run_limit.map(|limit| limit.as_secs_f64()),
                        user: job.spec.user.clone(),
                    });
                }
            }
            JobEvent::Suspended | JobEvent::Requeued | JobEvent::Migrated | JobEvent::Rerun => {
                if let Some(held) = self.held.remove(&key) {
                    self.release(cluster, &held);
                }
            }
            JobEvent::Finished
            | JobEvent::Killed
            | JobEvent::RunLimit
            | JobEvent::ReservationEnded => {
                let held = self.held.remove(&key).unwrap_or_default();
                self.release(cluster, &held);
                let facts = self.facts.remove(&key);
                // A job killed before it started has no row, as a job that
                // never started.
                if transition.event != JobEvent::Killed || transition.started_at.is_some() {
                    self.row(cluster, transition, &held, facts)?;
                }
            }
            // A stopped job keeps its slots; the rest move none.
            JobEvent::Stopped
            | JobEvent::Held
            | JobEvent::Released
            | JobEvent::Switched
            | JobEvent::Modified
            | JobEvent::Waiting
            | JobEvent::Pended => {}
        }
        Ok(())
    }

    fn row(
        &mut self,
        cluster: usize,
        transition: &Transition,
        held: &[u64],
        facts: Option<Facts>,
    ) -> csv::Result<()> {
        let submit = transition.first_submitted_at.as_secs_f64();
        let start = transition.started_at.unwrap_or(transition.at).as_secs_f64();
        let finish = transition.at.as_secs_f64();
        let execution = finish - start;
        let waiting = start - submit;
        let turnaround = finish - submit;
        let stretch = if execution > 0.0 {
            turnaround / execution
        } else {
            1.0
        };
        let source = match &transition.origin {
            JobOrigin::Forwarded { from, .. } => from.as_str(),
            _ => "",
        };
        let (requested_time, user) = facts.map_or((None, None), |facts| {
            (facts.requested_time, Some(facts.user))
        });
        self.field(format_args!("{}", transition.name))?;
        self.writer.write_field(&self.workload_name)?;
        self.field(format_args!("{submit}"))?;
        self.field(format_args!("{}", transition.slots))?;
        match requested_time {
            Some(limit) => self.field(format_args!("{limit}"))?,
            None => self.writer.write_field("-1")?,
        }
        let (success, final_state) = match transition.event {
            JobEvent::Killed | JobEvent::ReservationEnded => ("0", "COMPLETED_KILLED"),
            JobEvent::RunLimit => ("0", "COMPLETED_WALLTIME_REACHED"),
            _ => ("1", "COMPLETED_SUCCESSFULLY"),
        };
        self.writer.write_field(success)?;
        self.writer.write_field(final_state)?;
        for value in [start, execution, finish, waiting, turnaround, stretch] {
            self.field(format_args!("{value}"))?;
        }
        self.field(format_args!("{}", IntervalSet(held)))?;
        self.writer.write_field("-1")?;
        self.writer
            .write_field(self.clusters[cluster].name.as_str())?;
        self.field(format_args!("{}", transition.queue))?;
        match user {
            Some(user) => self.writer.write_field(user.as_bytes())?,
            None => self.writer.write_field("")?,
        }
        self.writer.write_field(source.as_bytes())?;
        self.writer.write_record(None::<&[u8]>)
    }

    /// Writes one field formatted into a reused buffer (no allocation per
    /// field).
    fn field(&mut self, value: std::fmt::Arguments<'_>) -> csv::Result<()> {
        use std::fmt::Write as _;
        self.scratch.clear();
        let _ = self.scratch.write_fmt(value);
        self.writer.write_field(self.scratch.as_bytes())
    }

    /// Flushes what was written.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

/// Slot numbers (sorted, as a job takes them host by host) shown as an
/// interval set.
struct IntervalSet<'a>(&'a [u64]);

impl std::fmt::Display for IntervalSet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&interval_set(self.0))
    }
}

/// Slot numbers as an interval set: `0-3 8 10-11`.
pub fn interval_set(slots: &[u64]) -> String {
    let mut sorted = slots.to_vec();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut iter = sorted.into_iter().peekable();
    while let Some(first) = iter.next() {
        let mut last = first;
        while iter.peek() == Some(&(last + 1)) {
            last += 1;
            iter.next();
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::interval_set;

    #[test]
    fn interval_sets_merge_runs() {
        assert_eq!(interval_set(&[3, 0, 1, 2, 8]), "0-3 8");
        assert_eq!(interval_set(&[5]), "5");
        assert_eq!(interval_set(&[]), "");
        assert_eq!(interval_set(&[1, 3, 4]), "1 3-4");
    }
}
