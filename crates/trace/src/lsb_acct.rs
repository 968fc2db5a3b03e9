//! LSF's accounting log, `lsb.acct` (lsb.acct(5) of LSF 10.1): one record
//! per line, fields separated by blanks, strings in double quotes with a
//! quote inside doubled and `""` for a missing one, numbers bare. A
//! `JOB_FINISH` record is logged for each job that finishes (DONE or
//! EXIT), in the order jobs finish — not the order they were submitted.
//!
//! - [`AcctReader`] reads a log as a stream, plain or gzip ([`open`]): one
//!   [`JobFinish`] per `JOB_FINISH` record of a version it knows
//!   ([`SUPPORTED_VERSIONS`]); other records and other versions are
//!   skipped and counted by reason ([`Skipped`]); every line, field and
//!   list is bounded, and a malformed record is an error naming its line
//!   and field, after which reading goes on.
//! - [`write_job_finish`] writes one record in LSF 10.1's layout, so that
//!   bacct-style parsers read what an emulated run did; the reader reads
//!   back every field it writes.
//! - [`SyntheticAcct`] generates a seeded log (`mcfed gen lsb-acct`).
//! - [`requirements`] takes what a replay uses of a `-R` string.

mod fields;
mod generate;
mod read;
mod requirements;
mod write;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

pub use generate::{SyntheticAcct, generate};
pub use read::AcctReader;
pub use requirements::{Requirements, requirements};

/// The requirement word of a job that runs in advance reservation `name`:
/// `rsv==NAME`, as the cluster reads it (`mcfed_cluster::advance::
/// reservation_word`, which this crate may not depend on; a test of the
/// mcfed package checks that both say the same).
pub fn reservation_word(name: &str) -> String {
    format!("rsv=={name}")
}
pub use write::write_job_finish;

/// The longest line read, in bytes: a record lists a host per slot, so a
/// 100,000-slot job's record runs to megabytes.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// The longest field, in bytes (LSF bounds a command, a job name and a
/// path at 4,094 characters).
pub const MAX_FIELD_BYTES: usize = 64 * 1024;
/// The most items of one list (asked hosts, execution hosts, usage
/// entries, key-value pairs).
pub const MAX_LIST_ITEMS: usize = 1_000_000;
/// The versions whose `JOB_FINISH` layout the reader knows: LSF 10.1 (and
/// its fix packs, `10.1.0.N`). Records of other versions are skipped.
pub const SUPPORTED_VERSIONS: [&str; 1] = ["10.1"];
/// The most distinct reasons [`Skipped`] keeps apart; further ones are
/// counted together.
pub const MAX_SKIP_REASONS: usize = 64;

/// `jStatus` of a job that finished with exit code 0 (`DONE`).
pub const STATUS_DONE: i32 = 64;
/// `jStatus` of a job that exited otherwise (`EXIT`).
pub const STATUS_EXIT: i32 = 32;

/// One `JOB_FINISH` record: the fields a replay or a report uses, and
/// those the writer fills. Times are seconds since the epoch, `0` when
/// LSF logged none; strings are empty when LSF logged `""`.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFinish {
    /// The record's version (`"10.1"`).
    pub version: String,
    /// When the record was logged: the job's end.
    pub event_time: i64,
    /// The job's ID.
    pub job_id: i64,
    /// The submitter's UNIX user ID.
    pub user_id: i64,
    /// `bsub`'s option bits.
    pub options: i64,
    /// Processors requested (`bsub -n`): the job's slots.
    pub num_processors: i64,
    /// When it was submitted.
    pub submit_time: i64,
    /// `bsub -b`: not to start before.
    pub begin_time: i64,
    /// `bsub -t`: to be terminated by.
    pub term_time: i64,
    /// When it was dispatched (0: it never started).
    pub start_time: i64,
    /// The submitter.
    pub user_name: String,
    /// The queue it was submitted to.
    pub queue: String,
    /// `bsub -R`: its resource requirements as given.
    pub res_req: String,
    /// `bsub -w`: its dependency condition.
    pub depend_cond: String,
    /// The submission host.
    pub from_host: String,
    /// The working directory.
    pub cwd: String,
    /// The job file (`SUBMIT_TIME.JOBID`).
    pub job_file: String,
    /// `bsub -m`: the hosts it was limited to.
    pub asked_hosts: Vec<String>,
    /// The hosts it ran on, one per processor.
    pub exec_hosts: Vec<String>,
    /// `jStatus`: [`STATUS_DONE`] or [`STATUS_EXIT`].
    pub status: i32,
    /// The CPU factor of the first execution host.
    pub host_factor: f64,
    /// `bsub -J`.
    pub job_name: String,
    /// The command.
    pub command: String,
    /// User CPU time, seconds (-1: unknown).
    pub user_cpu_time: f64,
    /// System CPU time, seconds (-1: unknown).
    pub system_cpu_time: f64,
    /// `bsub -P`.
    pub project_name: String,
    /// The UNIX exit status (`wait` status: exit code × 256).
    pub exit_status: i32,
    /// The most processors it asked for (`bsub -n min,max`).
    pub max_num_processors: i64,
    /// Its index in a job array (0: not an array job).
    pub array_index: i64,
    /// Peak resident memory, KB.
    pub max_rmem: i64,
    /// Peak virtual memory, KB.
    pub max_rswap: i64,
    /// `bsub -U`: the advance reservation it ran in (`rsvId`; empty:
    /// none).
    pub rsv_id: String,
    /// Why it ended (`exitInfo`, bacct's TERM_* keyword).
    pub exit_info: i32,
    /// The run limit it was submitted with, seconds (0 or -1: none).
    pub run_limit: i64,
    /// The resource requirements it ran with.
    pub effective_res_req: String,
    /// MultiCluster: the submission cluster (empty: a local job).
    pub src_cluster: String,
    /// MultiCluster: its ID at the submission cluster (-1: none).
    pub src_job_id: i64,
    /// MultiCluster: the execution cluster (empty: a local job).
    pub dst_cluster: String,
    /// MultiCluster: its ID at the execution cluster (-1: none).
    pub dst_job_id: i64,
    /// MultiCluster: when it was forwarded (0: not forwarded).
    pub forward_time: i64,
    /// Seconds it spent running (LSF's `runTime`).
    pub run_time: i64,
    /// The hosts of its allocated slots (later fix packs; may be empty).
    pub alloc_slots: Vec<String>,
}

