//! The summary of a run as tables of words — what each report format
//! (Markdown, HTML) lays out its own way — and the ways figures are
//! written in them (durations, spreads, emulated clock times).

use std::fmt::Write as _;

use crate::summary::{Spread, Summary};

/// One table of a report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Table {
    /// Its heading (`None`: the report's first, untitled table).
    pub(crate) title: Option<&'static str>,
    /// Its column names.
    pub(crate) head: &'static [&'static str],
    /// Its rows, one cell per column.
    pub(crate) rows: Vec<Vec<String>>,
}

/// A duration in seconds, in the unit that reads best.
pub(crate) fn seconds(value: f64) -> String {
    if value >= 3600.0 {
        format!("{:.1} h", value / 3600.0)
    } else if value >= 60.0 {
        format!("{:.1} min", value / 60.0)
    } else {
        format!("{value:.1} s")
    }
}

/// Mean, p95 and max of a spread, or a dash.
pub(crate) fn spread(spread: &Option<Spread>) -> String {
    match spread {
        Some(s) => format!(
            "mean {}, p95 {}, max {} ({})",
            seconds(s.mean),
            seconds(s.p95),
            seconds(s.max),
            mcfed_protocol::words::count(s.count as u64, "value")
        ),
        None => "—".to_owned(),
    }
}

/// An emulated time as `hh:mm:ss` (with milliseconds when there are any).
pub(crate) fn clock(time: f64) -> String {
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

/// The summary's tables: its figures, decisions per mode, forwards per
/// queue and per cluster, and the wait per execution cluster.
pub(crate) fn summary_tables(summary: &Summary) -> Vec<Table> {
    let figures: [(&str, String); 11] = [
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
    let counts = |map: &std::collections::BTreeMap<String, usize>| -> Vec<Vec<String>> {
        map.iter()
            .map(|(name, count)| vec![name.clone(), count.to_string()])
            .collect()
    };
    vec![
        Table {
            title: None,
            head: &["figure", "value"],
            rows: figures
                .into_iter()
                .map(|(name, value)| vec![name.to_owned(), value])
                .collect(),
        },
        Table {
            title: Some("Decisions per mode"),
            head: &["mode", "decisions"],
            rows: counts(&summary.decisions_per_mode),
        },
        Table {
            title: Some("Forwarded per queue"),
            head: &["queue", "forwards"],
            rows: counts(&summary.forwarded_per_queue),
        },
        Table {
            title: Some("Forwarded per cluster"),
            head: &["cluster", "forwards"],
            rows: counts(&summary.forwarded_per_cluster),
        },
        Table {
            title: Some("Wait from submission to start, per execution cluster"),
            head: &["cluster", "jobs", "mean", "p95", "max"],
            rows: summary
                .wait_per_cluster
                .iter()
                .map(|(cluster, s)| {
                    vec![
                        cluster.clone(),
                        s.count.to_string(),
                        seconds(s.mean),
                        seconds(s.p95),
                        seconds(s.max),
                    ]
                })
                .collect(),
        },
    ]
}
