//! The one rule for every number that enters mcfed from outside — a
//! scenario or LSF file, a trace, a command-line flag, a `bsub` option, a
//! wire frame: it must lie within a [`Bound`], and a number out of bounds
//! is refused with the same words wherever it enters ([`BoundError`]).
//!
//! The caps are mcfed's, not LSF's. They are far above any real site (a
//! million hosts, ten million jobs in one scenario entry) and keep every
//! size mcfed derives from them — memory for jobs and hosts, slot sums in
//! `u32` counters — representable and allocatable.

use std::fmt;
use std::time::Duration;

/// The inclusive range a number from outside must lie in, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// What the number is, as the user wrote it (`count`, `MXJ`, `-n`).
    pub what: &'static str,
    /// The smallest value accepted.
    pub min: u64,
    /// The largest value accepted.
    pub max: u64,
    /// Why the cap is there, for the error.
    pub why: &'static str,
}

/// A number outside its [`Bound`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} = {value} is out of bounds: {range} ({why})")]
pub struct BoundError {
    /// What the number is.
    pub what: &'static str,
    /// The value given, as written back to the user.
    pub value: String,
    /// The accepted range, in words.
    pub range: String,
    /// Why the cap is there.
    pub why: &'static str,
}

impl Bound {
    /// Checks `value`.
    pub fn check(&self, value: u64) -> Result<u64, BoundError> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(self.error(
                value.to_string(),
                self.min.to_string(),
                self.max.to_string(),
            ))
        }
    }

    /// Checks a signed or wider `value` (a negative or huge number from a
    /// parser), returning it as `u64`.
    pub fn check_i128(&self, value: i128) -> Result<u64, BoundError> {
        match u64::try_from(value) {
            Ok(value) => self.check(value),
            Err(_) => Err(self.error(
                value.to_string(),
                self.min.to_string(),
                self.max.to_string(),
            )),
        }
    }

    /// Checks `value` and returns it as `u32` (every bound that guards a
    /// `u32` has a `max` that fits).
    pub fn check_u32(&self, value: u64) -> Result<u32, BoundError> {
        let value = self.check(value)?;
        u32::try_from(value).map_err(|_| {
            self.error(
                value.to_string(),
                self.min.to_string(),
                u32::MAX.to_string(),
            )
        })
    }

    /// Checks a duration, whose bound is in milliseconds.
    pub fn check_duration(&self, value: Duration) -> Result<Duration, BoundError> {
        let millis = u64::try_from(value.as_millis()).unwrap_or(u64::MAX);
        if (self.min..=self.max).contains(&millis) {
            Ok(value)
        } else {
            Err(self.error(
                humanize_millis(u64::try_from(value.as_millis()).unwrap_or(u64::MAX)),
                humanize_millis(self.min),
                humanize_millis(self.max),
            ))
        }
    }

    fn error(&self, value: String, min: String, max: String) -> BoundError {
        BoundError {
            what: self.what,
            value,
            range: format!("mcfed accepts {min} to {max}"),
            why: self.why,
        }
    }
}

/// Milliseconds in words: `0s`, `250ms`, `90s`, `3600s`.
fn humanize_millis(millis: u64) -> String {
    if millis % 1000 == 0 {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}..={}", self.what, self.min, self.max)
    }
}

/// Seconds in a (non-leap) year.
const YEAR_SECS: u64 = 365 * 24 * 3600;

/// Jobs one scenario entry (`[[cluster.job]]`, `[[submit]]`) makes with
/// `count`; a job takes a few hundred bytes, so the cap is a few GB.
pub const JOB_COUNT: Bound = Bound {
    what: "count",
    min: 1,
    max: 10_000_000,
    why: "jobs one entry makes; each takes memory",
};

/// Hosts one `[[cluster.host]]` entry makes with `count`.
pub const HOST_COUNT: Bound = Bound {
    what: "count",
    min: 1,
    max: 1_000_000,
    why: "hosts one entry makes; each takes memory",
};

/// Job slots of one host (`MXJ`, `ncpus`).
pub const HOST_SLOTS: Bound = Bound {
    what: "MXJ",
    min: 1,
    max: 1_000_000,
    why: "job slots of one host",
};

/// Job slots of one cluster, all its hosts together: slot counters are
/// `u32`, and the sum of any two of them must not overflow.
pub const CLUSTER_SLOTS: Bound = Bound {
    what: "slots of a cluster (MXJ summed over its hosts)",
    min: 0,
    max: 1_000_000_000,
    why: "slot counters must not overflow",
};

/// Slots one job asks for (`bsub -n`, a job table's `slots`, a trace's
/// processors).
pub const JOB_SLOTS: Bound = Bound {
    what: "slots",
    min: 1,
    max: 1_000_000,
    why: "slots one job asks for",
};

/// Memory one job uses, in MB.
pub const JOB_MEMORY_MB: Bound = Bound {
    what: "memory_mb",
    min: 0,
    max: 1 << 40,
    why: "memory one job uses, in MB",
};

/// A job's run time or run limit (`--run-time`, `-W`, a trace's run
/// time), in milliseconds: at most a hundred years.
pub const JOB_DURATION: Bound = Bound {
    what: "run time",
    min: 0,
    max: 100 * YEAR_SECS * 1000,
    why: "a hundred years of emulated time",
};

/// MC_PLUGIN_UPDATE_INTERVAL (and a sweep's `--interval`), in
/// milliseconds: at least a second, so a run has a bounded number of
/// updates per emulated second, and at most a day.
pub const UPDATE_INTERVAL: Bound = Bound {
    what: "MC_PLUGIN_UPDATE_INTERVAL",
    min: 1000,
    max: 24 * 3600 * 1000,
    why: "counter updates must come at most once per emulated second and at least once a day",
};

/// A scenario's `end` and every time in it, in milliseconds.
pub const SCENARIO_TIME: Bound = Bound {
    what: "time",
    min: 0,
    max: 100 * YEAR_SECS * 1000,
    why: "a hundred years of emulated time",
};

/// Clusters in one federation (a scenario, `mcfed replay --clusters`).
pub const CLUSTER_COUNT: Bound = Bound {
    what: "clusters",
    min: 1,
    max: 1000,
    why: "clusters in one federation; each is a member with its own state",
};

/// Jobs one batched `mcfed bsub` request carries.
pub const SUBMIT_BATCH: Bound = Bound {
    what: "jobs in one submission batch",
    min: 1,
    max: 4096,
    why: "one batch must fit one admin frame",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_passes_outside_is_refused_with_the_same_words() {
        assert_eq!(JOB_COUNT.check(5), Ok(5));
        let error = JOB_COUNT.check(1_000_000_000).expect_err("too many");
        assert_eq!(
            error.to_string(),
            "count = 1000000000 is out of bounds: mcfed accepts 1 to 10000000 (jobs one entry makes; each takes memory)"
        );
        assert!(HOST_SLOTS.check(0).is_err());
        assert!(HOST_SLOTS.check_u32(u64::from(u32::MAX)).is_err());
        assert!(JOB_SLOTS.check_i128(-3).is_err());
    }

    #[test]
    fn durations_are_bounded_in_milliseconds() {
        assert!(UPDATE_INTERVAL.check_duration(Duration::ZERO).is_err());
        let error = UPDATE_INTERVAL
            .check_duration(Duration::from_millis(10))
            .expect_err("too short");
        assert!(error.to_string().contains("10ms"), "{error}");
        assert!(
            UPDATE_INTERVAL
                .check_duration(Duration::from_secs(30))
                .is_ok()
        );
        assert!(JOB_DURATION.check_duration(Duration::MAX).is_err());
    }
}
