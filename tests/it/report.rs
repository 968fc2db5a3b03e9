//! End-to-end: `mcfed report` on a run's records, and `mcfed sweep`.

use std::path::PathBuf;

use crate::common;
use common::{mcfed, succeeded};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcfed-report-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn report_summarises_a_chaos_run() {
    let dir = scratch("run");
    let run = mcfed(&[
        "run",
        "scenarios/chaos/reordered-updates.toml",
        "--report",
        "json",
        "--events",
    ]);
    let jsonl = succeeded(&run);
    let stale_lines = jsonl
        .lines()
        .filter(|l| l.contains("\"stale\":true"))
        .count();
    let decisions = jsonl
        .lines()
        .filter(|l| l.starts_with("{\"record\":\"decision\""))
        .count();
    let path = dir.join("run.jsonl");
    std::fs::write(&path, &jsonl).expect("write run");

    let plots = dir.join("plots");
    let output = mcfed(&[
        "report",
        path.to_str().expect("utf-8"),
        "--format",
        "json",
        "--plots",
        plots.to_str().expect("utf-8"),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(report["summary"]["decisions"], decisions);
    assert_eq!(report["summary"]["stale_decisions"], stale_lines);
    assert!(report["summary"]["stale_decisions"].as_u64() > Some(0));
    assert!(report["summary"]["wait_per_cluster"]["Cluster2"]["count"].as_u64() > Some(0));
    // The 120 jobs of send queues (jobs of local queues, if any, have
    // timelines marked `local`).
    let timelines = report["timelines"].as_array().expect("timelines");
    let forwarded = timelines.iter().filter(|t| t["local"] == false).count();
    assert_eq!(forwarded, 120);
    for name in ["slots-in-use.svg", "view-age.svg"] {
        let svg = std::fs::read_to_string(plots.join(name)).expect("plot written");
        assert!(svg.starts_with("<svg"), "{name}");
    }
    // One run is one point against the update interval: that plot is left
    // out, and the report says why.
    assert!(!plots.join("stale-by-interval.svg").exists());
    let left_out = &report["plots_left_out"][0];
    assert_eq!(left_out["plot"], "stale-by-interval.svg");
    assert!(
        left_out["why"]
            .as_str()
            .is_some_and(|why| why.contains("two intervals or more")),
        "{left_out}"
    );

    let markdown = mcfed(&["report", path.to_str().expect("utf-8"), "--jobs", "1"]);
    let text = String::from_utf8_lossy(&markdown.stdout);
    assert!(
        text.contains("## Summary") && text.contains("## Job timelines"),
        "{text}"
    );
    assert!(text.contains("| stale decisions |"), "{text}");
}

#[test]
fn report_refuses_a_bad_file_naming_the_line() {
    let dir = scratch("bad");
    let path = dir.join("bad.jsonl");
    std::fs::write(&path, "{\"record\":\"usage\",\"time\":0,\"cluster\":\"C\",\"slots_in_use\":1,\"total_slots\":2}\nnot json\n")
        .expect("write");
    let output = mcfed(&["report", path.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.jsonl:2:"), "{stderr}");
}

#[test]
fn sweep_runs_the_grid_and_plots_it() {
    let dir = scratch("sweep");
    let plot = dir.join("sweep.svg");
    let output = mcfed(&[
        "sweep",
        "scenarios/chaos/churn.toml",
        "--interval",
        "1s,60s",
        "--mode",
        "RESOURCE_ONLY,COUNT_PREEMPTABLE",
        "--seeds",
        "2",
        "--format",
        "json",
        "--plot",
        plot.to_str().expect("utf-8"),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let cells: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON cells");
    let cells = cells.as_array().expect("array");
    assert_eq!(cells.len(), 4);
    assert!(cells.iter().all(|cell| cell["runs"] == 2));
    let rate = |interval: f64, mode: &str| {
        cells
            .iter()
            .find(|c| c["interval"] == interval && c["mode"] == mode)
            .and_then(|c| c["stale_rate"].as_f64())
            .expect("cell")
    };
    assert!(
        rate(60.0, "RESOURCE_ONLY") > rate(1.0, "RESOURCE_ONLY"),
        "longer intervals, staler views"
    );
    assert!(
        std::fs::read_to_string(&plot)
            .expect("plot")
            .starts_with("<svg")
    );

    // The same sweep on one thread gives the same table.
    let single = mcfed(&[
        "sweep",
        "scenarios/chaos/churn.toml",
        "--interval",
        "1s,60s",
        "--mode",
        "RESOURCE_ONLY,COUNT_PREEMPTABLE",
        "--seeds",
        "2",
        "--format",
        "json",
        "--threads",
        "1",
    ]);
    assert_eq!(single.stdout, output.stdout);
}

/// `--html`: one page that fetches nothing, with the summary, the metrics,
/// both plots inline, and one entry per job timeline, each with its
/// decisions in the words `mcfed run` prints.
#[test]
fn report_html_is_one_self_contained_page() {
    let dir = scratch("html");
    let run = mcfed(&[
        "run",
        "scenarios/chaos/reordered-updates.toml",
        "--report",
        "json",
        "--events",
    ]);
    succeeded(&run);
    let path = dir.join("run.jsonl");
    std::fs::write(&path, &run.stdout).expect("write run");
    let page = dir.join("report.html");
    let output = mcfed(&[
        "report",
        path.to_str().expect("utf-8"),
        "--format",
        "json",
        "--html",
        page.to_str().expect("utf-8"),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.starts_with("<!doctype html>"), "{}", &html[..100]);
    // Nothing fetched: no external script, style, image or link.
    for external in ["src=\"", "href=\"", "url(", "@import"] {
        assert!(!html.contains(external), "the page refers out: {external}");
    }
    let timelines = report["timelines"].as_array().expect("timelines");
    assert_eq!(
        html.matches("<details class=\"job").count(),
        timelines.len()
    );
    let decisions = report["summary"]["decisions"].as_u64().expect("decisions");
    assert_eq!(
        html.matches("<pre class=\"decision").count() as u64,
        decisions
    );
    // The decisions read as `mcfed run` prints them, escaped for HTML.
    let text =
        String::from_utf8_lossy(&mcfed(&["run", "scenarios/chaos/reordered-updates.toml"]).stdout)
            .into_owned();
    let line = text
        .lines()
        .find(|line| line.contains("=>  forwarded to"))
        .expect("a decision line");
    let escaped = line
        .trim_end()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(html.contains(&escaped), "{line}");
    assert!(html.contains("| candidate "), "the candidates' table");
    for figure in ["stale decisions", "view age", "Forwarded per queue"] {
        assert!(html.contains(figure), "{figure}");
    }
    assert!(
        html.contains("makespan: "),
        "the metrics per cluster and queue"
    );
    assert_eq!(
        html.matches("<figure class=\"plot\"").count(),
        2,
        "slots in use and view age, inline"
    );
    assert!(html.contains("stale-by-interval.svg left out: "));
    assert!(html.contains("id=\"job-search\""));
    // `--jobs` bounds the timelines, and says so.
    let short = dir.join("short.html");
    let output = mcfed(&[
        "report",
        path.to_str().expect("utf-8"),
        "--jobs",
        "3",
        "--html",
        short.to_str().expect("utf-8"),
    ]);
    succeeded(&output);
    let short = std::fs::read_to_string(&short).expect("the page");
    assert_eq!(short.matches("<details class=\"job").count(), 3);
    assert!(short.contains(&format!("The first 3 of {} jobs", timelines.len())));
}

/// `mcfed report`'s Summary and its Metrics block say the same of the jobs
/// that never started (its Summary once said 0 where the Metrics said 16:
/// it counted from job events a run without `--events` does not have).
#[test]
fn report_summary_and_metrics_agree_on_jobs_never_started() {
    let dir = scratch("agree");
    let run = mcfed(&["run", "scenarios/chaos/churn.toml", "--report", "json"]);
    succeeded(&run);
    let path = dir.join("churn.jsonl");
    std::fs::write(&path, &run.stdout).expect("write records");
    let summary: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&run.stdout)
            .lines()
            .last()
            .expect("a summary record"),
    )
    .expect("JSON");
    let never: u64 = summary["metrics"]["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .map(|cluster| cluster["never_started"].as_u64().expect("a count"))
        .sum();
    assert!(never > 0, "the scenario leaves jobs pending");
    let report = mcfed(&["report", path.to_str().expect("utf-8")]);
    let text = succeeded(&report);
    assert!(
        text.contains(&format!("| jobs never started | {never} |")),
        "{text}"
    );
    assert!(
        text.contains(&format!("never started: {never} jobs")),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
