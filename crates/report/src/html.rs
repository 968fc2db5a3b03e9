//! A report as one self-contained HTML page (`mcfed report --html`): the
//! runs, the summary's tables, the metrics per cluster and queue, the
//! plots inline, and every job's timeline with each of its decisions —
//! candidates, figures and verdicts in the words `mcfed run` prints —
//! behind a search box. Styles and the search's script are in the page;
//! it fetches nothing, so it can be mailed or attached to a ticket.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcfed_forwarder::DecisionRecord;
use mcfed_run::render;

use crate::input::Records;
use crate::plots::Plot;
use crate::summary::Summary;
use crate::tables::{Table, clock, summary_tables};
use crate::timeline::JobTimeline;

/// What the page is made of (computed by the caller, as for the other
/// formats).
#[derive(Clone, Copy, Debug)]
pub struct HtmlReport<'a> {
    /// The records of the runs.
    pub records: &'a Records,
    /// Their summary.
    pub summary: &'a Summary,
    /// Every job's timeline.
    pub timelines: &'a [JobTimeline],
    /// The plots, drawn or left out.
    pub plots: &'a [Plot],
    /// Per run judged by the oracle: mode, update interval (s), stale
    /// percent.
    pub stale_by_run: &'a [(String, f64, f64)],
    /// The most job timelines to include.
    pub job_limit: usize,
}

/// Escapes text for HTML (element content and quoted attribute values).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn page(report: &HtmlReport<'_>) -> String {
    let mut out = String::new();
    let title = match report.summary.scenarios.as_slice() {
        [] => "mcfed report".to_owned(),
        [one] => format!("mcfed report: {one}"),
        many => format!("mcfed report: {} runs", many.len()),
    };
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    runs(&mut out, report.records);
    summary(&mut out, report.summary);
    metrics(&mut out, report.records);
    plots(&mut out, report.plots, report.stale_by_run);
    jobs(&mut out, report);
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

