//! Reading lsb.acct: bounded lines, the record's type and version, and a
//! `JOB_FINISH` record field by field in LSF 10.1's layout (lsb.acct(5)).
//!
//! Every field up to `forwardTime` (the MultiCluster fields) must be
//! there; LSF 10.1's fix packs appended fields after it (`runTime`, the
//! allocated slots, GPU usage, …), and a record may end anywhere among
//! them. Fields mcfed does not use are passed over whatever they hold
//! (LSF itself logs `""` in some numeric ones); those it uses are checked.

use std::io::{BufRead, Read};

use super::fields::{FieldProblem, Fields};
use super::{AcctError, JobFinish, MAX_LINE_BYTES, MAX_LIST_ITEMS, SUPPORTED_VERSIONS, Skipped};

/// Reads a log line by line: each `JOB_FINISH` record of a known version
/// as a [`JobFinish`]; other records are counted in
/// [`AcctReader::skipped`]. Only one line is in memory at a time.
pub struct AcctReader<R> {
    file: String,
    reader: R,
    line: u64,
    buffer: Vec<u8>,
    skipped: Skipped,
    /// An I/O error ended the read (a truncated gzip stream is not read
    /// again and again).
    ended: bool,
}

impl<R: BufRead> AcctReader<R> {
    /// A reader of `reader`, named `file` in errors.
    pub fn new(file: impl Into<String>, reader: R) -> Self {
        AcctReader {
            file: file.into(),
            reader,
            line: 0,
            buffer: Vec::with_capacity(1024),
            skipped: Skipped::default(),
            ended: false,
        }
    }

    /// The records skipped so far, by reason.
    pub fn skipped(&self) -> &Skipped {
        &self.skipped
    }

    /// The number of the last line read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The reader underneath.
    pub fn into_inner(self) -> R {
        self.reader
    }

    fn io(&mut self, source: std::io::Error) -> AcctError {
        self.ended = true;
        AcctError::Io {
            file: self.file.clone(),
            source,
        }
    }

    /// Reads the next line into the buffer; `false` at the end. An
    /// overlong line is passed over (without holding it) and refused.
    fn next_line(&mut self) -> Result<bool, AcctError> {
        self.buffer.clear();
        self.line += 1;
        let limit = (MAX_LINE_BYTES + 1) as u64;
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.buffer);
        let read = read.map_err(|error| self.io(error))?;
        if read == 0 {
            return Ok(false);
        }
        if self.buffer.len() > MAX_LINE_BYTES {
            while !self.buffer.ends_with(b"\n") {
                self.buffer.clear();
                let more = (&mut self.reader)
                    .take(limit)
                    .read_until(b'\n', &mut self.buffer);
                if more.map_err(|error| self.io(error))? == 0 {
                    break;
                }
            }
            self.buffer.clear();
            return Err(AcctError::LineTooLong {
                file: self.file.clone(),
                line: self.line,
            });
        }
        Ok(true)
    }

    fn located(&self, problem: FieldProblem) -> AcctError {
        AcctError::Field {
            file: self.file.clone(),
            line: self.line,
            index: problem.index,
            name: problem.name,
            problem: problem.problem,
        }
    }
}

impl<R: BufRead> Iterator for AcctReader<R> {
    type Item = Result<JobFinish, AcctError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.ended {
            match self.next_line() {
                Ok(false) => return None,
                Ok(true) => {}
                Err(error) => return Some(Err(error)),
            }
            let line = self.buffer.trim_ascii();
            if line.is_empty() || line.starts_with(b"#") {
                continue;
            }
            let mut fields = Fields::new(line);
            let parsed = record(&mut fields);
            match parsed {
                Ok(Record::JobFinish(job)) => return Some(Ok(*job)),
                Ok(Record::OtherType(kind)) => self.skipped.record_type(&kind),
                Ok(Record::OtherVersion(version)) => self.skipped.version(&version),
                Err(problem) => return Some(Err(self.located(problem))),
            }
        }
        None
    }
}

/// What one line holds.
enum Record {
    JobFinish(Box<JobFinish>),
    OtherType(String),
    OtherVersion(String),
}

fn record(fields: &mut Fields<'_>) -> Result<Record, FieldProblem> {
    let kind = fields.string("event type")?;
    if kind != "JOB_FINISH" {
        return Ok(Record::OtherType(kind));
    }
    let version = fields.string("version")?;
    if !supported(&version) {
        return Ok(Record::OtherVersion(version));
    }
    let mut job = JobFinish {
        version,
        ..JobFinish::default()
    };
    head(fields, &mut job)?;
    usage(fields, &mut job)?;
    middle(fields, &mut job)?;
    multicluster(fields, &mut job)?;
    tail(fields, &mut job)?;
    // Fields appended by later fix packs (each read advances, and the
    // line is bounded): passed over.
    while !fields.at_end() {
        fields.skip("(a later field)")?;
    }
    Ok(Record::JobFinish(Box::new(job)))
}

