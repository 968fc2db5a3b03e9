//! The HIST_HOURS decay, and quantities that grow and decay with it (a
//! user's CPU time, a pool queue's slot-hours).

use mcfed_protocol::SimTime;

/// The HIST_HOURS decay over `elapsed_hours`: what one unit becomes. It is
/// 0.1 after `hist_hours`; `hist_hours` 0 means no decay.
pub fn decay_factor(elapsed_hours: f64, hist_hours: f64) -> f64 {
    if hist_hours <= 0.0 || elapsed_hours <= 0.0 {
        1.0
    } else {
        0.1_f64.powf(elapsed_hours / hist_hours)
    }
}

pub(super) const MILLIS_PER_HOUR: f64 = 3_600_000.0;

/// What `hours` of use at one unit per hour, ending now, are worth after
/// the HIST_HOURS decay: the integral of `0.1^(s/hist_hours)` over them
/// (`hours` itself when `hist_hours` is 0, no decay).
pub fn decayed_hours(hours: f64, hist_hours: f64) -> f64 {
    if hist_hours <= 0.0 {
        hours
    } else {
        hist_hours / std::f64::consts::LN_10 * (1.0 - decay_factor(hours, hist_hours))
    }
}

pub(super) fn hours_between(earlier: SimTime, later: SimTime) -> f64 {
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
        // Integral of rate * 0.1^(s/H) from 0 to elapsed.
        let grown = self.rate * decayed_hours(elapsed, hist_hours);
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
