//! User-based fairshare (seed `002_094ae739d64d75db.txt`): share
//! assignments (`FAIRSHARE=USER_SHARES[...]`), the dynamic priority formula
//! with every term and its factors, the HIST_HOURS decay of CPU time, and the
//! fairshare adjustment plug-in.
//!
//! The formula, for one user in one queue:
//!
//! ```text
//! priority = shares / max(0.01,
//!       cpu_time * CPU_TIME_FACTOR
//!     + run_time * RUN_TIME_FACTOR
//!     + (1 + job_slots) * RUN_JOB_FACTOR
//!     + (1 + fwd_job_slots) * FWD_JOB_FACTOR
//!     + fairshare_adjustment * FAIRSHARE_ADJUSTMENT_FACTOR
//!     + (historical_gpu_run_time + gpu_run_time) * ngpus * GPU_RUN_TIME_FACTOR)
//! ```
//!
//! so a user's priority is at most 100 times their shares. Times are in
//! hours. [`dynamic_priority`] is the formula on given figures;
//! [`ShareAccount`] keeps one user's figures in one queue as jobs start,
//! stop and finish, in O(1) per change.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use mcfed_protocol::SimTime;

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
/// The smallest denominator of the formula: a priority is at most 100 times
/// the shares.
pub const MIN_DENOMINATOR: f64 = 0.01;
/// The share-assignment name for every user not named.
pub const DEFAULT_SHARE_USER: &str = "default";

/// A queue's `FAIRSHARE=USER_SHARES[[user, shares] ...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserShares {
    /// Users named, with their shares, in the order written.
    pub users: Vec<(String, u32)>,
    /// Shares of each user not named (`[default, n]`); without it, users
    /// not named cannot use the queue.
    pub default: Option<u32>,
}

impl UserShares {
    /// The shares of `user`, or `None` if the user has none in this queue.
    pub fn shares_of(&self, user: &str) -> Option<u32> {
        self.users
            .iter()
            .find(|(name, _)| name == user)
            .map(|&(_, shares)| shares)
            .or(self.default)
    }
}

/// Why a FAIRSHARE value does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UserSharesParseError {
    /// Not of the form `USER_SHARES[...]`.
    #[error("expected USER_SHARES[[user, shares] ...]")]
    NotUserShares,
    /// An entry is not `[name, number]`.
    #[error("bad share assignment `{0}`: expected [user, shares]")]
    BadEntry(String),
    /// Shares must be a positive whole number.
    #[error("bad number of shares in `{0}`: shares are a positive whole number")]
    BadShares(String),
    /// A user appears twice.
    #[error("user `{0}` has two share assignments")]
    Repeated(String),
    /// A form mcfed does not emulate (groups, `others`).
    #[error("`{0}`: mcfed assigns shares to single users and `default` only")]
    Unsupported(String),
    /// No assignment at all.
    #[error("USER_SHARES needs at least one [user, shares] assignment")]
    Empty,
}

