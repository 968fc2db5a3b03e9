//! Importing a site's LSF configuration: each cluster's directory
//! (`lsb.params`, `lsb.queues`, `lsb.hosts`, `lsb.users`, optional
//! `lsb.resources` and `lsf.cluster.NAME`), the shared `lsf.shared` and
//! `lsf.conf` (the directory's own or its parent's), into the tables of a
//! scenario's clusters ([`crate::doc`]).
//!
//! Nothing is dropped silently: a parameter mcfed does not model is a
//! warning at its line, an unknown one a warning with "did you mean",
//! and a value LSF would refuse an error at its line and column. With
//! `strict`, warnings are errors too. One module per file reads it;
//! this one walks files and sections the same way for all of them.

mod conf;
mod hosts;
mod layout;
mod params;
mod queues;
mod ranges;
mod reservation_policies;
mod resources;
mod shared;
mod users;
mod values;

#[cfg(test)]
mod envdir_tests;
#[cfg(test)]
mod message_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::catalog::{FileSpec, Param, SectionSpec, Status};
use crate::doc::{ClusterDoc, FederationDoc};
use crate::grammar::{self, Assignment, Body, Document, Section, Table};
use crate::limits::MAX_CLUSTERS;
use crate::source::{Diagnostic, Location, Severity, suggestion};

pub use shared::Shared;
pub(crate) use users::share_list;

/// One cluster to import: its name and its configuration directory.
#[derive(Clone, Debug)]
pub struct ClusterSource {
    /// The cluster's name.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
}

/// How to import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// LSF_ENVDIRs whose clusters are imported (with those given as
    /// [`ClusterSource`]s): lsf.conf, lsf.shared, each lsf.cluster.NAME and
    /// each cluster's `LSB_CONFDIR/NAME/configdir`.
    pub envdirs: Vec<PathBuf>,
    /// lsf.shared for the [`ClusterSource`]s; without it, the one beside
    /// each directory (its own, its parent's, or its LSF_ENVDIR's).
    pub shared: Option<PathBuf>,
    /// Warnings are errors.
    pub strict: bool,
}

/// Why an import failed: every error found, and the warnings.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}", render(.errors))]
pub struct ImportError {
    /// The errors (with `strict`, the warnings too).
    pub errors: Vec<Diagnostic>,
    /// The warnings met before the import failed.
    pub warnings: Vec<Diagnostic>,
}

fn render(diagnostics: &[Diagnostic]) -> String {
    let lines: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

/// Errors and warnings as an import meets them.
#[derive(Debug, Default)]
pub(crate) struct Diags {
    pub(crate) errors: Vec<Diagnostic>,
    pub(crate) warnings: Vec<Diagnostic>,
}

impl Diags {
    pub(crate) fn error(&mut self, at: &Location, message: impl Into<String>) {
        self.errors.push(Diagnostic::error(at, message));
    }

    pub(crate) fn warning(&mut self, at: &Location, message: impl Into<String>) {
        self.warnings.push(Diagnostic::warning(at, message));
    }

    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        match diagnostic.severity {
            Severity::Error => self.errors.push(diagnostic),
            Severity::Warning => self.warnings.push(diagnostic),
        }
    }

    /// `NAME is not modelled; ignored`.
    pub(crate) fn not_modelled(&mut self, at: &Location, name: &str) {
        self.warning(at, format!("{name} is not modelled; ignored"));
    }

    /// The end of an import: warnings become errors under `strict`.
    fn finish<T>(mut self, value: T, strict: bool) -> Result<(T, Vec<Diagnostic>), ImportError> {
        if strict {
            for warning in self.warnings.drain(..) {
                self.errors.push(Diagnostic {
                    severity: Severity::Error,
                    ..warning
                });
            }
        }
        if self.errors.is_empty() {
            Ok((value, self.warnings))
        } else {
            Err(ImportError {
                errors: self.errors,
                warnings: self.warnings,
            })
        }
    }
}

/// lsf.shared and lsf.conf files read once each, however many clusters
/// share them.
#[derive(Default)]
pub(crate) struct Loaded {
    shared: BTreeMap<PathBuf, Shared>,
    conf: BTreeMap<PathBuf, conf::Conf>,
}

impl Loaded {
    pub(crate) fn shared(&mut self, path: &Path, diags: &mut Diags) -> Shared {
        self.shared
            .entry(path.to_path_buf())
            .or_insert_with(|| Shared::read(path, diags))
            .clone()
    }

    pub(crate) fn conf(&mut self, path: &Path, diags: &mut Diags) -> conf::Conf {
        self.conf
            .entry(path.to_path_buf())
            .or_insert_with(|| conf::Conf::read(path, diags))
            .clone()
    }
}

