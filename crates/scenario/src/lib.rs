//! mcfed scenarios: the TOML format ([`format`]), its validation into a
//! [`Scenario`] with errors that name file, line and field ([`validate`],
//! [`locate`]), what a run is asked and produced ([`run`]), the records
//! runs write ([`records`]), the checks of its `[[expect]]` entries
//! ([`expect`]), the snapshots and preemption records runs take
//! ([`probe`]), the seeded fault generator ([`chaos`]), the printing of
//! decisions ([`render`]) and of queues as `bqueues -l` shows them
//! ([`inspect`]). The engines that run scenarios are in `mcfed-engine`;
//! nothing here runs one.

pub mod chaos;
pub mod expect;
pub mod format;
pub mod hosts;
pub mod inspect;
pub mod jobs_csv;
pub mod locate;
pub mod metrics;
pub mod model;
mod policies;
pub mod probe;
pub mod records;
pub mod refusal;
pub mod render;
pub mod run;
pub mod validate;
mod validate_expect;
pub mod workload;

pub use expect::{CheckResult, check};
pub use locate::{Problem, ScenarioError};
pub use model::Scenario;
pub use run::{RunOptions, RunOutput, RunStats};
pub use validate::{Footprint, available_memory, humanize_bytes, load, parse, parse_within};
