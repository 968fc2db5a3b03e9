//! `bjobs`: the jobs a cluster holds — its scheduler's and its send
//! queues' — as rows, filtered at the cluster.

use mcfed_cluster::{Cluster, ClusterNode, Job, JobOrigin, JobState};
use mcfed_federation::Member;
use mcfed_forwarder::node::SourceJob;
use mcfed_forwarder::{ForwarderNode, SourceState};
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

pub mod page;
mod print;
mod query;

pub use page::{JobsPage, PAGE_BYTES};
pub use print::{
    JOB_FIELDS, JobField, default_fields, jobs, jobs_fields, jobs_table, parse_fields,
};
pub use query::{Finished, JobsQuery, name_matches};

use crate::AdminResponse;

/// The jobs of `member` at `now` that `query` asks for, by job id (the
/// finished ones from its history), in one answer however long.
pub fn apply(member: &Member, now: SimTime, query: &JobsQuery) -> AdminResponse {
    AdminResponse::Jobs(page::page(member, now, query, None, usize::MAX).rows)
}

/// One job, as `bjobs` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    /// The job's id in this cluster.
    pub job_id: u64,
    /// The submitting user.
    pub user: String,
    /// LSF's state: PEND, RUN, SSUSP, DONE.
    pub stat: String,
    /// The queue it is in here.
    pub queue: String,
    /// Where it was submitted from: this cluster, or `source_job@cluster`
    /// for a job forwarded here.
    pub from_host: String,
    /// Where it runs (`n*host`), or where it was forwarded to
    /// (`host@cluster`, `-` while pending there).
    pub exec_host: Option<String>,
    /// The job's name.
    pub job_name: String,
    /// When it was submitted here (emulated seconds).
    pub submit_time: f64,
    /// Slots.
    pub slots: u32,
    /// For a job submitted here and forwarded: where it went.
    pub forwarded_to: Option<ForwardedTo>,
    /// For a job forwarded here: where it came from.
    pub forwarded_from: Option<ForwardedFrom>,
    /// Why it pends, for a pending job.
    pub pending_reason: Option<String>,
    /// Run time asked for (emulated seconds).
    pub run_time: f64,
    /// Run limit (`bsub -W`), emulated seconds.
    pub run_limit: Option<f64>,
    /// Boolean resources asked for (`bsub -R`).
    pub resources: Vec<String>,
    /// When it started (emulated seconds), if it has.
    pub start_time: Option<f64>,
    /// When it ended (DONE, EXIT; `bjobs -a`), if it has.
    #[serde(default)]
    pub finish_time: Option<f64>,
    /// `bsub -o FILE`.
    #[serde(default)]
    pub output_file: Option<String>,
    /// `bsub -e FILE`.
    #[serde(default)]
    pub error_file: Option<String>,
    /// `bsub -sp`: the user-assigned job priority.
    #[serde(default)]
    pub user_priority: Option<u32>,
}

/// Where a job submitted here was forwarded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardedTo {
    /// The execution cluster.
    pub cluster: String,
    /// Its receive queue.
    pub queue: String,
    /// The job's id there, once accepted.
    pub dest_job: Option<u64>,
    /// When it was forwarded (emulated seconds).
    pub forward_time: f64,
    /// How many times it has been forwarded.
    pub forwards: u32,
}

/// Where a job forwarded here came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardedFrom {
    /// The submission cluster.
    pub cluster: String,
    /// The job's id there.
    pub source_job: u64,
}

pub(crate) fn secs(time: SimTime) -> f64 {
    time.as_secs_f64()
}

/// The jobs in a cluster's own queues (local ones and those forwarded to
/// it), by job id.
pub fn cluster_jobs(node: &ClusterNode) -> Vec<JobRow> {
    let cluster = node.cluster();
    let mut rows: Vec<JobRow> = cluster
        .jobs()
        .map(|job| cluster_row(cluster, job))
        .collect();
    rows.sort_by_key(|row| row.job_id);
    rows
}

