//! When a member publishes its counters: the one publish schedule every
//! driver follows (seed 004: "counters take the time set in
//! MC_PLUGIN_UPDATE_INTERVAL to update").

use std::time::Duration;

use mcfed_protocol::SimTime;

/// The publish schedule of one member: the first update one
/// MC_PLUGIN_UPDATE_INTERVAL after time zero, then one every interval, on
/// a grid that never drifts. The next update is at the first multiple of
/// the interval after the last one taken, so a member woken late, or
/// restored after a crash, keeps the grid and skips the rounds it missed
/// rather than sending them in a burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PublishClock {
    /// When the last round was taken (published or skipped); time zero
    /// before the first.
    last: SimTime,
}

impl Default for PublishClock {
    fn default() -> Self {
        PublishClock {
            last: SimTime::ZERO,
        }
    }
}

impl PublishClock {
    /// A schedule whose rounds up to `now` are behind it (a member restored
    /// at `now`).
    pub(crate) fn after(now: SimTime) -> Self {
        PublishClock { last: now }
    }

    /// When the next round is due, every `interval` (`None`: an interval
    /// of zero publishes nothing).
    pub(crate) fn next(&self, interval: Duration) -> Option<SimTime> {
        let every = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        if every == 0 {
            return None;
        }
        let rounds = self.last.as_millis() / every + 1;
        Some(SimTime::from_millis(rounds.saturating_mul(every)))
    }

    /// Takes the round due at `now`, if one is: whether one was.
    pub(crate) fn take(&mut self, now: SimTime, interval: Duration) -> bool {
        match self.next(interval) {
            Some(due) if due <= now => {
                self.last = now;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn at(secs: u64) -> SimTime {
        SimTime::from_secs(secs)
    }

    #[test]
    fn the_first_round_is_one_interval_after_time_zero_then_every_interval() {
        let mut clock = PublishClock::default();
        assert_eq!(clock.next(MINUTE), Some(at(60)));
        assert!(!clock.take(at(59), MINUTE), "not due yet");
        assert!(clock.take(at(60), MINUTE));
        assert_eq!(clock.next(MINUTE), Some(at(120)));
        assert!(!clock.take(at(60), MINUTE), "one round per time");
    }

    #[test]
    fn a_late_round_keeps_the_grid_and_skips_what_it_missed() {
        let mut clock = PublishClock::default();
        assert!(clock.take(at(61), MINUTE), "late by a second");
        assert_eq!(clock.next(MINUTE), Some(at(120)), "not 121");
        assert!(clock.take(at(250), MINUTE), "woken very late");
        assert_eq!(clock.next(MINUTE), Some(at(300)), "one round, not three");
    }

    #[test]
    fn a_restored_member_resumes_on_the_grid() {
        let clock = PublishClock::after(at(90));
        assert_eq!(clock.next(MINUTE), Some(at(120)));
        let exact = PublishClock::after(at(120));
        assert_eq!(exact.next(MINUTE), Some(at(180)));
    }

    #[test]
    fn a_zero_interval_publishes_nothing() {
        let mut clock = PublishClock::default();
        assert_eq!(clock.next(Duration::ZERO), None);
        assert!(!clock.take(at(1), Duration::ZERO));
    }
}
