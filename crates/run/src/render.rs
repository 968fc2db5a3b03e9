//! Printing decisions: a readable table per decision, or JSON lines.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};
use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_protocol::SimTime;

use crate::expect::CheckResult;

fn number(value: Option<u32>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |secs| format!("{secs:.0}s"))
}

fn clock(secs: f64) -> SimTime {
    SimTime::from_millis((secs * 1000.0).round().max(0.0) as u64)
}

/// One decision as text: a heading line, the reason, and a table of the
/// candidates with their figures and verdicts.
pub fn decision_text(record: &DecisionRecord) -> String {
    let mut text = String::new();
    let outcome = match record.outcome {
        OutcomeKind::Forwarded => {
            format!("forwarded to {}", record.target.as_deref().unwrap_or("?"))
        }
        OutcomeKind::Pending => "pending at the submission cluster".to_owned(),
    };
    let _ = writeln!(
        text,
        "{}  {} (job {}@{}, {} slot{}, queue {})  {}  =>  {}",
        clock(record.time),
        record.job,
        record.job_id,
        record.cluster,
        record.slots,
        if record.slots == 1 { "" } else { "s" },
        record.send_queue,
        record.mode,
        outcome
    );
    if let Some(note) = &record.note {
        let _ = writeln!(text, "  again, after: {note}");
    }
    if !record.forwarded_before.is_empty() {
        let _ = writeln!(
            text,
            "  forwarded before: {}",
            record.forwarded_before.join(" -> ")
        );
    }
    let _ = writeln!(text, "  reason: {}", record.reason);
    let _ = writeln!(
        text,
        "  view age: {}{}",
        seconds(record.view_age),
        record
            .tier
            .as_ref()
            .map(|tier| format!("   decided among: {tier}"))
            .unwrap_or_default()
    );
    if let Some(oracle) = &record.oracle {
        if oracle.stale {
            let differences: Vec<String> = oracle
                .differences
                .iter()
                .map(|d| {
                    let value =
                        |v: Option<i64>| v.map_or_else(|| "unknown".to_owned(), |v| v.to_string());
                    format!(
                        "{} {} {} (true {})",
                        d.queue,
                        d.field,
                        value(d.seen),
                        value(d.actual)
                    )
                })
                .collect();
            let _ = writeln!(
                text,
                "  STALE: the true counters pick {}; seen: {}",
                oracle.target.as_deref().unwrap_or("pending"),
                differences.join(", ")
            );
        } else {
            let _ = writeln!(text, "  oracle: the true counters agree");
        }
    }
    if record.candidates.is_empty() {
        return text;
    }
    let mut table = Table::new();
    table.load_preset(presets::ASCII_MARKDOWN);
    table.set_header(vec![
        "candidate",
        "prio",
        "total",
        "avail",
        "run",
        "pend",
        "preempt",
        "victim",
        "backlog",
        "score",
        "verdict",
    ]);
    for candidate in &record.candidates {
        let backlog = match (candidate.imported_pending, candidate.impt_jobbklg) {
            (Some(pending), Some(limit)) => format!("{pending}/{limit}"),
            (Some(pending), None) => format!("{pending}/inf"),
            _ => "-".to_owned(),
        };
        let verdict = if candidate.why.is_empty() {
            candidate.verdict.clone()
        } else {
            format!("{}: {}", candidate.verdict, candidate.why)
        };
        let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
        table.add_row(vec![
            Cell::new(&candidate.queue),
            right(number(candidate.priority)),
            right(number(candidate.total)),
            right(number(candidate.available)),
            right(number(candidate.running)),
            right(number(candidate.pending)),
            right(number(candidate.preemptable_available)),
            right(number(candidate.victim_priority)),
            right(backlog),
            right(
                candidate
                    .score
                    .map_or_else(|| "-".to_owned(), |s| s.to_string()),
            ),
            Cell::new(verdict),
        ]);
    }
    for line in table.lines() {
        let _ = writeln!(text, "  {line}");
    }
    text
}

/// One decision as a JSON line (no trailing newline).
pub fn decision_json(record: &DecisionRecord) -> Result<String, serde_json::Error> {
    serde_json::to_string(record)
}

