//! The dynamic priority formula: its factors (lsb.params and lsb.queues,
//! with the seed's defaults), the switches of its optional terms, the usage
//! terms it weighs and the priority itself.

/// CPU_TIME_FACTOR's default.
pub const DEFAULT_CPU_TIME_FACTOR: f64 = 0.7;
/// RUN_TIME_FACTOR's default.
pub const DEFAULT_RUN_TIME_FACTOR: f64 = 0.7;
/// RUN_JOB_FACTOR's default.
pub const DEFAULT_RUN_JOB_FACTOR: f64 = 3.0;
/// FAIRSHARE_ADJUSTMENT_FACTOR's default.
pub const DEFAULT_FAIRSHARE_ADJUSTMENT_FACTOR: f64 = 0.0;
/// HIST_HOURS' default.
pub const DEFAULT_HIST_HOURS: f64 = 5.0;
/// GPU_RUN_TIME_FACTOR's default.
pub const DEFAULT_GPU_RUN_TIME_FACTOR: f64 = 0.0;
/// COMMITTED_RUN_TIME_FACTOR's default: committed run time does not count.
pub const DEFAULT_COMMITTED_RUN_TIME_FACTOR: f64 = 0.0;
/// The smallest denominator of the formula: a priority is at most 100 times
/// the shares.
pub const MIN_DENOMINATOR: f64 = 0.01;

/// The LSF names of the factors, in the order of
/// [`FairshareOverrides::named_values`].
pub const FACTOR_NAMES: [&str; 8] = [
    "CPU_TIME_FACTOR",
    "RUN_TIME_FACTOR",
    "RUN_JOB_FACTOR",
    "FWD_JOB_FACTOR",
    "FAIRSHARE_ADJUSTMENT_FACTOR",
    "HIST_HOURS",
    "GPU_RUN_TIME_FACTOR",
    "COMMITTED_RUN_TIME_FACTOR",
];

/// The LSF names of the switches of the optional terms, in the order of
/// [`FairshareOverrides::named_switches`].
pub const SWITCH_NAMES: [&str; 3] = [
    "RUN_TIME_DECAY",
    "ENABLE_HIST_RUN_TIME",
    "ENABLE_GPU_HIST_RUN_TIME",
];

/// The factors of the dynamic priority formula and HIST_HOURS, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairshareFactors {
    /// CPU_TIME_FACTOR.
    pub cpu_time: f64,
    /// RUN_TIME_FACTOR.
    pub run_time: f64,
    /// RUN_JOB_FACTOR.
    pub run_job: f64,
    /// FWD_JOB_FACTOR; not defined by default, and then its term is absent.
    pub fwd_job: Option<f64>,
    /// FAIRSHARE_ADJUSTMENT_FACTOR.
    pub fairshare_adjustment: f64,
    /// HIST_HOURS: 1 hour of CPU time counts as 0.1 hour this many hours
    /// later; 0 means no decay.
    pub hist_hours: f64,
    /// GPU_RUN_TIME_FACTOR.
    pub gpu_run_time: f64,
    /// COMMITTED_RUN_TIME_FACTOR (0 to 1).
    pub committed_run_time: f64,
    /// RUN_TIME_DECAY: the run time of running jobs decays like CPU time.
    pub run_time_decay: bool,
    /// ENABLE_HIST_RUN_TIME: the (decaying) run time of finished jobs
    /// counts with the run time of running ones.
    pub hist_run_time: bool,
    /// ENABLE_GPU_HIST_RUN_TIME: the (decaying) GPU run time of finished
    /// jobs counts with that of running ones.
    pub gpu_hist_run_time: bool,
}

impl Default for FairshareFactors {
    /// The seed's defaults.
    fn default() -> Self {
        FairshareFactors {
            cpu_time: DEFAULT_CPU_TIME_FACTOR,
            run_time: DEFAULT_RUN_TIME_FACTOR,
            run_job: DEFAULT_RUN_JOB_FACTOR,
            fwd_job: None,
            fairshare_adjustment: DEFAULT_FAIRSHARE_ADJUSTMENT_FACTOR,
            hist_hours: DEFAULT_HIST_HOURS,
            gpu_run_time: DEFAULT_GPU_RUN_TIME_FACTOR,
            committed_run_time: DEFAULT_COMMITTED_RUN_TIME_FACTOR,
            run_time_decay: false,
            hist_run_time: false,
            gpu_hist_run_time: false,
        }
    }
}

