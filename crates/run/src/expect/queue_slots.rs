//! Checking a queue's slot figures at a time, in the snapshot of its
//! cluster taken then.

use mcfed_scenario::expect::{QueueFigures, QueueSlots};

use super::{Check, Found, Run};

impl Check for QueueSlots {
    fn check(&self, run: Run<'_>) -> Found {
        let QueueSlots {
            cluster,
            queue,
            at,
            figures,
        } = self;
        let expected = format!(
            "at {at} queue {queue}@{cluster} has {}",
            describe_figures(figures)
        );
        let report = run.cluster_at(*at, cluster.as_str()).and_then(|snapshot| {
            snapshot
                .report
                .queues
                .iter()
                .find(|report| report.queue == queue.as_str())
        });
        let Some(report) = report else {
            return run.no_snapshot(expected, "no snapshot of the queue was taken");
        };
        let actual = QueueFigures {
            running: Some(report.run),
            pending: Some(report.pend),
            suspended: Some(report.susp),
            deserved: report.slot_pool.as_ref().map(|pool| pool.deserved_slots),
            reserved: Some(report.rsv),
        };
        let held = [
            (figures.running, actual.running),
            (figures.pending, actual.pending),
            (figures.suspended, actual.suspended),
            (figures.deserved, actual.deserved),
            (figures.reserved, actual.reserved),
        ]
        .iter()
        .all(|(want, got)| want.is_none() || want == got);
        Found {
            expected,
            held,
            actual: describe_figures(&actual),
            skipped: None,
        }
    }
}

/// The figures given, in words.
fn describe_figures(figures: &QueueFigures) -> String {
    let parts: Vec<String> = [
        ("running", figures.running),
        ("pending", figures.pending),
        ("suspended", figures.suspended),
        ("deserved", figures.deserved),
        ("reserved", figures.reserved),
    ]
    .iter()
    .filter_map(|(name, value)| value.map(|value| format!("{value} {name}")))
    .collect();
    if parts.is_empty() {
        "no pool".to_owned()
    } else {
        format!("{} slots", parts.join(", "))
    }
}
