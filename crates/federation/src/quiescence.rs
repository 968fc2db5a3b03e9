//! When a run that drains is over: the one drain rule the event loop, the
//! actor engine and the launcher of cluster processes all apply.

use std::time::Duration;

use mcfed_protocol::SimTime;

use crate::Member;

/// What a member, or a whole federation, has left to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    /// Something is due: a member must wake (a job running, a timer, work
    /// for what arrived), or, for a driver, a submission or a message is
    /// on its way.
    pub busy: bool,
    /// A forwarder holds jobs it has not placed: a further round of
    /// counter updates may let them go.
    pub holding: bool,
}

impl Activity {
    /// Both together (a federation is busy when any member is).
    pub fn and(self, other: Activity) -> Activity {
        Activity {
            busy: self.busy || other.busy,
            holding: self.holding || other.holding,
        }
    }
}

impl Member {
    /// What this member has left to do at `now`.
    pub fn activity(&mut self, now: SimTime) -> Activity {
        Activity {
            busy: self.next_wake(now).is_some(),
            holding: self
                .forwarder()
                .is_some_and(|forwarder| forwarder.waiting_jobs() > 0),
        }
    }
}

/// The drain rule: a federation is drained once nothing is due anywhere
/// and either no forwarder holds jobs or a whole round of counter updates
/// (the longest MC_PLUGIN_UPDATE_INTERVAL) has passed since it fell idle
/// without bringing any work — counters that would let a held job go
/// arrive within one interval.
#[derive(Clone, Debug)]
pub struct Quiescence {
    longest_interval: Duration,
    idle_since: Option<SimTime>,
}

impl Quiescence {
    /// The rule for a federation whose longest update interval is
    /// `longest_interval`.
    pub fn new(longest_interval: Duration) -> Self {
        Quiescence {
            longest_interval,
            idle_since: None,
        }
    }

    /// The rule for `members` (their longest update interval).
    pub fn of(members: &[Member]) -> Self {
        let longest = members
            .iter()
            .filter_map(|member| member.cluster().update_interval())
            .max()
            .unwrap_or_default();
        Quiescence::new(longest)
    }

    /// Takes the federation's `activity` at `now`; whether it is drained
    /// before what would happen next, at `next` (`now` when nothing is
    /// scheduled beyond the counter updates, or for a driver that polls).
    pub fn drained(&mut self, now: SimTime, next: SimTime, activity: Activity) -> bool {
        if activity.busy {
            self.idle_since = None;
            return false;
        }
        let since = *self.idle_since.get_or_insert(now);
        !activity.holding || next > since + self.longest_interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SimTime {
        SimTime::from_secs(secs)
    }

    const IDLE: Activity = Activity {
        busy: false,
        holding: false,
    };
    const HOLDING: Activity = Activity {
        busy: false,
        holding: true,
    };
    const BUSY: Activity = Activity {
        busy: true,
        holding: false,
    };

    #[test]
    fn an_idle_federation_holding_nothing_is_drained_at_once() {
        let mut rule = Quiescence::new(Duration::from_secs(30));
        assert!(!rule.drained(at(1), at(1), BUSY));
        assert!(rule.drained(at(2), at(2), IDLE));
    }

    #[test]
    fn a_holding_forwarder_gets_a_whole_update_interval() {
        let mut rule = Quiescence::new(Duration::from_secs(30));
        assert!(!rule.drained(at(10), at(10), HOLDING));
        assert!(
            !rule.drained(at(20), at(40), HOLDING),
            "exactly one interval"
        );
        assert!(rule.drained(at(20), at(41), HOLDING));
    }

    #[test]
    fn work_starts_the_interval_over() {
        let mut rule = Quiescence::new(Duration::from_secs(30));
        assert!(!rule.drained(at(10), at(10), HOLDING));
        assert!(!rule.drained(at(35), at(35), BUSY));
        assert!(
            !rule.drained(at(36), at(60), HOLDING),
            "idle again since 36"
        );
        assert!(rule.drained(at(36), at(67), HOLDING));
    }

    #[test]
    fn activities_combine() {
        assert_eq!(IDLE.and(BUSY), BUSY);
        assert_eq!(
            IDLE.and(HOLDING).and(BUSY),
            Activity {
                busy: true,
                holding: true
            }
        );
    }
}