/// Factors set at one level (a queue in lsb.queues, or the cluster in
/// lsb.params); unset ones come from the level below.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FairshareOverrides {
    /// CPU_TIME_FACTOR.
    pub cpu_time: Option<f64>,
    /// RUN_TIME_FACTOR.
    pub run_time: Option<f64>,
    /// RUN_JOB_FACTOR.
    pub run_job: Option<f64>,
    /// FWD_JOB_FACTOR.
    pub fwd_job: Option<f64>,
    /// FAIRSHARE_ADJUSTMENT_FACTOR.
    pub fairshare_adjustment: Option<f64>,
    /// HIST_HOURS.
    pub hist_hours: Option<f64>,
    /// GPU_RUN_TIME_FACTOR.
    pub gpu_run_time: Option<f64>,
    /// COMMITTED_RUN_TIME_FACTOR.
    pub committed_run_time: Option<f64>,
    /// RUN_TIME_DECAY.
    pub run_time_decay: Option<bool>,
    /// ENABLE_HIST_RUN_TIME.
    pub hist_run_time: Option<bool>,
    /// ENABLE_GPU_HIST_RUN_TIME.
    pub gpu_hist_run_time: Option<bool>,
}

impl FairshareOverrides {
    /// These values over `below`'s: a queue's over the cluster's.
    pub fn over(&self, below: &FairshareOverrides) -> FairshareOverrides {
        FairshareOverrides {
            cpu_time: self.cpu_time.or(below.cpu_time),
            run_time: self.run_time.or(below.run_time),
            run_job: self.run_job.or(below.run_job),
            fwd_job: self.fwd_job.or(below.fwd_job),
            fairshare_adjustment: self.fairshare_adjustment.or(below.fairshare_adjustment),
            hist_hours: self.hist_hours.or(below.hist_hours),
            gpu_run_time: self.gpu_run_time.or(below.gpu_run_time),
            committed_run_time: self.committed_run_time.or(below.committed_run_time),
            run_time_decay: self.run_time_decay.or(below.run_time_decay),
            hist_run_time: self.hist_run_time.or(below.hist_run_time),
            gpu_hist_run_time: self.gpu_hist_run_time.or(below.gpu_hist_run_time),
        }
    }

    /// The factors, with the seed's defaults for the unset ones.
    pub fn resolve(&self) -> FairshareFactors {
        let defaults = FairshareFactors::default();
        FairshareFactors {
            cpu_time: self.cpu_time.unwrap_or(defaults.cpu_time),
            run_time: self.run_time.unwrap_or(defaults.run_time),
            run_job: self.run_job.unwrap_or(defaults.run_job),
            fwd_job: self.fwd_job.or(defaults.fwd_job),
            fairshare_adjustment: self
                .fairshare_adjustment
                .unwrap_or(defaults.fairshare_adjustment),
            hist_hours: self.hist_hours.unwrap_or(defaults.hist_hours),
            gpu_run_time: self.gpu_run_time.unwrap_or(defaults.gpu_run_time),
            committed_run_time: self
                .committed_run_time
                .unwrap_or(defaults.committed_run_time),
            run_time_decay: self.run_time_decay.unwrap_or(defaults.run_time_decay),
            hist_run_time: self.hist_run_time.unwrap_or(defaults.hist_run_time),
            gpu_hist_run_time: self.gpu_hist_run_time.unwrap_or(defaults.gpu_hist_run_time),
        }
    }

    /// The factors as written, in the order of [`FACTOR_NAMES`], and the
    /// switches, in the order of [`SWITCH_NAMES`].
    pub fn from_values(values: [Option<f64>; 8], switches: [Option<bool>; 3]) -> Self {
        let [
            cpu_time,
            run_time,
            run_job,
            fwd_job,
            fairshare_adjustment,
            hist_hours,
            gpu_run_time,
            committed_run_time,
        ] = values;
        let [run_time_decay, hist_run_time, gpu_hist_run_time] = switches;
        FairshareOverrides {
            cpu_time,
            run_time,
            run_job,
            fwd_job,
            fairshare_adjustment,
            hist_hours,
            gpu_run_time,
            committed_run_time,
            run_time_decay,
            hist_run_time,
            gpu_hist_run_time,
        }
    }