impl Default for JobFinish {
    fn default() -> Self {
        JobFinish {
            version: SUPPORTED_VERSIONS[0].to_owned(),
            event_time: 0,
            job_id: 0,
            user_id: 0,
            options: 0,
            num_processors: 1,
            submit_time: 0,
            begin_time: 0,
            term_time: 0,
            start_time: 0,
            user_name: String::new(),
            queue: String::new(),
            res_req: String::new(),
            depend_cond: String::new(),
            from_host: String::new(),
            cwd: String::new(),
            job_file: String::new(),
            asked_hosts: Vec::new(),
            exec_hosts: Vec::new(),
            status: STATUS_DONE,
            host_factor: 1.0,
            job_name: String::new(),
            command: String::new(),
            user_cpu_time: -1.0,
            system_cpu_time: -1.0,
            project_name: String::new(),
            exit_status: 0,
            max_num_processors: 1,
            array_index: 0,
            max_rmem: 0,
            max_rswap: 0,
            rsv_id: String::new(),
            exit_info: 0,
            run_limit: -1,
            effective_res_req: String::new(),
            src_cluster: String::new(),
            src_job_id: -1,
            dst_cluster: String::new(),
            dst_job_id: -1,
            forward_time: 0,
            run_time: 0,
            alloc_slots: Vec::new(),
        }
    }
}

impl JobFinish {
    /// The slots a replay gives the job: `numProcessors`, when above zero.
    pub fn slots(&self) -> Option<u32> {
        u32::try_from(self.num_processors)
            .ok()
            .filter(|&slots| slots > 0)
    }

    /// How long its original run took, seconds: its end (the record's
    /// time) minus its start; `None` when it never started or the times
    /// disagree.
    pub fn original_run_time(&self) -> Option<u64> {
        if self.start_time <= 0 {
            return None;
        }
        u64::try_from(self.event_time.checked_sub(self.start_time)?).ok()
    }

    /// Its run limit, seconds; `None` when it had none.
    pub fn run_limit_seconds(&self) -> Option<u64> {
        u64::try_from(self.run_limit)
            .ok()
            .filter(|&limit| limit > 0)
    }

    /// Its `-R` requirements: as given, else as it ran; `None` without.
    pub fn requirements(&self) -> Option<&str> {
        [&self.res_req, &self.effective_res_req]
            .into_iter()
            .map(|text| text.trim())
            .find(|text| !text.is_empty())
    }

    /// The advance reservation it ran in (`bsub -U`), if any.
    pub fn reservation(&self) -> Option<&str> {
        Some(self.rsv_id.trim()).filter(|name| !name.is_empty())
    }

    /// MultiCluster: the cluster it was submitted to, when forwarded.
    pub fn submission_cluster(&self) -> Option<&str> {
        Some(self.src_cluster.as_str()).filter(|name| !name.is_empty())
    }

    /// MultiCluster: the cluster it ran at, when forwarded.
    pub fn execution_cluster(&self) -> Option<&str> {
        Some(self.dst_cluster.as_str()).filter(|name| !name.is_empty())
    }
}

/// Records read but not returned, counted by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Records of other types (`JOB_RESIZE`, `EVENT_ADRSV_FINISH`, …), by
    /// type; past [`MAX_SKIP_REASONS`] types, under `"(other types)"`.
    pub record_types: Vec<(String, u64)>,
    /// `JOB_FINISH` records of versions the reader does not know, by
    /// version; past [`MAX_SKIP_REASONS`], under `"(other versions)"`.
    pub versions: Vec<(String, u64)>,
}