fn runs(out: &mut String, records: &Records) {
    if records.runs.is_empty() {
        return;
    }
    let rows = records
        .runs
        .iter()
        .map(|run| {
            vec![
                run.scenario.clone(),
                run.seed.to_string(),
                format!("{} s", run.update_interval),
                run.modes.join(", "),
                if run.chaos { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    let _ = write!(out, "<section id=\"runs\"><h2>Runs</h2>");
    table(
        out,
        &Table {
            title: None,
            head: &["scenario", "seed", "update interval", "modes", "faults"],
            rows,
        },
    );
    out.push_str("</section>\n");
}

fn summary(out: &mut String, summary: &Summary) {
    out.push_str("<section id=\"summary\"><h2>Summary</h2>");
    for each in summary_tables(summary) {
        if let Some(title) = each.title {
            let _ = write!(out, "<h3>{}</h3>", escape(title));
        }
        table(out, &each);
    }
    out.push_str("</section>\n");
}

fn metrics(out: &mut String, records: &Records) {
    out.push_str("<section id=\"metrics\"><h2>Metrics per cluster and queue</h2>");
    if records.summaries.is_empty() {
        out.push_str(
            "<p class=\"note\">These records carry no metrics: <code>mcfed run --report json \
             --events</code> writes them in its closing summary record; launched runs do not \
             measure them yet. The forwards per queue are in the summary above.</p>",
        );
    }
    for run in &records.summaries {
        let _ = write!(
            out,
            "<pre class=\"metrics\">{}</pre>",
            escape(&render::metrics_text(&run.metrics))
        );
    }
    out.push_str("</section>\n");
}

fn plots(out: &mut String, plots: &[Plot], stale_by_run: &[(String, f64, f64)]) {
    out.push_str("<section id=\"plots\"><h2>Plots</h2>");
    for plot in plots {
        match plot {
            // Drawn by plotters from the records: its own SVG, inline.
            Plot::Drawn { name, svg } => {
                let _ = write!(
                    out,
                    "<figure class=\"plot\" data-plot=\"{}\">{svg}</figure>",
                    escape(name)
                );
            }
            Plot::LeftOut { name, why } => {
                let _ = write!(
                    out,
                    "<p class=\"note\">{} left out: {}</p>",
                    escape(name),
                    escape(why)
                );
            }
        }
    }
    if !stale_by_run.is_empty() {
        out.push_str("<h3>Stale decisions per run</h3>");
        let rows = stale_by_run
            .iter()
            .map(|(mode, interval, stale)| {
                vec![
                    mode.clone(),
                    format!("{interval} s"),
                    format!("{stale:.1}%"),
                ]
            })
            .collect();
        table(
            out,
            &Table {
                title: None,
                head: &["mode", "update interval", "stale decisions"],
                rows,
            },
        );
    }
    out.push_str("</section>\n");
}

fn jobs(out: &mut String, report: &HtmlReport<'_>) {
    let mut decisions: BTreeMap<(&str, u64), Vec<&DecisionRecord>> = BTreeMap::new();
    for decision in &report.records.decisions {
        decisions
            .entry((decision.cluster.as_str(), decision.job_id))
            .or_default()
            .push(decision);
    }
    let total = report.timelines.len();
    let shown = total.min(report.job_limit);
    let _ = write!(
        out,
        "<section id=\"jobs\"><h2>Jobs</h2>\
         <p><label>Search <input id=\"job-search\" type=\"search\" autocomplete=\"off\" \
         placeholder=\"job name, 12@Cluster1, queue, cluster…\"></label> \
         <span id=\"job-count\" class=\"note\">{shown} jobs</span></p>"
    );
    if total > shown {
        let _ = write!(
            out,
            "<p class=\"note\">The first {shown} of {total} jobs (<code>--jobs N</code> shows more).</p>"
        );
    }
    for timeline in &report.timelines[..shown] {
        let of_job = decisions
            .get(&(timeline.cluster.as_str(), timeline.job_id))
            .map_or(&[][..], Vec::as_slice);
        job(out, timeline, of_job);
    }
    out.push_str("</section>\n");
}

fn job(out: &mut String, timeline: &JobTimeline, decisions: &[&DecisionRecord]) {
    let outcome = match &timeline.started {
        Some((cluster, time)) => format!("started at {} on {cluster}", clock(*time)),
        None => "never started".to_owned(),
    };
    let kind = if timeline.local {
        "local queue".to_owned()
    } else {
        format!(
            "{} decision{}",
            decisions.len(),
            if decisions.len() == 1 { "" } else { "s" }
        )
    };
    let stale = decisions
        .iter()
        .any(|decision| decision.oracle.as_ref().is_some_and(|oracle| oracle.stale));
    let _ = write!(
        out,
        "<details class=\"job{}\" data-job=\"{}\" data-id=\"{}@{}\"><summary><b>{}</b> \
         (job {}@{}) — {}, {}{}</summary><ol class=\"steps\">",
        if stale { " stale" } else { "" },
        escape(&timeline.job),
        timeline.job_id,
        escape(&timeline.cluster),
        escape(&timeline.job),
        timeline.job_id,
        escape(&timeline.cluster),
        escape(&outcome),
        escape(&kind),
        if stale { ", stale" } else { "" }
    );
    for step in &timeline.steps {
        let _ = write!(
            out,
            "<li><time>{}</time> <span class=\"where\">{}</span> {}</li>",
            clock(step.time),
            escape(&step.cluster),
            escape(&step.what)
        );
    }
    out.push_str("</ol>");
    for decision in decisions {
        let stale = decision.oracle.as_ref().is_some_and(|oracle| oracle.stale);
        let _ = write!(
            out,
            "<pre class=\"decision{}\">{}</pre>",
            if stale { " stale" } else { "" },
            escape(&render::decision_text(decision))
        );
    }
    out.push_str("</details>\n");
}

fn table(out: &mut String, table: &Table) {
    out.push_str("<table><thead><tr>");
    for head in table.head {
        let _ = write!(out, "<th>{}</th>", escape(head));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

const STYLE: &str = "\
body{margin:0 auto;max-width:1100px;padding:1em 1.5em 3em;font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d232a}\
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #d5dbe1;padding-bottom:.2em}h3{font-size:1em;margin:1.2em 0 .3em}\
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.3em 0}\
th,td{border-bottom:1px solid #e3e7eb;padding:.15em .7em;text-align:left}th{color:#5d6873;font-weight:600}\
.note{color:#5d6873}pre{font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,monospace;overflow-x:auto;background:#f6f8fa;padding:.5em;border-radius:4px}\
figure.plot{margin:1em 0}figure.plot svg{max-width:100%;height:auto}\
#job-search{width:24em;padding:.3em .4em}\
details.job{border-top:1px solid #e3e7eb;padding:.25em 0}details.job summary{cursor:pointer}\
details.job.stale summary{color:#b71c1c}pre.decision.stale{border-left:3px solid #c62828}\
ol.steps{margin:.3em 0 .5em;padding-left:1.5em}ol.steps time{font-variant-numeric:tabular-nums;color:#5d6873}\
ol.steps .where{font-weight:600}";

/// The job search: a job matches when its name, id, steps or decisions
/// contain the words typed (case ignored); a handful of matches are opened.
/// `#search=WORDS` in the address searches at once.
const SCRIPT: &str = r#"
(function () {
  'use strict';
  var box = document.getElementById('job-search');
  var count = document.getElementById('job-count');
  var jobs = Array.prototype.slice.call(document.querySelectorAll('details.job'));
  var texts = null;
  function search() {
    if (!texts) texts = jobs.map(function (job) { return job.textContent.toLowerCase(); });
    var query = box.value.trim().toLowerCase();
    var shown = 0;
    jobs.forEach(function (job, index) {
      var match = !query || texts[index].indexOf(query) >= 0;
      job.hidden = !match;
      if (match) shown += 1;
    });
    if (query && shown <= 3) jobs.forEach(function (job) { if (!job.hidden) job.open = true; });
    count.textContent = query ? shown + ' of ' + jobs.length + ' jobs match' : jobs.length + ' jobs';
  }
  box.addEventListener('input', search);
  var hash = decodeURIComponent(location.hash || '');
  if (hash.indexOf('#search=') === 0) { box.value = hash.slice(8); search(); }
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        assert_eq!(
            escape("<b a=\"1\">Tom & 'Jerry'</b>"),
            "&lt;b a=&quot;1&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/b&gt;"
        );
    }
}
