//! The one rule for when a member must next be woken.

use mcfed_protocol::SimTime;

/// What a member has pending, as its two halves report it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    /// The scheduler has work at the current time (something arrived or
    /// changed since its last pass).
    pub scheduler_now: bool,
    /// The scheduler's next timer: a job finishing, a reservation expiring.
    pub scheduler_at: Option<SimTime>,
    /// The forwarder has a session due for what happened (jobs to decide,
    /// replies to send, updates to act on).
    pub forwarder_now: bool,
    /// The forwarder's next timer: a recall (MAX_RSCHED_TIME).
    pub forwarder_at: Option<SimTime>,
}

/// When a member next needs to be woken, at `now`: at once when either
/// half has work for what happened; otherwise at the earlier of the two
/// timers (a timer already past is due now); never when neither has one.
///
/// Waking early is harmless (a pass with nothing to do does nothing);
/// waking late, or not at all, leaves jobs that could run pending. Every
/// driver schedules its wake-ups with this function alone.
pub fn next_wake(now: SimTime, pending: Pending) -> Option<SimTime> {
    if pending.scheduler_now || pending.forwarder_now {
        return Some(now);
    }
    let timer = match (pending.scheduler_at, pending.forwarder_at) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    timer.map(|at| at.max(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SimTime {
        SimTime::from_secs(secs)
    }

    #[test]
    fn nothing_pending_never_wakes() {
        assert_eq!(next_wake(at(5), Pending::default()), None);
    }

    #[test]
    fn work_for_what_happened_wakes_at_once() {
        let scheduler = Pending {
            scheduler_now: true,
            scheduler_at: Some(at(50)),
            ..Pending::default()
        };
        assert_eq!(next_wake(at(5), scheduler), Some(at(5)));
        let forwarder = Pending {
            forwarder_now: true,
            forwarder_at: Some(at(50)),
            ..Pending::default()
        };
        assert_eq!(next_wake(at(5), forwarder), Some(at(5)));
    }

    #[test]
    fn the_earlier_timer_wins() {
        let both = Pending {
            scheduler_at: Some(at(30)),
            forwarder_at: Some(at(20)),
            ..Pending::default()
        };
        assert_eq!(next_wake(at(5), both), Some(at(20)));
        let scheduler_only = Pending {
            scheduler_at: Some(at(30)),
            ..Pending::default()
        };
        assert_eq!(next_wake(at(5), scheduler_only), Some(at(30)));
        let forwarder_only = Pending {
            forwarder_at: Some(at(40)),
            ..Pending::default()
        };
        assert_eq!(next_wake(at(5), forwarder_only), Some(at(40)));
    }

    #[test]
    fn a_timer_already_past_is_due_now() {
        let late = Pending {
            scheduler_at: Some(at(3)),
            ..Pending::default()
        };
        assert_eq!(next_wake(at(5), late), Some(at(5)));
    }
}
