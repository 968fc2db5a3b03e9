//! A seeded synthetic lsb.acct (`mcfed gen lsb-acct`): the arrivals,
//! widths, run times, estimates and users of a [`SyntheticTrace`] (the
//! SWF generator's, so both kinds of trace load a machine alike), given
//! queues, `-R` requirements, execution hosts, exit statuses and, with
//! remote clusters, MultiCluster fields; written as LSF writes them, in
//! the order jobs finish.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{JobFinish, STATUS_DONE, STATUS_EXIT, write_job_finish};
use crate::generate::{GenerateError, SyntheticTrace};
use crate::swf::SwfRecord;

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticAcct {
    /// Arrivals, widths, run times, estimates, users and the seed.
    pub trace: SyntheticTrace,
    /// The queues jobs are submitted to, one drawn per job.
    pub queues: Vec<String>,
    /// The cluster whose log this is (the submission cluster of
    /// forwarded jobs).
    pub cluster: String,
    /// Clusters jobs may be forwarded to; empty: every job is local.
    pub remote_clusters: Vec<String>,
    /// The fraction of jobs forwarded to a remote cluster (0 to 1).
    pub forwarded: f64,
    /// The epoch time of the trace's time 0.
    pub epoch: i64,
    /// Execution hosts of the cluster (`host1` … `hostN`).
    pub hosts: u32,
}

impl Default for SyntheticAcct {
    fn default() -> Self {
        SyntheticAcct {
            trace: SyntheticTrace::default(),
            queues: vec!["normal".to_owned()],
            cluster: "cluster1".to_owned(),
            remote_clusters: Vec::new(),
            forwarded: 0.0,
            epoch: 1_700_000_000,
            hosts: 8,
        }
    }
}

/// The `-R` requirements jobs are drawn from (most give none).
const REQUIREMENTS: [&str; 6] = [
    "",
    "",
    "",
    "select[type==any]",
    "rusage[mem=512]",
    "span[hosts=1]",
];

/// The longest wait between submission and start, seconds.
const MAX_WAIT: u64 = 120;

impl SyntheticAcct {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), GenerateError> {
        self.trace.validate()?;
        let invalid = |field, reason: &str| {
            Err(GenerateError::Invalid {
                field,
                reason: reason.to_owned(),
            })
        };
        if self.queues.is_empty() || self.queues.iter().any(String::is_empty) {
            return invalid("queues", "at least one, none empty");
        }
        if !(0.0..=1.0).contains(&self.forwarded) {
            return invalid("forwarded", "from 0 to 1");
        }
        if self.forwarded > 0.0 && self.remote_clusters.is_empty() {
            return invalid("forwarded", "needs remote clusters");
        }
        if self.hosts == 0 {
            return invalid("hosts", "at least 1");
        }
        if !(0..=4_000_000_000).contains(&self.epoch) {
            return invalid("epoch", "from 0 to 4000000000");
        }
        Ok(())
    }

    /// The records, in the order they finish (as LSF logs them). Only the
    /// jobs still running at a submission are held.
    pub fn records(&self) -> Result<impl Iterator<Item = JobFinish> + use<>, GenerateError> {
        self.validate()?;
        let settings = self.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(self.trace.seed ^ 0x6c73_622e_6163_6374);
        let mut submitted = self.trace.records()?.peekable();
        let mut running: BinaryHeap<Reverse<Finishing>> = BinaryHeap::new();
        Ok(std::iter::from_fn(move || {
            loop {
                let next_submit = submitted
                    .peek()
                    .map(|record| settings.epoch + record.submit_time as i64);
                let due = running
                    .peek()
                    .is_some_and(|Reverse(first)| next_submit.is_none_or(|at| first.end <= at));
                if due {
                    return running.pop().map(|Reverse(finishing)| finishing.job);
                }
                let record = submitted.next()?;
                let job = settings.job(&record, &mut rng);
                running.push(Reverse(Finishing {
                    end: job.event_time,
                    id: job.job_id,
                    job,
                }));
            }
        }))
    }

    /// One job of the trace, finished.
    fn job(&self, record: &SwfRecord, rng: &mut ChaCha8Rng) -> JobFinish {
        let submit = self.epoch + record.submit_time as i64;
        let start = submit + rng.random_range(0..=MAX_WAIT) as i64;
        let run = record.run_time.max(1.0) as i64;
        let end = start + run;
        let width = record.requested_processors.max(1);
        let uid = record.user_id.max(1);
        let id = record.job_number;
        let host = format!("host{}", rng.random_range(1..=self.hosts));
        let failed = rng.random::<f64>() < 0.05;
        let mut job = JobFinish {
            event_time: end,
            job_id: id,
            user_id: 1000 + uid,
            num_processors: width,
            max_num_processors: width,
            submit_time: submit,
            start_time: start,
            user_name: format!("user{uid}"),
            queue: self.queues[rng.random_range(0..self.queues.len())].clone(),
            res_req: REQUIREMENTS[rng.random_range(0..REQUIREMENTS.len())].to_owned(),
            from_host: "submithost".to_owned(),
            cwd: format!("/home/user{uid}"),
            job_file: format!("{submit}.{id}"),
            exec_hosts: vec![host; usize::try_from(width).unwrap_or(1)],
            status: if failed { STATUS_EXIT } else { STATUS_DONE },
            exit_status: if failed { 256 } else { 0 },
            job_name: format!("job{id}"),
            command: format!("sleep {run}"),
            run_limit: record.requested_time as i64,
            run_time: run,
            ..JobFinish::default()
        };
        job.effective_res_req = if job.res_req.is_empty() {
            "select[type == local] order[r15s:pg] ".to_owned()
        } else {
            job.res_req.clone()
        };
        if !self.remote_clusters.is_empty() && rng.random::<f64>() < self.forwarded {
            let remote = &self.remote_clusters[rng.random_range(0..self.remote_clusters.len())];
            job.src_cluster.clone_from(&self.cluster);
            job.src_job_id = id;
            job.dst_cluster.clone_from(remote);
            job.dst_job_id = id;
            job.forward_time = submit;
        }
        job
    }
}

/// A generated job by when it ends.
struct Finishing {
    end: i64,
    id: i64,
    job: JobFinish,
}

impl PartialEq for Finishing {
    fn eq(&self, other: &Self) -> bool {
        (self.end, self.id) == (other.end, other.id)
    }
}

impl Eq for Finishing {}

impl PartialOrd for Finishing {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Finishing {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.end, self.id).cmp(&(other.end, other.id))
    }
}

/// Writes the log `settings` describes to `out`; the number of records.
pub fn generate(settings: &SyntheticAcct, out: &mut impl Write) -> io::Result<u64> {
    let records = settings
        .records()
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?;
    let mut count = 0;
    for job in records {
        write_job_finish(out, &job)?;
        count += 1;
    }
    Ok(count)
}
