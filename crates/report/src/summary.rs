//! The figures of one or more runs.

use std::collections::BTreeMap;

use mcfed_forwarder::OutcomeKind;
use serde::{Deserialize, Serialize};

use crate::input::Records;
use crate::timeline::timelines;

/// Mean, 95th percentile and maximum of a set of durations (seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// How many values.
    pub count: usize,
    /// Their mean.
    pub mean: f64,
    /// Their 95th percentile (nearest rank).
    pub p95: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (sorted in place), or `None` if empty.
    pub fn of(values: &mut [f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let count = values.len();
        let mean = values.iter().sum::<f64>() / count as f64;
        let rank = ((0.95 * count as f64).ceil() as usize).clamp(1, count);
        Some(Spread {
            count,
            mean,
            p95: values[rank - 1],
            max: values[count - 1],
        })
    }
}

/// The figures of a run (or of several runs together).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario names of the runs.
    pub scenarios: Vec<String>,
    /// Decision records.
    pub decisions: usize,
    /// Decisions per MC_PLUGIN_SCHEDULE_ENHANCE mode.
    pub decisions_per_mode: BTreeMap<String, usize>,
    /// Decisions that forwarded a job.
    pub forwarded: usize,
    /// Forward decisions per target cluster.
    pub forwarded_per_cluster: BTreeMap<String, usize>,
    /// Forward decisions per target `queue@cluster`.
    pub forwarded_per_queue: BTreeMap<String, usize>,
    /// Decisions that left a job pending at its submission cluster.
    pub pended: usize,
    /// Jobs left waiting at their submission clusters at the end (from the
    /// summary records; without them, jobs whose last decision left them
    /// pending).
    pub jobs_left_pending: usize,
    /// Decisions made again after a job was refused or returned.
    pub returned: usize,
    /// Forward decisions for jobs forwarded before.
    pub reforwarded: usize,
    /// Decisions checked by the oracle.
    pub oracle_decisions: usize,
    /// Decisions the oracle marked stale.
    pub stale_decisions: usize,
    /// `stale_decisions / oracle_decisions` (0 without the oracle).
    pub stale_rate: f64,
    /// Age of the views decisions used, in seconds.
    pub view_age: Option<Spread>,
    /// Per execution cluster, seconds from submission to start of the jobs
    /// forwarded there.
    pub wait_per_cluster: BTreeMap<String, Spread>,
    /// Jobs that never started (from the summary records: every queue's;
    /// without them, jobs of send queues whose events show no start).
    pub jobs_not_started: usize,
}

impl Summary {
    /// Computes the summary of `records`.
    pub fn of(records: &Records) -> Summary {
        let mut summary = Summary {
            scenarios: records
                .runs
                .iter()
                .map(|run| run.scenario.clone())
                .collect(),
            decisions: records.decisions.len(),
            ..Summary::default()
        };
        let mut ages = Vec::new();
        let mut last_outcome: BTreeMap<(&str, u64), OutcomeKind> = BTreeMap::new();
        for decision in &records.decisions {
            *summary
                .decisions_per_mode
                .entry(decision.mode.clone())
                .or_default() += 1;
            match decision.outcome {
                OutcomeKind::Forwarded => {
                    summary.forwarded += 1;
                    if let Some(target) = &decision.target {
                        *summary
                            .forwarded_per_queue
                            .entry(target.clone())
                            .or_default() += 1;
                        let cluster = target.split_once('@').map_or(target.as_str(), |(_, c)| c);
                        *summary
                            .forwarded_per_cluster
                            .entry(cluster.to_owned())
                            .or_default() += 1;
                    }
                    if decision.attempt > 0 {
                        summary.reforwarded += 1;
                    }
                }
                OutcomeKind::Pending => summary.pended += 1,
            }
            if decision.note.is_some() {
                summary.returned += 1;
            }
            if let Some(oracle) = &decision.oracle {
                summary.oracle_decisions += 1;
                if oracle.stale {
                    summary.stale_decisions += 1;
                }
            }
            if let Some(age) = decision.view_age {
                ages.push(age);
            }
            last_outcome.insert(
                (decision.cluster.as_str(), decision.job_id),
                decision.outcome,
            );
        }
        summary.jobs_left_pending = last_outcome
            .values()
            .filter(|outcome| **outcome == OutcomeKind::Pending)
            .count();
        if summary.oracle_decisions > 0 {
            summary.stale_rate = summary.stale_decisions as f64 / summary.oracle_decisions as f64;
        }
        summary.view_age = Spread::of(&mut ages);

        let mut waits: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for timeline in timelines(records).into_iter().filter(|t| !t.local) {
            match (timeline.submitted, &timeline.started) {
                (Some(submitted), Some((cluster, started))) => waits
                    .entry(cluster.clone())
                    .or_default()
                    .push(started - submitted),
                (Some(_), None) => summary.jobs_not_started += 1,
                _ => {}
            }
        }
        summary.wait_per_cluster = waits
            .into_iter()
            .filter_map(|(cluster, mut values)| Some((cluster, Spread::of(&mut values)?)))
            .collect();
        summary.take_run_totals(records);
        summary
    }

