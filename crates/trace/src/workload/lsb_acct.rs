//! A workload read from LSF's accounting log (`[[workload]] lsb_acct =
//! "FILE"`, `mcfed replay lsb.acct`): each `JOB_FINISH` record becomes a
//! submission.
//!
//! **Order.** LSF logs a job when it finishes, so a long job comes after
//! shorter ones submitted later. The records are held in a window of
//! [`AcctMapping::window`] jobs (default [`DEFAULT_WINDOW`]) and let out
//! earliest submission first, as the SWF reader sorts; a job submitted
//! before one the window already let out cannot be put in its place and
//! is skipped, counted (`out_of_order`) with the first such line named.
//! No time is changed. Time zero of the run is [`AcctMapping::epoch`]
//! (a scenario sets it to the earliest submission in the first window of
//! any of its logs, so that one log per cluster keeps the clusters'
//! times together), else the first job let out.
//!
//! **Mapping.**
//! - submission time: `submitTime`, from the first job's;
//! - slots: `numProcessors`; run time: the original run's end −
//!   `startTime` (a job that never started, or ran no time, is skipped:
//!   `no_run_time`); run limit: `runLimit`;
//! - `-R`: the boolean resources of its `select[...]` and the memory and
//!   swap of its `rusage[...]` ([`crate::lsb_acct::requirements`]);
//! - queue: `queue_map` by the record's queue name (→ `queue` or
//!   `queue@cluster`), else the record's own queue when the workload's
//!   cluster has one of that name, else the workload's `queue`;
//! - user: the `user` template, `{user}` the record's user name (default
//!   `{user}`; a record without one is `u{uid}`), `{uid}` its user ID;
//! - name: `WORKLOAD-JOBID` (`WORKLOAD-JOBID[INDEX]` for an array element);
//! - MultiCluster: a job forwarded to this log's cluster from another
//!   cluster of the federation is that cluster's job, replayed from that
//!   cluster's own log: skipped here (`forwarded_in`). Every other record
//!   (local, forwarded from here, or from a cluster the federation does
//!   not have) is submitted at the workload's cluster, whose send queues
//!   forward as the emulated federation decides.
//!
//! **Bounds.** A record whose slots or run time are beyond mcfed's bounds
//! is skipped (`out_of_bounds`); so is one whose job is refused by
//! [`JobSpec::check_bounds`], as every job that enters is (a user name,
//! a resource or a reservation name too long, too many resources), the
//! first such named by file, line and the record's field.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::bounds::{
    JOB_DURATION, JOB_NAME, JOB_SLOTS, RESOURCE_NAME, SCENARIO_TIME, USER_NAME,
};
use mcfed_protocol::{ClusterName, JobOptions, JobSpec, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

use super::{QueueTarget, Skipped, Submission, WorkloadSpec};
use crate::lsb_acct::{AcctError, AcctReader, JobFinish, requirements};
use crate::swf::SwfError;
use crate::swf::order::{Held, Submitted, Window};

/// Records held at once to put an lsb.acct in submit order, by default
/// (a few tens of MB).
pub const DEFAULT_WINDOW: usize = 100_000;

/// The most records a window may hold.
pub const MAX_WINDOW: usize = 10_000_000;

/// How an lsb.acct is mapped onto the federation (validated with the
/// scenario).
#[derive(Clone, Debug, PartialEq)]
pub struct AcctMapping {
    /// LSF queue name → queue (and cluster).
    pub queue_map: Vec<(String, QueueTarget)>,
    /// The queues of the workload's cluster (local and send): a record's
    /// queue of one of these names is kept.
    pub queues: Vec<String>,
    /// Every cluster of the federation.
    pub clusters: Vec<ClusterName>,
    /// Records held at once to put them in submit order.
    pub window: usize,
    /// The Unix time that is time zero of the run (`None`: the first job
    /// let out).
    pub epoch: Option<i64>,
}

impl Default for AcctMapping {
    fn default() -> Self {
        AcctMapping {
            queue_map: Vec::new(),
            queues: Vec::new(),
            clusters: Vec::new(),
            window: DEFAULT_WINDOW,
            epoch: None,
        }
    }
}

/// A job mapped and waiting in the window for its turn.
struct Pending {
    /// Its `submitTime`.
    submit: i64,
    /// Its LSF job ID (for messages).
    job_id: i64,
    /// The submission, its time set when it is let out: boxed, so the
    /// window's heap moves a pointer, not the whole submission, at each
    /// step of a sift (an lsb.acct comes in finish order, so most of its
    /// records pass through the heap).
    submission: Box<Submission>,
}

impl Submitted for Pending {
    fn submitted(&self) -> f64 {
        self.submit as f64
    }
}

/// Why a record was not submitted.
enum Skip {
    ForwardedIn,
    NoRunTime,
    NoProcessors,
    /// Beyond mcfed's bounds: with the field and why, for a job the
    /// bounds refuse as a whole ([`JobSpec::check_bounds`]).
    OutOfBounds(Option<String>),
}

/// An lsb.acct being read, mapped and put in submit order.
pub(crate) struct AcctSource {
    file: String,
    reader: AcctReader<Box<dyn BufRead + Send>>,
    window: Window<Pending>,
    size: usize,
    queue_map: FxHashMap<String, (Option<ClusterName>, Arc<str>)>,
    queues: FxHashMap<String, Arc<str>>,
    clusters: FxHashSet<String>,
    users: FxHashMap<(String, i64), Arc<str>>,
    /// Where job names are written (one buffer for every job).
    name_buffer: String,
    /// The first job let out: its submit time is time zero.
    base: Option<i64>,
    /// The latest submit time let out, and its line.
    latest: Option<(i64, u64)>,
    /// Nothing more is read (the end, or the workload's limit).
    drained: bool,
}

impl AcctSource {
    /// Opens the log at `path` (an error now, on the caller's thread).
    pub(crate) fn open(path: &Path, mapping: &AcctMapping) -> Result<Self, SwfError> {
        let reader = crate::lsb_acct::open(path).map_err(|error| match error {
            AcctError::NotAFile(error) => SwfError::NotAFile(error),
            AcctError::Io { file, source } => SwfError::Io { file, source },
            other => SwfError::Io {
                file: path.display().to_string(),
                source: std::io::Error::other(other.to_string()),
            },
        })?;
        Ok(AcctSource {
            file: path.display().to_string(),
            reader,
            window: Window::default(),
            size: mapping.window.clamp(1, MAX_WINDOW),
            queue_map: mapping
                .queue_map
                .iter()
                .map(|(name, target)| {
                    let queue = Arc::from(target.queue.as_str());
                    (name.clone(), (target.cluster.clone(), queue))
                })
                .collect(),
            queues: mapping
                .queues
                .iter()
                .map(|queue| (queue.clone(), Arc::from(queue.as_str())))
                .collect(),
            clusters: mapping.clusters.iter().map(ToString::to_string).collect(),
            users: FxHashMap::default(),
            name_buffer: String::new(),
            base: mapping.epoch,
            latest: None,
            drained: false,
        })
    }

    /// The next submission in submit order, counting what is skipped in
    /// `skipped` (the first error in `first_error`) and the records read
    /// in `read`; `None` at the end.
    pub(crate) fn next_submission(
        &mut self,
        spec: &WorkloadSpec,
        skipped: &mut Skipped,
        first_error: &mut Option<String>,
        read: &mut u64,
    ) -> Option<Submission> {
        loop {
            self.fill(spec, skipped, first_error, read);
            let held = self.window.pop()?;
            let Pending {
                submit,
                job_id,
                submission,
            } = held.record;
            let mut submission = *submission;
            let earlier = self
                .latest
                .or(self.base.map(|base| (base, 0)))
                .filter(|&(latest, _)| submit < latest);
            if let Some((latest, line)) = earlier {
                skipped.out_of_order += 1;
                let after = if line == 0 {
                    "time zero of the run".to_owned()
                } else {
                    format!(
                        "{latest} (line {line}), a job already let out of the sorting window of {} records",
                        self.size
                    )
                };
                first_error.get_or_insert_with(|| {
                    format!(
                        "{}:{}: job {job_id}: submitted at {submit}, before {after}: skipped",
                        self.file, held.line
                    )
                });
                continue;
            }
            self.latest = Some((submit, held.line));
            let base = *self.base.get_or_insert(submit);
            let offset_ms = (submit - base) as f64 * 1000.0 * spec.time_scale;
            if offset_ms > SCENARIO_TIME.max as f64 {
                skipped.out_of_bounds += 1;
                continue;
            }
            submission.at = SimTime::from_millis(offset_ms.round() as u64);
            return Some(submission);
        }
    }

    /// Reads records into the window until it is full or the log ends.
    fn fill(
        &mut self,
        spec: &WorkloadSpec,
        skipped: &mut Skipped,
        first_error: &mut Option<String>,
        read: &mut u64,
    ) {
        while !self.drained && self.window.len() < self.size {
            if spec.limit.is_some_and(|limit| *read >= limit) {
                self.drained = true;
                break;
            }
            match self.reader.next() {
                None => self.drained = true,
                Some(Err(error)) => {
                    skipped.malformed += 1;
                    if let Some(suppressed) = super::SKIPPED_LINES.admit("lsb.acct record skipped")
                    {
                        tracing::warn!(%error, suppressed, "lsb.acct record skipped");
                    }
                    first_error.get_or_insert_with(|| error.to_string());
                }
                Some(Ok(job)) => {
                    *read += 1;
                    match self.map(&job, spec) {
                        Ok(submission) => self.window.push(Held {
                            record: Pending {
                                submit: job.submit_time,
                                job_id: job.job_id,
                                submission: Box::new(submission),
                            },
                            line: self.reader.line(),
                        }),
                        Err(Skip::ForwardedIn) => skipped.forwarded_in += 1,
                        Err(Skip::NoRunTime) => skipped.no_run_time += 1,
                        Err(Skip::NoProcessors) => skipped.no_processors += 1,
                        Err(Skip::OutOfBounds(why)) => {
                            skipped.out_of_bounds += 1;
                            if let Some(why) = why {
                                first_error.get_or_insert_with(|| {
                                    let (file, line) = (&self.file, self.reader.line());
                                    format!("{file}:{line}: job {}: {why}: skipped", job.job_id)
                                });
                            }
                        }
                    }
                }
            }
            skipped.other_records = self.reader.skipped().total();
        }
        if self.drained && self.window.len() == 0 && self.reader.skipped().total() > 0 {
            tracing::debug!(reasons = ?self.reader.skipped().reasons(), "lsb.acct records skipped");
        }
    }

    /// The submission `job` makes (its time set later), or why none.
    fn map(&mut self, job: &JobFinish, spec: &WorkloadSpec) -> Result<Submission, Skip> {
        if job
            .submission_cluster()
            .is_some_and(|from| from != spec.cluster.as_str() && self.clusters.contains(from))
        {
            return Err(Skip::ForwardedIn);
        }
        let run = job
            .original_run_time()
            .filter(|&seconds| seconds > 0)
            .ok_or(Skip::NoRunTime)?;
        let slots = job.slots().ok_or(Skip::NoProcessors)?;
        let run_time = Duration::from_secs(run);
        if !JOB_SLOTS.holds(u64::from(slots)) || !JOB_DURATION.holds_duration(run_time) {
            return Err(Skip::OutOfBounds(None));
        }
        let (cluster, queue) = match self.queue_map.get(&job.queue) {
            Some((cluster, queue)) => (
                cluster.clone().unwrap_or_else(|| spec.cluster.clone()),
                Arc::clone(queue),
            ),
            None => (
                spec.cluster.clone(),
                self.queues
                    .get(&job.queue)
                    .map_or_else(|| Arc::from(spec.queue.as_str()), Arc::clone),
            ),
        };
        let index = (job.array_index > 0).then_some(job.array_index);
        let name = super::job_name(&mut self.name_buffer, &spec.name, job.job_id, index);
        let user = self.user(job, &spec.user);
        let mut job_spec = JobSpec::simple(name, user, run_time);
        job_spec.slots = slots;
        job_spec.run_limit = job
            .run_limit_seconds()
            .map(Duration::from_secs)
            .filter(|limit| JOB_DURATION.holds_duration(*limit));
        let wanted = requirements(job.requirements().unwrap_or_default());
        job_spec.resources = wanted.resources;
        if let Some(name) = job.reservation() {
            job_spec
                .resources
                .push(crate::lsb_acct::reservation_word(name));
        }
        job_spec.set_options(JobOptions {
            mem_request_mb: wanted.mem_mb,
            swap_request_mb: wanted.swap_mb,
            ..JobOptions::default()
        });
        // The one check every job that enters passes (as the SWF reader's
        // jobs do): a user name or a resource past its bound is refused
        // here, named by its field, not by the scheduler later.
        job_spec.check_bounds().map_err(|why| {
            Skip::OutOfBounds(Some(format!(
                "field {}: {why}",
                field_out_of_bounds(&job_spec, job)
            )))
        })?;
        Ok(Submission {
            at: SimTime::ZERO,
            cluster,
            queue,
            forwarded: false,
            spec: job_spec,
        })
    }

    /// The user the template makes of `job`'s (shared per user).
    fn user(&mut self, job: &JobFinish, template: &str) -> Arc<str> {
        let key = (job.user_name.clone(), job.user_id);
        self.users
            .entry(key)
            .or_insert_with(|| {
                let name = if job.user_name.is_empty() {
                    format!("u{}", job.user_id)
                } else {
                    job.user_name.clone()
                };
                template
                    .replace("{user}", &name)
                    .replace("{uid}", &job.user_id.to_string())
                    .into()
            })
            .clone()
    }
}

/// The record's field that made the part of `spec` out of bounds (the
/// first [`JobSpec::check_bounds`] refuses): its user (`userName`), its
/// name (`jobId`, after the workload's name), its reservation (`rsvId`)
/// or its resources (`resReq`).
fn field_out_of_bounds(spec: &JobSpec, job: &JobFinish) -> &'static str {
    let reservation = job.reservation().map(crate::lsb_acct::reservation_word);
    if USER_NAME.check(&spec.user).is_err() {
        "userName"
    } else if JOB_NAME.check(&spec.name).is_err() {
        "jobId"
    } else if reservation.is_some_and(|word| RESOURCE_NAME.check(&word).is_err()) {
        "rsvId"
    } else {
        "resReq"
    }
}
