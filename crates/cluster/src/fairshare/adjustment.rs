//! The fairshare adjustment plug-in (`libfairshareadjust`): what it is
//! given, its trait, and the seed's memory plug-in.

use std::fmt;
use std::sync::Arc;

/// What the fairshare adjustment plug-in is given for one user: everything
/// the default formula uses except the shares, plus memory (seed 002).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdjustmentInput {
    /// Decayed CPU time, hours.
    pub cpu_time: f64,
    /// Run time of running jobs, hours.
    pub run_time: f64,
    /// Job slots reserved and in use.
    pub job_slots: f64,
    /// Forwarded job slots.
    pub fwd_job_slots: f64,
    /// Slots in use by the user's started jobs.
    pub used_slots: f64,
    /// Memory in use by the user's started jobs, MB.
    pub used_memory_mb: f64,
    /// Memory in use by every started job of the cluster, MB.
    pub cluster_memory_in_use_mb: f64,
    /// The average memory per slot in the cluster, MB.
    pub slot_memory_mb: f64,
}

/// The fairshare adjustment plug-in (`libfairshareadjust`): a term added to
/// the denominator of the dynamic priority, weighted by
/// FAIRSHARE_ADJUSTMENT_FACTOR. It is cluster-wide, not per queue.
pub trait FairshareAdjustment: fmt::Debug + Send + Sync {
    /// The adjustment for one user.
    fn adjustment(&self, input: &AdjustmentInput) -> f64;
}

/// The seed's example plug-in: users whose jobs use more memory per slot
/// than the cluster offers per slot (times THRESHOLD) count as using more
/// slots:
///
/// `adjustment = (1 + slots) * ((used_memory / used_slots) / (slot_memory * THRESHOLD))`
///
/// It returns 0 for a user with no slots in use, or when the cluster
/// declares no memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryAdjustment {
    /// THRESHOLD.
    pub threshold: f64,
}

impl FairshareAdjustment for MemoryAdjustment {
    fn adjustment(&self, input: &AdjustmentInput) -> f64 {
        if input.used_slots <= 0.0 || input.slot_memory_mb <= 0.0 || self.threshold <= 0.0 {
            return 0.0;
        }
        (1.0 + input.job_slots)
            * ((input.used_memory_mb / input.used_slots) / (input.slot_memory_mb * self.threshold))
    }
}

/// The memory plug-in's THRESHOLD when none is set.
pub const DEFAULT_MEMORY_THRESHOLD: f64 = 1.0;

/// Which built-in adjustment plug-in a cluster loads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum AdjustmentPlugin {
    /// None: the adjustment is 0.
    #[default]
    None,
    /// [`MemoryAdjustment`].
    Memory {
        /// THRESHOLD.
        threshold: f64,
    },
}

impl AdjustmentPlugin {
    /// The plug-in, if any.
    pub fn build(&self) -> Option<Arc<dyn FairshareAdjustment>> {
        match *self {
            AdjustmentPlugin::None => None,
            AdjustmentPlugin::Memory { threshold } => {
                Some(Arc::new(MemoryAdjustment { threshold }))
            }
        }
    }
}