/// Imports the clusters of `options.envdirs` and of `sources` into a
/// federation.
pub fn import(
    sources: &[ClusterSource],
    options: &ImportOptions,
) -> Result<FederationDoc, ImportError> {
    let mut diags = Diags::default();
    let mut loaded = Loaded::default();
    let mut found: Vec<layout::ClusterPaths> = Vec::new();
    for envdir in &options.envdirs {
        found.extend(layout::envdir(envdir, &mut loaded, &mut diags));
    }
    for source in sources {
        found.push(layout::beside(
            source,
            options.shared.as_deref(),
            true,
            &mut diags,
        ));
    }
    if found.len() > MAX_CLUSTERS {
        diags.errors.push(Diagnostic::general(format!(
            "at most {MAX_CLUSTERS} clusters may be imported at once"
        )));
    }
    let mut clusters = Vec::new();
    let mut seen: BTreeMap<&str, &Path> = BTreeMap::new();
    for paths in found.iter().take(MAX_CLUSTERS) {
        if let Some(first) = seen.insert(&paths.name, &paths.configdir) {
            diags.errors.push(Diagnostic::general(format!(
                "cluster `{}` is given twice ({} and {})",
                paths.name,
                first.display(),
                paths.configdir.display()
            )));
            continue;
        }
        let shared = paths
            .shared
            .as_deref()
            .map(|path| loaded.shared(path, &mut diags));
        let conf = paths
            .conf
            .as_deref()
            .map(|path| loaded.conf(path, &mut diags));
        clusters.push(cluster(paths, shared.as_ref(), conf.as_ref(), &mut diags));
    }
    queues::check_send_targets(&clusters, &mut diags);
    let (mut federation, warnings) = diags.finish(
        FederationDoc {
            clusters,
            warnings: Vec::new(),
        },
        options.strict,
    )?;
    federation.warnings = warnings;
    Ok(federation)
}

/// Imports one cluster on its own (what a scenario's `lsf_config` does):
/// its lsf.shared is `shared`, else the one beside the directory (as for
/// `--cluster`, without the warnings for files not found).
pub fn import_cluster(
    name: &str,
    dir: &Path,
    shared: Option<&Path>,
) -> Result<(ClusterDoc, Vec<Diagnostic>), ImportError> {
    let mut diags = Diags::default();
    let source = ClusterSource {
        name: name.to_owned(),
        dir: dir.to_path_buf(),
    };
    let paths = layout::beside(&source, shared, false, &mut diags);
    let shared = paths
        .shared
        .as_deref()
        .map(|path| Shared::read(path, &mut diags));
    let conf = paths
        .conf
        .as_deref()
        .map(|path| conf::Conf::read(path, &mut diags));
    let doc = cluster(&paths, shared.as_ref(), conf.as_ref(), &mut diags);
    diags.finish(doc, false)
}

/// Reads one cluster's directory (with its lsf.shared and lsf.conf, read
/// already).
fn cluster(
    source: &layout::ClusterPaths,
    shared: Option<&Shared>,
    conf: Option<&conf::Conf>,
    diags: &mut Diags,
) -> ClusterDoc {
    let mut doc = ClusterDoc {
        name: source.name.clone(),
        dir: source.configdir.display().to_string(),
        ..ClusterDoc::default()
    };
    if let Err(error) = source.name.parse::<mcfed_protocol::ClusterName>() {
        diags.errors.push(Diagnostic::general(format!(
            "`{}` is not a cluster name: {error}",
            source.name
        )));
        return doc;
    }
    if !source.configdir.is_dir() && source.cluster_file.is_none() {
        diags.errors.push(Diagnostic::general(format!(
            "cluster {}: {} is not a directory",
            source.name,
            source.configdir.display()
        )));
        return doc;
    }
    if let Some(shared) = shared {
        shared.check_member(&source.name, diags);
    }
    let files = ClusterFiles::read(source, diags);
    if !ClusterFiles::any_present(source) {
        diags.errors.push(Diagnostic::general(format!(
            "cluster {}: {} holds none of lsb.params, lsb.queues, lsb.hosts, lsb.users, and no lsf.cluster.{} was found beside it",
            source.name,
            source.configdir.display(),
            source.name
        )));
        return doc;
    }
    let sleep = params::read(files.params.as_ref(), &mut doc, diags);
    if let Some(conf) = conf {
        conf.apply(&mut doc);
    }
    let host_book = hosts::read(&files, shared, &mut doc, diags);
    let user_book = users::read(files.users.as_ref(), &mut doc, diags);
    let context = queues::Context {
        hosts: &host_book,
        users: &user_book,
        shared,
        cluster: &source.name,
        sleep,
    };
    queues::read(files.queues.as_ref(), &context, &mut doc, diags);
    resources::read(files.resources.as_ref(), &host_book, &mut doc, diags);
    doc
}

/// The parsed files of one cluster's directory (`None`: absent or not
/// parsed, the error recorded).
pub(crate) struct ClusterFiles {
    pub(crate) params: Option<Document>,
    pub(crate) queues: Option<Document>,
    pub(crate) hosts: Option<Document>,
    pub(crate) users: Option<Document>,
    pub(crate) resources: Option<Document>,
    pub(crate) cluster: Option<Document>,
}