    /// With the runs' summary records at hand, the jobs never started and
    /// left pending are theirs (every queue's, counted by the recorder: one
    /// definition, docs/metrics.md), not what the decisions and events
    /// read here suggest (only forwarded jobs, and none without events).
    fn take_run_totals(&mut self, records: &Records) {
        if records.summaries.is_empty() {
            return;
        }
        let total = |count: u64| usize::try_from(count).unwrap_or(usize::MAX);
        self.jobs_not_started = records
            .summaries
            .iter()
            .flat_map(|summary| &summary.metrics.clusters)
            .map(|cluster| total(cluster.never_started))
            .sum();
        self.jobs_left_pending = records
            .summaries
            .iter()
            .map(|summary| total(summary.jobs.waiting))
            .sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_uses_nearest_rank() {
        let mut values: Vec<f64> = (1..=100).map(f64::from).collect();
        let spread = Spread::of(&mut values).expect("not empty");
        assert_eq!(spread.count, 100);
        assert!((spread.mean - 50.5).abs() < 1e-9);
        assert_eq!(spread.p95, 95.0);
        assert_eq!(spread.max, 100.0);
        assert_eq!(Spread::of(&mut []), None);
        assert_eq!(Spread::of(&mut [7.0]).map(|s| s.p95), Some(7.0));
    }
}

#[cfg(test)]
mod records_tests {
    use super::*;

    /// Two jobs: job 1 forwarded to q@C2 (stale), refused, forwarded again
    /// to q@C3 and started 30s after submission; job 2 pending throughout.
    fn records() -> Records {
        let lines = [
            r#"{"record":"run","scenario":"s","seed":1,"update_interval":30.0,"modes":["RESOURCE_ONLY"],"chaos":true}"#,
            r#"{"record":"event","time":10.0,"cluster":"C1","job":"a","job_id":1,"event":"submitted","queue":"send","source_cluster":"C1","source_job_id":1,"detail":null}"#,
            r#"{"record":"decision","time":10.0,"job":"a","job_id":1,"cluster":"C1","send_queue":"send","slots":1,"attempt":0,"mode":"RESOURCE_ONLY","outcome":"forwarded","target":"q@C2","reason":"r","tier":null,"view_age":20.0,"candidates":[],"note":null,"oracle":{"target":"q@C3","stale":true,"differences":[]}}"#,
            r#"{"record":"event","time":11.0,"cluster":"C1","job":"a","job_id":1,"event":"refused","queue":null,"source_cluster":"C1","source_job_id":1,"detail":"C2: full"}"#,
            r#"{"record":"decision","time":11.0,"job":"a","job_id":1,"cluster":"C1","send_queue":"send","slots":1,"attempt":1,"mode":"RESOURCE_ONLY","outcome":"forwarded","target":"q@C3","reason":"r","tier":null,"view_age":10.0,"candidates":[],"note":"refused by q@C2: full","oracle":{"target":"q@C3","stale":false,"differences":[]}}"#,
            r#"{"record":"event","time":40.0,"cluster":"C3","job":"a","job_id":7,"event":"started","queue":"q","source_cluster":"C1","source_job_id":1,"detail":null}"#,
            r#"{"record":"event","time":12.0,"cluster":"C1","job":"b","job_id":2,"event":"submitted","queue":"send","source_cluster":"C1","source_job_id":2,"detail":null}"#,
            r#"{"record":"decision","time":12.0,"job":"b","job_id":2,"cluster":"C1","send_queue":"send","slots":1,"attempt":0,"mode":"RESOURCE_ONLY","outcome":"pending","target":null,"reason":"no","tier":null,"view_age":null,"candidates":[],"note":null,"oracle":{"target":null,"stale":false,"differences":[]}}"#,
            r#"{"record":"event","time":5.0,"cluster":"C1","job":"local","job_id":3,"event":"started","queue":"q","source_cluster":null,"source_job_id":null,"detail":null}"#,
            r#"{"record":"event","time":6.0,"cluster":"C1","job":"local","job_id":3,"event":"suspended","queue":"q","source_cluster":null,"source_job_id":null,"detail":"preempted by urgent (job 4)"}"#,
            r#"{"record":"usage","time":0.0,"cluster":"C2","slots_in_use":3,"total_slots":10}"#,
            r#"{"record":"future-kind","time":0.0}"#,
            "",
        ];
        let mut records = Records::default();
        for (index, line) in lines.iter().enumerate() {
            records
                .push_line(line, "test.jsonl", index + 1)
                .expect("valid line");
        }
        records
    }

