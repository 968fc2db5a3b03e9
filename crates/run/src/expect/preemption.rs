//! Checking whether a job was preempted, and by which job, in the run's
//! preemption records.

use mcfed_protocol::SimTime;
use mcfed_scenario::expect::Preemption;

use super::{Check, Found, Run};

impl Check for Preemption {
    fn check(&self, run: Run<'_>) -> Found {
        let Preemption {
            cluster,
            job,
            preempted,
            by,
        } = self;
        let records: Vec<_> = run
            .output
            .preemptions
            .iter()
            .filter(|record| record.cluster == cluster.as_str() && &record.victim == job)
            .collect();
        let expected = match (preempted, by) {
            (true, Some(by)) => format!("job {job} is preempted by {by}"),
            (true, None) => format!("job {job} is preempted"),
            (false, _) => format!("job {job} is never preempted"),
        };
        let held = match (preempted, by) {
            (true, Some(by)) => records.iter().any(|record| &record.preempted_by == by),
            (true, None) => !records.is_empty(),
            (false, _) => records.is_empty(),
        };
        let actual = if records.is_empty() {
            "never preempted".to_owned()
        } else {
            records
                .iter()
                .map(|record| {
                    format!(
                        "{} at {} by {}",
                        record.action,
                        SimTime::from_millis((record.time * 1000.0).round() as u64),
                        record.preempted_by
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        Found {
            expected,
            held,
            actual,
            skipped: None,
        }
    }
}
