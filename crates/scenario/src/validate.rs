//! Turning a scenario file into a [`Scenario`], or into every problem found
//! in it, each with its file, line and field.
//!
//! This module holds the entry points ([`load`], [`parse`]) and the
//! `Checker` that collects problems and warnings; the checks themselves
//! are in its submodules, one per part of a scenario:
//!
//! - `scenario`: the whole pass, in the order the parts are checked;
//! - `clusters`: clusters and their hosts, and each cluster's
//!   configuration checked as its scheduler would;
//! - `params`: the forwarding parameters of lsb.params;
//! - `queues`: queues and their LSF parameters;
//! - `links`: forwarding links (SNDJOBS_TO, RCVJOBS_FROM), addresses,
//!   forwarders and subscribers;
//! - `jobs`: jobs present at start (`[[cluster.job]]`) and submissions
//!   (`[[submit]]`);
//! - `chaos`: the `[chaos]` table;
//! - (`crate::check::job_index`: every job by name, for the entries that name one.)
//!
//! Scheduling policies are checked in `policies` and `[[expect]]`
//! entries in `crate::expect`, one file per kind.

mod actions;
mod chaos;
mod clusters;
mod jobs;
mod links;
mod lsf;
mod params;
mod policies;
mod queues;
mod reservation_actions;
mod reservation_policies;
mod scenario;
mod workloads;

use std::path::Path;
use std::time::Duration;

use crate::check::Checker;
use crate::format::RawScenario;
use crate::locate::{FieldPath, Locator, Problem, ScenarioError};
use crate::scenario::Scenario;

pub use crate::footprint::{
    BYTES_PER_HOST, BYTES_PER_JOB, Footprint, available_memory, humanize_bytes,
};
pub use crate::scenario::QUIET_INTERVAL;
pub use workloads::WORKLOAD_LIMIT;

/// A job's run time when the scenario gives none.
pub const DEFAULT_RUN_TIME: Duration = Duration::from_secs(3600);
/// A job's user when the scenario gives none.
pub const DEFAULT_USER: &str = "user1";

/// Reads and validates the scenario file at `path`: a regular file of at
/// most [`mcfed_protocol::bounds::CONFIG_FILE`]'s bytes (a device, a FIFO
/// or a larger file is refused, not read on).
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let source = mcfed_protocol::bounds::CONFIG_FILE
        .read_to_string(path)
        .map_err(|source| ScenarioError::Read {
            file: file.clone(),
            source,
        })?;
    parse(&file, &source)
}

/// Validates scenario text; `file` names it in errors. A scenario that
/// needs more memory than the machine has available is refused.
pub fn parse(file: &str, source: &str) -> Result<Scenario, ScenarioError> {
    parse_within(file, source, available_memory())
}

/// [`parse`], refusing a scenario that needs more than `memory` bytes
/// (`None`: no limit).
pub fn parse_within(
    file: &str,
    source: &str,
    memory: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    let locator = Locator::new(source);
    let invalid = |problems: Vec<Problem>| ScenarioError::Invalid {
        file: file.to_owned(),
        problems,
    };
    let mut raw = deserialize(&locator, source).map_err(|problem| invalid(vec![problem]))?;
    let mut checker = Checker {
        locator: &locator,
        problems: Vec::new(),
        warnings: Vec::new(),
        base: Path::new(file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        imported: Vec::new(),
        added_reservations: Vec::new(),
    };
    checker.import_lsf(&mut raw);
    // Every sizing number is checked, and the memory estimated, before
    // anything is expanded.
    let Some(footprint) = checker.footprint(&raw, memory) else {
        return Err(invalid(checker.problems));
    };
    let mut scenario = checker.scenario(raw);
    scenario.footprint = footprint;
    if checker.problems.is_empty() {
        scenario.warnings = checker.warnings;
        Ok(scenario)
    } else {
        Err(invalid(checker.problems))
    }
}

/// Reads the TOML of a scenario into its raw form; the problem, if any, is
/// the first the TOML parser or the deserializer met.
fn deserialize(locator: &Locator<'_>, source: &str) -> Result<RawScenario, Problem> {
    let deserializer = toml::de::Deserializer::parse(source).map_err(|error| {
        let (line, column) = error
            .span()
            .map_or((0, 0), |span| locator.line_column(span.start));
        Problem {
            field: FieldPath::root(),
            line,
            column,
            message: format!("not valid TOML: {}", error.message()),
        }
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let field = FieldPath::from_serde(error.path());
        let inner = error.into_inner();
        let (line, column) = match inner.span() {
            Some(span) => locator.line_column(span.start),
            None => locator
                .span(&field)
                .map_or((0, 0), |span| locator.line_column(span.start)),
        };
        Problem {
            field,
            line,
            column,
            message: inner.message().to_owned(),
        }
    })
}
