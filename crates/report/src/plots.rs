//! SVG plots of runs, drawn with plotters' SVG backend (text is left to the
//! SVG viewer, so no C font library is needed).

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::input::{Records, ReportError};

const SIZE: (u32, u32) = (800, 450);

fn plot_error(what: &str) -> impl Fn(String) -> ReportError + '_ {
    move |message| ReportError::Plot {
        what: what.to_owned(),
        message,
    }
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Lines of (x, y) points, one per named series.
fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &BTreeMap<String, Vec<(f64, f64)>>,
) -> Result<String, ReportError> {
    let error = plot_error(title);
    let points = series.values().flatten();
    let (mut x_max, mut y_max) = (0f64, 0f64);
    for &(x, y) in points {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    let x_max = if x_max > 0.0 { x_max * 1.02 } else { 1.0 };
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(|e| error(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()
            .map_err(|e| error(e.to_string()))?;
        for (index, (name, points)) in series.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| error(e.to_string()))?
                .label(name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(|e| error(e.to_string()))?;
        }
        if series.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| error(e.to_string()))?;
        }
        root.present().map_err(|e| error(e.to_string()))?;
    }
    Ok(svg)
}

/// Slots in use per cluster over time (percent of its slots).
pub fn slots_in_use(records: &Records) -> Result<String, ReportError> {
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for sample in &records.usage {
        if sample.total_slots == 0 {
            continue;
        }
        let percent = 100.0 * sample.slots_in_use as f64 / sample.total_slots as f64;
        series
            .entry(sample.cluster.clone())
            .or_default()
            .push((sample.time / 60.0, percent));
    }
    line_chart(
        "Slots in use per cluster",
        "time (minutes)",
        "slots in use (%)",
        &series,
    )
}

/// The age of the view behind each decision over time; stale decisions
/// (per the oracle) are a series of their own.
pub fn view_age(records: &Records) -> Result<String, ReportError> {
    let error = plot_error("view age");
    let mut fresh = Vec::new();
    let mut stale = Vec::new();
    for decision in &records.decisions {
        let Some(age) = decision.view_age else {
            continue;
        };
        let point = (decision.time / 60.0, age);
        if decision.oracle.as_ref().is_some_and(|oracle| oracle.stale) {
            stale.push(point);
        } else {
            fresh.push(point);
        }
    }
    let x_max = fresh
        .iter()
        .chain(&stale)
        .map(|p| p.0)
        .fold(0f64, f64::max)
        .max(1.0)
        * 1.02;
    let y_max = fresh
        .iter()
        .chain(&stale)
        .map(|p| p.1)
        .fold(0f64, f64::max)
        .max(1.0)
        * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Age of the view behind each decision", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(|e| error(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("time (minutes)")
            .y_desc("view age (s)")
            .draw()
            .map_err(|e| error(e.to_string()))?;
        for (points, color, label) in [
            (&fresh, PALETTE[0], "agrees with the oracle"),
            (&stale, PALETTE[3], "stale"),
        ] {
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(|e| error(e.to_string()))?
                .label(label)
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| error(e.to_string()))?;
        root.present().map_err(|e| error(e.to_string()))?;
    }
    Ok(svg)
}

/// A figure against the update interval, one line per mode: `points` are
/// (mode, interval in seconds, value).
pub fn against_interval(
    title: &str,
    y_label: &str,
    points: &[(String, f64, f64)],
) -> Result<String, ReportError> {
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (mode, interval, value) in points {
        series
            .entry(mode.clone())
            .or_default()
            .push((*interval, *value));
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    line_chart(title, "MC_PLUGIN_UPDATE_INTERVAL (s)", y_label, &series)
}

/// Stale-decision rate against the update interval, one point per run in
/// `records` (runs are told apart by their `run` records and the
/// decisions that follow each).
pub fn stale_rate_by_interval(per_run: &[(String, f64, f64)]) -> Result<String, ReportError> {
    against_interval(
        "Stale decisions against the update interval",
        "stale decisions (%)",
        per_run,
    )
}

/// One figure of a sweep cell, if it has one.
type CellFigure = fn(&crate::sweep::Cell) -> Option<f64>;

/// Three panels against the update interval, one line per mode: the
/// stale-decision rate, returns per run, and mean wait.
pub fn sweep_panels(cells: &[crate::sweep::Cell]) -> Result<String, ReportError> {
    let error = plot_error("sweep");
    let mut modes: Vec<&str> = cells.iter().map(|cell| cell.mode.as_str()).collect();
    modes.dedup();
    modes.sort_unstable();
    modes.dedup();
    let x_max = cells
        .iter()
        .map(|c| c.interval)
        .fold(0f64, f64::max)
        .max(1.0)
        * 1.05;
    let panels: [(&str, &str, CellFigure); 3] = [
        ("Stale decisions", "stale (%)", |c| {
            Some(100.0 * c.stale_rate)
        }),
        ("Returns per run", "returns", |c| Some(c.returns)),
        ("Mean wait", "wait (s)", |c| c.mean_wait),
    ];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 900)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(e.to_string()))?;
        let areas = root.split_evenly((3, 1));
        for (area, (title, y_label, value)) in areas.iter().zip(panels) {
            let y_max = cells.iter().filter_map(value).fold(0f64, f64::max).max(1.0) * 1.15;
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(35)
                .y_label_area_size(55)
                .build_cartesian_2d(0f64..x_max, 0f64..y_max)
                .map_err(|e| error(e.to_string()))?;
            chart
                .configure_mesh()
                .x_desc("MC_PLUGIN_UPDATE_INTERVAL (s)")
                .y_desc(y_label)
                .draw()
                .map_err(|e| error(e.to_string()))?;
            for (index, mode) in modes.iter().enumerate() {
                let color = PALETTE[index % PALETTE.len()];
                let mut points: Vec<(f64, f64)> = cells
                    .iter()
                    .filter(|cell| cell.mode == *mode)
                    .filter_map(|cell| Some((cell.interval, value(cell)?)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                chart
                    .draw_series(LineSeries::new(
                        points.iter().copied(),
                        color.stroke_width(2),
                    ))
                    .map_err(|e| error(e.to_string()))?
                    .label(mode.to_string())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
                chart
                    .draw_series(
                        points
                            .iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                    )
                    .map_err(|e| error(e.to_string()))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| error(e.to_string()))?;
        }
        root.present().map_err(|e| error(e.to_string()))?;
    }
    Ok(svg)
}
