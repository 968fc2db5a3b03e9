//! A job's absolute priority scheduling value at a time: `job`, `at`, any
//! of `aps` (within `tolerance`, default 0.001), `aps_kind` and
//! `jpriority`, in `cluster` when the job may run elsewhere than where it
//! was submitted.

use mcfed_protocol::{ClusterName, SimTime};

use super::{DEFAULT_TOLERANCE, Entry, Kind};
use crate::format::RawExpect;

/// The kinds of APS value `aps_kind` takes.
const APS_KINDS: [&str; 3] = ["system", "calculated", "none"];

/// At `at`, a pending job's APS value (as `bjobs -aps` shows it), its kind
/// and its JPRIORITY are these (each one given).
#[derive(Clone, Debug, PartialEq)]
pub struct JobAps {
    /// The cluster it is in.
    pub cluster: ClusterName,
    /// The job's name.
    pub job: String,
    /// When.
    pub at: SimTime,
    /// The expected value (system or calculated).
    pub value: Option<f64>,
    /// The expected kind: `system`, `calculated` or `none`.
    pub kind: Option<String>,
    /// The expected JPRIORITY.
    pub jpriority: Option<u32>,
    /// How far `value` may be off.
    pub tolerance: f64,
}

impl Kind for JobAps {
    const NAME: &'static str = "a job's APS value";
    const KEYS: &'static [&'static str] = &[
        "job",
        "at",
        "cluster",
        "aps",
        "aps_kind",
        "jpriority",
        "tolerance",
    ];

    fn claims(raw: &RawExpect) -> bool {
        raw.aps.is_some() || raw.aps_kind.is_some() || raw.jpriority.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let at = entry.required_at();
        let job = entry.required(&raw.job, "job").cloned();
        if let Some(kind) = &raw.aps_kind {
            if !APS_KINDS.contains(&kind.as_str()) {
                entry.problem(
                    "aps_kind",
                    format!("aps_kind is one of {}, not `{kind}`", APS_KINDS.join(", ")),
                );
                return None;
            }
        }
        let tolerance = raw.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            entry.problem("tolerance", "tolerance must be at least 0");
            return None;
        }
        let (at, job) = (at?, job?);
        let cluster = entry.job_cluster(&job)?;
        Some(JobAps {
            cluster,
            job,
            at,
            value: raw.aps,
            kind: raw.aps_kind.clone(),
            jpriority: raw.jpriority,
            tolerance,
        })
    }
}
