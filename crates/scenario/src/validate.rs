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
//! - `job_index`: every job by name, for the entries that name one.
//!
//! Scheduling policies are checked in `crate::policies` and `[[expect]]`
//! entries in `crate::expect`, one file per kind.

mod actions;
mod chaos;
mod clusters;
mod footprint;
pub(crate) mod job_index;
mod jobs;
mod links;
mod lsf;
mod params;
mod queues;
mod scenario;
mod workloads;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use crate::format::RawScenario;
use crate::locate::{FieldPath, Locator, Problem, ScenarioError};
use crate::model::Scenario;

pub use footprint::{BYTES_PER_HOST, BYTES_PER_JOB, Footprint, available_memory, humanize_bytes};

/// The interval a run's default end and its slot-usage samples use when no
/// cluster sends counters (MC_PLUGIN_UPDATE_INTERVAL itself has no
/// default: unset, a cluster sends none).
pub const QUIET_INTERVAL: Duration = Duration::from_secs(30);
/// A job's run time when the scenario gives none.
pub const DEFAULT_RUN_TIME: Duration = Duration::from_secs(3600);
/// A job's user when the scenario gives none.
pub const DEFAULT_USER: &str = "user1";

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
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

/// Collects every problem of a scenario file, each located.
pub(crate) struct Checker<'a> {
    locator: &'a Locator<'a>,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    /// The scenario file's directory: files it names are relative to it.
    base: std::path::PathBuf,
    /// Per cluster, the LSF configuration it was imported from
    /// (`lsf_config`), whose lines problems in it are reported at.
    imported: Vec<Option<mcfed_lsf::ClusterDoc>>,
}

impl Checker<'_> {
    /// Records a problem at `path`.
    pub(crate) fn problem(&mut self, path: FieldPath, message: impl Into<String>) {
        let message = self.imported_source(&path, message.into());
        let problem = self.locator.problem(path, message);
        self.problems.push(problem);
    }

    /// Records a warning at `path`: the scenario is accepted with it.
    pub(crate) fn warning(&mut self, path: FieldPath, message: impl Into<String>) {
        let message = self.imported_source(&path, message.into());
        let warning = self.locator.problem(path, message);
        self.warnings.push(warning);
    }

    /// Parses a name, or records why it is not one at `path`.
    pub(crate) fn name<T: FromStr<Err = mcfed_protocol::NameError>>(
        &mut self,
        path: FieldPath,
        text: &str,
    ) -> Option<T> {
        match text.parse() {
            Ok(name) => Some(name),
            Err(error) => {
                self.problem(path, error.to_string());
                None
            }
        }
    }
}
