//! The emulated clock the actor shells read.
//!
//! Emulated time runs `speed` times faster than tokio's clock. Under a
//! paused tokio clock (in-process runs) tokio's clock itself jumps to the
//! next timer, so emulated time never waits on the wall clock.

use std::time::Duration;

use tokio::time::Instant;

use mcfed_protocol::SimTime;

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

    /// A clock at emulated time zero at `origin` (which may be in the future:
    /// emulated time stays zero until then), running `speed` emulated seconds
    /// per second of tokio's clock. Processes of one federation share an
    /// origin so that they agree on emulated time.
    pub fn with_origin(origin: Instant, speed: f64) -> Self {
        EmulatedClock {
            origin,
            speed: speed.max(1e-6),
        }
    }

    /// The speed factor: emulated seconds per second of tokio's clock.
    pub fn speed(&self) -> f64 {
        self.speed
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

    /// How long to wait on tokio's clock until emulated time `at` (zero if
    /// it has passed). Measured from the origin, so it is right even while
    /// the origin is still ahead.
    pub fn real_delay_until(&self, at: SimTime) -> Duration {
        let since_origin = self.real_delay(at.saturating_since(SimTime::ZERO));
        (self.origin + since_origin).saturating_duration_since(Instant::now())
    }
}
