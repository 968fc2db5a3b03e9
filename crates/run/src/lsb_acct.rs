//! lsb.acct of an emulated run (`--lsb-acct DIR`): one log per cluster,
//! `DIR/CLUSTER/logdir/lsb.acct` as LSF lays out LSB_SHAREDIR, with a
//! `JOB_FINISH` record in LSF 10.1's layout
//! ([`mcfed_trace::lsb_acct::write_job_finish`]) for every job that
//! finishes at that cluster (DONE, or EXIT: killed, run limit), written as
//! it finishes, so bacct-style parsers read what the run did.
//!
//! What each record holds (the rest LSF's "unavailable" values):
//! - times: emulated seconds after the run's epoch ([`epoch_of`]: the
//!   replayed lsb.acct's own time zero, so a replayed history keeps its
//!   dates; else [`EPOCH`]) — submission: the job's first submission
//!   anywhere; start: its last start; end: the record's time; the run
//!   time is end − start;
//! - the job's id here, its name (`-J`, and the `SUB_JOB_NAME` and
//!   `SUB_QUEUE` option bits), user, queue, slots (`-n`, its most slots for
//!   a resizable job), run limit, `-R` (its boolean resources as
//!   `select[...]`, its memory and swap as `rusage[...]`, in both the
//!   requested and the effective requirement);
//! - the execution hosts, one per slot, in the order it was placed (also
//!   as the allocated slots), its CPU time (run time × slots × its CPU
//!   use) and its memory;
//! - status DONE (64) or EXIT (32), with the exit code and `exitInfo` of a
//!   kill (130, TERM_OWNER), a run limit (140, TERM_RUNLIMIT) or its closed
//!   advance reservation's end (130, TERM_DEADLINE);
//! - the advance reservation it ran in (`bsub -U`) as `rsvId`, not among
//!   its `select[...]` words;
//! - for a job forwarded here: the submission cluster and its id there,
//!   this cluster and its id here, and when it arrived.
//!
//! A job that finishes at another cluster is logged by that cluster (a
//! submission cluster logs none of the jobs it forwarded). A job that
//! never started has no execution host; its user and requirements come
//! from the cluster's job history when the cluster keeps one, else they
//! are empty. A string longer than lsb.acct's readers take is cut (at a
//! character boundary). The first write error stops every log and is
//! reported with the run's output.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use mcfed_cluster::{JobId, JobOrigin, Transition};
use mcfed_federation::Member;
use mcfed_protocol::{ClusterName, JobEvent, JobSpec, SimTime};
use mcfed_trace::lsb_acct::{
    JobFinish, MAX_FIELD_BYTES, Requirements, STATUS_DONE, STATUS_EXIT, write_job_finish,
};
use rustc_hash::FxHashMap;

/// The epoch time of emulated time zero in the logs of a run that
/// replays no lsb.acct: 2023-11-14 22:13:20 UTC (the synthetic logs'
/// default too), so times read as dates.
pub const EPOCH: i64 = 1_700_000_000;

/// The Unix time of emulated time zero for `scenario`'s logs: that of the
/// lsb.acct workloads it replays, else [`EPOCH`].
pub fn epoch_of(scenario: &mcfed_scenario::Scenario) -> i64 {
    scenario
        .workloads
        .iter()
        .find_map(|workload| match &workload.format {
            mcfed_trace::TraceFormat::LsbAcct(mapping) => mapping.epoch,
            mcfed_trace::TraceFormat::Swf => None,
        })
        .unwrap_or(EPOCH)
}

/// `bsub -J` was given (lsbatch.h's SUB_JOB_NAME).
const SUB_JOB_NAME: i64 = 0x01;
/// `bsub -q` was given (SUB_QUEUE).
const SUB_QUEUE: i64 = 0x02;
/// exitInfo of a job killed by its owner (TERM_OWNER).
const TERM_OWNER: i32 = 14;
/// exitInfo of a job killed at its run limit (TERM_RUNLIMIT).
const TERM_RUNLIMIT: i32 = 5;
/// exitInfo of a job killed at its termination time (TERM_DEADLINE): the
/// end of the closed advance reservation it ran in, which LSF treats as
/// the job's termination time (`bmod -t` before the end keeps it running).
const TERM_DEADLINE: i32 = 6;

/// What a record needs from a job's start.
struct Started {
    hosts: Vec<String>,
    spec: JobSpec,
}

impl Started {
    /// What `job`, placed at `cluster`, started with: a host per slot.
    fn of(cluster: &mcfed_cluster::Cluster, job: &mcfed_cluster::Job) -> Self {
        let hosts = job
            .placement
            .iter()
            .flat_map(|place| {
                std::iter::repeat_n(
                    cluster.host_name(place.host).to_owned(),
                    place.slots as usize,
                )
            })
            .collect();
        Started {
            hosts,
            spec: job.spec.clone(),
        }
    }
}