impl ClusterFiles {
    fn read(source: &layout::ClusterPaths, diags: &mut Diags) -> Self {
        let dir = &source.configdir;
        let mut load = |path: &Path| load(path, diags);
        ClusterFiles {
            params: load(&dir.join("lsb.params")),
            queues: load(&dir.join("lsb.queues")),
            hosts: load(&dir.join("lsb.hosts")),
            users: load(&dir.join("lsb.users")),
            resources: load(&dir.join("lsb.resources")),
            cluster: source.cluster_file.as_deref().and_then(load),
        }
    }

    /// Whether any of the files a cluster is read from is there.
    fn any_present(source: &layout::ClusterPaths) -> bool {
        source.cluster_file.is_some()
            || [
                "lsb.params",
                "lsb.queues",
                "lsb.hosts",
                "lsb.users",
                "lsb.resources",
            ]
            .iter()
            .any(|file| source.configdir.join(file).exists())
    }
}

/// Parses `path` if it exists.
pub(crate) fn load(path: &Path, diags: &mut Diags) -> Option<Document> {
    if !path.exists() {
        return None;
    }
    match grammar::parse_file(path, &path.display().to_string()) {
        Ok(document) => Some(document),
        Err(error) => {
            diags.push(error);
            None
        }
    }
}

/// The sections of `document` mcfed reads, each with its spec; others are
/// warnings (unknown: with "did you mean").
pub(crate) fn sections<'d>(
    file: &FileSpec,
    document: &'d Document,
    diags: &mut Diags,
) -> Vec<(&'static SectionSpec, &'d Section)> {
    let mut read = Vec::new();
    for section in &document.sections {
        match file.section(&section.name.value) {
            Some(spec) if spec.read => read.push((spec, section)),
            Some(spec) => diags.warning(
                section.at(),
                format!("section {} is not modelled; ignored", spec.name),
            ),
            None => diags.warning(
                section.at(),
                format!(
                    "unknown section `{}` in {}{}; ignored",
                    section.name.value,
                    file.name,
                    suggestion(
                        &section.name.value,
                        file.sections.iter().map(|section| section.name)
                    )
                ),
            ),
        }
    }
    read
}

/// The assignments of a `KEY = value` section that mcfed reads, each with
/// its parameter; a parameter set twice is an error, others are warnings.
pub(crate) fn assignments<'s>(
    spec: &SectionSpec,
    section: &'s Section,
    diags: &mut Diags,
) -> Vec<(&'static Param, &'s Assignment)> {
    let list: &[Assignment] = match &section.body {
        Body::Assignments(list) => list,
        Body::Empty => &[],
        Body::Table(table) => {
            let at = table
                .columns
                .first()
                .map_or(section.at(), |column| &column.at);
            diags.error(
                at,
                format!(
                    "expected `PARAMETER = value` lines in the {} section",
                    spec.name
                ),
            );
            &[]
        }
    };
    let mut kept: Vec<(&'static Param, &Assignment)> = Vec::new();
    for (index, assignment) in list.iter().enumerate() {
        let key = &assignment.key;
        if let Some(earlier) = list[..index]
            .iter()
            .find(|earlier| earlier.key.value.eq_ignore_ascii_case(&key.value))
        {
            diags.error(
                &key.at,
                format!(
                    "{} is set twice in this section (first at line {})",
                    key.value, earlier.key.at.line
                ),
            );
            continue;
        }
        match spec.param(&key.value) {
            None => diags.warning(
                &key.at,
                format!(
                    "unknown parameter `{}` in a {} section{}; ignored",
                    key.value,
                    spec.name,
                    suggestion(&key.value, spec.names())
                ),
            ),
            Some(_) if assignment.text().trim().is_empty() => {}
            Some(param) if param.status == Status::Ignored => {
                diags.not_modelled(&key.at, param.name);
            }
            Some(param) => kept.push((param, assignment)),
        }
    }
    kept
}

/// The table of a column section, its columns checked: unknown columns
/// and columns mcfed does not model that any row sets are warnings at the
/// header.
pub(crate) fn table<'s>(
    spec: &SectionSpec,
    section: &'s Section,
    diags: &mut Diags,
) -> Option<&'s Table> {
    let table = match &section.body {
        Body::Table(table) => table,
        Body::Empty => return None,
        Body::Assignments(list) => {
            let at = list.first().map_or(section.at(), |first| &first.key.at);
            diags.error(
                at,
                format!(
                    "expected a header line of column names in the {} section",
                    spec.name
                ),
            );
            return None;
        }
    };
    for (index, column) in table.columns.iter().enumerate() {
        let set = table.rows.iter().any(|row| {
            row.cell(index)
                .is_some_and(|cell| cell.value.text().is_some())
        });
        match spec.param(&column.value) {
            None => diags.warning(
                &column.at,
                format!(
                    "unknown column `{}` in a {} section{}; ignored",
                    column.value,
                    spec.name,
                    suggestion(&column.value, spec.names())
                ),
            ),
            Some(param) if param.status == Status::Ignored && set => {
                diags.not_modelled(&column.at, &format!("column {}", param.name));
            }
            Some(_) => {}
        }
    }
    Some(table)
}
