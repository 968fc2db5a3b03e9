//! Clusters imported from LSF configuration (`lsf_config = "dir"`): their
//! hosts, queues, users, limits and params come from the directory's lsb.* files
//! (read by `mcfed-lsf`, the same import as `mcfed import lsf`); the
//! scenario adds jobs, an address, workloads and chaos around them.
//! Problems later found in an imported cluster name the LSF file and line
//! the value came from.

use crate::format::{RawCluster, RawParams, RawScenario};
use crate::locate::FieldPath;

use crate::check::Checker;

impl Checker<'_> {
    /// Replaces each `lsf_config` cluster's configuration with the one
    /// imported from its directory.
    pub(super) fn import_lsf(&mut self, raw: &mut RawScenario) {
        self.imported = vec![None; raw.cluster.len()];
        // Clusters sharing one lsf.shared would repeat its warnings.
        let mut warned: Vec<String> = Vec::new();
        for index in 0..raw.cluster.len() {
            let Some(dir) = raw.cluster[index].lsf_config.clone() else {
                continue;
            };
            let path = FieldPath::root().key("cluster").index(index);
            self.refuse_own_configuration(&raw.cluster[index], &path);
            let name = raw.cluster[index].name.clone();
            let directory = self.base.join(&dir);
            let at = path.key("lsf_config");
            match mcfed_lsf::import_cluster(&name, &directory, None) {
                Ok((doc, warnings)) => {
                    for warning in warnings {
                        let text = warning.short();
                        if !warned.contains(&text) {
                            self.warning(at.clone(), text.clone());
                            warned.push(text);
                        }
                    }
                    let text = mcfed_lsf::render::cluster_root(&doc).text;
                    match toml::from_str::<RawCluster>(&text) {
                        Ok(imported) => merge(&mut raw.cluster[index], imported),
                        Err(error) => self.problem(
                            at.clone(),
                            format!(
                                "the configuration imported from {dir} is not a cluster: {error}"
                            ),
                        ),
                    }
                    self.imported[index] = Some(doc);
                }
                Err(error) => {
                    for problem in error.errors {
                        let text = problem.to_string();
                        let text = text.strip_prefix("error: ").unwrap_or(&text).to_owned();
                        self.problem(at.clone(), text);
                    }
                }
            }
        }
    }

    /// A cluster imported from LSF files takes its hosts, queues, users,
    /// limits and params from them only.
    fn refuse_own_configuration(&mut self, cluster: &RawCluster, path: &FieldPath) {
        for (key, present) in [
            ("host", !cluster.host.is_empty()),
            ("queue", !cluster.queue.is_empty()),
            ("user", !cluster.user.is_empty()),
            ("user_group", !cluster.user_group.is_empty()),
            ("limit", !cluster.limit.is_empty()),
            ("reservation_policy", !cluster.reservation_policy.is_empty()),
            ("params", params_set(&cluster.params)),
        ] {
            if present {
                self.problem(
                    path.key(key),
                    format!(
                        "cluster `{}` takes its {key} from lsf_config; remove this {key}",
                        cluster.name
                    ),
                );
            }
        }
    }
}

fn params_set(params: &RawParams) -> bool {
    !params.set_fields().is_empty()
        || params.MC_PLUGIN_UPDATE_INTERVAL.is_some()
        || params.MC_PLUGIN_SCHEDULE_ENHANCE.is_some()
        || params.MAX_FORWARDS.is_some()
        || params.MC_UNREACHABLE_UPDATES.is_some()
        || params.MC_RECLAIM_TIME.is_some()
}

/// The imported configuration into the scenario's cluster, which keeps
/// its name, address and jobs.
fn merge(cluster: &mut RawCluster, imported: RawCluster) {
    cluster.params = imported.params;
    cluster.host = imported.host;
    cluster.queue = imported.queue;
    cluster.user = imported.user;
    cluster.user_group = imported.user_group;
    cluster.limit = imported.limit;
    cluster.reservation_policy = imported.reservation_policy;
}
