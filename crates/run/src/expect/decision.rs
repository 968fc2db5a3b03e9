//! Checking a job's forwarding decisions: its first forward (or, if it was
//! never forwarded, its last decision, for the message), its first
//! decision, or its last one.

use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_protocol::SimTime;
use mcfed_scenario::expect::{Decision, DecisionOutcome};

use super::{Check, Found, Run, reason_note};

impl Check for Decision {
    fn check(&self, run: Run<'_>) -> Found {
        let job = &self.job;
        let reason = self.reason_contains.as_deref();
        let note = reason_note(reason);
        let mut decisions = run
            .output
            .decisions
            .iter()
            .filter(|record| record.job == *job);
        match &self.outcome {
            DecisionOutcome::ForwardedTo(target) => {
                let expected = format!("job {job} is forwarded to {target}{note}");
                first_forward(expected, &target.to_string(), decisions, reason)
            }
            DecisionOutcome::Pends => pending(
                format!("job {job} pends at its submission cluster{note}"),
                decisions.next(),
                reason,
            ),
            DecisionOutcome::EndsPending => pending(
                format!("job {job}'s last decision leaves it pending{note}"),
                decisions.next_back(),
                reason,
            ),
        }
    }
}

/// Whether the first forward of `decisions` (the job's) goes to `target`,
/// with a `reason` containing the one expected.
fn first_forward<'a>(
    expected: String,
    target: &str,
    decisions: impl Iterator<Item = &'a DecisionRecord> + Clone,
    reason: Option<&str>,
) -> Found {
    let first = decisions
        .clone()
        .find(|record| record.outcome == OutcomeKind::Forwarded);
    match first {
        Some(record) => {
            let held = record.target.as_deref() == Some(target);
            found(expected, held, record, reason)
        }
        None => {
            let last = decisions.last().map_or_else(
                || "no decision was made for it".to_owned(),
                |record| {
                    format!(
                        "never forwarded; last decision {}",
                        describe_decision(record)
                    )
                },
            );
            Found::failed(expected, last)
        }
    }
}

/// Whether `decision` (the job's first or last) leaves it pending, with a
/// `reason` containing the one expected.
fn pending(expected: String, decision: Option<&DecisionRecord>, reason: Option<&str>) -> Found {
    match decision {
        Some(record) => {
            let held = record.outcome == OutcomeKind::Pending;
            found(expected, held, record, reason)
        }
        None => Found::failed(expected, "no decision was made for it"),
    }
}

/// What was found in `record`: the expectation holds if `held` and the
/// record's reason contains `reason` (when one is expected).
fn found(expected: String, held: bool, record: &DecisionRecord, reason: Option<&str>) -> Found {
    let reason_held = reason.is_none_or(|needle| record.reason.contains(needle));
    Found {
        expected,
        held: held && reason_held,
        actual: describe_decision(record),
        skipped: None,
    }
}

/// A decision in words: when, and what it did.
fn describe_decision(record: &DecisionRecord) -> String {
    let when = SimTime::from_millis((record.time * 1000.0).round() as u64);
    match record.outcome {
        OutcomeKind::Forwarded => format!(
            "at {when} forwarded to {} ({})",
            record.target.as_deref().unwrap_or("?"),
            record.reason
        ),
        OutcomeKind::Pending => format!("at {when} pending ({})", record.reason),
    }
}
