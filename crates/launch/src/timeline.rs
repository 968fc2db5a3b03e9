//! What a launcher plays, in emulated-time order: the scenario's
//! submissions, `[[action]]`s and outages, and its workloads' traces read
//! as streams (one pending submission per workload, never the whole
//! trace), merged as the event loop merges them.

use std::sync::Arc;

use mcfed_chaos::Outage;
use mcfed_protocol::SimTime;
use mcfed_run::records::WorkloadReport;
use mcfed_scenario::Scenario;
use mcfed_scenario::model::Submission;
use mcfed_trace::SwfError;
use mcfed_trace::workload::{WorkloadSpec, WorkloadStream};

/// What the launcher does, in emulated-time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    /// A cluster comes back (first, at an instant: it may get submissions).
    Up(usize),
    /// A cluster goes down.
    Down(usize),
    /// A submission of the scenario.
    Submit(usize),
    /// A job control command (`[[action]]`), after the submissions of
    /// its instant.
    Action(usize),
}

/// The scenario's steps, in order: the submissions and actions up to the
/// scenario's end (all of them when it drains), the outages' kills and
/// restarts.
pub(super) fn timeline(scenario: &Scenario, outages: &[Outage]) -> Vec<(SimTime, Step)> {
    let end = last_step_time(scenario);
    let mut steps: Vec<(SimTime, Step)> = scenario
        .submissions
        .iter()
        .enumerate()
        .take_while(|(_, submission)| submission.at <= end)
        .map(|(index, submission)| (submission.at, Step::Submit(index)))
        .collect();
    steps.extend(
        scenario
            .actions
            .iter()
            .enumerate()
            .filter(|(_, action)| action.at <= end)
            .map(|(index, action)| (action.at, Step::Action(index))),
    );
    for outage in outages {
        let Some(index) = scenario
            .clusters
            .iter()
            .position(|spec| spec.config.name == outage.cluster)
        else {
            continue;
        };
        if outage.at <= end {
            steps.push((outage.at, Step::Down(index)));
            if outage.until <= end {
                steps.push((outage.until, Step::Up(index)));
            }
        }
    }
    steps.sort();
    steps
}

/// The last time at which anything is played: the scenario's end, or
/// none when it drains.
fn last_step_time(scenario: &Scenario) -> SimTime {
    if scenario.drain {
        SimTime::MAX
    } else {
        scenario.end
    }
}

/// What comes next.
pub(super) enum Next {
    /// A step of the scenario.
    Step(Step),
    /// A job of a workload.
    Workload(Submission),
}

/// The scenario's steps and its workloads, merged in time order: at an
/// instant, restarts and kills first, then the scenario's submissions,
/// then the workloads' (in the order of the scenario's `[[workload]]`
/// tables), then the actions.
pub(super) struct Plan {
    steps: std::iter::Peekable<std::vec::IntoIter<(SimTime, Step)>>,
    streams: Vec<WorkloadStream>,
    heads: Vec<Option<Submission>>,
    submitted: Vec<u64>,
    end: SimTime,
}

impl Plan {
    /// Opens every workload of `scenario` (an unreadable trace is an
    /// error now, before anything is played).
    pub(super) fn open(scenario: &Scenario, outages: &[Outage]) -> Result<Self, SwfError> {
        let mut streams = Vec::with_capacity(scenario.workloads.len());
        for spec in &scenario.workloads {
            streams.push(WorkloadStream::open(Arc::new(WorkloadSpec::clone(spec)))?);
        }
        let heads = streams.iter_mut().map(Iterator::next).collect();
        Ok(Plan {
            steps: timeline(scenario, outages).into_iter().peekable(),
            submitted: vec![0; streams.len()],
            streams,
            heads,
            end: last_step_time(scenario),
        })
    }

    /// The next thing to do and when, in emulated time.
    pub(super) fn next(&mut self) -> Option<(SimTime, Next)> {
        let workload = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(index, head)| head.as_ref().map(|head| (head.at, index)))
            .filter(|&(at, _)| at <= self.end)
            .min();
        let step = self.steps.peek().map(|&(at, step)| (at, step));
        let step_first = match (step, workload) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
            // Actions come after an instant's workload submissions.
            (Some((step_at, step)), Some((workload_at, _))) => {
                step_at < workload_at
                    || (step_at == workload_at && !matches!(step, Step::Action(_)))
            }
        };
        if step_first {
            return self.steps.next().map(|(at, step)| (at, Next::Step(step)));
        }
        let (at, index) = workload?;
        let submission = self.heads[index].take()?;
        self.heads[index] = self.streams[index].next();
        self.submitted[index] += 1;
        Some((at, Next::Workload(submission)))
    }

    /// What each workload read and skipped, for the run's output.
    pub(super) fn reports(&self) -> Vec<WorkloadReport> {
        self.streams
            .iter()
            .zip(&self.submitted)
            .map(|(stream, &submitted)| {
                WorkloadReport::new(
                    stream.spec(),
                    &stream.header().fields,
                    submitted,
                    stream.skipped(),
                    stream.first_error(),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = r#"
        name = "merge"
        end = "drain"
        [[cluster]]
        name = "C1"
        [[cluster.host]]
        name = "h"
        MXJ = 4
        [[cluster.queue]]
        name = "normal"
        PRIORITY = 30
        [[submit]]
        at = "10s"
        cluster = "C1"
        queue = "normal"
        name = "scenario-job"
        run_time = "5s"
        [[action]]
        at = "10s"
        cluster = "C1"
        job = "scenario-job"
        command = "bstop"
        [[workload]]
        swf = "trace.swf"
        cluster = "C1"
        queue = "normal"
    "#;

    fn plan(dir: &tempfile::TempDir) -> Plan {
        let trace = "; MaxProcs: 4\n\
            1 0 0 60 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n\
            2 10 0 60 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n\
            3 20 0 -1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n\
            4 30 0 60 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
        std::fs::write(dir.path().join("trace.swf"), trace).expect("trace");
        let path = dir.path().join("s.toml");
        std::fs::write(&path, SCENARIO).expect("scenario");
        let scenario = mcfed_scenario::load(&path).expect("valid");
        Plan::open(&scenario, &[]).expect("the workload opens")
    }

    #[test]
    fn workloads_merge_with_the_steps_in_time_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut plan = plan(&dir);
        let mut seen = Vec::new();
        while let Some((at, next)) = plan.next() {
            let what = match next {
                Next::Step(Step::Submit(_)) => "submit".to_owned(),
                Next::Step(Step::Action(_)) => "action".to_owned(),
                Next::Step(step) => format!("{step:?}"),
                Next::Workload(submission) => submission.spec.name.to_string(),
            };
            seen.push(format!("{}:{what}", at.as_secs_f64()));
        }
        assert_eq!(
            seen,
            [
                "0:trace-1",
                "10:submit",
                "10:trace-2",
                "10:action",
                "30:trace-4"
            ]
        );
        let reports = plan.reports();
        assert_eq!(reports[0].submitted, 3);
        assert_eq!(reports[0].skipped.no_run_time, 1);
        assert_eq!(reports[0].header, [("MaxProcs".into(), "4".into())]);
    }
}