impl FromStr for UserShares {
    type Err = UserSharesParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let inner = text
            .trim()
            .strip_prefix("USER_SHARES")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.trim_end().strip_suffix(']'))
            .ok_or(UserSharesParseError::NotUserShares)?;
        let mut shares = UserShares {
            users: Vec::new(),
            default: None,
        };
        let mut rest = inner.trim();
        while !rest.is_empty() {
            let body = rest
                .strip_prefix('[')
                .ok_or_else(|| UserSharesParseError::BadEntry(rest.to_owned()))?;
            let close = body
                .find(']')
                .ok_or_else(|| UserSharesParseError::BadEntry(rest.to_owned()))?;
            let entry = &body[..close];
            rest = body[close + 1..].trim_start();
            let (name, number) = entry
                .split_once(',')
                .ok_or_else(|| UserSharesParseError::BadEntry(format!("[{entry}]")))?;
            let (name, number) = (name.trim(), number.trim());
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(UserSharesParseError::BadEntry(format!("[{entry}]")));
            }
            if name == "others" || name.ends_with('@') {
                return Err(UserSharesParseError::Unsupported(name.to_owned()));
            }
            let count: u32 = number
                .parse()
                .ok()
                .filter(|&count| count > 0)
                .ok_or_else(|| UserSharesParseError::BadShares(format!("[{entry}]")))?;
            if name == DEFAULT_SHARE_USER {
                if shares.default.replace(count).is_some() {
                    return Err(UserSharesParseError::Repeated(name.to_owned()));
                }
            } else {
                if shares.users.iter().any(|(other, _)| other == name) {
                    return Err(UserSharesParseError::Repeated(name.to_owned()));
                }
                shares.users.push((name.to_owned(), count));
            }
        }
        if shares.users.is_empty() && shares.default.is_none() {
            return Err(UserSharesParseError::Empty);
        }
        Ok(shares)
    }
}

impl fmt::Display for UserShares {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("USER_SHARES[")?;
        let mut first = true;
        let default = self.default.map(|n| (DEFAULT_SHARE_USER, n));
        for (name, count) in self
            .users
            .iter()
            .map(|(name, count)| (name.as_str(), *count))
            .chain(default)
        {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "[{name}, {count}]")?;
        }
        f.write_str("]")
    }
}

/// The LSF names of the factors, in the order of
/// [`FairshareOverrides::named_values`].
pub const FACTOR_NAMES: [&str; 7] = [
    "CPU_TIME_FACTOR",
    "RUN_TIME_FACTOR",
    "RUN_JOB_FACTOR",
    "FWD_JOB_FACTOR",
    "FAIRSHARE_ADJUSTMENT_FACTOR",
    "HIST_HOURS",
    "GPU_RUN_TIME_FACTOR",
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
        }
    }

    /// Each set value with its LSF name, for checking.
    pub fn named_values(&self) -> [(&'static str, Option<f64>); 7] {
        let values = [
            self.cpu_time,
            self.run_time,
            self.run_job,
            self.fwd_job,
            self.fairshare_adjustment,
            self.hist_hours,
            self.gpu_run_time,
        ];
        std::array::from_fn(|index| (FACTOR_NAMES[index], values[index]))
    }
}

/// One user's resource use in one queue, the inputs of the formula.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UsageTerms {
    /// Decayed cumulative CPU time, in hours.
    pub cpu_time: f64,
    /// Run time of the user's running jobs, in hours.
    pub run_time: f64,
    /// Job slots reserved and in use.
    pub job_slots: f64,
    /// Job slots of the user's jobs forwarded to other clusters.
    pub fwd_job_slots: f64,
    /// What the fairshare adjustment plug-in returned.
    pub fairshare_adjustment: f64,
    /// Run time of finished GPU jobs, in hours.
    pub historical_gpu_run_time: f64,
    /// Run time of running GPU jobs, in hours.
    pub gpu_run_time: f64,
    /// Physical GPUs in use.
    pub gpus: f64,
}

/// The terms of the formula's denominator, each already weighted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DenominatorTerms {
    /// `cpu_time * CPU_TIME_FACTOR`.
    pub cpu_time: f64,
    /// `run_time * RUN_TIME_FACTOR`.
    pub run_time: f64,
    /// `(1 + job_slots) * RUN_JOB_FACTOR`.
    pub job_slots: f64,
    /// `(1 + fwd_job_slots) * FWD_JOB_FACTOR`, 0 when the factor is not
    /// defined.
    pub fwd_job_slots: f64,
    /// `fairshare_adjustment * FAIRSHARE_ADJUSTMENT_FACTOR`.
    pub fairshare_adjustment: f64,
    /// `(historical_gpu_run_time + gpu_run_time) * ngpus * GPU_RUN_TIME_FACTOR`.
    pub gpu_run_time: f64,
}

