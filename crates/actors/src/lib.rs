//! The actix shell around a federation member: one [`MemberActor`] per
//! cluster, reading an [`EmulatedClock`]. It holds no federation rule: on
//! every input it calls the [`mcfed_federation::Member`], sends what comes
//! out and schedules the wake-up the member asks for. Cluster processes
//! (`mcfed cluster`) and the in-process actor engine (`--engine actors`)
//! both run it.

pub mod clock;
mod member_actor;
mod messages;

pub use clock::EmulatedClock;
pub use member_actor::MemberActor;
pub use messages::{
    Control, Deliver, FetchTruth, Happened, HostControl, Inspect, NextWake, Publish, Submit,
    TruthFetched,
};