/// Expectation results as text, failures first named.
pub fn checks_text(results: &[CheckResult]) -> String {
    let mut text = String::new();
    for result in results {
        let mark = match (&result.skipped, result.held) {
            (Some(_), _) => "skip",
            (None, true) => "ok  ",
            (None, false) => "FAIL",
        };
        let _ = writeln!(text, "{mark} {}: {}", result.origin, result.expected);
        if let Some(why) = &result.skipped {
            let _ = writeln!(text, "     skipped: {why}");
        } else if !result.held {
            let _ = writeln!(text, "     actual: {}", result.actual);
        }
    }
    text
}

/// The results of a check and the line that sums them up (`N of M
/// expectations held`, with how many failed and were skipped when any
/// were), and whether one failed.
pub fn checks_summary(results: &[CheckResult]) -> (String, bool) {
    let failed = results.iter().filter(|result| result.failed()).count();
    let skipped = results
        .iter()
        .filter(|result| result.skipped.is_some())
        .count();
    let held = results.iter().filter(|result| result.held).count();
    let mut line = format!(
        "{}{held} of {} expectations held",
        checks_text(results),
        results.len()
    );
    if failed > 0 || skipped > 0 {
        let _ = write!(line, " ({failed} failed, {skipped} skipped)");
    }
    (line, failed > 0)
}

/// The records of a run that kept no order of its own (`mcfed launch`
/// gathers them from several processes), in time order: at one instant,
/// usage samples, then submissions, then decisions, then other events.
fn time_order(output: &crate::RunOutput) -> Vec<crate::records::RecordRef> {
    use crate::records::RecordRef;
    let mut keyed: Vec<(f64, u8, usize, RecordRef)> = Vec::new();
    keyed.extend(
        output
            .usage
            .iter()
            .enumerate()
            .map(|(i, r)| (r.time, 0, i, RecordRef::Usage(i))),
    );
    keyed.extend(output.events.iter().enumerate().map(|(i, r)| {
        let rank = if r.event == "submitted" { 1 } else { 3 };
        (r.time, rank, i, RecordRef::Event(i))
    }));
    keyed.extend(
        output
            .decisions
            .iter()
            .enumerate()
            .map(|(i, r)| (r.time, 2, i, RecordRef::Decision(i))),
    );
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    keyed
        .into_iter()
        .map(|(_, _, _, reference)| reference)
        .collect()
}

/// Every record of a run as JSON lines: a `run` record first, then
/// decisions, job events and slot usage samples in the order they happened
/// (what `mcfed report` reads).
pub fn run_json_lines(
    run: &crate::records::RunRecord,
    output: &crate::RunOutput,
) -> Result<Vec<String>, serde_json::Error> {
    use crate::records::RecordRef;
    let mut lines = Vec::with_capacity(1 + output.order.len());
    lines.push(serde_json::to_string(run)?);
    let order: Vec<RecordRef> = if output.order.is_empty() {
        time_order(output)
    } else {
        output.order.clone()
    };
    for reference in order {
        let line = match reference {
            RecordRef::Decision(index) => serde_json::to_string(&output.decisions[index])?,
            RecordRef::Event(index) => serde_json::to_string(&output.events[index])?,
            RecordRef::Usage(index) => serde_json::to_string(&output.usage[index])?,
        };
        lines.push(line);
    }
    if let Some(summary) = output.summary() {
        lines.push(serde_json::to_string(&summary)?);
    }
    Ok(lines)
}

fn optional_seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| format!("{value:.1}"))
}