impl DenominatorTerms {
    /// The terms of `usage` under `factors`.
    pub fn new(usage: &UsageTerms, factors: &FairshareFactors) -> Self {
        DenominatorTerms {
            cpu_time: usage.cpu_time * factors.cpu_time,
            run_time: usage.run_time * factors.run_time,
            job_slots: (1.0 + usage.job_slots) * factors.run_job,
            fwd_job_slots: factors
                .fwd_job
                .map_or(0.0, |factor| (1.0 + usage.fwd_job_slots) * factor),
            fairshare_adjustment: usage.fairshare_adjustment * factors.fairshare_adjustment,
            gpu_run_time: (usage.historical_gpu_run_time + usage.gpu_run_time)
                * usage.gpus
                * factors.gpu_run_time,
        }
    }

    /// Their sum, raised to [`MIN_DENOMINATOR`].
    pub fn denominator(&self) -> f64 {
        let sum = self.cpu_time
            + self.run_time
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

/// The HIST_HOURS decay over `elapsed_hours`: what one unit becomes. It is
/// 0.1 after `hist_hours`; `hist_hours` 0 means no decay.
pub fn decay_factor(elapsed_hours: f64, hist_hours: f64) -> f64 {
    if hist_hours <= 0.0 || elapsed_hours <= 0.0 {
        1.0
    } else {
        0.1_f64.powf(elapsed_hours / hist_hours)
    }
}

const MILLIS_PER_HOUR: f64 = 3_600_000.0;

fn hours_between(earlier: SimTime, later: SimTime) -> f64 {
    later.as_millis().saturating_sub(earlier.as_millis()) as f64 / MILLIS_PER_HOUR
}

/// A quantity that grows at a piecewise-constant rate (units per hour) and
/// decays under HIST_HOURS: the decayed CPU time of a user, or the decayed
/// slots a pool queue has used. Exact: between two changes of rate the
/// growth is integrated in closed form.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DecayingTotal {
    value: f64,
    rate: f64,
    at: SimTime,
}

impl DecayingTotal {
    /// The value at `now` (not before the last change).
    pub fn value_at(&self, now: SimTime, hist_hours: f64) -> f64 {
        let elapsed = hours_between(self.at, now);
        if elapsed <= 0.0 {
            return self.value;
        }
        let factor = decay_factor(elapsed, hist_hours);
        let grown = if hist_hours <= 0.0 {
            self.rate * elapsed
        } else {
            // Integral of rate * 0.1^(s/H) from 0 to elapsed.
            self.rate * hist_hours / std::f64::consts::LN_10 * (1.0 - factor)
        };
        self.value * factor + grown
    }

    /// The current rate, in units per hour.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Changes the rate by `delta` from `now` on.
    pub fn add_rate(&mut self, now: SimTime, delta: f64, hist_hours: f64) {
        self.settle(now, hist_hours);
        self.rate += delta;
        if self.rate.abs() < 1e-9 {
            self.rate = 0.0;
        }
    }

    /// Adds `amount` at once at `now`.
    pub fn add(&mut self, now: SimTime, amount: f64, hist_hours: f64) {
        self.settle(now, hist_hours);
        self.value += amount;
    }

    fn settle(&mut self, now: SimTime, hist_hours: f64) {
        if now > self.at {
            self.value = self.value_at(now, hist_hours);
            self.at = now;
        }
    }
}

/// What the fairshare adjustment plug-in is given for one user: everything
/// the default formula uses except the shares, plus memory (seed 002).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdjustmentInput {
    /// Decayed CPU time, hours.
    pub cpu_time: f64,
    /// Run time of running jobs, hours.
    pub run_time: f64,
    /// Job slots reserved and in use.
    pub job_slots: f64,
    /// Forwarded job slots.
    pub fwd_job_slots: f64,
    /// Slots in use by the user's started jobs.
    pub used_slots: f64,
    /// Memory in use by the user's started jobs, MB.
    pub used_memory_mb: f64,
    /// Memory in use by every started job of the cluster, MB.
    pub cluster_memory_in_use_mb: f64,
    /// The average memory per slot in the cluster, MB.
    pub slot_memory_mb: f64,
}

