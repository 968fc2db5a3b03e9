//! The admin commands of a cluster: what an administrator (or a script, or
//! the launcher) asks a cluster and what it answers, one file per command
//! in [`cmd`] — its request's fields, how it applies to a federation
//! [`Member`](mcfed_federation::Member), its rows and how LSF's commands
//! print them (columns, `-o` fields, `-json`).
//!
//! Runtime-free: a cluster process decodes a request ([`codec`]) and hands
//! it to [`apply`] inside its member's actor; the few requests only the
//! process can answer (its recorder, its transport, stopping) come back
//! from [`apply`] for it to answer. A scenario's `[[action]]` is the same
//! request given at a time, so the in-process engines apply it the same
//! way.

pub mod cmd;
pub mod codec;
pub mod table;

pub use cmd::Applied;
pub use cmd::activity::ActivityReply;
pub use cmd::apply;
pub use cmd::aps::{ApsFactorRow, ApsRow};
pub use cmd::clusters::{LinkRow, PeerLink};
pub use cmd::control::Controlled;
pub use cmd::history::{HistoryEventRow, HistoryReply, HistoryRow, StateSeconds};
pub use cmd::host::HostEvent;
pub use cmd::hosts::HostRow;
pub use cmd::jobs::{Finished, ForwardedFrom, ForwardedTo, JobRow, JobsPage, JobsQuery};
pub use cmd::params::{ParamRow, ParamsReply};
pub use cmd::queues::QueueReport;
pub use cmd::records::RecordsReply;
pub use cmd::reservations::ReservationRow;
pub use cmd::status::{PeerRow, StatusReply};
pub use cmd::submit::Submitted;
pub use cmd::watch::{CountersRow, ViewRow, WatchReply};
pub use cmd::{AdminRequest, AdminResponse};
pub use codec::{CodecError, decode, encode};
pub use table::Table;