/// One cluster's log.
struct ClusterLog {
    out: BufWriter<File>,
    /// The running jobs' facts, by id.
    started: FxHashMap<JobId, Started>,
}

/// The logs of a run, one per cluster.
pub struct AcctLogs {
    logs: FxHashMap<ClusterName, ClusterLog>,
    epoch: i64,
    /// Flush after every record (a cluster process, which may be killed).
    flush_each: bool,
    error: Option<String>,
}

/// Where `cluster`'s log goes under `dir`.
pub fn log_path(dir: &Path, cluster: &str) -> PathBuf {
    dir.join(cluster).join("logdir").join("lsb.acct")
}

impl AcctLogs {
    /// Creates (or empties) the log of every one of `clusters` under
    /// `dir`, emulated time zero at Unix time `epoch`.
    pub fn create<'a>(
        dir: &Path,
        clusters: impl IntoIterator<Item = &'a ClusterName>,
        epoch: i64,
    ) -> io::Result<Self> {
        Self::open(dir, clusters, epoch, false)
    }

    /// Opens the log of every one of `clusters` under `dir` to append to
    /// it, as LSF does (a cluster process restarted with its state goes on
    /// with the log it wrote before), emulated time zero at Unix time
    /// `epoch`. Records are written out as soon as they are made.
    pub fn append<'a>(
        dir: &Path,
        clusters: impl IntoIterator<Item = &'a ClusterName>,
        epoch: i64,
    ) -> io::Result<Self> {
        Ok(Self::open(dir, clusters, epoch, true)?.flushing_each_record())
    }

    fn open<'a>(
        dir: &Path,
        clusters: impl IntoIterator<Item = &'a ClusterName>,
        epoch: i64,
        append: bool,
    ) -> io::Result<Self> {
        let mut logs = FxHashMap::default();
        for cluster in clusters {
            let path = log_path(dir, cluster.as_str());
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(append)
                .truncate(!append)
                .open(&path)
                .map_err(|error| {
                    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
                })?;
            logs.insert(
                cluster.clone(),
                ClusterLog {
                    out: BufWriter::new(file),
                    started: FxHashMap::default(),
                },
            );
        }
        Ok(AcctLogs {
            logs,
            epoch,
            flush_each: false,
            error: None,
        })
    }

    /// Writes each record out as soon as it is made (for a process that
    /// may be stopped at any time), rather than in buffered blocks.
    pub fn flushing_each_record(mut self) -> Self {
        self.flush_each = true;
        self
    }

    /// Takes the jobs already running at `member` (one restored from its
    /// state) as started, so their records, when they finish, name their
    /// execution hosts.
    pub fn adopt_running(&mut self, member: &Member) {
        let Some(log) = self.logs.get_mut(member.name()) else {
            return;
        };
        let cluster = member.cluster();
        for job in cluster.jobs().filter(|job| !job.placement.is_empty()) {
            log.started.insert(job.id, Started::of(cluster, job));
        }
    }

    /// The first write error, if writing stopped.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Records `member`'s transitions: what a start places, a record for
    /// each job that finishes.
    pub fn transitions(&mut self, member: &Member, transitions: &[Transition]) {
        if self.error.is_some() {
            return;
        }
        let Some(log) = self.logs.get_mut(member.name()) else {
            return;
        };
        for transition in transitions {
            if let Err(error) = log.transition(member, transition, self.epoch) {
                self.error = Some(format!("lsb.acct of {}: {error}", member.name()));
                return;
            }
        }
        if self.flush_each {
            if let Err(error) = log.out.flush() {
                self.error = Some(format!("lsb.acct of {}: {error}", member.name()));
            }
        }
    }

    /// Writes what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        for log in self.logs.values_mut() {
            log.out.flush()?;
        }
        Ok(())
    }
}

impl ClusterLog {
    fn transition(
        &mut self,
        member: &Member,
        transition: &Transition,
        epoch: i64,
    ) -> io::Result<()> {
        let cluster = member.cluster();
        match transition.event {
            JobEvent::Started | JobEvent::Resumed | JobEvent::Resized => {
                if let Some(job) = cluster.job(transition.job) {
                    self.started
                        .insert(transition.job, Started::of(cluster, job));
                }
                Ok(())
            }
            JobEvent::Finished
            | JobEvent::Killed
            | JobEvent::RunLimit
            | JobEvent::ReservationEnded => {
                let started = self.started.remove(&transition.job);
                let record = record(member, transition, started, epoch);
                write_job_finish(&mut self.out, &record)
            }
            JobEvent::Requeued | JobEvent::Migrated | JobEvent::Rerun => {
                self.started.remove(&transition.job);
                Ok(())
            }
            JobEvent::Suspended
            | JobEvent::Stopped
            | JobEvent::Held
            | JobEvent::Released
            | JobEvent::Switched
            | JobEvent::Modified
            | JobEvent::Waiting
            | JobEvent::Pended => Ok(()),
        }
    }
}

