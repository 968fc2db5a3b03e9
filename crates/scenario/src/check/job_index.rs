//! Every job of a scenario by name, for the entries that name one
//! (`[[action]]`, `[[expect]]`): a submission, a job present at start, or a
//! workload's job.

use mcfed_protocol::ClusterName;
use rustc_hash::FxHashMap;

use crate::model::Submission;

/// Every job of a scenario by name.
pub(crate) struct JobIndex<'a> {
    submissions: &'a [Submission],
    submitted: FxHashMap<String, usize>,
    initial: FxHashMap<String, Vec<ClusterName>>,
    workloads: Vec<WorkloadJobs>,
}

/// The jobs of a `[[workload]]`, named `NAME-JOBNUMBER` (the trace is not
/// read at validation: any job number is taken).
pub(crate) struct WorkloadJobs {
    /// The workload's name.
    pub(crate) name: String,
    /// Its cluster.
    pub(crate) cluster: ClusterName,
    /// Its queue.
    pub(crate) queue: String,
    /// Whether that queue is a send queue.
    pub(crate) forwarded: bool,
    /// Whether `queue_map` or `partition_map` may send a job elsewhere.
    pub(crate) mapped: bool,
}

/// What a job name refers to.
pub(crate) enum JobRef<'a> {
    /// A `[[submit]]`'s job.
    Submitted(&'a Submission),
    /// A job present at start, in this cluster.
    Initial(ClusterName),
    /// A job of this workload.
    Workload(&'a WorkloadJobs),
}

impl<'a> JobIndex<'a> {
    /// Indexes `submissions` (in their final order), the jobs present at
    /// start and the workloads' jobs.
    pub(crate) fn new(
        submissions: &'a [Submission],
        initial: FxHashMap<String, Vec<ClusterName>>,
        workloads: Vec<WorkloadJobs>,
    ) -> Self {
        let submitted = submissions
            .iter()
            .enumerate()
            .map(|(index, submission)| (submission.spec.name.to_string(), index))
            .collect();
        JobIndex {
            submissions,
            submitted,
            initial,
            workloads,
        }
    }

    /// The job named `name`, or why there is not exactly one.
    pub(crate) fn find(&self, name: &str) -> Result<JobRef<'_>, String> {
        let initial = self.initial.get(name).map_or(&[][..], Vec::as_slice);
        match (self.submitted.get(name), initial) {
            (Some(&index), []) => Ok(JobRef::Submitted(&self.submissions[index])),
            (None, [cluster]) => Ok(JobRef::Initial(cluster.clone())),
            (None, []) => self
                .workload_job(name)
                .map(JobRef::Workload)
                .ok_or_else(|| format!("no job is named `{name}`")),
            _ => Err(format!(
                "job name `{name}` is used by more than one job; name the job uniquely"
            )),
        }
    }

    /// The workload whose jobs are named like `name` (`NAME-JOBNUMBER`).
    fn workload_job(&self, name: &str) -> Option<&WorkloadJobs> {
        let (prefix, number) = name.rsplit_once('-')?;
        if number.is_empty() || !number.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        self.workloads
            .iter()
            .find(|workload| workload.name == prefix)
    }
}
