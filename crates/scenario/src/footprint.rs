//! Every number of a scenario that sizes something — a host entry's
//! `count`, `MXJ` and `ncpus`, a cluster's slots, a job entry's `count`,
//! `slots`, run time and memory, every time — checked against mcfed's
//! bounds ([`mcfed_protocol::bounds`]) before anything is expanded, and the
//! memory the whole scenario needs estimated ([`Footprint`]) and compared
//! with what the machine has: a scenario that cannot fit is refused before
//! it is built, not after an allocation takes the machine down.

use mcfed_protocol::bounds::{
    self, Bound, CLUSTER_SLOTS, HOST_COUNT, HOST_SLOTS, JOB_COUNT, JOB_DURATION, JOB_MEMORY_MB,
    JOB_SLOTS, SCENARIO_TIME, UPDATE_INTERVAL,
};

use crate::check::Checker;
use crate::format::{EndValue, RawJob, RawParams, RawScenario};
use crate::locate::FieldPath;

/// Bytes a job takes while a scenario is built and run (its spec, its
/// submission, its place in the scheduler; measured on 200,000-job
/// scenarios and rounded up).
pub const BYTES_PER_JOB: u64 = 1_000;

/// Bytes a host takes (its configuration, its name, its place in the
/// host book and its sets; measured likewise and rounded up).
pub const BYTES_PER_HOST: u64 = 600;

/// What a scenario will hold once built, and about how much memory that
/// takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Hosts, every `count` expanded.
    pub hosts: u64,
    /// Jobs present at start and submitted (workloads are read as they
    /// run, and not counted).
    pub jobs: u64,
    /// The estimate, in bytes.
    pub bytes: u64,
}

impl Footprint {
    fn add_hosts(&mut self, hosts: u64) {
        self.hosts = self.hosts.saturating_add(hosts);
        self.bytes = self
            .bytes
            .saturating_add(hosts.saturating_mul(BYTES_PER_HOST));
    }

    fn add_jobs(&mut self, jobs: u64) {
        self.jobs = self.jobs.saturating_add(jobs);
        self.bytes = self
            .bytes
            .saturating_add(jobs.saturating_mul(BYTES_PER_JOB));
    }
}

/// Bytes in words: `512 MB`, `3.2 GB`.
pub fn humanize_bytes(bytes: u64) -> String {
    let gb = bytes as f64 / 1e9;
    if gb >= 1.0 {
        format!("{gb:.1} GB")
    } else {
        format!("{:.0} MB", bytes as f64 / 1e6)
    }
}

/// The memory available to a new process, in bytes (`MemAvailable` of
/// `/proc/meminfo`); `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

