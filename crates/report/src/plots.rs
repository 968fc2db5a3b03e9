//! SVG plots of runs, drawn with plotters' SVG backend (text is left to the
//! SVG viewer, so no C font library is needed).

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::input::{Records, ReportError};

/// Named series of (x, y) points.
type Series = BTreeMap<String, Vec<(f64, f64)>>;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// One chart's titles.
struct Panel<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    /// Join the points of a series with lines (otherwise: points only).
    lines: bool,
}

/// Draws `series` as one chart on `area`, with a legend when there is more
/// than one series.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    series: &Series,
) -> Result<(), String> {
    let points = series.values().flatten();
    let (x_max, y_max) = points.fold((0f64, 0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let x_max = if x_max > 0.0 { x_max * 1.03 } else { 1.0 };
    let y_max = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(panel.title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(38)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(panel.x_label)
        .y_desc(panel.y_label)
        .draw()
        .map_err(|e| e.to_string())?;
    for (index, (name, points)) in series.iter().enumerate() {
        let color = PALETTE[index % PALETTE.len()];
        let dots = chart
            .draw_series(
                points
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            )
            .map_err(|e| e.to_string())?;
        if panel.lines {
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
        } else {
            dots.label(name.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
        }
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Draws `panels` stacked in one SVG.
fn svg(what: &str, height: u32, panels: &[(Panel<'_>, Series)]) -> Result<String, ReportError> {
    let error = |message: String| ReportError::Plot {
        what: what.to_owned(),
        message,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(e.to_string()))?;
        let rows = u32::try_from(panels.len()).unwrap_or(1).max(1) as usize;
        for (area, (panel, series)) in root.split_evenly((rows, 1)).iter().zip(panels) {
            draw_panel(area, panel, series).map_err(error)?;
        }
        root.present().map_err(|e| error(e.to_string()))?;
    }
    Ok(svg)
}

/// Slots in use per cluster over time (percent of its slots).
pub fn slots_in_use(records: &Records) -> Result<String, ReportError> {
    let mut series = Series::new();
    for sample in records.usage.iter().filter(|s| s.total_slots > 0) {
        let percent = 100.0 * sample.slots_in_use as f64 / sample.total_slots as f64;
        series
            .entry(sample.cluster.clone())
            .or_default()
            .push((sample.time / 60.0, percent));
    }
    let panel = Panel {
        title: "Slots in use per cluster",
        x_label: "time (minutes)",
        y_label: "slots in use (%)",
        lines: true,
    };
    svg("slots in use", 450, &[(panel, series)])
}

/// The age of the view behind each decision over time; stale decisions
/// (per the oracle) are a series of their own.
pub fn view_age(records: &Records) -> Result<String, ReportError> {
    let mut series = Series::new();
    for decision in &records.decisions {
        let Some(age) = decision.view_age else {
            continue;
        };
        let stale = decision.oracle.as_ref().is_some_and(|oracle| oracle.stale);
        let name = if stale {
            "stale"
        } else {
            "agrees with the oracle"
        };
        series
            .entry(name.to_owned())
            .or_default()
            .push((decision.time / 60.0, age));
    }
    let panel = Panel {
        title: "Age of the view behind each decision",
        x_label: "time (minutes)",
        y_label: "view age (s)",
        lines: false,
    };
    svg("view age", 450, &[(panel, series)])
}

/// A series per mode from (mode, interval in seconds, value) points,
/// ordered by interval.
fn by_mode(points: impl IntoIterator<Item = (String, f64, f64)>) -> Series {
    let mut series = Series::new();
    for (mode, interval, value) in points {
        series.entry(mode).or_default().push((interval, value));
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

const INTERVAL: &str = "MC_PLUGIN_UPDATE_INTERVAL (s)";

/// Stale-decision rate (percent) against the update interval, one line per
/// mode; `per_run` is (mode, interval in seconds, stale percent).
pub fn stale_rate_by_interval(per_run: &[(String, f64, f64)]) -> Result<String, ReportError> {
    let panel = Panel {
        title: "Stale decisions against the update interval",
        x_label: INTERVAL,
        y_label: "stale decisions (%)",
        lines: true,
    };
    svg(
        "stale rate",
        450,
        &[(panel, by_mode(per_run.iter().cloned()))],
    )
}

/// One figure of a sweep cell, if it has one.
type CellFigure = fn(&crate::cells::Cell) -> Option<f64>;

/// Three panels against the update interval, one line per mode: the
/// stale-decision rate, returns per run, and mean wait.
pub fn sweep_panels(cells: &[crate::cells::Cell]) -> Result<String, ReportError> {
    let figures: [(&str, &str, CellFigure); 3] = [
        ("Stale decisions", "stale (%)", |c| {
            Some(100.0 * c.stale_rate)
        }),
        ("Returns per run", "returns", |c| Some(c.returns)),
        ("Mean wait", "wait (s)", |c| c.mean_wait),
    ];
    let panels: Vec<(Panel<'_>, Series)> = figures
        .into_iter()
        .map(|(title, y_label, figure)| {
            let points = cells
                .iter()
                .filter_map(|cell| Some((cell.mode.clone(), cell.interval, figure(cell)?)));
            let panel = Panel {
                title,
                x_label: INTERVAL,
                y_label,
                lines: true,
            };
            (panel, by_mode(points))
        })
        .collect();
    svg("sweep", 900, &panels)
}

/// A plot of a report: drawn, or left out for want of data (an empty
/// frame says nothing; a line of one point is a dot).
#[derive(Clone, Debug, PartialEq)]
pub enum Plot {
    /// Drawn: its file name and SVG.
    Drawn {
        /// The file name (`slots-in-use.svg`).
        name: &'static str,
        /// The drawing.
        svg: String,
    },
    /// Left out.
    LeftOut {
        /// The file name it would have had.
        name: &'static str,
        /// Why, in words.
        why: String,
    },
}

/// The plots of a report on `records` (and, across runs, `per_run`: mode,
/// update interval, stale percent): each drawn when it has data to show,
/// else left out with the reason.
pub fn report_plots(
    records: &Records,
    per_run: &[(String, f64, f64)],
) -> Result<Vec<Plot>, ReportError> {
    let mut plots = Vec::new();
    let has_usage = records.usage.iter().any(|sample| sample.total_slots > 0);
    plots.push(if has_usage {
        Plot::Drawn {
            name: "slots-in-use.svg",
            svg: slots_in_use(records)?,
        }
    } else {
        Plot::LeftOut {
            name: "slots-in-use.svg",
            why: "no slot-usage samples in the records (record them with --events)".to_owned(),
        }
    });
    let has_ages = records.decisions.iter().any(|d| d.view_age.is_some());
    plots.push(if has_ages {
        Plot::Drawn {
            name: "view-age.svg",
            svg: view_age(records)?,
        }
    } else {
        Plot::LeftOut {
            name: "view-age.svg",
            why: "no decision made on counters (no view age to show)".to_owned(),
        }
    });
    let mut intervals: Vec<u64> = per_run
        .iter()
        .map(|(_, interval, _)| (interval * 1000.0) as u64)
        .collect();
    intervals.sort_unstable();
    intervals.dedup();
    plots.push(if intervals.len() >= 2 {
        Plot::Drawn {
            name: "stale-by-interval.svg",
            svg: stale_rate_by_interval(per_run)?,
        }
    } else {
        Plot::LeftOut {
            name: "stale-by-interval.svg",
            why: format!(
                "the stale rate against the update interval needs runs at two intervals or more ({} given, judged by the oracle)",
                intervals.len()
            ),
        }
    });
    Ok(plots)
}
