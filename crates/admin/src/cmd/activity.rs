//! Whether a cluster has work left (a draining `mcfed launch` asks once
//! nothing is left to submit).

use mcfed_federation::Member;
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

/// Whether a cluster process has work left: the answer to
/// [`AdminRequest::Activity`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActivityReply {
    /// Its emulated time, in seconds.
    pub now: f64,
    /// When its member next needs to wake (a job's end, a timer), in
    /// emulated seconds; none when nothing is due.
    pub next_wake: Option<f64>,
    /// Its forwarder holds jobs waiting for a remote queue (a counter
    /// update may let them go).
    pub holding: bool,
}

/// What `member` has left to do at `now`.
pub fn of(member: &mut Member, now: SimTime) -> ActivityReply {
    ActivityReply {
        now: now.as_secs_f64(),
        next_wake: member.next_wake(now).map(|at| at.as_secs_f64()),
        holding: member.activity(now).holding,
    }
}
