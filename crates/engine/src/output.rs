//! What the engines produce besides their own state: the run's recorder
//! (with `jobs.csv` and lsb.acct logs), progress for a progress bar, and why a run could not
//! start.

use std::fs::File;
use std::io::BufWriter;

use mcfed_protocol::SimTime;
use mcfed_run::RunOptions;
use mcfed_run::jobs_csv::JobsCsv;
use mcfed_run::recorder::{Recorder, Recording};
use mcfed_scenario::Scenario;

use crate::federation::{BuildError, Federation};

/// How many events pass between two calls of a run's observer.
pub const PROGRESS_EVERY: u64 = 65_536;

/// How far a run has got, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Emulated time.
    pub now: SimTime,
    /// Jobs submitted so far.
    pub submitted: u64,
    /// Jobs finished so far.
    pub finished: u64,
}

/// The recorder of a run of `scenario` on `federation` under `options`:
/// what it records, and `jobs.csv` when asked (its slots numbered over the
/// federation, in scenario order).
pub(crate) fn recorder_for(
    options: &RunOptions,
    scenario: &Scenario,
    federation: &Federation,
) -> Result<Recorder, EngineError> {
    let mut recorder = Recorder::new(Recording {
        events: options.events,
        count_only: options.count_only,
    });
    if let Some(dir) = &options.lsb_acct {
        let clusters = federation.members.iter().map(|member| member.name());
        let epoch = mcfed_run::lsb_acct::epoch_of(scenario);
        let logs =
            mcfed_run::lsb_acct::AcctLogs::create(dir, clusters, epoch).map_err(|source| {
                EngineError::Output {
                    path: dir.display().to_string(),
                    source,
                }
            })?;
        recorder = recorder.with_lsb_acct(logs);
    }
    let Some(path) = &options.jobs_csv else {
        return Ok(recorder);
    };
    let io = |source| EngineError::Output {
        path: path.display().to_string(),
        source,
    };
    let file = File::create(path).map_err(io)?;
    let name = scenario
        .workloads
        .first()
        .map_or(scenario.name.as_str(), |workload| workload.name.as_str());
    let clusters = federation.members.iter().map(|member| member.cluster());
    let csv = JobsCsv::new(BufWriter::new(file), clusters, name)
        .map_err(|error| io(std::io::Error::other(error.to_string())))?;
    let names = federation
        .members
        .iter()
        .map(|member| member.name().clone());
    Ok(recorder.with_jobs_csv(csv, names))
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The federation could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A workload's trace could not be opened.
    #[error("workload: {0}")]
    Workload(#[from] mcfed_trace::SwfError),
    /// An output file could not be created.
    #[error("{path}: {source}")]
    Output {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
