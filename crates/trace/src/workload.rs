//! Workloads from trace files (`[[workload]]`): an SWF trace or an LSF
//! accounting log (lsb.acct) read as a stream and mapped onto a
//! scenario's clusters and queues, one [`Submission`] at a time, so a
//! million-job trace is never in memory.
//!
//! SWF mapping: a job goes to the workload's `cluster` and `queue`, unless
//! its SWF queue number is in `queue_map` (→ `queue` or `queue@cluster`)
//! or its partition number in `partition_map` (→ cluster). Slots are the
//! requested processors (field 8), else the allocated ones (field 5); the
//! run time is field 4; the requested time (field 9) becomes the job's run
//! limit. Jobs with no run time or no processors are skipped and counted
//! by reason.
//!
//! lsb.acct mapping: see [`lsb_acct`] (records come in finish order and
//! are put in submit order in a bounded window).

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::bounds::{JOB_NAME, USER_NAME};
use mcfed_protocol::{ClusterName, JobSpec, SimTime};
use rustc_hash::FxHashMap;

use crate::swf::{Header, SwfError, SwfReader, SwfRecord};

/// "trace line skipped" (and "lsb.acct record skipped") warnings: one line per interval, with the count of
/// those not logged (a damaged trace may have millions of such lines).
pub(crate) static SKIPPED_LINES: mcfed_protocol::LogLimit =
    mcfed_protocol::LogLimit::new(std::time::Duration::from_secs(10));

pub mod lsb_acct;

pub use lsb_acct::AcctMapping;

/// A job submitted during the run.
#[derive(Clone, Debug)]
pub struct Submission {
    /// When.
    pub at: SimTime,
    /// To which cluster.
    pub cluster: ClusterName,
    /// To which queue (shared: a workload's jobs all name a few queues).
    pub queue: Arc<str>,
    /// Whether the queue is a send queue of the cluster (its member's
    /// route), known at validation for the expectations about the job;
    /// a workload's jobs leave it `false` (the member routes each job
    /// when it is submitted).
    pub forwarded: bool,
    /// The job.
    pub spec: JobSpec,
}

/// Where a mapped job goes: a queue, at a given cluster or the workload's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueTarget {
    /// The queue.
    pub queue: String,
    /// The cluster, if not the workload's (or the partition's).
    pub cluster: Option<ClusterName>,
}

/// What a workload's trace file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum TraceFormat {
    /// The Standard Workload Format (`swf = "FILE"`).
    #[default]
    Swf,
    /// LSF's accounting log (`lsb_acct = "FILE"`), mapped by queue name.
    LsbAcct(AcctMapping),
}

/// A `[[workload]]` entry, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    /// The workload's name (job names are `NAME-JOBNUMBER`).
    pub name: String,
    /// The trace file, resolved against the scenario file's directory
    /// (an SWF trace or an lsb.acct, as `format` says).
    pub swf: PathBuf,
    /// What the trace file holds.
    pub format: TraceFormat,
    /// The default cluster.
    pub cluster: ClusterName,
    /// The default queue.
    pub queue: String,
    /// SWF queue number → queue (and cluster).
    pub queue_map: Vec<(i64, QueueTarget)>,
    /// SWF partition number → cluster.
    pub partition_map: Vec<(i64, ClusterName)>,
    /// The user name template: `{uid}` and `{gid}` are replaced.
    pub user: String,
    /// Read only the first this many jobs.
    pub limit: Option<u64>,
    /// Multiplies submission times (below 1: denser arrivals).
    pub time_scale: f64,
}

/// Jobs of a workload that were not submitted, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    /// No run time (field 4 unknown, or not above zero).
    pub no_run_time: u64,
    /// No processors (fields 8 and 5 unknown, or not above zero).
    pub no_processors: u64,
    /// Malformed lines.
    pub malformed: u64,
    /// Processors or run time beyond mcfed's bounds
    /// ([`mcfed_protocol::bounds`]).
    #[serde(default)]
    pub out_of_bounds: u64,
    /// lsb.acct: records other than `JOB_FINISH`, or of a version the
    /// reader does not know.
    #[serde(default)]
    pub other_records: u64,
    /// lsb.acct: jobs forwarded here from another cluster of the
    /// federation (its own log submits them).
    #[serde(default)]
    pub forwarded_in: u64,
    /// lsb.acct: jobs submitted before one already let out of the sorting
    /// window (the log is in finish order; see [`AcctMapping::window`]).
    #[serde(default)]
    pub out_of_order: u64,
}

impl Skipped {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.no_run_time
            + self.no_processors
            + self.malformed
            + self.out_of_bounds
            + self.other_records
            + self.forwarded_in
            + self.out_of_order
    }
}