impl Checker<'_> {
    /// Records a problem at `path` if `value` is outside `bound`; whether
    /// it is inside.
    pub(super) fn bounded(&mut self, path: FieldPath, bound: &Bound, value: u64) -> bool {
        match bound.check(value) {
            Ok(_) => true,
            Err(error) => {
                self.problem(path, error.to_string());
                false
            }
        }
    }

    /// Like [`Checker::bounded`], for a duration.
    fn bounded_duration(
        &mut self,
        path: FieldPath,
        bound: &Bound,
        value: std::time::Duration,
    ) -> bool {
        match bound.check_duration(value) {
            Ok(_) => true,
            Err(error) => {
                self.problem(path, error.to_string());
                false
            }
        }
    }

    /// Checks every sizing number of `raw` and estimates its footprint;
    /// `memory` is what the machine has (`None`: unknown). Returns the
    /// footprint, or `None` if the scenario must not be built.
    pub(super) fn footprint(
        &mut self,
        raw: &RawScenario,
        memory: Option<u64>,
    ) -> Option<Footprint> {
        let before = self.problems.len();
        let root = FieldPath::root();
        let mut footprint = Footprint::default();
        self.params_bounds(&root.key("params"), &raw.params);
        for (index, cluster) in raw.cluster.iter().enumerate() {
            let path = root.key("cluster").index(index);
            self.params_bounds(&path.key("params"), &cluster.params);
            let mut slots: u64 = 0;
            for (entry, host) in cluster.host.iter().enumerate() {
                let host_path = path.key("host").index(entry);
                let count = u64::from(host.count.unwrap_or(1));
                let ok = self.bounded(host_path.key("count"), &HOST_COUNT, count)
                    & self.bounded(host_path.key("MXJ"), &HOST_SLOTS, u64::from(host.MXJ));
                if let Some(ncpus) = host.ncpus {
                    self.bounded(host_path.key("ncpus"), &HOST_SLOTS, u64::from(ncpus));
                }
                if ok {
                    footprint.add_hosts(count);
                    slots = slots.saturating_add(count.saturating_mul(u64::from(host.MXJ)));
                }
            }
            self.bounded(path.key("host"), &CLUSTER_SLOTS, slots);
            for (entry, job) in cluster.job.iter().enumerate() {
                let jobs = self.job_bounds(&path.key("job").index(entry), job);
                footprint.add_jobs(jobs);
            }
        }
        for (entry, job) in raw.submit.iter().enumerate() {
            let jobs = self.job_bounds(&root.key("submit").index(entry), job);
            footprint.add_jobs(jobs);
        }
        if let Some(EndValue::At(end)) = &raw.end {
            self.bounded_duration(root.key("end"), &SCENARIO_TIME, *end);
        }
        if let Some(memory) = memory.filter(|&memory| footprint.bytes > memory) {
            self.problem(
                root,
                format!(
                    "this scenario needs about {} of memory ({}, {}); this machine has {} available",
                    humanize_bytes(footprint.bytes),
                    mcfed_protocol::words::count(footprint.jobs, "job"),
                    mcfed_protocol::words::count(footprint.hosts, "host"),
                    humanize_bytes(memory)
                ),
            );
        }
        (self.problems.len() == before).then_some(footprint)
    }

    /// The bounds of a `params` table's numbers.
    fn params_bounds(&mut self, path: &FieldPath, params: &RawParams) {
        if let Some(interval) = &params.MC_PLUGIN_UPDATE_INTERVAL {
            self.bounded_duration(
                path.key("MC_PLUGIN_UPDATE_INTERVAL"),
                &UPDATE_INTERVAL,
                interval.0,
            );
        }
    }

    /// Checks a job entry's sizing numbers; the jobs it makes (0 if it is
    /// refused).
    fn job_bounds(&mut self, path: &FieldPath, job: &RawJob) -> u64 {
        let count = u64::from(job.count.unwrap_or(1));
        let mut ok = self.bounded(path.key("count"), &JOB_COUNT, count);
        if let Some(slots) = job.slots {
            ok &= self.bounded(path.key("slots"), &JOB_SLOTS, u64::from(slots));
        }
        if let Some(memory) = job.memory_mb {
            ok &= self.bounded(path.key("memory_mb"), &JOB_MEMORY_MB, memory);
        }
        for (key, value) in [("run_time", &job.run_time), ("run_limit", &job.run_limit)] {
            if let Some(value) = value {
                ok &= self.bounded_duration(path.key(key), &JOB_DURATION, value.0);
            }
        }
        for (key, value) in [("at", &job.at), ("every", &job.every)] {
            if let Some(value) = value {
                ok &= self.bounded_duration(path.key(key), &SCENARIO_TIME, value.0);
            }
        }
        if let (Some(every), Some(at)) = (&job.every, &job.at) {
            // The last submission of the group must be a time too.
            let last = every
                .0
                .saturating_mul(u32::try_from(count).unwrap_or(u32::MAX))
                .saturating_add(at.0);
            ok &= self.bounded_duration(path.key("every"), &bounds::SCENARIO_TIME, last);
        }
        if ok { count } else { 0 }
    }
}
