//! `bsub`: submitting one job or many, and what is printed when a job is
//! submitted.

use mcfed_federation::{Effects, Member};
use mcfed_protocol::{JobSpec, SimTime};
use serde::{Deserialize, Serialize};

use crate::AdminResponse;
use crate::table::Table;

/// A submitted job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submitted {
    /// The cluster.
    pub cluster: String,
    /// The job's id there.
    pub job_id: u64,
    /// The queue.
    pub queue: String,
    /// Whether it went to a send queue (it will be forwarded).
    pub forwarded: bool,
}

/// `bsub`'s answer.
pub fn submitted(job: &Submitted) -> String {
    let whither = if job.forwarded {
        " (a send queue: the job will be forwarded)"
    } else {
        ""
    };
    format!(
        "Job <{}> is submitted to queue <{}> of cluster <{}>{whither}.\n",
        job.job_id, job.queue, job.cluster
    )
}

/// `bsub -json`.
pub fn submitted_table(job: &Submitted) -> Table {
    let mut table = Table::new("bsub", "JOBS", &["JOBID", "QUEUE", "CLUSTER", "FORWARDED"]);
    table.rows.push(vec![
        job.job_id.to_string(),
        job.queue.clone(),
        job.cluster.clone(),
        if job.forwarded { "Y" } else { "N" }.to_owned(),
    ]);
    table
}

/// Submits `spec` to `queue` of `member`.
pub fn apply(
    member: &mut Member,
    now: SimTime,
    queue: String,
    spec: JobSpec,
    effects: &mut Effects,
) -> AdminResponse {
    if let Err(why) = spec.check_bounds() {
        return AdminResponse::Error(format!("job refused: {why}"));
    }
    match member.submit(now, &queue, spec, effects) {
        Ok(submitted) => AdminResponse::Submitted(Submitted {
            cluster: member.name().to_string(),
            job_id: submitted.job_id,
            queue,
            forwarded: submitted.forwarded,
        }),
        Err(error) => AdminResponse::Error(format!("job refused: {error}")),
    }
}

/// Submits every job of `jobs` (queue and spec) in order; each is answered.
pub fn apply_many(
    member: &mut Member,
    now: SimTime,
    jobs: Vec<(String, JobSpec)>,
    effects: &mut Effects,
) -> AdminResponse {
    if let Err(error) = mcfed_protocol::bounds::SUBMIT_BATCH.check(jobs.len() as u64) {
        return AdminResponse::Error(error.to_string());
    }
    let cluster = member.name().to_string();
    let answers = jobs
        .into_iter()
        .map(|(queue, spec)| {
            spec.check_bounds()?;
            member
                .submit(now, &queue, spec, effects)
                .map(|submitted| Submitted {
                    cluster: cluster.clone(),
                    job_id: submitted.job_id,
                    queue,
                    forwarded: submitted.forwarded,
                })
                .map_err(|error| error.to_string())
        })
        .collect();
    AdminResponse::SubmittedMany(answers)
}
