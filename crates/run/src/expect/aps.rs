//! Checking the `[[expect]]` kinds of absolute priority scheduling: a
//! job's APS value at a time, and a queue's dispatch order at a time.

use mcfed_protocol::SimTime;

use super::cluster_at;
use crate::output::RunOutput;

/// What one check found: what was expected, whether it held, what was.
pub(super) type Found = (String, bool, String);

/// A job's APS value, kind and JPRIORITY at `at`.
#[allow(clippy::too_many_arguments)]
pub(super) fn job_aps(
    output: &RunOutput,
    cluster: &str,
    job: &str,
    at: SimTime,
    value: Option<f64>,
    kind: Option<&str>,
    jpriority: Option<u32>,
    tolerance: f64,
) -> Found {
    let mut wanted = Vec::new();
    if let Some(value) = value {
        wanted.push(format!("APS {value} (±{tolerance})"));
    }
    if let Some(kind) = kind {
        wanted.push(format!("a {kind} value"));
    }
    if let Some(jpriority) = jpriority {
        wanted.push(format!("JPRIORITY {jpriority}"));
    }
    let expected = format!("at {at} job {job} has {}", wanted.join(", "));
    let Some(snapshot) = cluster_at(output, at, cluster) else {
        return (expected, false, "no snapshot was taken".to_owned());
    };
    let Some(found) = snapshot.jobs.iter().find(|found| found.name == job) else {
        return (expected, false, "the job is not in the cluster".to_owned());
    };
    let Some(aps) = &found.aps else {
        return (
            expected,
            false,
            format!("the job is {}, with no APS value", found.state),
        );
    };
    let held = value.is_none_or(|value| {
        aps.value
            .is_some_and(|actual| (actual - value).abs() <= tolerance)
    }) && kind.is_none_or(|kind| aps.kind == kind)
        && jpriority.is_none_or(|jpriority| aps.jpriority == jpriority);
    (
        expected,
        held,
        format!(
            "APS {} ({}), JPRIORITY {}",
            aps.shown, aps.kind, aps.jpriority
        ),
    )
}

/// The order of a queue's pending jobs at `at`.
pub(super) fn dispatch_order(
    output: &RunOutput,
    cluster: &str,
    queue: &str,
    at: SimTime,
    jobs: &[String],
) -> Found {
    let expected = format!(
        "at {at} queue {queue}@{cluster} tries its pending jobs in the order {}",
        jobs.join(", ")
    );
    let Some(snapshot) = cluster_at(output, at, cluster) else {
        return (expected, false, "no snapshot was taken".to_owned());
    };
    match snapshot
        .orders
        .iter()
        .find(|order| order.queue == queue)
        .and_then(|order| order.jobs.as_ref())
    {
        Some(order) => (
            expected,
            order == jobs,
            if order.is_empty() {
                "no pending job".to_owned()
            } else {
                order.join(", ")
            },
        ),
        None => (
            expected,
            false,
            "the queue has no set order (a fairshare queue without APS)".to_owned(),
        ),
    }
}
