//! What a run of a scenario is asked and produces: the options
//! ([`RunOptions`]), the output ([`RunOutput`]) with its counts
//! ([`RunStats`]) and metrics ([`metrics`]), the records runs write
//! ([`records`], `jobs.csv` in [`jobs_csv`], LSF's accounting logs in
//! [`lsb_acct`]), the snapshots and
//! preemption records runs take ([`probe`]), the checks of a scenario's
//! `[[expect]]` entries ([`expect`], one file per kind; [`refusal`] for
//! scenarios that must be refused), and the printing of
//! decisions ([`render`]) and of queues as `bqueues -l` shows them
//! ([`inspect`]). The scenario's configuration is `mcfed-scenario`'s; the
//! engines that run it are in `mcfed-engine`.

pub mod expect;
pub mod inspect;
pub mod jobs_csv;
pub mod lsb_acct;
pub mod metrics;
pub mod output;
pub mod probe;
pub mod recorder;
pub mod records;
pub mod render;
pub mod stats;

pub use expect::refused as refusal;
pub use expect::{CheckResult, check};
pub use output::{RunOptions, RunOutput};
pub use stats::RunStats;
