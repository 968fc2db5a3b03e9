//! `[[expect]]` entries: what a scenario expects of its run. Each kind of
//! entry is one file here: its validated form, the keys it takes and their
//! validation. `mcfed-run` checks each kind against a run, one file per
//! kind too (`mcfed_run::expect`).
//!
//! The keys present say which kind an entry is: the first of this table
//! whose keys are present (`kind_of` is that order).
//!
//! | kind | file | keys |
//! |---|---|---|
//! | a refused scenario | `refused` | `refused`, `line` |
//! | a queue's dispatch order at a time | `dispatch_order` | `at`, `cluster`, `queue`, `dispatch_order` |
//! | a job's APS value at a time | `job_aps` | `job`, `at`, any of `aps`, `aps_kind`, `jpriority`; `tolerance`, `cluster` |
//! | a figure of the whole run | `metric` | `metric`, `at_least` and/or `at_most` |
//! | first or last forwarding decision | `decision` | `job`, `forwarded_to`, `pends = true` or `ends_pending = true`; `reason_contains` |
//! | preemption of a job | `preemption` | `job`, `preempted`, `preempted_by`, `cluster` |
//! | a job's state at a time | `job_state` | `job`, `at`, `state`, `cluster`, `reason_contains` |
//! | a user's dynamic priority | `user_priority` | `at`, `cluster`, `queue`, `user`, `priority`, `tolerance` |
//! | a queue's slots at a time | `queue_slots` | `at`, `cluster`, `queue`, any of `running_slots`, `pending_slots`, `suspended_slots`, `deserved_slots`, `reserved_slots` |
//!
//! A key that does not belong to the entry's kind is a problem at that key.
//! One more kind, `initial_state`, is made by the `state` of a
//! `[[cluster.job]]`, not by an `[[expect]]`.
//!
//! Adding a kind: its keys in [`RawExpect`] (the TOML, one table for every
//! kind), its file here (its type, implementing `Kind`), its variant of
//! [`ExpectKind`] with a line in `kind_of` (and in [`ExpectKind::at`]);
//! in `mcfed-run`, its file and its line in the dispatch there.

mod decision;
mod dispatch_order;
mod entry;
mod initial_state;
mod job_aps;
mod job_state;
mod metric;
mod preemption;
mod queue_slots;
mod refused;
mod user_priority;

use mcfed_protocol::SimTime;

pub use decision::{Decision, DecisionOutcome};
pub use dispatch_order::DispatchOrder;
pub use initial_state::InitialState;
pub use job_aps::JobAps;
pub use job_state::JobStateAt;
pub use metric::{Metric, MetricBounds};
pub use preemption::Preemption;
pub use queue_slots::{QueueFigures, QueueSlots};
pub use refused::{ExpectedRefusal, Refused, expected_refusals};
pub use user_priority::UserPriority;

use crate::check::Checker;
use crate::check::job_index::JobIndex;
use crate::format::RawExpect;
use crate::locate::FieldPath;
use crate::model::ClusterSpec;
use entry::Entry;

/// An expected outcome, with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// What it checks.
    pub kind: ExpectKind,
    /// Where it was written (`expect[2]`, `cluster[1].job[0].state`).
    pub origin: String,
}

/// What an expectation checks: one variant per kind, each with its kind's
/// own type.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectKind {
    /// A job's first or last forwarding decision.
    Decision(Decision),
    /// A figure of the whole run lies within bounds.
    Metric(MetricBounds),
    /// After the first dispatch pass, the jobs of an initial group are all
    /// in a state.
    InitialState(InitialState),
    /// At a time, a queue's slot figures.
    QueueSlots(QueueSlots),
    /// At a time, a user's dynamic priority in a fairshare queue.
    UserPriority(UserPriority),
    /// At a time, a job's state.
    JobState(JobStateAt),
    /// A job was (or was never) preempted.
    Preempted(Preemption),
    /// At a time, a pending job's APS value.
    JobAps(JobAps),
    /// At a time, the order of a queue's pending jobs.
    DispatchOrder(DispatchOrder),
    /// The scenario is refused.
    Refused(Refused),
}

impl ExpectKind {
    /// When the expectation looks at the clusters, for those that do.
    pub fn at(&self) -> Option<SimTime> {
        match self {
            ExpectKind::QueueSlots(slots) => Some(slots.at),
            ExpectKind::UserPriority(priority) => Some(priority.at),
            ExpectKind::JobState(state) => Some(state.at),
            ExpectKind::JobAps(aps) => Some(aps.at),
            ExpectKind::DispatchOrder(order) => Some(order.at),
            ExpectKind::Decision(_)
            | ExpectKind::Metric(_)
            | ExpectKind::InitialState(_)
            | ExpectKind::Preempted(_)
            | ExpectKind::Refused(_) => None,
        }
    }
}

