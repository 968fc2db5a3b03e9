//! What the event loop produces besides its own state: the run's counts,
//! `jobs.csv`, progress for a progress bar, and why a run could not start.

use std::fs::File;
use std::io::BufWriter;

use mcfed_federation::{Effects, Member};
use mcfed_protocol::SimTime;
use mcfed_run::jobs_csv::JobsCsv;
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

/// Adds what `effects` of `member` did to the run's counts.
pub(crate) fn count(stats: &mut mcfed_run::RunStats, member: &Member, effects: &Effects) {
    stats.updates += effects.updates.sent;
    stats.updates_ignored += effects.updates.ignored;
    stats.update_regressions += effects.updates.regressions;
    for transition in &effects.transitions {
        stats.count_transition(member.origin_of(transition), transition);
    }
    stats.decisions += effects.decisions.len() as u64;
    stats.forwarded += effects.decisions.iter().filter(|e| e.forwarded()).count() as u64;
    stats.stale_decisions += effects.decisions.iter().filter(|e| e.stale()).count() as u64;
}

/// Creates `jobs.csv` at `path`, its slots numbered over `federation`.
pub(crate) fn open_jobs_csv(
    path: &std::path::Path,
    scenario: &Scenario,
    federation: &Federation,
) -> Result<JobsCsv<BufWriter<File>>, EngineError> {
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
    JobsCsv::new(BufWriter::new(file), clusters, name)
        .map_err(|error| io(std::io::Error::other(error.to_string())))
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
