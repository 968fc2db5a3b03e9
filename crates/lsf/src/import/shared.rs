//! lsf.shared: the clusters of the federation (its Cluster section), the
//! resources hosts may have (its Resource section) and the types and
//! models they may be (HostType, HostModel).

use std::path::Path;

use super::{Diags, load, sections, table};
use crate::catalog::LSF_SHARED;
use crate::source::{Location, suggestion};

/// What the import uses of lsf.shared.
#[derive(Clone, Debug, Default)]
pub struct Shared {
    /// The clusters named in its Cluster section, with where; `None`
    /// without one.
    clusters: Option<(Location, Vec<String>)>,
    /// Its Boolean resources; `None` without a Resource section.
    resources: Option<Vec<String>>,
    /// Its HostType section's types; `None` without one.
    host_types: Option<Vec<String>>,
    /// Its HostModel section's models; `None` without one.
    host_models: Option<Vec<String>>,
}

impl Shared {
    /// Reads lsf.shared at `path`; problems go to `diags`.
    pub(crate) fn read(path: &Path, diags: &mut Diags) -> Shared {
        let mut shared = Shared::default();
        let Some(document) = load(path, diags) else {
            if !path.exists() {
                diags.errors.push(crate::Diagnostic::general(format!(
                    "cannot read {}: no such file",
                    path.display()
                )));
            }
            return shared;
        };
        for (spec, section) in sections(&LSF_SHARED, &document, diags) {
            let Some(rows) = table(spec, section, diags) else {
                continue;
            };
            if section.is("Cluster") {
                let Some(column) = rows.column("ClusterName") else {
                    diags.error(
                        section.at(),
                        "the Cluster section needs a ClusterName column",
                    );
                    continue;
                };
                let names = shared
                    .clusters
                    .get_or_insert_with(|| (section.at().clone(), Vec::new()));
                for row in &rows.rows {
                    if let Some(name) = row.cell(column).and_then(|cell| cell.value.text()) {
                        names.1.push(name.to_owned());
                    }
                }
            } else if section.is("Resource") {
                shared.resources(rows, diags);
            } else if section.is("HostType") {
                names(rows, "TYPENAME", &mut shared.host_types);
            } else if section.is("HostModel") {
                names(rows, "MODELNAME", &mut shared.host_models);
            }
        }
        shared
    }

    fn resources(&mut self, rows: &crate::grammar::Table, diags: &mut Diags) {
        let (Some(name), kind) = (rows.column("RESOURCENAME"), rows.column("TYPE")) else {
            return;
        };
        let resources = self.resources.get_or_insert_with(Vec::new);
        for row in &rows.rows {
            let Some(resource) = row.cell(name).and_then(|cell| cell.value.text()) else {
                continue;
            };
            let kind = kind
                .and_then(|kind| row.cell(kind))
                .and_then(|cell| cell.value.text())
                .unwrap_or("Boolean");
            if kind.eq_ignore_ascii_case("Boolean") {
                resources.push(resource.to_owned());
            } else {
                diags.warning(
                    &row.at,
                    format!("{kind} resource `{resource}` is not modelled; ignored"),
                );
            }
        }
    }

    /// Records an error if lsf.shared lists clusters and `cluster` is not
    /// one of them.
    pub(crate) fn check_member(&self, cluster: &str, diags: &mut Diags) {
        if let Some((at, names)) = &self.clusters {
            if !names.iter().any(|name| name == cluster) {
                diags.error(
                    at,
                    format!(
                        "cluster `{cluster}` is not in lsf.shared's Cluster section{}",
                        suggestion(cluster, names.iter().map(String::as_str))
                    ),
                );
            }
        }
    }

    /// Whether lsf.shared knows cluster `name`: `None` when it lists none.
    pub(crate) fn knows_cluster(&self, name: &str) -> Option<bool> {
        let (_, names) = self.clusters.as_ref()?;
        Some(names.iter().any(|known| known == name))
    }

    /// The clusters it lists.
    pub(crate) fn clusters(&self) -> impl Iterator<Item = &str> {
        self.clusters
            .iter()
            .flat_map(|(_, names)| names.iter().map(String::as_str))
    }

    /// The host types it defines, if it has a HostType section.
    pub(crate) fn host_types(&self) -> Option<&[String]> {
        self.host_types.as_deref()
    }

    /// The host models it defines, if it has a HostModel section.
    pub(crate) fn host_models(&self) -> Option<&[String]> {
        self.host_models.as_deref()
    }

    /// The Boolean resources it defines, if it has a Resource section.
    pub(crate) fn resources_known(&self) -> Option<&[String]> {
        self.resources.as_deref()
    }
}

/// The names in `column` of `rows`, added to `into`.
fn names(rows: &crate::grammar::Table, column: &str, into: &mut Option<Vec<String>>) {
    let list = into.get_or_insert_with(Vec::new);
    let Some(index) = rows.column(column) else {
        return;
    };
    for row in &rows.rows {
        if let Some(name) = row.cell(index).and_then(|cell| cell.value.text()) {
            list.push(name.to_owned());
        }
    }
}
