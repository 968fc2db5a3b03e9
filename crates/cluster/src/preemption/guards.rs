//! NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME: running jobs protected
//! from preemption.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A NO_PREEMPT_RUN_TIME or NO_PREEMPT_FINISH_TIME value: a time, or a
/// percentage of the job's run limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptGuard {
    /// A length of time.
    Time(Duration),
    /// A percentage (1 to 100) of the job's run limit (`bsub -W`); jobs
    /// without one are not protected.
    PercentOfRunLimit(u32),
}

/// Why a NO_PREEMPT_* value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreemptGuardParseError {
    /// A bare number: LSF counts minutes, mcfed wants the unit written.
    #[error(
        "`{0}` has no unit: write minutes as \"{0}m\" (LSF counts minutes), or a percentage as \"{0}%\""
    )]
    NoUnit(String),
    /// Not a duration.
    #[error("`{0}` is neither a duration (\"90m\", \"2h\") nor a percentage (\"50%\")")]
    Bad(String),
    /// A percentage out of 1..=100.
    #[error("`{0}`: a percentage must be between 1 and 100")]
    BadPercent(String),
}

impl FromStr for PreemptGuard {
    type Err = PreemptGuardParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Some(number) = text.strip_suffix('%') {
            return number
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|percent| (1..=100).contains(percent))
                .map(PreemptGuard::PercentOfRunLimit)
                .ok_or_else(|| PreemptGuardParseError::BadPercent(text.to_owned()));
        }
        if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
            return Err(PreemptGuardParseError::NoUnit(text.to_owned()));
        }
        humantime::parse_duration(text)
            .map(PreemptGuard::Time)
            .map_err(|_| PreemptGuardParseError::Bad(text.to_owned()))
    }
}

impl fmt::Display for PreemptGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PreemptGuard::Time(time) => write!(f, "{}", humantime::format_duration(*time)),
            PreemptGuard::PercentOfRunLimit(percent) => write!(f, "{percent}%"),
        }
    }
}

impl PreemptGuard {
    /// The guard as a time for a job expected to run `duration` in all
    /// (its run-time estimate, else its run limit), if it applies to that
    /// job.
    fn time(self, duration: Option<Duration>) -> Option<Duration> {
        match self {
            PreemptGuard::Time(time) => Some(time),
            PreemptGuard::PercentOfRunLimit(percent) => duration.map(|limit| limit * percent / 100),
        }
    }
}

/// NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME, as set at one level
/// (a queue, or lsb.params).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreemptGuards {
    /// NO_PREEMPT_RUN_TIME: jobs that have run this long are not preempted.
    pub run_time: Option<PreemptGuard>,
    /// NO_PREEMPT_FINISH_TIME: jobs with a run limit that will reach it
    /// within this time are not preempted.
    pub finish_time: Option<PreemptGuard>,
}

/// Why a running job may not be preempted now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// It has run at least NO_PREEMPT_RUN_TIME.
    RunTime,
    /// It will reach its run limit within NO_PREEMPT_FINISH_TIME.
    FinishTime,
}

impl PreemptGuards {
    /// Whether no guard is set: nothing is ever protected.
    pub fn is_empty(&self) -> bool {
        self.run_time.is_none() && self.finish_time.is_none()
    }

    /// These values over `below`'s: a queue's over the cluster's.
    pub fn over(&self, below: &PreemptGuards) -> PreemptGuards {
        PreemptGuards {
            run_time: self.run_time.or(below.run_time),
            finish_time: self.finish_time.or(below.finish_time),
        }
    }

    /// Whether a job that has run for `ran` (suspensions excluded) and is
    /// expected to run `duration` in all (its run-time estimate, else its
    /// run limit: [`crate::Job::expected_duration`]) is protected, and by
    /// which guard. Seed 003: NO_PREEMPT_FINISH_TIME spares "a job that has
    /// a run limit or a run time specified" and will finish within the
    /// window.
    pub fn protection(&self, ran: Duration, duration: Option<Duration>) -> Option<Protection> {
        if let Some(limit) = self.run_time.and_then(|guard| guard.time(duration)) {
            if ran >= limit {
                return Some(Protection::RunTime);
            }
        }
        if let (Some(window), Some(duration)) = (
            self.finish_time.and_then(|guard| guard.time(duration)),
            duration,
        ) {
            if duration.saturating_sub(ran) <= window {
                return Some(Protection::FinishTime);
            }
        }
        None
    }
}