/// The fairshare adjustment plug-in (`libfairshareadjust`): a term added to
/// the denominator of the dynamic priority, weighted by
/// FAIRSHARE_ADJUSTMENT_FACTOR. It is cluster-wide, not per queue.
pub trait FairshareAdjustment: fmt::Debug + Send + Sync {
    /// The adjustment for one user.
    fn adjustment(&self, input: &AdjustmentInput) -> f64;
}

/// The seed's example plug-in: users whose jobs use more memory per slot
/// than the cluster offers per slot (times THRESHOLD) count as using more
/// slots:
///
/// `adjustment = (1 + slots) * ((used_memory / used_slots) / (slot_memory * THRESHOLD))`
///
/// It returns 0 for a user with no slots in use, or when the cluster
/// declares no memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryAdjustment {
    /// THRESHOLD.
    pub threshold: f64,
}

impl FairshareAdjustment for MemoryAdjustment {
    fn adjustment(&self, input: &AdjustmentInput) -> f64 {
        if input.used_slots <= 0.0 || input.slot_memory_mb <= 0.0 || self.threshold <= 0.0 {
            return 0.0;
        }
        (1.0 + input.job_slots)
            * ((input.used_memory_mb / input.used_slots) / (input.slot_memory_mb * self.threshold))
    }
}

/// The memory plug-in's THRESHOLD when none is set.
pub const DEFAULT_MEMORY_THRESHOLD: f64 = 1.0;

/// Which built-in adjustment plug-in a cluster loads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum AdjustmentPlugin {
    /// None: the adjustment is 0.
    #[default]
    None,
    /// [`MemoryAdjustment`].
    Memory {
        /// THRESHOLD.
        threshold: f64,
    },
}

impl AdjustmentPlugin {
    /// The plug-in, if any.
    pub fn build(&self) -> Option<Arc<dyn FairshareAdjustment>> {
        match *self {
            AdjustmentPlugin::None => None,
            AdjustmentPlugin::Memory { threshold } => {
                Some(Arc::new(MemoryAdjustment { threshold }))
            }
        }
    }
}

/// What a running job contributes to its user's account.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobUse {
    /// Its slots.
    pub slots: u32,
    /// Its CPU utilisation (CPU hours per slot-hour).
    pub cpu_utilisation: f32,
    /// Its memory, MB.
    pub memory_mb: u64,
    /// When it last started or resumed.
    pub running_since: SimTime,
    /// How long it ran before that.
    pub ran_before: std::time::Duration,
}

impl JobUse {
    fn run_offset_ms(&self) -> i128 {
        i128::from(self.running_since.as_millis()) - self.ran_before.as_millis() as i128
    }

    fn cpu_hours_per_hour(&self) -> f64 {
        f64::from(self.slots) * f64::from(self.cpu_utilisation)
    }
}

/// One user's fairshare figures in one queue, kept up to date as the user's
/// jobs start, stop and finish.
#[derive(Clone, Debug, Default)]
pub struct ShareAccount {
    /// The user's shares.
    pub shares: u32,
    /// Running jobs.
    pub running_jobs: u32,
    /// Slots of running jobs (the formula's job_slots).
    pub running_slots: u32,
    /// Memory of running jobs, MB.
    pub memory_mb: u64,
    /// Sum over running jobs of (last start − run time before it), in ms:
    /// the run time of running jobs at `now` is
    /// `running_jobs * now − run_offset`.
    run_offset_ms: i128,
    /// Decayed CPU hours; grows at the CPU hours per hour of the running
    /// jobs (slots × CPU utilisation).
    cpu: DecayingTotal,
}