/// `10.1` and its fix packs (`10.1.0.13`).
fn supported(version: &str) -> bool {
    SUPPORTED_VERSIONS.iter().any(|known| {
        version == *known
            || version
                .strip_prefix(known)
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

fn int32(fields: &mut Fields<'_>, name: &'static str) -> Result<i32, FieldProblem> {
    let index = fields.taken() + 1;
    let value = fields.int(name)?;
    i32::try_from(value).map_err(|_| FieldProblem {
        index,
        name,
        problem: format!("{value} is out of range for a 32-bit field"),
    })
}

fn strings(
    fields: &mut Fields<'_>,
    count: &'static str,
    item: &'static str,
) -> Result<Vec<String>, FieldProblem> {
    let length = fields.count(count, MAX_LIST_ITEMS)?;
    (0..length).map(|_| fields.string(item)).collect()
}

/// From the job's ID to its command.
fn head(fields: &mut Fields<'_>, job: &mut JobFinish) -> Result<(), FieldProblem> {
    job.event_time = fields.int("eventTime")?;
    job.job_id = fields.int("jobId")?;
    job.user_id = fields.int("userId")?;
    job.options = fields.int("options")?;
    job.num_processors = fields.int("numProcessors")?;
    job.submit_time = fields.int("submitTime")?;
    job.begin_time = fields.int("beginTime")?;
    job.term_time = fields.int("termTime")?;
    job.start_time = fields.int("startTime")?;
    job.user_name = fields.string("userName")?;
    job.queue = fields.string("queue")?;
    job.res_req = fields.string("resReq")?;
    job.depend_cond = fields.string("dependCond")?;
    fields.skip("preExecCmd")?;
    job.from_host = fields.string("fromHost")?;
    job.cwd = fields.string("cwd")?;
    for name in ["inFile", "outFile", "errFile"] {
        fields.skip(name)?;
    }
    job.job_file = fields.string("jobFile")?;
    job.asked_hosts = strings(fields, "numAskedHosts", "askedHosts")?;
    job.exec_hosts = strings(fields, "numExHosts", "execHosts")?;
    job.status = int32(fields, "jStatus")?;
    job.host_factor = fields.float("hostFactor")?;
    job.job_name = fields.string("jobName")?;
    job.command = fields.string("command")?;
    Ok(())
}

/// The names of lsfRusage's fields after `ru_utime` and `ru_stime`.
pub(super) const RUSAGE_REST: [&str; 17] = [
    "ru_maxrss",
    "ru_ixrss",
    "ru_ismrss",
    "ru_idrss",
    "ru_isrss",
    "ru_minflt",
    "ru_majflt",
    "ru_nswap",
    "ru_inblock",
    "ru_oublock",
    "ru_ioch",
    "ru_msgsnd",
    "ru_msgrcv",
    "ru_nsignals",
    "ru_nvcsw",
    "ru_nivcsw",
    "ru_exutime",
];

/// lsfRusage: 19 numbers.
fn usage(fields: &mut Fields<'_>, job: &mut JobFinish) -> Result<(), FieldProblem> {
    job.user_cpu_time = fields.float("ru_utime")?;
    job.system_cpu_time = fields.float("ru_stime")?;
    for name in RUSAGE_REST {
        fields.skip(name)?;
    }
    Ok(())
}

/// From mailUser to the run limit and the effective requirements.
fn middle(fields: &mut Fields<'_>, job: &mut JobFinish) -> Result<(), FieldProblem> {
    fields.skip("mailUser")?;
    job.project_name = fields.string("projectName")?;
    job.exit_status = int32(fields, "exitStatus")?;
    job.max_num_processors = fields.int("maxNumProcessors")?;
    fields.skip("loginShell")?;
    fields.skip("timeEvent")?;
    job.array_index = fields.int("idx")?;
    job.max_rmem = fields.int("maxRMem")?;
    job.max_rswap = fields.int("maxRSwap")?;
    fields.skip("inFileSpool")?;
    fields.skip("commandSpool")?;
    job.rsv_id = fields.string("rsvId")?;
    for name in ["sla", "exceptMask", "additionalInfo"] {
        fields.skip(name)?;
    }
    job.exit_info = int32(fields, "exitInfo")?;
    for name in [
        "warningAction",
        "warningTimePeriod",
        "chargedSAAP",
        "licenseProject",
        "app",
        "postExecCmd",
        "runtimeEstimation",
        "jobGroupName",
        "requeueEvalues",
        "options2",
        "resizeNotifyCmd",
        "lastResizeTime",
    ] {
        fields.skip(name)?;
    }
    // lsb.acct(5) lists rsvId twice; the later one when the first is empty.
    let rsv_id = fields.string("rsvId")?;
    if job.rsv_id.is_empty() {
        job.rsv_id = rsv_id;
    }
    fields.skip("jobDescription")?;
    let pairs = fields.count("submitEXT Num", MAX_LIST_ITEMS)?;
    for _ in 0..pairs {
        fields.skip("submitEXT key")?;
        fields.skip("submitEXT value")?;
    }
    let hosts = fields.count("numHostRusage", MAX_LIST_ITEMS)?;
    for _ in 0..hosts {
        for name in [
            "hostRusage hostname",
            "hostRusage mem",
            "hostRusage swap",
            "hostRusage utime",
            "hostRusage stime",
        ] {
            fields.skip(name)?;
        }
    }
    fields.skip("options3")?;
    job.run_limit = fields.int("runLimit")?;
    fields.skip("avgMem")?;
    job.effective_res_req = fields.string("effectiveResReq")?;
    Ok(())
}

/// The MultiCluster fields: the last ones every 10.1 record has.
fn multicluster(fields: &mut Fields<'_>, job: &mut JobFinish) -> Result<(), FieldProblem> {
    job.src_cluster = fields.string("srcCluster")?;
    job.src_job_id = fields.int("srcJobId")?;
    job.dst_cluster = fields.string("dstCluster")?;
    job.dst_job_id = fields.int("dstJobId")?;
    job.forward_time = fields.int("forwardTime")?;
    Ok(())
}

/// The fields later fix packs appended, each read when the record goes
/// on that far; the run time is computed from the times without them.
fn tail(fields: &mut Fields<'_>, job: &mut JobFinish) -> Result<(), FieldProblem> {
    job.run_time = job.original_run_time().map_or(0, |time| time as i64);
    for name in ["flow_id", "acJobWaitTime", "totalProvisionTime", "outdir"] {
        if fields.at_end() {
            return Ok(());
        }
        fields.skip(name)?;
    }
    if fields.at_end() {
        return Ok(());
    }
    job.run_time = fields.int("runTime")?;
    if fields.at_end() {
        return Ok(());
    }
    fields.skip("subcwd")?;
    if fields.at_end() {
        return Ok(());
    }
    let networks = fields.count("num_network", MAX_LIST_ITEMS)?;
    for _ in 0..networks {
        fields.skip("networkID")?;
        fields.skip("num_window")?;
    }
    for name in [
        "affinity",
        "serial_job_energy",
        "cpi",
        "gips",
        "gbs",
        "gflops",
    ] {
        if fields.at_end() {
            return Ok(());
        }
        fields.skip(name)?;
    }
    if fields.at_end() {
        return Ok(());
    }
    job.alloc_slots = strings(fields, "numAllocSlots", "allocSlots")?;
    later_lists(fields)
}

/// ineligiblePendTime, the index ranges, requeueTime, the GPU usage, the
/// storage information and the finish key-value pairs: read for their
/// shape only.
fn later_lists(fields: &mut Fields<'_>) -> Result<(), FieldProblem> {
    if fields.at_end() {
        return Ok(());
    }
    fields.skip("ineligiblePendTime")?;
    if fields.at_end() {
        return Ok(());
    }
    let ranges = fields.count("indexRangeCnt", MAX_LIST_ITEMS)?;
    for _ in 0..ranges {
        for name in ["indexRangeStart", "indexRangeEnd", "indexRangeStep"] {
            fields.skip(name)?;
        }
    }
    if fields.at_end() {
        return Ok(());
    }
    fields.skip("requeueTime")?;
    if fields.at_end() {
        return Ok(());
    }
    let gpus = fields.count("numGPURusages", MAX_LIST_ITEMS)?;
    for _ in 0..gpus {
        fields.skip("gRusage hostname")?;
        let pairs = fields.count("gRusage numKVP", MAX_LIST_ITEMS)?;
        for _ in 0..pairs {
            fields.skip("gRusage key")?;
            fields.skip("gRusage value")?;
        }
    }
    if fields.at_end() {
        return Ok(());
    }
    let storage = fields.count("storageInfoC", MAX_LIST_ITEMS)?;
    for _ in 0..storage {
        fields.skip("storageInfoV")?;
    }
    if fields.at_end() {
        return Ok(());
    }
    let pairs = fields.count("numKVP", MAX_LIST_ITEMS)?;
    for _ in 0..pairs {
        fields.skip("finishKVP key")?;
        fields.skip("finishKVP value")?;
    }
    Ok(())
}
