//! The submission side of an mcfed cluster.
//!
//! - [`view`]: the remote view of every queue named in SNDJOBS_TO, its local
//!   increments and the reconciliation with counter updates;
//! - [`policy`]: `decide`, the forwarding policy under every
//!   MC_PLUGIN_SCHEDULE_ENHANCE [`mode`], with every candidate's figures and
//!   verdict;
//! - [`record`]: decisions as reported (words and JSON);
//! - [`node`]: the sans-IO submission endpoint (jobs, sessions, returns);
//!   [`ForwarderNode::handle`] says what each message changed ([`Handled`]).

pub mod mode;
pub mod node;
pub mod policy;
pub mod record;
pub mod view;

pub use mode::{ModeParseError, ScheduleMode};
pub use node::{
    ApsQuery, ApsStanding, ApsValue, CameBack, Controlled, DEFAULT_MAX_FORWARDS,
    DEFAULT_RECLAIM_TIME, DEFAULT_UNREACHABLE_UPDATES, ForwardSubmitError, ForwarderConfig,
    ForwarderNode, Handled, LeftBehind, Reachability, RemoteImage, RestoredForwarder, SendOrder,
    SendQueueConfig, SourceImage, SourceImageState, SourceState, SubmissionOrder,
};
pub use policy::{
    Candidate, Decision, JobRequest, Outcome, PendReason, Standing, decide, decide_into,
};
pub use record::{
    CandidateRecord, DecisionEntry, DecisionRecord, FigureDifference, OracleVerdict, OutcomeKind,
};
pub use view::{Figures, RemoteQueueId, RemoteView, UpdateOutcome};
