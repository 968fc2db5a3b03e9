//! The submissions of a run, in time order: the scenario's `[[submit]]`
//! entries and its workloads' traces, read as streams — one pending
//! submission per workload, never the whole trace.

use std::sync::Arc;

use mcfed_scenario::Scenario;
use mcfed_scenario::model::Submission;
use mcfed_scenario::run::WorkloadReport;
use mcfed_scenario::workload::{WorkloadSpec, WorkloadStream};

use mcfed_trace::SwfError;

/// The workloads being read, each with its next submission.
pub(crate) struct Streams {
    streams: Vec<WorkloadStream>,
    heads: Vec<Option<Submission>>,
    submitted: Vec<u64>,
}

impl Streams {
    /// Opens every workload of `scenario`.
    pub(crate) fn open(scenario: &Scenario) -> Result<Self, SwfError> {
        let mut streams = Vec::with_capacity(scenario.workloads.len());
        for spec in &scenario.workloads {
            streams.push(WorkloadStream::open(Arc::new(WorkloadSpec::clone(spec)))?);
        }
        let heads = streams.iter_mut().map(Iterator::next).collect();
        let submitted = vec![0; streams.len()];
        Ok(Streams {
            streams,
            heads,
            submitted,
        })
    }

    /// How many workloads there are.
    pub(crate) fn len(&self) -> usize {
        self.streams.len()
    }

    /// The next submission of workload `index`, without taking it.
    pub(crate) fn peek(&self, index: usize) -> Option<&Submission> {
        self.heads.get(index).and_then(Option::as_ref)
    }

    /// Takes the next submission of workload `index` and reads the one
    /// after it.
    pub(crate) fn take(&mut self, index: usize) -> Option<Submission> {
        let head = self.heads.get_mut(index)?.take()?;
        self.submitted[index] += 1;
        self.heads[index] = self.streams[index].next();
        Some(head)
    }

    /// What each workload read and skipped, for the run's output.
    pub(crate) fn reports(&self) -> Vec<WorkloadReport> {
        self.streams
            .iter()
            .zip(&self.submitted)
            .map(|(stream, &submitted)| WorkloadReport {
                name: stream.spec().name.clone(),
                file: stream.spec().swf.display().to_string(),
                header: stream.header().fields.clone(),
                submitted,
                skipped: stream.skipped(),
                first_error: stream.first_error().map(str::to_owned),
            })
            .collect()
    }
}
