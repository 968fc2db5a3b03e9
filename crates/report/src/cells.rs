//! A sweep's table: one cell per update interval and mode, with the
//! figures of its runs (`mcfed sweep`), as Markdown and as SVG panels.

use serde::{Deserialize, Serialize};

/// The figures of one cell of the grid, averaged over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The update interval, in seconds.
    pub interval: f64,
    /// The mode.
    pub mode: String,
    /// Runs in the cell.
    pub runs: u64,
    /// Mean decisions per run.
    pub decisions: f64,
    /// Mean stale decisions per run.
    pub stale_decisions: f64,
    /// Stale decisions over decisions checked, over the cell's runs.
    pub stale_rate: f64,
    /// Mean decisions made again after a refusal or return, per run.
    pub returns: f64,
    /// Mean wait from submission to start, over every job of the cell's
    /// runs that started, in seconds.
    pub mean_wait: Option<f64>,
}

/// The cells as a Markdown table.
pub fn cells_markdown(cells: &[Cell]) -> String {
    let mut out = String::from(
        "| interval | mode | runs | decisions | stale | stale rate | returns | mean wait |\n|---|---|---|---|---|---|---|---|\n",
    );
    for cell in cells {
        if cell.runs == 0 {
            out.push_str(&format!(
                "| {}s | {} | 0 | — | — | — | — | — |\n",
                cell.interval, cell.mode
            ));
            continue;
        }
        let wait = cell
            .mean_wait
            .map_or_else(|| "—".to_owned(), |wait| format!("{wait:.1} s"));
        out.push_str(&format!(
            "| {}s | {} | {} | {:.1} | {:.1} | {:.1}% | {:.1} | {wait} |\n",
            cell.interval,
            cell.mode,
            cell.runs,
            cell.decisions,
            cell.stale_decisions,
            100.0 * cell.stale_rate,
            cell.returns
        ));
    }
    out
}

/// The cells as an SVG: stale-decision rate, returns and mean wait against
/// the update interval, one line per mode.
pub fn cells_svg(cells: &[Cell]) -> Result<String, crate::ReportError> {
    crate::plots::sweep_panels(cells)
}
