//! The actix shell around a federation member: one [`MemberActor`] per
//! cluster, reading an [`EmulatedClock`]. It holds no federation rule: on
//! every input it calls the [`mcfed_federation::Member`], sends what comes
//! out and schedules the wake-up the member asks for. Cluster processes
//! (`mcfed cluster`) and the in-process actor engine (`--engine actors`)
//! both run it. With a [`Durability`] (a process with a state directory)
//! it journals the member and holds back what each input produced until
//! its records are durable.

pub mod clock;
mod durability;
mod member_actor;
mod messages;

pub use clock::EmulatedClock;
pub use durability::{AfterDurable, Durability};
pub use member_actor::MemberActor;
pub use messages::{
    Apply, AskActivity, Deliver, Drive, FetchTruth, Inspect, Link, MemberActivity, NotDurable,
    Publish, TruthFetched,
};
