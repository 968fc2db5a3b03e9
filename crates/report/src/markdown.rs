//! A report as Markdown, for pasting into a ticket.

use std::fmt::Write as _;

use crate::summary::Summary;
use crate::tables::{clock, summary_tables};
use crate::timeline::JobTimeline;

/// The summary as Markdown tables.
pub fn summary(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Summary\n");
    if !summary.scenarios.is_empty() {
        let _ = writeln!(out, "Runs: {}\n", summary.scenarios.join("; "));
    }
    for table in summary_tables(summary) {
        if let Some(title) = table.title {
            let _ = writeln!(out, "\n### {title}\n");
        }
        let _ = writeln!(
            out,
            "| {} |\n|{}",
            table.head.join(" | "),
            "---|".repeat(table.head.len())
        );
        for row in &table.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
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
