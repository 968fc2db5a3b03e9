//! The emulated clock the actor shells read (feature `actors`).
//!
//! Emulated time runs `speed` times faster than tokio's clock. Under a
//! paused tokio clock (in-process runs) tokio's clock itself jumps to the
//! next timer, so emulated time never waits on the wall clock.

use std::time::Duration;

use tokio::time::Instant;

use crate::time::SimTime;

/// Converts between tokio's clock and emulated time.
#[derive(Clone, Copy, Debug)]
pub struct EmulatedClock {
    origin: Instant,
    speed: f64,
}

impl EmulatedClock {
    /// A clock at emulated time zero now, running `speed` emulated seconds
    /// per second of tokio's clock (values below 1e-6 are raised to it).
    pub fn start(speed: f64) -> Self {
        EmulatedClock {
            origin: Instant::now(),
            speed: speed.max(1e-6),
        }
    }

    /// The current emulated time.
    pub fn now(&self) -> SimTime {
        let real = self.origin.elapsed();
        SimTime::from(real.mul_f64(self.speed))
    }

    /// How long to wait on tokio's clock for `emulated` to pass.
    pub fn real_delay(&self, emulated: Duration) -> Duration {
        emulated.div_f64(self.speed)
    }

    /// How long to wait on tokio's clock until emulated time `at`.
    pub fn real_delay_until(&self, at: SimTime) -> Duration {
        self.real_delay(at.saturating_since(self.now()))
    }
}
