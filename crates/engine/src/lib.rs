//! The in-process simulation engines of mcfed. Both run a scenario's
//! federation of [`mcfed_federation::Member`]s in emulated time and
//! produce a [`mcfed_run::RunOutput`]:
//!
//! - [`event_loop`]: one thread, one binary heap of events; the default,
//!   built for million-job replays;
//! - [`actors`]: one [`mcfed_actors::MemberActor`] per cluster, driven on
//!   a paused tokio clock: the actor shell of a live process, run
//!   in-process so it can be compared with the event loop.
//!
//! Neither holds a federation rule: both call only the member, and both
//! take each instant in the one order of [`mcfed_federation::instant`].

mod actions;
pub mod actors;
pub mod event_loop;
mod federation;
mod heap;
mod output;
mod submissions;

pub use event_loop::{EventLoop, run};
pub use federation::{BuildError, Federation};
pub use output::{EngineError, PROGRESS_EVERY, Progress};