impl ShareAccount {
    /// An account with `shares` shares and no use.
    pub fn new(shares: u32) -> Self {
        ShareAccount {
            shares,
            ..ShareAccount::default()
        }
    }

    /// `job` starts (or resumes) running at `job.running_since`.
    pub fn job_runs(&mut self, job: &JobUse, hist_hours: f64) {
        self.running_jobs += 1;
        self.running_slots += job.slots;
        self.memory_mb += job.memory_mb;
        self.run_offset_ms += job.run_offset_ms();
        self.cpu
            .add_rate(job.running_since, job.cpu_hours_per_hour(), hist_hours);
    }

    /// `job` stops running at `now` (suspended, finished or terminated). Its
    /// CPU time stays in the history.
    pub fn job_stops(&mut self, now: SimTime, job: &JobUse, hist_hours: f64) {
        self.running_jobs = self.running_jobs.saturating_sub(1);
        self.running_slots = self.running_slots.saturating_sub(job.slots);
        self.memory_mb = self.memory_mb.saturating_sub(job.memory_mb);
        self.run_offset_ms -= job.run_offset_ms();
        self.cpu
            .add_rate(now, -job.cpu_hours_per_hour(), hist_hours);
    }

    /// Decayed CPU time at `now`, hours.
    pub fn cpu_time(&self, now: SimTime, hist_hours: f64) -> f64 {
        self.cpu.value_at(now, hist_hours)
    }