    #[test]
    fn summary_counts_every_figure() {
        let summary = Summary::of(&records());
        assert_eq!(summary.scenarios, vec!["s".to_owned()]);
        assert_eq!(summary.decisions, 3);
        assert_eq!(summary.forwarded, 2);
        assert_eq!(summary.pended, 1);
        assert_eq!(summary.jobs_left_pending, 1);
        assert_eq!(summary.returned, 1);
        assert_eq!(summary.reforwarded, 1);
        assert_eq!(summary.stale_decisions, 1);
        assert_eq!(summary.oracle_decisions, 3);
        assert_eq!(summary.forwarded_per_queue.get("q@C3"), Some(&1));
        assert_eq!(summary.forwarded_per_cluster.get("C2"), Some(&1));
        let age = summary.view_age.expect("ages");
        assert_eq!((age.count, age.mean, age.max), (2, 15.0, 20.0));
        let wait = summary.wait_per_cluster.get("C3").expect("C3 ran job a");
        assert_eq!((wait.count, wait.mean), (1, 30.0));
        assert_eq!(summary.jobs_not_started, 1);
    }

    #[test]
    fn timelines_stitch_both_sides_of_a_forward() {
        let timelines = crate::timeline::timelines(&records());
        assert_eq!(timelines.len(), 3, "two jobs of a send queue, one local");
        let local = &timelines[2];
        assert!(local.local && !timelines[0].local);
        let steps: Vec<&str> = local.steps.iter().map(|s| s.what.as_str()).collect();
        assert_eq!(
            steps,
            vec!["started", "suspended (preempted by urgent (job 4))"]
        );
        let a = &timelines[0];
        assert_eq!((a.job.as_str(), a.job_id), ("a", 1));
        let steps: Vec<&str> = a.steps.iter().map(|s| s.what.as_str()).collect();
        assert!(steps[0].starts_with("submitted"), "{steps:?}");
        assert!(
            steps[1].starts_with("forwarded to q@C2") && steps[1].contains("stale"),
            "{steps:?}"
        );
        assert!(steps[2].starts_with("refused"), "{steps:?}");
        assert!(steps[3].starts_with("forwarded to q@C3"), "{steps:?}");
        assert!(steps[4].starts_with("started at C3 as job 7"), "{steps:?}");
    }

    #[test]
    fn a_bad_line_is_named() {
        let mut records = Records::default();
        let error = records
            .push_line("{not json", "run.jsonl", 7)
            .expect_err("not a record");
        assert!(error.to_string().starts_with("run.jsonl:7:"), "{error}");
    }

    #[test]
    fn plots_without_data_are_left_out_with_the_reason() {
        let empty = Records::default();
        let plots = crate::plots::report_plots(&empty, &[("M".into(), 30.0, 10.0)]).expect("plots");
        let left_out: Vec<&str> = plots
            .iter()
            .filter_map(|plot| match plot {
                crate::plots::Plot::LeftOut { name, .. } => Some(*name),
                crate::plots::Plot::Drawn { .. } => None,
            })
            .collect();
        assert_eq!(
            left_out,
            vec!["slots-in-use.svg", "view-age.svg", "stale-by-interval.svg"]
        );
        let two = [("M".into(), 30.0, 10.0), ("M".into(), 60.0, 20.0)];
        let plots = crate::plots::report_plots(&records(), &two).expect("plots");
        assert!(
            plots
                .iter()
                .all(|plot| matches!(plot, crate::plots::Plot::Drawn { .. }))
        );
    }

    #[test]
    fn plots_are_svg() {
        let records = records();
        for svg in [
            crate::plots::slots_in_use(&records).expect("draws"),
            crate::plots::view_age(&records).expect("draws"),
            crate::plots::stale_rate_by_interval(&[("RESOURCE_ONLY".into(), 30.0, 33.0)])
                .expect("draws"),
        ] {
            assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
            assert!(svg.trim_end().ends_with("</svg>"));
        }
    }
}
