//! User-based fairshare (seed `002_094ae739d64d75db.txt`): share
//! assignments (`FAIRSHARE=USER_SHARES[...]`), the dynamic priority formula
//! with every term and its factors, the HIST_HOURS decay of CPU time, and the
//! fairshare adjustment plug-in.
//!
//! The formula, for one user in one queue:
//!
//! ```text
//! priority = shares / max(0.01,
//!       cpu_time * CPU_TIME_FACTOR
//!     + (historical_run_time + run_time) * RUN_TIME_FACTOR
//!     + (committed_run_time - run_time) * COMMITTED_RUN_TIME_FACTOR
//!     + (1 + job_slots) * RUN_JOB_FACTOR
//!     + (1 + fwd_job_slots) * FWD_JOB_FACTOR
//!     + fairshare_adjustment * FAIRSHARE_ADJUSTMENT_FACTOR
//!     + (historical_gpu_run_time + gpu_run_time) * ngpus * GPU_RUN_TIME_FACTOR)
//! ```
//!
//! so a user's priority is at most 100 times their shares. Times are in
//! hours; historical run time counts with ENABLE_HIST_RUN_TIME, the run
//! time of running jobs decays with RUN_TIME_DECAY, historical GPU run time
//! counts with ENABLE_GPU_HIST_RUN_TIME. [`dynamic_priority`] is the
//! formula on given figures; [`ShareAccount`] keeps one account's figures
//! (a user's, or a share group's: [`tree`]) in one queue as jobs start,
//! stop and finish, in O(1) per change.

mod account;
mod adjustment;
mod decay;
mod formula;
mod priority;
mod shares;
#[cfg(test)]
mod tests;
pub mod tree;

pub use account::{JobUse, ShareAccount, StopKind};
pub use adjustment::{
    AdjustmentInput, AdjustmentPlugin, DEFAULT_MEMORY_THRESHOLD, FairshareAdjustment,
    MemoryAdjustment,
};
pub use decay::{DecayingTotal, decay_factor, decayed_hours};
pub use formula::{
    DEFAULT_COMMITTED_RUN_TIME_FACTOR, DEFAULT_CPU_TIME_FACTOR,
    DEFAULT_FAIRSHARE_ADJUSTMENT_FACTOR, DEFAULT_GPU_RUN_TIME_FACTOR, DEFAULT_HIST_HOURS,
    DEFAULT_RUN_JOB_FACTOR, DEFAULT_RUN_TIME_FACTOR, DenominatorTerms, FACTOR_NAMES,
    FairshareFactors, FairshareOverrides, MIN_DENOMINATOR, SWITCH_NAMES, UsageTerms,
    dynamic_priority,
};
pub use shares::{
    DEFAULT_SHARE_USER, OTHERS_SHARE_USER, ShareEntry, ShareTarget, UserShares,
    UserSharesParseError,
};
pub use tree::{GroupDirectory, GroupInfo, NodeId, NodeKind, ShareNode, ShareTree};
