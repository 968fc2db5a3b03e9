//! mcfed scenarios, the configuration: the TOML format
//! ([`format`](mod@format)) and its validation into a [`Scenario`] with
//! errors that name file, line and field ([`validate`], [`locate`]), the
//! expectations it states, one file per kind ([`expect`]), and hosts files
//! ([`hosts`]). What a run is asked and produces is `mcfed-run`'s; the
//! engines that run a scenario are in `mcfed-engine`; nothing here runs
//! one.

pub(crate) mod check;
pub mod expect;
pub mod footprint;
pub mod format;
pub mod hosts;
pub mod locate;
pub mod model;
pub mod scenario;
pub mod validate;

pub use locate::{Problem, ScenarioError};
pub use scenario::Scenario;
pub use validate::{Footprint, available_memory, humanize_bytes, load, parse, parse_within};
