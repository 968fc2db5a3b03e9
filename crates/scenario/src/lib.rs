//! mcfed scenarios: the TOML format ([`format`]), its validation into a
//! [`Scenario`] with errors that name file, line and field ([`validate`],
//! [`locate`]), the two in-process engines that run it ([`engine`], the
//! event loop; [`actors`], the actix actors under a paused clock), the
//! checks of its `[[expect]]` entries ([`expect`]), the snapshots and
//! preemption records the engines take ([`probe`]), the printing of
//! decisions ([`render`]) and of queues as `bqueues -l` shows them
//! ([`inspect`]).

pub mod actors;
pub mod build;
pub mod chaos;
pub mod engine;
pub mod expect;
pub mod format;
pub mod inspect;
pub mod locate;
pub mod model;
mod policies;
pub mod probe;
pub mod records;
pub mod render;
pub mod validate;
mod validate_expect;

pub use engine::{RunOutput, RunStats};
pub use expect::{CheckResult, check};
pub use locate::{Problem, ScenarioError};
pub use model::Scenario;
pub use validate::{load, parse};