/// A kind of `[[expect]]` entry: which keys make an entry one, the keys it
/// takes, and their validation.
pub(crate) trait Kind: Sized {
    /// The kind in words, as messages name it ("an [[expect]] on a job's
    /// state needs `at`").
    const NAME: &'static str;
    /// The keys an entry of this kind may have; any other is a problem.
    const KEYS: &'static [&'static str];
    /// Whether `raw`'s keys make it an entry of this kind.
    fn claims(raw: &RawExpect) -> bool;
    /// The entry's expectation, or `None` with its problems recorded
    /// (keys outside [`Kind::KEYS`] are already flagged).
    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self>;
}

/// How an entry gets a kind, for the message when it has none.
const KINDS: &str = "`forwarded_to`, `pends`, `ends_pending`, `metric`, `state`, `preempted`, `priority`, `aps`, `aps_kind`, `jpriority`, `dispatch_order`, `refused`, or a queue figure (`running_slots`, `pending_slots`, `suspended_slots`, `deserved_slots`, `reserved_slots`)";

/// The kind of `entry`, validated: the first kind that claims its keys.
fn kind_of(entry: &mut Entry<'_, '_>) -> Option<ExpectKind> {
    let raw = entry.raw;
    if Refused::claims(raw) {
        entry.validate(ExpectKind::Refused)
    } else if DispatchOrder::claims(raw) {
        entry.validate(ExpectKind::DispatchOrder)
    } else if JobAps::claims(raw) {
        entry.validate(ExpectKind::JobAps)
    } else if MetricBounds::claims(raw) {
        entry.validate(ExpectKind::Metric)
    } else if Decision::claims(raw) {
        entry.validate(ExpectKind::Decision)
    } else if Preemption::claims(raw) {
        entry.validate(ExpectKind::Preempted)
    } else if JobStateAt::claims(raw) {
        entry.validate(ExpectKind::JobState)
    } else if UserPriority::claims(raw) {
        entry.validate(ExpectKind::UserPriority)
    } else if QueueSlots::claims(raw) {
        entry.validate(ExpectKind::QueueSlots)
    } else {
        entry.problem_here(format!("an [[expect]] needs one of {KINDS}"));
        None
    }
}

/// How far a priority or an APS value may be off when `tolerance` is not
/// given.
const DEFAULT_TOLERANCE: f64 = 0.001;

impl Checker<'_> {
    /// Checks the `[[expect]]` entry at `path`; its keys say which kind it
    /// is.
    pub(crate) fn expectation(
        &mut self,
        path: &FieldPath,
        raw: &RawExpect,
        jobs: &JobIndex<'_>,
        specs: &[ClusterSpec],
    ) -> Option<Expectation> {
        let kind = kind_of(&mut Entry::new(self, path, raw, jobs, specs))?;
        Some(Expectation {
            kind,
            origin: path.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of every kind, in dispatch order.
    const KIND_KEYS: [&[&str]; 9] = [
        Refused::KEYS,
        DispatchOrder::KEYS,
        JobAps::KEYS,
        MetricBounds::KEYS,
        Decision::KEYS,
        Preemption::KEYS,
        JobStateAt::KEYS,
        UserPriority::KEYS,
        QueueSlots::KEYS,
    ];

    /// The keys serde reads in an `[[expect]]`, from its message for an
    /// unknown one.
    fn serde_keys() -> Vec<String> {
        let source = "[[cluster]]\nname = \"C1\"\n\n[[expect]]\nnosuch = 1\n";
        let Err(crate::ScenarioError::Invalid { problems, .. }) = crate::parse("t.toml", source)
        else {
            panic!("an unknown key is refused");
        };
        let (_, keys) = problems[0]
            .message
            .split_once("expected one of ")
            .expect("serde lists the keys it knows");
        keys.split(", ")
            .map(|key| key.trim_matches('`').to_owned())
            .collect()
    }

    /// A key added to `RawExpect` but not to `keys_present` would never be
    /// flagged in a kind it does not belong to; one in no kind's keys
    /// could never be given.
    #[test]
    fn every_key_is_checked_and_belongs_to_a_kind() {
        let raw: RawExpect = toml::from_str("").expect("every key is optional");
        let mut present: Vec<&str> = raw.keys_present().iter().map(|(key, _)| *key).collect();
        let mut known = serde_keys();
        present.sort_unstable();
        known.sort_unstable();
        assert_eq!(present, known);
        for key in &present {
            assert!(
                KIND_KEYS.iter().any(|keys| keys.contains(key)),
                "`{key}` belongs to no kind"
            );
        }
        for key in KIND_KEYS.iter().flat_map(|keys| keys.iter()) {
            assert!(present.contains(key), "`{key}` is not a key");
        }
    }
}
