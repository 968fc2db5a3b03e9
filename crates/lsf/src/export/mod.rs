//! Writing a federation's clusters as LSF configuration that LSF loads:
//! per cluster an LSF_ENVDIR in LSF's conventional layout — `NAME/lsf.conf`
//! (LSF_CONFDIR, LSB_CONFDIR and the keys mcfed models), `NAME/lsf.shared`
//! (every cluster, the hosts' types, models and Boolean resources),
//! `NAME/lsf.cluster.NAME` (LSF's Host columns) and
//! `NAME/lsbatch/NAME/configdir/lsb.*` — such that importing them
//! (`--envdir OUT/NAME`) gives the same clusters back and exporting those
//! the same files (the round-trip tests check it). mcfed's own parameters
//! and columns go on `#mcfed` lines, which LSF reads as comments; a
//! queue's DESCRIPTION and comments and a host's model and type, kept in
//! the TOML as comments ([`crate::notes`]), are written back. What LSF
//! cannot say (a 90-second NO_PREEMPT_RUN_TIME: LSF counts minutes) is an
//! error naming the cluster and parameter.

mod hosts;
mod params;
mod queues;
mod users;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcfed_cluster::fairshare::FairshareOverrides;
use mcfed_cluster::{ClusterConfig, PreemptGuard, PreemptGuards};
use mcfed_forwarder::ForwarderConfig;

use crate::notes::ClusterNotes;

/// One cluster to export.
#[derive(Clone, Copy, Debug)]
pub struct ExportCluster<'a> {
    /// Its configuration.
    pub config: &'a ClusterConfig,
    /// Its submission side, if it has send queues.
    pub forwarder: Option<&'a ForwarderConfig>,
    /// What its TOML kept of LSF beyond the model (DESCRIPTION, comments,
    /// model, type): [`crate::notes::notes`].
    pub notes: Option<&'a ClusterNotes>,
}

/// One file written by an export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedFile {
    /// Its path under the export's directory.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// Why a federation cannot be written as LSF configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cluster {cluster}: {message}")]
pub struct ExportError {
    /// The cluster.
    pub cluster: String,
    /// What LSF cannot say.
    pub message: String,
}

/// The files of `clusters`, to be written under `root` (an absolute
/// directory: each lsf.conf's LSF_CONFDIR and LSB_CONFDIR name it, as LSF
/// wants them): for each cluster NAME, `NAME/lsf.conf`, `NAME/lsf.shared`,
/// `NAME/lsf.cluster.NAME` and `NAME/lsbatch/NAME/configdir/lsb.*`.
pub fn export(
    clusters: &[ExportCluster<'_>],
    root: &Path,
) -> Result<Vec<ExportedFile>, ExportError> {
    let shared = hosts::shared(clusters);
    let mut files = Vec::new();
    for cluster in clusters {
        let name = cluster.config.name.as_str();
        let fail = |message: String| ExportError {
            cluster: name.to_owned(),
            message,
        };
        let envdir = PathBuf::from(name);
        let configdir = envdir.join("lsbatch").join(name).join("configdir");
        let sleep = cluster.config.params.sleep_time;
        let conf = params::lsf_conf(cluster.config, &root.join(name));
        for (path, text) in [
            (envdir.join("lsf.conf"), conf),
            (envdir.join("lsf.shared"), shared.clone()),
            (
                envdir.join(format!("lsf.cluster.{name}")),
                hosts::cluster_file(cluster),
            ),
            (
                configdir.join("lsb.params"),
                params::params(cluster).map_err(fail)?,
            ),
            (
                configdir.join("lsb.queues"),
                queues::queues(cluster, sleep).map_err(fail)?,
            ),
            (configdir.join("lsb.hosts"), hosts::hosts(cluster.config)),
            (
                configdir.join("lsb.users"),
                users::users(cluster.config).map_err(fail)?,
            ),
        ] {
            files.push(ExportedFile { path, text });
        }
        if !cluster.config.limits.is_empty() || !cluster.config.reservation_policies.is_empty() {
            files.push(ExportedFile {
                path: configdir.join("lsb.resources"),
                text: users::resources(cluster.config),
            });
        }
    }
    Ok(files)
}

const HEADER: &str = "# Written by `mcfed export lsf`; docs/lsf-import.md lists what each
# parameter means to mcfed. Lines starting `#mcfed` hold mcfed's own
# parameters and columns: LSF reads them as comments, mcfed as content.
";

/// `KEY = value` lines of one section.
#[derive(Default)]
pub(super) struct Assignments(String);

impl Assignments {
    pub(super) fn set(&mut self, key: &str, value: impl std::fmt::Display) {
        let _ = writeln!(self.0, "{key:<30} = {value}");
    }

    /// The dynamic-priority factors and the switches of its optional
    /// terms that are set.
    pub(super) fn factors(&mut self, factors: &FairshareOverrides) {
        for (name, value) in factors.named_values() {
            if let Some(value) = value {
                self.set(name, value);
            }
        }
        for (name, value) in factors.named_switches() {
            if let Some(yes) = value {
                self.set(name, yes_no(yes));
            }
        }
    }

    /// A run time LSF writes in minutes (RUNLIMIT, ESTIMATED_RUNTIME).
    pub(super) fn minutes(&mut self, name: &str, time: Option<Duration>) -> Result<(), String> {
        if let Some(time) = time {
            self.set(name, whole(name, time, 60, "minutes")?);
        }
        Ok(())
    }

    pub(super) fn guards(&mut self, guards: &PreemptGuards) -> Result<(), String> {
        for (name, guard) in [
            ("NO_PREEMPT_RUN_TIME", guards.run_time),
            ("NO_PREEMPT_FINISH_TIME", guards.finish_time),
        ] {
            match guard {
                None => {}
                Some(PreemptGuard::PercentOfRunLimit(percent)) => {
                    self.set(name, format!("{percent}%"))
                }
                Some(PreemptGuard::Time(time)) => self.set(name, whole(name, time, 60, "minutes")?),
            }
        }
        Ok(())
    }
}

pub(super) fn yes_no(yes: bool) -> &'static str {
    if yes { "Y" } else { "N" }
}

/// `time` in whole `unit`s of `seconds` seconds.
pub(super) fn whole(name: &str, time: Duration, seconds: u64, unit: &str) -> Result<u64, String> {
    let millis = time.as_millis();
    let step = u128::from(seconds) * 1000;
    if millis % step == 0 {
        u64::try_from(millis / step).map_err(|_| format!("{name} is too long"))
    } else {
        Err(format!(
            "{name} of {} is not a whole number of {unit}, which is what LSF counts",
            humantime_like(time)
        ))
    }
}

fn humantime_like(time: Duration) -> String {
    format!("{}ms", time.as_millis())
}

pub(super) fn cell<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "()".to_owned(), |value| value.to_string())
}