    /// Run time of running jobs at `now`, hours.
    pub fn run_time(&self, now: SimTime) -> f64 {
        let total =
            i128::from(self.running_jobs) * i128::from(now.as_millis()) - self.run_offset_ms;
        total.max(0) as f64 / MILLIS_PER_HOUR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn parses_user_shares() {
        let shares: UserShares = "USER_SHARES[[alice, 10] [bob, 5] [default, 1]]"
            .parse()
            .expect("valid");
        assert_eq!(shares.shares_of("alice"), Some(10));
        assert_eq!(shares.shares_of("bob"), Some(5));
        assert_eq!(shares.shares_of("carol"), Some(1));
        assert_eq!(
            shares.to_string(),
            "USER_SHARES[[alice, 10] [bob, 5] [default, 1]]"
        );
        let only: UserShares = "USER_SHARES[[alice,2]]".parse().expect("valid");
        assert_eq!(only.shares_of("bob"), None, "no default: no shares");
    }

    #[test]
    fn refuses_bad_user_shares() {
        for (text, expected) in [
            ("[[alice, 1]]", UserSharesParseError::NotUserShares),
            ("USER_SHARES[]", UserSharesParseError::Empty),
            (
                "USER_SHARES[[alice 1]]",
                UserSharesParseError::BadEntry("[alice 1]".into()),
            ),
            (
                "USER_SHARES[[alice, 0]]",
                UserSharesParseError::BadShares("[alice, 0]".into()),
            ),
            (
                "USER_SHARES[[alice, 1] [alice, 2]]",
                UserSharesParseError::Repeated("alice".into()),
            ),
            (
                "USER_SHARES[[others, 1]]",
                UserSharesParseError::Unsupported("others".into()),
            ),
        ] {
            assert_eq!(text.parse::<UserShares>(), Err(expected), "{text}");
        }
    }

    fn factors() -> FairshareFactors {
        FairshareFactors::default()
    }

    #[test]
    fn defaults_are_the_seeds() {
        let f = factors();
        assert_eq!(
            (f.cpu_time, f.run_time, f.run_job, f.fwd_job),
            (0.7, 0.7, 3.0, None)
        );
        assert_eq!(
            (f.fairshare_adjustment, f.hist_hours, f.gpu_run_time),
            (0.0, 5.0, 0.0)
        );
    }

    #[test]
    fn queue_values_override_cluster_values() {
        let cluster = FairshareOverrides {
            cpu_time: Some(1.0),
            run_job: Some(2.0),
            ..FairshareOverrides::default()
        };
        let queue = FairshareOverrides {
            run_job: Some(5.0),
            ..FairshareOverrides::default()
        };
        let resolved = queue.over(&cluster).resolve();
        assert_eq!(resolved.cpu_time, 1.0, "from the cluster");
        assert_eq!(resolved.run_job, 5.0, "the queue's wins");
        assert_eq!(resolved.run_time, 0.7, "the default");
    }

    /// An idle user: only `(1 + 0) * RUN_JOB_FACTOR` = 3, so shares / 3.
    #[test]
    fn idle_user_priority_is_shares_over_run_job_factor() {
        let p = dynamic_priority(10, &UsageTerms::default(), &factors());
        assert!(close(p, 10.0 / 3.0), "{p}");
    }

    /// Each term on its own, against hand-computed values.
    #[test]
    fn each_term_against_hand_computed_values() {
        let all = FairshareFactors {
            cpu_time: 0.7,
            run_time: 0.7,
            run_job: 3.0,
            fwd_job: Some(2.0),
            fairshare_adjustment: 0.5,
            hist_hours: 5.0,
            gpu_run_time: 0.25,
        };
        let usage = UsageTerms {
            cpu_time: 2.0,
            run_time: 1.5,
            job_slots: 4.0,
            fwd_job_slots: 3.0,
            fairshare_adjustment: 6.0,
            historical_gpu_run_time: 1.0,
            gpu_run_time: 3.0,
            gpus: 2.0,
        };
        let terms = DenominatorTerms::new(&usage, &all);
        assert!(close(terms.cpu_time, 1.4), "2.0 h * 0.7");
        assert!(close(terms.run_time, 1.05), "1.5 h * 0.7");
        assert!(close(terms.job_slots, 15.0), "(1 + 4) * 3");
        assert!(close(terms.fwd_job_slots, 8.0), "(1 + 3) * 2");
        assert!(close(terms.fairshare_adjustment, 3.0), "6 * 0.5");
        assert!(close(terms.gpu_run_time, 2.0), "(1 + 3) * 2 * 0.25");
        let p = dynamic_priority(100, &usage, &all);
        assert!(close(p, 100.0 / 30.45), "{p}");
        // FWD_JOB_FACTOR not defined: the term is absent.
        let no_fwd = FairshareFactors {
            fwd_job: None,
            ..all
        };
        assert_eq!(DenominatorTerms::new(&usage, &no_fwd).fwd_job_slots, 0.0);
    }

    /// The denominator never goes below 0.01: at most 100 × shares.
    #[test]
    fn the_floor_caps_priority_at_100_times_shares() {
        let free = FairshareFactors {
            cpu_time: 0.0,
            run_time: 0.0,
            run_job: 0.0,
            ..factors()
        };
        let p = dynamic_priority(7, &UsageTerms::default(), &free);
        assert!(close(p, 700.0), "{p}");
        let tiny = FairshareFactors {
            run_job: 0.001,
            ..free
        };
        assert!(close(
            dynamic_priority(7, &UsageTerms::default(), &tiny),
            700.0
        ));
        let above = FairshareFactors {
            run_job: 0.02,
            ..free
        };
        assert!(close(
            dynamic_priority(7, &UsageTerms::default(), &above),
            350.0
        ));
    }

    #[test]
    fn one_hour_decays_to_a_tenth_after_hist_hours() {
        assert!(close(decay_factor(5.0, 5.0), 0.1));
        assert!(close(decay_factor(10.0, 5.0), 0.01));
        assert!(close(decay_factor(2.5, 5.0), 0.1_f64.sqrt()));
        assert_eq!(decay_factor(7.0, 0.0), 1.0, "HIST_HOURS=0: no decay");
        let mut total = DecayingTotal::default();
        total.add(SimTime::ZERO, 1.0, 5.0);
        let later = SimTime::from_secs(5 * 3600);
        assert!(close(total.value_at(later, 5.0), 0.1));
        assert!(close(total.value_at(later, 10.0), 0.1_f64.sqrt()));
    }

    /// Growth at a constant rate integrates the decay exactly:
    /// ∫₀ᵀ r·0.1^(s/H) ds = r·H/ln 10·(1 − 0.1^(T/H)).
    #[test]
    fn growth_integrates_the_decay() {
        let mut total = DecayingTotal::default();
        total.add_rate(SimTime::ZERO, 2.0, 5.0);
        let one_hour = SimTime::from_secs(3600);
        let expected = 2.0 * 5.0 / std::f64::consts::LN_10 * (1.0 - 0.1_f64.powf(0.2));
        assert!(close(total.value_at(one_hour, 5.0), expected));
        // Without decay, plain accumulation.
        assert!(close(total.value_at(one_hour, 0.0), 2.0));
        // Settling part-way changes nothing.
        let mut split = DecayingTotal::default();
        split.add_rate(SimTime::ZERO, 2.0, 5.0);
        split.add_rate(SimTime::from_secs(1800), 0.0, 5.0);
        assert!(close(split.value_at(one_hour, 5.0), expected));
    }

    #[test]
    fn account_tracks_run_time_and_cpu_time() {
        let mut account = ShareAccount::new(10);
        let start = SimTime::from_secs(3600);
        // Two slots at half CPU: 1 CPU hour per hour.
        let first = JobUse {
            slots: 2,
            cpu_utilisation: 0.5,
            memory_mb: 100,
            running_since: start,
            ran_before: std::time::Duration::ZERO,
        };
        // A second job that already ran 30 minutes before a suspension.
        let second = JobUse {
            slots: 1,
            cpu_utilisation: 1.0,
            memory_mb: 50,
            running_since: start,
            ran_before: std::time::Duration::from_secs(1800),
        };
        account.job_runs(&first, 0.0);
        account.job_runs(&second, 0.0);
        let later = SimTime::from_secs(2 * 3600);
        assert!(close(account.run_time(later), 1.0 + 1.5));
        assert!(close(account.cpu_time(later, 0.0), 2.0));
        assert_eq!((account.running_slots, account.memory_mb), (3, 150));
        account.job_stops(later, &first, 0.0);
        assert!(close(account.run_time(later), 1.5));
        assert!(close(account.cpu_time(later, 0.0), 2.0), "history stays");
        assert_eq!((account.running_jobs, account.running_slots), (1, 1));
    }

    /// The seed's memory plug-in: (1 + slots) * ((mem / slots) / (slot_mem * THRESHOLD)).
    #[test]
    fn memory_plugin_against_hand_computed_values() {
        let plugin = MemoryAdjustment { threshold: 2.0 };
        let input = AdjustmentInput {
            job_slots: 4.0,
            used_slots: 4.0,
            used_memory_mb: 16_000.0,
            slot_memory_mb: 1_000.0,
            ..AdjustmentInput::default()
        };
        // (1 + 4) * ((16000 / 4) / (1000 * 2)) = 5 * 2 = 10.
        assert!(close(plugin.adjustment(&input), 10.0));
        let idle = AdjustmentInput {
            used_slots: 0.0,
            ..input
        };
        assert_eq!(plugin.adjustment(&idle), 0.0);
        let no_memory = AdjustmentInput {
            slot_memory_mb: 0.0,
            ..input
        };
        assert_eq!(plugin.adjustment(&no_memory), 0.0);
        assert!(AdjustmentPlugin::None.build().is_none());
        let built = AdjustmentPlugin::Memory { threshold: 2.0 }
            .build()
            .expect("a plug-in");
        assert!(close(built.adjustment(&input), 10.0));
    }
}
