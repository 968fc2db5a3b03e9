//! The federation core: one [`Member`] is one cluster of a federation — its
//! scheduler ([`mcfed_cluster::ClusterNode`]) and, when it has send queues,
//! its forwarder ([`mcfed_forwarder::ForwarderNode`]) — behind one sans-IO
//! interface. Every driver (the event loop, the actix actors, a cluster
//! process over QUIC) calls only this type.
//!
//! A member takes inputs — a submission, an envelope from a peer, "it is now
//! T" — and returns [`Effects`]: envelopes to send, job transitions,
//! preemption notes, forwarding decisions, what its forwarder heard about
//! its jobs and the fate of counter updates. [`Member::next_wake`] says when
//! it next needs to be woken. The rules that make a federation — which
//! messages go to the forwarder and which to the scheduler, whether a
//! submission runs locally or is forwarded, when a member must wake — are
//! written here once.
//!
//! A journaled member ([`Member::enable_journal`]) notes every change as
//! [`JournalRecord`]s for its driver to make durable; [`Member::restore`]
//! rebuilds one from what a journal kept ([`journal`]).
//!
//! No clock, socket, thread or runtime: time is an argument.

mod build;
mod control;
mod durable;
mod effects;
pub mod history;
pub mod instant;
pub mod journal;
mod member;
mod observe;
mod order;
pub mod publish;
mod quiescence;
mod report;
mod reservations;
mod snapshot;
mod unsendable;
mod wake;

pub use build::{
    BuildError, GroupState, InitialJobs, MemberConfig, MemberSpec, connect_in_process,
};
pub use control::{ControlOutcome, ControlRefused, JobRef};
pub use effects::{
    Effects, ForwardedIn, JobNotice, NoticeKind, Observer, SubmissionNote, UpdateTally,
};
pub use instant::{Call, Rounds};
pub use journal::{DurableState, JOURNAL_FORMAT, JournalRecord, ProcessFacts};
pub use member::{Member, Origin, Route, SubmitError, Submitted};
pub use quiescence::{Activity, Quiescence};
pub use snapshot::{SnapshotBuilder, SnapshotView};
pub use wake::{Pending, next_wake};
