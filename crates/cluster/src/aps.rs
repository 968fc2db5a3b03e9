//! Absolute priority scheduling (seed `001_198bb15e5ccf0d81.txt`): a queue
//! with APS_PRIORITY orders its pending jobs — and those of the queues of
//! its QUEUE_GROUP — by an APS value computed from the job's factors, in
//! place of first come, first served or the fairshare order.
//!
//! - `config`: APS_PRIORITY as lsb.queues writes it, and its resolution
//!   into weights, limits and grace periods;
//! - `formula`: the value of one job from its figures (pure);
//! - `order`: the figures of a cluster's jobs, their values and ranks,
//!   `bjobs -aps`'s listing; the dispatch turn of an APS queue group is in
//!   `dispatch::order::aps`;
//! - `send`: the value of a job waiting in a send queue, which its
//!   forwarder decides in APS order, and the JPRIORITY a forwarded job
//!   carries.
//!
//! docs/scheduling.md, "Absolute priority scheduling", has the formula
//! with a worked example and every choice made where LSF is silent.

mod config;
mod formula;
mod order;
mod send;

pub use config::{APS_MAX, ApsParseError, ApsPriority, ApsSection, ApsTerm, ResolvedAps};
pub use formula::{ApsBreakdown, ApsInputs, aps_value};
pub use order::{ApsEntry, ApsShown};
pub(crate) use order::{ApsGroup, order_cache};
pub use send::WaitingJob;