/// A run's metrics as a table: per cluster, then per queue — jobs, waits,
/// slowdown, utilization (what `--report summary` and `mcfed report`
/// print).
pub fn metrics_text(metrics: &crate::metrics::RunMetrics) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "makespan: {:.1} s (bounded slowdown with tau = {} s; waits in seconds)",
        metrics.makespan, metrics.slowdown_bound
    );
    let _ = writeln!(
        text,
        "{:<12} {:<14} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6}",
        "cluster",
        "queue",
        "submitted",
        "started",
        "finished",
        "never",
        "fwd-in",
        "fwd-out",
        "wait-mean",
        "wait-p50",
        "wait-p95",
        "wait-max",
        "slowdown",
        "util"
    );
    for group in metrics.clusters.iter().chain(&metrics.queues) {
        let _ = writeln!(
            text,
            "{:<12} {:<14} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6}",
            group.cluster,
            group.queue.as_deref().unwrap_or("(all)"),
            group.submitted,
            group.started,
            group.finished,
            group.never_started,
            group.forwarded_in,
            group.forwarded_out,
            optional_seconds(group.wait.mean),
            optional_seconds(group.wait.p50),
            optional_seconds(group.wait.p95),
            optional_seconds(group.wait.max),
            group
                .mean_bounded_slowdown
                .map_or_else(|| "-".to_owned(), |s| format!("{s:.2}")),
            group
                .utilization
                .map_or_else(|| "-".to_owned(), |u| format!("{:.1}%", u * 100.0)),
        );
    }
    let never: u64 = metrics
        .clusters
        .iter()
        .map(|group| group.never_started)
        .sum();
    if never > 0 {
        let _ = writeln!(
            text,
            "never started: {}, still pending at the end:",
            mcfed_protocol::words::count(never, "job")
        );
        for job in &metrics.never_started {
            let _ = writeln!(
                text,
                "  {}@{} {}: {}",
                job.queue, job.cluster, job.job, job.reason
            );
        }
        if never as usize > metrics.never_started.len() {
            let _ = writeln!(
                text,
                "  ... and {} more",
                never as usize - metrics.never_started.len()
            );
        }
    }
    text
}

/// One job event as a line of the text output (`--show jobs`):
/// `00:05:00  stopped    long (job 1@Cluster1, queue normal)`.
pub fn event_text(event: &crate::records::EventRecord) -> String {
    let queue = event
        .queue
        .as_ref()
        .map(|queue| format!(", queue {queue}"))
        .unwrap_or_default();
    let source = match (&event.source_cluster, event.source_job_id) {
        (Some(cluster), Some(id)) if *cluster != event.cluster => {
            format!(", from job {id}@{cluster}")
        }
        _ => String::new(),
    };
    let detail = event
        .detail
        .as_ref()
        .map(|detail| format!(": {detail}"))
        .unwrap_or_default();
    format!(
        "{}  {:<10} {} (job {}@{}{queue}{source}){detail}",
        clock(event.time),
        event.event,
        event.job,
        event.job_id,
        event.cluster
    )
}

/// One `[[action]]` as a line of the text output:
/// `00:05:00  bstop long at Cluster1: Job <1> is being stopped`.
pub fn action_text(action: &crate::records::ActionRecord) -> String {
    let refused = if action.done { "" } else { "refused: " };
    format!(
        "{}  {} {} at {}: {refused}{}",
        clock(action.time),
        action.command,
        action.job,
        action.cluster,
        action.outcome
    )
}

/// The run's job totals, each job counted once: what happened to them,
/// and where they stood at the end, by origin (`--report summary`).
pub fn totals_text(stats: &crate::RunStats) -> String {
    let jobs = &stats.jobs;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "jobs started: {}, finished: {}, killed: {}, restarts: {} (of {} jobs: {} present at start, {} submitted)",
        stats.started,
        stats.finished,
        jobs.killed.total(),
        stats.restarts,
        stats.bundled + stats.submitted,
        stats.bundled,
        stats.submitted
    );
    let _ = writeln!(
        text,
        "  {:<13} {:>9} {:>9} {:>7} {:>9} {:>10} {:>8}",
        "origin", "started", "finished", "killed", "running", "suspended", "pending"
    );
    type Pick = fn(&crate::stats::ByOrigin) -> u64;
    let rows: [(&str, Pick); 4] = [
        ("bundled", |c| c.bundled),
        ("submitted", |c| c.submitted),
        ("forwarded in", |c| c.forwarded_in),
        ("all", crate::stats::ByOrigin::total),
    ];
    for (name, pick) in rows {
        let _ = writeln!(
            text,
            "  {:<13} {:>9} {:>9} {:>7} {:>9} {:>10} {:>8}",
            name,
            pick(&jobs.started),
            pick(&jobs.finished),
            pick(&jobs.killed),
            pick(&jobs.running),
            pick(&jobs.suspended),
            pick(&jobs.pending)
        );
    }
    if jobs.waiting + jobs.in_flight > 0 {
        let _ = writeln!(
            text,
            "  at submission clusters: {} waiting to be forwarded, {} forwarded and not yet answered",
            jobs.waiting, jobs.in_flight
        );
    }
    text
}