impl Skipped {
    /// How many records were skipped.
    pub fn total(&self) -> u64 {
        self.record_types
            .iter()
            .chain(&self.versions)
            .map(|(_, count)| count)
            .sum()
    }

    /// Each reason in words with its count: `3 JOB_RESIZE records`,
    /// `2 JOB_FINISH records of version 9.1`.
    pub fn reasons(&self) -> Vec<String> {
        let plural = |count: u64| if count == 1 { "record" } else { "records" };
        let types = self
            .record_types
            .iter()
            .map(|(kind, count)| format!("{count} {kind} {}", plural(*count)));
        let versions = self.versions.iter().map(|(version, count)| {
            format!("{count} JOB_FINISH {} of version {version}", plural(*count))
        });
        types.chain(versions).collect()
    }

    pub(crate) fn record_type(&mut self, kind: &str) {
        count(&mut self.record_types, kind, "(other types)");
    }

    pub(crate) fn version(&mut self, version: &str) {
        count(&mut self.versions, version, "(other versions)");
    }
}

fn count(reasons: &mut Vec<(String, u64)>, reason: &str, overflow: &str) {
    let reason: String = reason.chars().take(64).collect();
    let reason = if reason.chars().any(char::is_control) {
        reason.escape_default().to_string()
    } else {
        reason
    };
    if let Some((_, count)) = reasons.iter_mut().find(|(known, _)| *known == reason) {
        *count += 1;
    } else if reasons.len() < MAX_SKIP_REASONS {
        reasons.push((reason, 1));
    } else if let Some((_, count)) = reasons.iter_mut().find(|(known, _)| known == overflow) {
        *count += 1;
    } else if let Some(last) = reasons.last_mut() {
        // The list is full: its last slot becomes the overflow's.
        *last = (overflow.to_owned(), last.1 + 1);
    }
}

/// Why a log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AcctError {
    /// The file could not be opened or read (a truncated gzip stream is
    /// one of these; reading stops after it).
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line is longer than [`MAX_LINE_BYTES`].
    #[error("{file}:{line}: a line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong {
        /// The file.
        file: String,
        /// The line, from 1.
        line: u64,
    },
    /// The path is not a regular file (a device, a FIFO, a link to one).
    #[error(transparent)]
    NotAFile(#[from] mcfed_protocol::bounds::ReadError),
    /// A field of a `JOB_FINISH` record is malformed or missing.
    #[error("{file}:{line}: field {index} ({name}): {problem}")]
    Field {
        /// The file.
        file: String,
        /// The line, from 1.
        line: u64,
        /// The field's position in the record, from 1.
        index: usize,
        /// Its name in lsb.acct(5).
        name: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// Whether the trace at `path` (plain or gzip) is an lsb.acct: its first
/// line that is not blank or a comment (`;` in SWF, `#`) starts with a
/// double quote, as every lsb.acct record does (an SWF job line starts
/// with a number). Only the first MiB is looked at.
pub fn is_lsb_acct(path: &Path) -> Result<bool, AcctError> {
    let mut reader = open(path)?.into_inner();
    let mut line = Vec::new();
    let mut seen = 0usize;
    while seen < 1 << 20 {
        line.clear();
        let read = (&mut reader)
            .take(1 << 20)
            .read_until(b'\n', &mut line)
            .map_err(|source| AcctError::Io {
                file: path.display().to_string(),
                source,
            })?;
        if read == 0 {
            return Ok(false);
        }
        seen += read;
        let text = line.trim_ascii();
        if text.is_empty() || text.starts_with(b";") || text.starts_with(b"#") {
            continue;
        }
        return Ok(text.starts_with(b"\""));
    }
    Ok(false)
}

/// The earliest submit time among the first `records` `JOB_FINISH`
/// records of the log at `path` (malformed ones passed over); `None`
/// when it has none.
pub fn earliest_submit(path: &Path, records: usize) -> Result<Option<i64>, AcctError> {
    let mut earliest: Option<i64> = None;
    for job in open(path)?.take(records) {
        match job {
            Ok(job) => {
                earliest = Some(earliest.map_or(job.submit_time, |at| at.min(job.submit_time)));
            }
            Err(error @ (AcctError::Io { .. } | AcctError::NotAFile(_))) => return Err(error),
            Err(_) => {}
        }
    }
    Ok(earliest)
}

/// Opens a log: gzip when it starts with gzip's magic bytes (whatever its
/// name), plain text otherwise. Only a regular file is read (a link is
/// followed to one).
pub fn open(path: &Path) -> Result<AcctReader<Box<dyn BufRead + Send>>, AcctError> {
    let file_name = path.display().to_string();
    let io = |source| AcctError::Io {
        file: file_name.clone(),
        source,
    };
    let file: File = mcfed_protocol::bounds::TRACE_FILE.open(path)?;
    let mut file = BufReader::new(file);
    let gzip = file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn BufRead + Send> = if gzip {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    };
    Ok(AcctReader::new(file_name, reader))
}
