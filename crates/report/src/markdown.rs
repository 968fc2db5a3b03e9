//! A report as Markdown, for pasting into a ticket.

use std::fmt::Write as _;

use crate::summary::{Spread, Summary};
use crate::timeline::JobTimeline;

fn seconds(value: f64) -> String {
    if value >= 3600.0 {
        format!("{:.1} h", value / 3600.0)
    } else if value >= 60.0 {
        format!("{:.1} min", value / 60.0)
    } else {
        format!("{value:.1} s")
    }
}

fn spread(spread: &Option<Spread>) -> String {
    match spread {
        Some(s) => format!(
            "mean {}, p95 {}, max {} ({} values)",
            seconds(s.mean),
            seconds(s.p95),
            seconds(s.max),
            s.count
        ),
        None => "—".to_owned(),
    }
}

fn clock(time: f64) -> String {
    let total = time.max(0.0);
    let secs = total as u64;
    let millis = ((total - secs as f64) * 1000.0).round() as u64;
    let mut text = format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if millis > 0 {
        let _ = write!(text, ".{millis:03}");
    }
    text
}

/// The summary as Markdown tables.
pub fn summary(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Summary\n");
    if !summary.scenarios.is_empty() {
        let _ = writeln!(out, "Runs: {}\n", summary.scenarios.join("; "));
    }
    let _ = writeln!(out, "| figure | value |\n|---|---|");
    let rows: [(&str, String); 11] = [
        ("decisions", summary.decisions.to_string()),
        ("forwarded", summary.forwarded.to_string()),
        ("pended (decisions)", summary.pended.to_string()),
        ("jobs left pending", summary.jobs_left_pending.to_string()),
        (
            "decided again after a refusal or return",
            summary.returned.to_string(),
        ),
        ("re-forwarded", summary.reforwarded.to_string()),
        (
            "checked by the oracle",
            summary.oracle_decisions.to_string(),
        ),
        (
            "stale decisions",
            format!(
                "{} ({:.1}%)",
                summary.stale_decisions,
                100.0 * summary.stale_rate
            ),
        ),
        ("view age", spread(&summary.view_age)),
        ("jobs never started", summary.jobs_not_started.to_string()),
        ("modes", summary.decisions_per_mode.len().to_string()),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "| {name} | {value} |");
    }
    let _ = writeln!(
        out,
        "\n### Decisions per mode\n\n| mode | decisions |\n|---|---|"
    );
    for (mode, count) in &summary.decisions_per_mode {
        let _ = writeln!(out, "| {mode} | {count} |");
    }
    let _ = writeln!(
        out,
        "\n### Forwarded per queue\n\n| queue | forwards |\n|---|---|"
    );
    for (queue, count) in &summary.forwarded_per_queue {
        let _ = writeln!(out, "| {queue} | {count} |");
    }
    let _ = writeln!(
        out,
        "\n### Forwarded per cluster\n\n| cluster | forwards |\n|---|---|"
    );
    for (cluster, count) in &summary.forwarded_per_cluster {
        let _ = writeln!(out, "| {cluster} | {count} |");
    }
    let _ = writeln!(
        out,
        "\n### Wait from submission to start, per execution cluster\n\n| cluster | jobs | mean | p95 | max |\n|---|---|---|---|---|"
    );
    for (cluster, s) in &summary.wait_per_cluster {
        let _ = writeln!(
            out,
            "| {cluster} | {} | {} | {} | {} |",
            s.count,
            seconds(s.mean),
            seconds(s.p95),
            seconds(s.max)
        );
    }
    out
}

/// Per-job timelines as Markdown, the first `limit` jobs.
pub fn timelines(timelines: &[JobTimeline], limit: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Job timelines\n");
    if timelines.len() > limit {
        let _ = writeln!(
            out,
            "The first {limit} of {} jobs (`--jobs N` shows more).\n",
            timelines.len()
        );
    }
    for timeline in timelines.iter().take(limit) {
        let _ = writeln!(
            out,
            "### {} (job {}@{})\n",
            timeline.job, timeline.job_id, timeline.cluster
        );
        for step in &timeline.steps {
            let _ = writeln!(
                out,
                "- {} {}: {}",
                clock(step.time),
                step.cluster,
                step.what
            );
        }
        let _ = writeln!(out);
    }
    out
}
