//! Where a cluster's files are. An LSF tree keeps lsf.conf in LSF_ENVDIR,
//! lsf.shared and each lsf.cluster.NAME in LSF_CONFDIR (conventionally
//! the same directory), and each cluster's lsb.* files in
//! `LSB_CONFDIR/NAME/configdir` (conventionally `LSF_ENVDIR/lsbatch`).
//! `--envdir DIR` reads such a tree whole; `--cluster NAME=DIR` names the
//! lsb.* directory and the rest is looked for beside it, with a warning
//! for each file not found.

use std::path::{Path, PathBuf};

use super::conf::Conf;
use super::{ClusterSource, Diags, Loaded};
use crate::source::{Diagnostic, Location};

/// One cluster's files.
#[derive(Clone, Debug)]
pub(crate) struct ClusterPaths {
    /// The cluster's name.
    pub(crate) name: String,
    /// Its lsb.* directory.
    pub(crate) configdir: PathBuf,
    /// lsf.cluster.NAME, if found.
    pub(crate) cluster_file: Option<PathBuf>,
    /// lsf.shared, if found.
    pub(crate) shared: Option<PathBuf>,
    /// lsf.conf, if found.
    pub(crate) conf: Option<PathBuf>,
}

/// The directories `--cluster NAME=DIR` looks in for the files beside
/// DIR: DIR, its parent, and, when DIR is `…/NAME/configdir`, the
/// LSF_ENVDIR of that conventional layout (`DIR/../../..`).
fn places(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut places = vec![dir.to_path_buf()];
    if let Some(parent) = dir.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        places.push(parent.to_path_buf());
    }
    let conventional = dir.file_name().is_some_and(|last| last == "configdir")
        && dir
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|cluster| cluster == name);
    if conventional {
        if let Some(envdir) = dir.ancestors().nth(3) {
            let envdir = if envdir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                envdir
            };
            places.push(envdir.to_path_buf());
        }
    }
    places
}

fn find(places: &[PathBuf], file: &str) -> Option<PathBuf> {
    places
        .iter()
        .map(|place| place.join(file))
        .find(|path| path.is_file())
}

/// The files of `--cluster NAME=DIR`; with `warn`, each of lsf.shared,
/// lsf.conf and lsf.cluster.NAME not found beside DIR is a warning
/// saying what is then not read.
pub(crate) fn beside(
    source: &ClusterSource,
    shared: Option<&Path>,
    warn: bool,
    diags: &mut Diags,
) -> ClusterPaths {
    let places = places(&source.dir, &source.name);
    let cluster_file_name = format!("lsf.cluster.{}", source.name);
    let paths = ClusterPaths {
        name: source.name.clone(),
        configdir: source.dir.clone(),
        cluster_file: find(&places, &cluster_file_name),
        shared: shared
            .map(Path::to_path_buf)
            .or_else(|| find(&places, "lsf.shared")),
        conf: find(&places, "lsf.conf"),
    };
    if warn && source.dir.is_dir() {
        let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
        let looked = looked.join(", ");
        let missing = [
            (
                paths.shared.is_none(),
                "lsf.shared".to_owned(),
                "hosts' RESOURCES and the clusters of SNDJOBS_TO and RCVJOBS_FROM are not checked; give --shared FILE or --envdir DIR",
            ),
            (
                paths.conf.is_none(),
                "lsf.conf".to_owned(),
                "LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND take LSF's defaults; give --envdir DIR",
            ),
            (
                paths.cluster_file.is_none(),
                cluster_file_name,
                "the hosts are those lsb.hosts names, without their RESOURCES, model or type",
            ),
        ];
        for (_, file, consequence) in missing.iter().filter(|(absent, _, _)| *absent) {
            diags.push(Diagnostic::general_warning(format!(
                "cluster {}: no {file} beside {} (looked in {looked}): {consequence}",
                source.name,
                source.dir.display()
            )));
        }
    }
    paths
}

/// The clusters of the LSF_ENVDIR `envdir`: those its lsf.shared lists
/// that have an lsf.cluster.NAME in LSF_CONFDIR or a configdir in
/// LSB_CONFDIR; lsf.conf is read on the way (into `loaded`).
pub(crate) fn envdir(envdir: &Path, loaded: &mut Loaded, diags: &mut Diags) -> Vec<ClusterPaths> {
    if !envdir.is_dir() {
        diags.push(Diagnostic::general(format!(
            "--envdir {}: not a directory",
            envdir.display()
        )));
        return Vec::new();
    }
    let conf_path = envdir.join("lsf.conf");
    if !conf_path.is_file() {
        diags.push(Diagnostic::general(format!(
            "--envdir {}: no lsf.conf in it; an LSF_ENVDIR holds lsf.conf (or give each cluster with --cluster NAME=DIR)",
            envdir.display()
        )));
        return Vec::new();
    }
    let conf = loaded.conf(&conf_path, diags);
    let confdir = directory(envdir, &conf, "LSF_CONFDIR", envdir.to_path_buf(), diags);
    let lsb_confdir = directory(envdir, &conf, "LSB_CONFDIR", envdir.join("lsbatch"), diags);
    let shared_path = confdir.join("lsf.shared");
    if !shared_path.is_file() {
        diags.push(Diagnostic::general(format!(
            "--envdir {}: no lsf.shared in {}, so the clusters are not known",
            envdir.display(),
            confdir.display()
        )));
        return Vec::new();
    }
    let shared = loaded.shared(&shared_path, diags);
    let mut clusters = Vec::new();
    for name in shared.clusters() {
        let cluster_file = confdir.join(format!("lsf.cluster.{name}"));
        let configdir = lsb_confdir.join(name).join("configdir");
        if !cluster_file.is_file() && !configdir.is_dir() {
            continue;
        }
        clusters.push(ClusterPaths {
            name: name.to_owned(),
            configdir,
            cluster_file: cluster_file.is_file().then_some(cluster_file),
            shared: Some(shared_path.clone()),
            conf: Some(conf_path.clone()),
        });
    }
    if clusters.is_empty() {
        diags.push(Diagnostic::general(format!(
            "--envdir {}: none of the clusters lsf.shared lists ({}) has an lsf.cluster.NAME in {} or a configdir in {}",
            envdir.display(),
            shared.clusters().collect::<Vec<_>>().join(", "),
            confdir.display(),
            lsb_confdir.display()
        )));
    }
    clusters
}

/// LSF_CONFDIR or LSB_CONFDIR: as lsf.conf sets it (relative to the
/// LSF_ENVDIR), else `default`; a directory that does not exist (a tree
/// copied from its site) falls back to `default` with a warning.
fn directory(
    envdir: &Path,
    conf: &Conf,
    key: &str,
    default: PathBuf,
    diags: &mut Diags,
) -> PathBuf {
    let Some((value, at)) = conf.layout(key) else {
        return default;
    };
    let given = envdir.join(value);
    if given.is_dir() {
        return given;
    }
    warn_fallback(key, value, &default, at, diags);
    default
}

fn warn_fallback(key: &str, value: &str, default: &Path, at: &Location, diags: &mut Diags) {
    diags.warning(
        at,
        format!(
            "{key} `{value}` is not a directory here; reading {} instead (the conventional layout)",
            default.display()
        ),
    );
}
