//! The oracle's verdict on a decision: what the same mode would have
//! chosen from the true counters at that instant, and the figures the
//! decision saw that differed from them.

use serde::{Deserialize, Serialize};

use crate::policy::Decision;
use crate::view::RemoteView;

/// The oracle's view of a decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OracleVerdict {
    /// `queue@cluster` the true counters pick, or null if they pend the job.
    pub target: Option<String>,
    /// Whether the real decision differs from the oracle's (a stale
    /// decision).
    pub stale: bool,
    /// The figures the decision saw that differ from the true ones.
    pub differences: Vec<FigureDifference>,
}

/// One figure of one candidate that differed from the truth.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureDifference {
    /// `queue@cluster`.
    pub queue: String,
    /// The figure (`available`, `pending`, ...).
    pub field: String,
    /// What the decision saw (null: unknown).
    pub seen: Option<i64>,
    /// The true value (null: unknown).
    pub actual: Option<i64>,
}

impl OracleVerdict {
    /// Compares `decision` (made from `view`) with `truth` (made from the
    /// oracle's view of the true counters).
    pub fn compare(
        decision: &Decision,
        view: &RemoteView,
        truth: &Decision,
        oracle: &RemoteView,
    ) -> Self {
        let name = |target: Option<crate::view::RemoteQueueId>, view: &RemoteView| {
            target.map(|id| view.queue_ref(id).to_string())
        };
        let target = name(truth.target(), oracle);
        let stale = name(decision.target(), view) != target;
        let mut differences = Vec::new();
        if stale {
            for (seen, actual) in decision.candidates.iter().zip(&truth.candidates) {
                let queue = view.queue_ref(seen.queue).to_string();
                let fields =
                    |figures: Option<crate::view::Figures>| -> [(&'static str, Option<i64>); 6] {
                        [
                            ("total", figures.map(|f| i64::from(f.total))),
                            ("available", figures.map(|f| i64::from(f.available))),
                            ("running", figures.map(|f| i64::from(f.running))),
                            ("pending", figures.map(|f| i64::from(f.pending))),
                            (
                                "preemptable_available",
                                figures.map(|f| i64::from(f.preemptable_available)),
                            ),
                            (
                                "imported_pending",
                                figures.map(|f| i64::from(f.imported_pending)),
                            ),
                        ]
                    };
                for ((field, seen_value), (_, actual_value)) in
                    fields(seen.figures).into_iter().zip(fields(actual.figures))
                {
                    if seen_value != actual_value {
                        differences.push(FigureDifference {
                            queue: queue.clone(),
                            field: field.to_owned(),
                            seen: seen_value,
                            actual: actual_value,
                        });
                    }
                }
            }
        }
        OracleVerdict {
            target,
            stale,
            differences,
        }
    }
}