/// Where a workload's submissions come from.
enum Source {
    Swf(SwfReader<Box<dyn BufRead + Send>>),
    Acct(Box<lsb_acct::AcctSource>),
}

/// A workload being read (its submissions' `forwarded` is not worked out:
/// the member routes each job when it is submitted): yields its submissions in trace order.
pub struct WorkloadStream {
    spec: Arc<WorkloadSpec>,
    source: Source,
    /// An lsb.acct has no header comments.
    no_header: Header,
    read: u64,
    skipped: Skipped,
    /// Each user the template makes, shared by its jobs, and whether it
    /// is plain text ([`mcfed_protocol::bounds::TextBound::holds_printable_ascii`]),
    /// found once.
    users: FxHashMap<(i64, i64), (Arc<str>, bool)>,
    /// Whether the workload's name is printable ASCII: then so is every
    /// job name made of it, the job number's digits and a dash.
    plain_name: bool,
    queue_map: FxHashMap<i64, (ClusterName, Arc<str>)>,
    partition_map: FxHashMap<i64, ClusterName>,
    default_queue: Arc<str>,
    first_error: Option<String>,
    /// Where each job's name is built (`NAME-JOBNUMBER`), reused.
    name_buffer: String,
}

impl WorkloadStream {
    /// Opens the workload's trace.
    pub fn open(spec: Arc<WorkloadSpec>) -> Result<Self, SwfError> {
        let source = match &spec.format {
            TraceFormat::Swf => Source::Swf(crate::swf::open(&spec.swf)?),
            TraceFormat::LsbAcct(mapping) => {
                Source::Acct(Box::new(lsb_acct::AcctSource::open(&spec.swf, mapping)?))
            }
        };
        let queue_map = spec
            .queue_map
            .iter()
            .map(|(number, target)| {
                let cluster = target
                    .cluster
                    .clone()
                    .unwrap_or_else(|| spec.cluster.clone());
                (*number, (cluster, Arc::from(target.queue.as_str())))
            })
            .collect();
        let partition_map = spec.partition_map.iter().cloned().collect();
        Ok(WorkloadStream {
            plain_name: JOB_NAME.holds_printable_ascii(&spec.name),
            default_queue: Arc::from(spec.queue.as_str()),
            spec,
            source,
            no_header: Header::default(),
            read: 0,
            skipped: Skipped::default(),
            users: FxHashMap::default(),
            queue_map,
            partition_map,
            first_error: None,
            name_buffer: String::new(),
        })
    }

    /// The trace's header comments (whole once the first job is read;
    /// none for an lsb.acct).
    pub fn header(&self) -> &Header {
        match &self.source {
            Source::Swf(reader) => reader.header(),
            Source::Acct(_) => &self.no_header,
        }
    }

    /// Jobs skipped so far.
    pub fn skipped(&self) -> Skipped {
        self.skipped
    }

    /// The first malformed line, if any (`file:line: ...`).
    pub fn first_error(&self) -> Option<&str> {
        self.first_error.as_deref()
    }

    /// The workload's specification.
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// The user the template makes of `record`'s (shared per user), and
    /// whether it is plain text.
    fn user(&mut self, record: &SwfRecord) -> (Arc<str>, bool) {
        let key = (record.user_id, record.group_id);
        let template = &self.spec.user;
        let (user, plain) = self.users.entry(key).or_insert_with(|| {
            let user = template
                .replace("{uid}", &record.user_id.to_string())
                .replace("{gid}", &record.group_id.to_string());
            let plain = USER_NAME.holds_printable_ascii(&user);
            (user.into(), plain)
        });
        (Arc::clone(user), *plain)
    }