/// Seconds of `time` after `epoch`.
fn epoch_secs(epoch: i64, time: SimTime) -> i64 {
    epoch.saturating_add(i64::try_from(time.as_millis() / 1000).unwrap_or(i64::MAX / 2))
}

/// `text` within lsb.acct's field bound.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_FIELD_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_FIELD_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The job's `-R`: `select[a && b] rusage[mem=M:swp=S]`.
fn requirement(spec: &JobSpec) -> String {
    let options = spec.options();
    // The advance reservation is rsvId, not a select[] word.
    let resources = spec
        .resources
        .iter()
        .filter(|word| mcfed_cluster::advance::reservation_named(word).is_none())
        .cloned()
        .collect();
    let wanted = Requirements {
        resources,
        mem_mb: options.mem_request_mb,
        swap_mb: options.swap_request_mb,
    };
    bounded(&wanted.to_string())
}

/// The record of `transition`, a job finishing at `member`.
fn record(
    member: &Member,
    transition: &Transition,
    started: Option<Started>,
    epoch: i64,
) -> JobFinish {
    let at = |time| epoch_secs(epoch, time);
    let (hosts, spec) = match started {
        Some(started) => (started.hosts, Some(started.spec)),
        None => (
            Vec::new(),
            member
                .history()
                .and_then(|history| history.job(transition.job.0))
                .map(|record| record.spec.clone()),
        ),
    };
    let end = at(transition.at);
    let start = transition.started_at.map_or(0, at);
    let (status, exit_status, exit_info) = match transition.event {
        JobEvent::Finished => (STATUS_DONE, 0, 0),
        JobEvent::RunLimit => (STATUS_EXIT, 140 << 8, TERM_RUNLIMIT),
        JobEvent::ReservationEnded => (STATUS_EXIT, 130 << 8, TERM_DEADLINE),
        _ => (STATUS_EXIT, 130 << 8, TERM_OWNER),
    };
    let run_seconds = if start > 0 { end - start } else { 0 };
    let slots = i64::from(transition.slots);
    let requirement = spec.as_ref().map(requirement).unwrap_or_default();
    let mut job = JobFinish {
        event_time: end,
        job_id: i64::try_from(transition.job.0).unwrap_or(i64::MAX),
        user_id: -1,
        options: SUB_QUEUE
            | if transition.name.is_empty() {
                0
            } else {
                SUB_JOB_NAME
            },
        num_processors: slots,
        max_num_processors: spec
            .as_ref()
            .map_or(slots, |spec| i64::from(spec.max_slots()).max(slots)),
        submit_time: at(transition.first_submitted_at),
        start_time: start,
        user_name: spec
            .as_ref()
            .map(|spec| bounded(&spec.user))
            .unwrap_or_default(),
        queue: bounded(transition.queue.as_str()),
        res_req: requirement.clone(),
        effective_res_req: requirement,
        exec_hosts: hosts.clone(),
        alloc_slots: hosts,
        status,
        exit_status,
        exit_info,
        job_name: bounded(&transition.name),
        user_cpu_time: spec.as_ref().map_or(-1.0, |spec| {
            (run_seconds as f64 * slots as f64 * f64::from(spec.cpu_utilisation)).round()
        }),
        system_cpu_time: 0.0,
        max_rmem: spec.as_ref().map_or(0, |spec| {
            i64::try_from(spec.memory_mb.saturating_mul(1024)).unwrap_or(0)
        }),
        run_limit: spec
            .as_ref()
            .and_then(|spec| spec.run_limit)
            .map_or(-1, |limit| {
                i64::try_from(limit.as_secs()).unwrap_or(i64::MAX)
            }),
        run_time: run_seconds,
        rsv_id: spec
            .as_ref()
            .and_then(|spec| {
                spec.resources
                    .iter()
                    .find_map(|word| mcfed_cluster::advance::reservation_named(word))
            })
            .map(bounded)
            .unwrap_or_default(),
        ..JobFinish::default()
    };
    if let JobOrigin::Forwarded { from, source_job } = &transition.origin {
        job.src_cluster = from.to_string();
        job.src_job_id = i64::try_from(*source_job).unwrap_or(-1);
        job.dst_cluster = member.name().to_string();
        job.dst_job_id = job.job_id;
        job.forward_time = at(transition.submitted_at);
    }
    job
}
