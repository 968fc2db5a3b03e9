//! mcfed scenarios: the TOML format ([`format`]), its validation into a
//! [`Scenario`] with errors that name file, line and field ([`validate`],
//! [`locate`]), the two in-process engines that run it ([`engine`], the
//! event loop; [`actors`], the actix actors under a paused clock), the
//! checks of its `[[expect]]` entries ([`expect`]) and the printing of
//! decisions ([`render`]).

pub mod actors;
pub mod build;
pub mod chaos;
pub mod engine;
pub mod expect;
pub mod format;
pub mod locate;
pub mod model;
pub mod records;
pub mod render;
pub mod validate;

pub use engine::{RunOutput, RunStats};
pub use expect::{CheckResult, check};
pub use locate::{Problem, ScenarioError};
pub use model::Scenario;
pub use validate::{load, parse};