    fn submission(&mut self, record: &SwfRecord) -> Option<Submission> {
        if record.run_time.is_nan() || record.run_time <= 0.0 {
            self.skipped.no_run_time += 1;
            return None;
        }
        let Some(slots) = record.processors() else {
            self.skipped.no_processors += 1;
            return None;
        };
        // The same bounds as a scenario's jobs and `bsub`'s options.
        let runs = Duration::try_from_secs_f64(record.run_time).unwrap_or(Duration::MAX);
        if !mcfed_protocol::bounds::JOB_SLOTS.holds(u64::from(slots))
            || !mcfed_protocol::bounds::JOB_DURATION.holds_duration(runs)
        {
            self.skipped.out_of_bounds += 1;
            return None;
        }
        let (mut cluster, queue) = match self.queue_map.get(&record.queue) {
            Some((cluster, queue)) => (cluster.clone(), Arc::clone(queue)),
            None => (self.spec.cluster.clone(), Arc::clone(&self.default_queue)),
        };
        if let Some(partition) = self.partition_map.get(&record.partition) {
            cluster = partition.clone();
        }
        let (user, plain_user) = self.user(record);
        // To the millisecond, like every emulated time. Whole milliseconds
        // from 0 to 1e15 convert exactly through `i64` (one instruction;
        // to `u64` takes a dozen).
        let seconds = |value: f64| {
            Duration::from_millis(round_up_half(value.clamp(0.0, 1e12) * 1000.0) as i64 as u64)
        };
        let name = job_name(
            &mut self.name_buffer,
            &self.spec.name,
            record.job_number,
            None,
        );
        let plain_name = self.plain_name && name.len() <= JOB_NAME.max_bytes;
        let mut spec = JobSpec::simple(name, user, seconds(record.run_time));
        spec.slots = slots;
        spec.run_limit = (record.requested_time > 0.0).then(|| seconds(record.requested_time));
        // The one check every job that enters passes (its name and user
        // too: a workload's name and a trace's users make them), their
        // text read once per workload and per user when it is plain.
        let checked = if plain_name && plain_user {
            spec.check_bounds_of_plain_text()
        } else {
            spec.check_bounds()
        };
        if checked.is_err() {
            self.skipped.out_of_bounds += 1;
            return None;
        }
        let at_ms = round_up_half(record.submit_time.max(0.0) * self.spec.time_scale * 1000.0);
        Some(Submission {
            at: SimTime::from_millis(at_ms.min(u64::MAX as f64 / 2.0) as u64),
            cluster,
            queue,
            forwarded: false,
            spec,
        })
    }
}

/// `value.round()`, for the positive values below 2^52 without the library
/// call `f64::round` is on x86-64 (three per job of a trace): the same
/// result, by exact arithmetic (there the whole part and the fraction are
/// exact; from 2^52 up every `f64` is whole).
fn round_up_half(value: f64) -> f64 {
    const WHOLE_FROM: f64 = 4_503_599_627_370_496.0; // 2^52
    if !(value > 0.0 && value < WHOLE_FROM) {
        // Zeros (keeping their sign), negatives, NaN and the large.
        return value.round();
    }
    // Through `i64`, which x86-64 converts in one instruction each way
    // (`u64` takes a dozen).
    let whole = value as i64 as f64;
    if value - whole >= 0.5 {
        whole + 1.0
    } else {
        whole
    }
}

/// `WORKLOAD-NUMBER`, with `[INDEX]` after it for an element of a job
/// array, built in `buffer` without the formatting machinery (a
/// million-job replay names a million jobs).
pub(crate) fn job_name(
    buffer: &mut String,
    workload: &str,
    number: i64,
    index: Option<i64>,
) -> Arc<str> {
    buffer.clear();
    buffer.push_str(workload);
    buffer.push('-');
    buffer.push_str(itoa::Buffer::new().format(number));
    if let Some(index) = index {
        buffer.push('[');
        buffer.push_str(itoa::Buffer::new().format(index));
        buffer.push(']');
    }
    Arc::from(buffer.as_str())
}

impl Iterator for WorkloadStream {
    type Item = Submission;

    fn next(&mut self) -> Option<Submission> {
        if let Source::Acct(source) = &mut self.source {
            return source.next_submission(
                &self.spec,
                &mut self.skipped,
                &mut self.first_error,
                &mut self.read,
            );
        }
        loop {
            if self.spec.limit.is_some_and(|limit| self.read >= limit) {
                return None;
            }
            let Source::Swf(reader) = &mut self.source else {
                return None;
            };
            let record = match reader.next()? {
                Ok(record) => record,
                Err(error) => {
                    self.skipped.malformed += 1;
                    if let Some(suppressed) = SKIPPED_LINES.admit("trace line skipped") {
                        tracing::warn!(%error, suppressed, "trace line skipped");
                    }
                    self.first_error.get_or_insert_with(|| error.to_string());
                    continue;
                }
            };
            self.read += 1;
            if let Some(submission) = self.submission(&record) {
                return Some(submission);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::round_up_half;

    #[test]
    fn rounding_equals_the_library_s_on_halves_edges_and_a_sweep() {
        let below_half = 0.5 - f64::EPSILON / 4.0;
        let mut values = vec![
            0.0,
            -0.0,
            below_half,
            0.5,
            1.5,
            2.5,
            1e15 + 0.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.1e18,
            -2.5,
            f64::INFINITY,
            f64::MAX,
        ];
        let mut x = 0.001_f64;
        while x < 1e16 {
            values.extend([x, x + 0.5, x * 1000.0 + 0.499_999, (x * 7.3).floor() + 0.5]);
            x *= 1.37;
        }
        for value in values {
            assert_eq!(
                round_up_half(value).to_bits(),
                value.round().to_bits(),
                "{value:e}"
            );
        }
        assert!(round_up_half(f64::NAN).is_nan());
    }
}