/// One job of a cluster's own queues, as `bjobs` shows it.
pub fn cluster_row(cluster: &Cluster, job: &Job) -> JobRow {
    let (from_host, forwarded_from) = match &job.origin {
        JobOrigin::Local => (cluster.name().to_string(), None),
        JobOrigin::Forwarded { from, source_job } => (
            format!("{source_job}@{from}"),
            Some(ForwardedFrom {
                cluster: from.to_string(),
                source_job: *source_job,
            }),
        ),
    };
    let exec_host = (!job.placement.is_empty()).then(|| {
        job.placement
            .iter()
            .map(|place| format!("{}*{}", place.slots, cluster.host_name(place.host)))
            .collect::<Vec<_>>()
            .join(":")
    });
    let pending_reason =
        (job.state == JobState::Pending).then(|| cluster.pending_reason(job).describe().to_owned());
    let options = job.spec.options();
    JobRow {
        job_id: job.id.0,
        user: job.spec.user.to_string(),
        stat: job.state.as_str().to_owned(),
        queue: cluster.queue_config(job.queue).name.to_string(),
        from_host,
        exec_host,
        job_name: job.spec.name.to_string(),
        submit_time: secs(job.submitted_at),
        slots: job.spec.slots,
        forwarded_to: None,
        forwarded_from,
        pending_reason,
        run_time: job.spec.run_time.as_secs_f64(),
        run_limit: job.spec.run_limit.map(|limit| limit.as_secs_f64()),
        resources: job.spec.resources.clone(),
        start_time: job.started_at.map(secs),
        finish_time: None,
        output_file: options.output_file,
        error_file: options.error_file,
        user_priority: options.user_priority,
    }
}

/// The jobs submitted to a cluster's send queues, by job id.
pub fn forwarder_jobs(forwarder: &ForwarderNode, now: SimTime) -> Vec<JobRow> {
    let mut rows: Vec<JobRow> = forwarder
        .jobs()
        .map(|job| forwarder_row(forwarder, job, now))
        .collect();
    rows.sort_by_key(|row| row.job_id);
    rows
}

/// One job of a cluster's send queues, as `bjobs` shows it at `now` (the
/// member's local time).
pub fn forwarder_row(forwarder: &ForwarderNode, job: &SourceJob, now: SimTime) -> JobRow {
    let view = forwarder.view();
    let unreachable = job
        .remote_queue()
        .is_some_and(|to| forwarder.is_unreachable(view.cluster_of(to), now));
    let stat = match job.state {
        // LSF's UNKWN: started where nobody can be asked.
        SourceState::Running { .. }
        | SourceState::Suspended { .. }
        | SourceState::Stopped { .. }
            if unreachable =>
        {
            "UNKWN"
        }
        state => state.as_str(),
    };
    let forwarded_to = job.remote_queue().map(|to| {
        let at = view.queue_ref(to);
        ForwardedTo {
            cluster: at.cluster.to_string(),
            queue: at.queue.to_string(),
            dest_job: job.dest_job(),
            forward_time: secs(job.forwarded_at),
            forwards: job.forwards,
        }
    });
    let exec_host = match job.state {
        SourceState::Running { to, .. }
        | SourceState::Suspended { to, .. }
        | SourceState::Stopped { to, .. } => Some(format!("@{}", view.cluster_of(to))),
        _ => None,
    };
    let pending_reason = match job.state {
        SourceState::Waiting => Some(job.waiting_reason().to_owned()),
        SourceState::GaveUp => {
            Some("Forwarded MAX_FORWARDS times; pending at the submission cluster".to_owned())
        }
        SourceState::Forwarded { .. } | SourceState::Accepted { .. } if unreachable => {
            Some("Pending at the execution cluster; remote cluster unreachable".to_owned())
        }
        SourceState::Forwarded { .. } | SourceState::Accepted { .. } => {
            Some("Pending at the execution cluster".to_owned())
        }
        SourceState::Held => Some("Held at the submission cluster by bstop".to_owned()),
        SourceState::HeldThere { .. } => Some("Held at the execution cluster by bstop".to_owned()),
        _ => None,
    };
    let options = job.spec.options();
    JobRow {
        job_id: job.id,
        user: job.spec.user.to_string(),
        stat: stat.to_owned(),
        queue: forwarder
            .send_queue_name(job.send_queue_index())
            .to_string(),
        from_host: forwarder.cluster().to_string(),
        exec_host,
        job_name: job.spec.name.to_string(),
        submit_time: secs(job.submitted_at),
        slots: job.spec.slots,
        forwarded_to,
        forwarded_from: None,
        pending_reason,
        run_time: job.spec.run_time.as_secs_f64(),
        run_limit: job.spec.run_limit.map(|limit| limit.as_secs_f64()),
        resources: job.spec.resources.clone(),
        start_time: None,
        finish_time: None,
        output_file: options.output_file,
        error_file: options.error_file,
        user_priority: options.user_priority,
    }
}