    /// Each set value with its LSF name, for checking.
    pub fn named_values(&self) -> [(&'static str, Option<f64>); 8] {
        let values = [
            self.cpu_time,
            self.run_time,
            self.run_job,
            self.fwd_job,
            self.fairshare_adjustment,
            self.hist_hours,
            self.gpu_run_time,
            self.committed_run_time,
        ];
        std::array::from_fn(|index| (FACTOR_NAMES[index], values[index]))
    }

    /// Each set switch with its LSF name.
    pub fn named_switches(&self) -> [(&'static str, Option<bool>); 3] {
        let values = [
            self.run_time_decay,
            self.hist_run_time,
            self.gpu_hist_run_time,
        ];
        std::array::from_fn(|index| (SWITCH_NAMES[index], values[index]))
    }
}

/// One user's (or share group's) resource use in one queue, the inputs of
/// the formula.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UsageTerms {
    /// Decayed cumulative CPU time, in hours.
    pub cpu_time: f64,
    /// Run time of the user's running jobs, in hours (decayed with
    /// RUN_TIME_DECAY).
    pub run_time: f64,
    /// Decayed run time of finished jobs, in hours (with
    /// ENABLE_HIST_RUN_TIME; else 0).
    pub historical_run_time: f64,
    /// Committed run time still to come: for running jobs with a run limit
    /// (`bsub -W` or the queue's RUNLIMIT), the limit less the run time so
    /// far, in hours — the formula's `committed_run_time - run_time`.
    pub committed_run_time: f64,
    /// Job slots reserved and in use.
    pub job_slots: f64,
    /// Job slots of the user's jobs forwarded to other clusters.
    pub fwd_job_slots: f64,
    /// What the fairshare adjustment plug-in returned.
    pub fairshare_adjustment: f64,
    /// Decayed GPU run time of finished GPU jobs, in GPU-hours (each job's
    /// run time times its physical GPUs; with ENABLE_GPU_HIST_RUN_TIME,
    /// else 0).
    pub historical_gpu_run_time: f64,
    /// GPU run time of running GPU jobs, in GPU-hours.
    pub gpu_run_time: f64,
    /// Physical GPUs in use (for reports: the GPU-hours above already
    /// weigh each job by its own).
    pub gpus: f64,
}

/// The terms of the formula's denominator, each already weighted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DenominatorTerms {
    /// `cpu_time * CPU_TIME_FACTOR`.
    pub cpu_time: f64,
    /// `(historical_run_time + run_time) * RUN_TIME_FACTOR`.
    pub run_time: f64,
    /// `(committed_run_time - run_time) * COMMITTED_RUN_TIME_FACTOR`.
    pub committed_run_time: f64,
    /// `(1 + job_slots) * RUN_JOB_FACTOR`.
    pub job_slots: f64,
    /// `(1 + fwd_job_slots) * FWD_JOB_FACTOR`, 0 when the factor is not
    /// defined.
    pub fwd_job_slots: f64,
    /// `fairshare_adjustment * FAIRSHARE_ADJUSTMENT_FACTOR`.
    pub fairshare_adjustment: f64,
    /// `(historical_gpu_run_time + gpu_run_time) * ngpus_physical *
    /// GPU_RUN_TIME_FACTOR`, each job's run time weighed by its own GPUs.
    pub gpu_run_time: f64,
}

impl DenominatorTerms {
    /// The terms of `usage` under `factors`.
    pub fn new(usage: &UsageTerms, factors: &FairshareFactors) -> Self {
        DenominatorTerms {
            cpu_time: usage.cpu_time * factors.cpu_time,
            run_time: (usage.historical_run_time + usage.run_time) * factors.run_time,
            committed_run_time: usage.committed_run_time * factors.committed_run_time,
            job_slots: (1.0 + usage.job_slots) * factors.run_job,
            fwd_job_slots: factors
                .fwd_job
                .map_or(0.0, |factor| (1.0 + usage.fwd_job_slots) * factor),
            fairshare_adjustment: usage.fairshare_adjustment * factors.fairshare_adjustment,
            gpu_run_time: (usage.historical_gpu_run_time + usage.gpu_run_time)
                * factors.gpu_run_time,
        }
    }

    /// Their sum, raised to [`MIN_DENOMINATOR`].
    pub fn denominator(&self) -> f64 {
        let sum = self.cpu_time
            + self.run_time
            + self.committed_run_time
            + self.job_slots
            + self.fwd_job_slots
            + self.fairshare_adjustment
            + self.gpu_run_time;
        if sum.is_nan() {
            MIN_DENOMINATOR
        } else {
            sum.max(MIN_DENOMINATOR)
        }
    }
}

/// The dynamic priority of a user with `shares` shares and resource use
/// `usage`.
pub fn dynamic_priority(shares: u32, usage: &UsageTerms, factors: &FairshareFactors) -> f64 {
    f64::from(shares) / DenominatorTerms::new(usage, factors).denominator()
}
