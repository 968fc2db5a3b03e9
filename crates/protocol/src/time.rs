//! Emulated time.
//!
//! mcfed never reads the wall clock inside its scheduling logic: every core
//! takes the current [`SimTime`] as an argument. A `SimTime` counts
//! milliseconds since the start of a scenario (or since a process started, for
//! live clusters).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A point in emulated time: milliseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(u64);

impl SimTime {
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time; used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// A time `millis` milliseconds after the start.
    pub const fn from_millis(millis: u64) -> Self {
        SimTime(millis)
    }

    /// A time `secs` seconds after the start.
    pub const fn from_secs(secs: u64) -> Self {
        SimTime(secs.saturating_mul(1000))
    }

    /// The time as milliseconds since the start.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// The time as (fractional) seconds since the start.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// The time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

/// Converts a duration to whole milliseconds, saturating at `u64::MAX`.
fn duration_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: Duration) -> SimTime {
        SimTime(self.0.saturating_add(duration_millis(rhs)))
    }
}

impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: Duration) -> SimTime {
        SimTime(self.0.saturating_sub(duration_millis(rhs)))
    }
}

impl From<Duration> for SimTime {
    fn from(duration: Duration) -> Self {
        SimTime(duration_millis(duration))
    }
}

impl fmt::Display for SimTime {
    /// Formats as `HH:MM:SS` (hours may exceed 24), with `.mmm` when the
    /// time is not a whole second.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total_secs = self.0 / 1000;
        let millis = self.0 % 1000;
        let (hours, minutes, seconds) =
            (total_secs / 3600, (total_secs / 60) % 60, total_secs % 60);
        write!(f, "{hours:02}:{minutes:02}:{seconds:02}")?;
        if millis != 0 {
            write!(f, ".{millis:03}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(SimTime::MAX + Duration::from_secs(1), SimTime::MAX);
        assert_eq!(SimTime::ZERO - Duration::from_secs(1), SimTime::ZERO);
        assert_eq!(
            SimTime::from_secs(90).saturating_since(SimTime::from_secs(30)),
            Duration::from_secs(60)
        );
        assert_eq!(
            SimTime::from_secs(1).saturating_since(SimTime::from_secs(30)),
            Duration::ZERO
        );
    }

    #[test]
    fn displays_as_clock() {
        assert_eq!(SimTime::from_secs(3723).to_string(), "01:02:03");
        assert_eq!(SimTime::from_millis(1500).to_string(), "00:00:01.500");
        assert_eq!(SimTime::from_secs(100 * 3600).to_string(), "100:00:00");
    }
}
