//! The submissions of a run, in time order: the scenario's `[[submit]]`
//! entries and its workloads' traces, read as streams — one pending
//! submission per workload and a few batches read ahead
//! ([`mcfed_trace::read_ahead`]), never the whole trace.

use std::sync::Arc;

use mcfed_run::records::WorkloadReport;
use mcfed_scenario::Scenario;
use mcfed_scenario::model::Submission;
use mcfed_trace::workload::WorkloadSpec;

use mcfed_trace::SwfError;

use mcfed_trace::ReadAhead;

/// The workloads being read, each with its next submission.
pub(crate) struct Streams {
    streams: Vec<ReadAhead>,
    submitted: Vec<u64>,
}

impl Streams {
    /// Opens every workload of `scenario`.
    pub(crate) fn open(scenario: &Scenario) -> Result<Self, SwfError> {
        let mut streams = Vec::with_capacity(scenario.workloads.len());
        for spec in &scenario.workloads {
            streams.push(ReadAhead::open(Arc::new(WorkloadSpec::clone(spec)))?);
        }
        let submitted = vec![0; streams.len()];
        Ok(Streams { streams, submitted })
    }

    /// How many workloads there are.
    pub(crate) fn len(&self) -> usize {
        self.streams.len()
    }

    /// The next submission of workload `index`, without taking it.
    pub(crate) fn peek(&self, index: usize) -> Option<&Submission> {
        self.streams.get(index)?.peek()
    }

    /// Takes the next submission of workload `index`.
    pub(crate) fn take(&mut self, index: usize) -> Option<Submission> {
        let stream = self.streams.get_mut(index)?;
        stream.peek()?;
        self.submitted[index] += 1;
        // Taken last, so the submission moves straight to the caller.
        stream.next()
    }

    /// What each workload read and skipped, for the run's output.
    pub(crate) fn reports(&self) -> Vec<WorkloadReport> {
        self.streams
            .iter()
            .zip(&self.submitted)
            .map(|(stream, &submitted)| {
                WorkloadReport::new(
                    stream.spec(),
                    stream.header(),
                    submitted,
                    stream.skipped(),
                    stream.first_error(),
                )
            })
            .collect()
    }
}
