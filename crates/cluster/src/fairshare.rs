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
//!     + run_time * RUN_TIME_FACTOR
//!     + (1 + job_slots) * RUN_JOB_FACTOR
//!     + (1 + fwd_job_slots) * FWD_JOB_FACTOR
//!     + fairshare_adjustment * FAIRSHARE_ADJUSTMENT_FACTOR
//!     + (historical_gpu_run_time + gpu_run_time) * ngpus * GPU_RUN_TIME_FACTOR)
//! ```
//!
//! so a user's priority is at most 100 times their shares. Times are in
//! hours. [`dynamic_priority`] is the formula on given figures;
//! [`ShareAccount`] keeps one user's figures in one queue as jobs start,
//! stop and finish, in O(1) per change.

mod account;
mod adjustment;
mod decay;
mod formula;
mod shares;
#[cfg(test)]
mod tests;

pub use account::{JobUse, ShareAccount};
pub use adjustment::{
    AdjustmentInput, AdjustmentPlugin, DEFAULT_MEMORY_THRESHOLD, FairshareAdjustment,
    MemoryAdjustment,
};
pub use decay::{DecayingTotal, decay_factor};
pub use formula::{
    DEFAULT_CPU_TIME_FACTOR, DEFAULT_FAIRSHARE_ADJUSTMENT_FACTOR, DEFAULT_GPU_RUN_TIME_FACTOR,
    DEFAULT_HIST_HOURS, DEFAULT_RUN_JOB_FACTOR, DEFAULT_RUN_TIME_FACTOR, DenominatorTerms,
    FACTOR_NAMES, FairshareFactors, FairshareOverrides, MIN_DENOMINATOR, UsageTerms,
    dynamic_priority,
};
pub use shares::{DEFAULT_SHARE_USER, UserShares, UserSharesParseError};
