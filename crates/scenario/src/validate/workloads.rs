//! `[[workload]]`: the trace file (which must open), the cluster and queue
//! its jobs go to, the queue and partition maps, the user template, and the
//! bounds on `limit` and `time_scale`.

use mcfed_protocol::{Bound, ClusterName};

use crate::check::Checker;
use crate::format::RawWorkload;
use crate::locate::FieldPath;
use crate::model::ClusterSpec;
use mcfed_trace::workload::{QueueTarget, WorkloadSpec};

/// A workload's `limit` (and `mcfed replay --limit`): the jobs it reads.
pub const WORKLOAD_LIMIT: Bound = Bound {
    what: "limit",
    min: 1,
    max: 1_000_000_000,
    why: "jobs one workload reads",
};

impl Checker<'_> {
    /// Every valid `[[workload]]`.
    pub(super) fn workloads(
        &mut self,
        raw: &[RawWorkload],
        specs: &[ClusterSpec],
    ) -> Vec<WorkloadSpec> {
        let root = FieldPath::root().key("workload");
        raw.iter()
            .enumerate()
            .filter_map(|(index, workload)| self.workload(&root.index(index), workload, specs))
            .collect()
    }

    fn workload(
        &mut self,
        path: &FieldPath,
        raw: &RawWorkload,
        specs: &[ClusterSpec],
    ) -> Option<WorkloadSpec> {
        let swf = self.trace_file(path, raw.swf.as_deref())?;
        let cluster = self.workload_cluster(&path.key("cluster"), raw.cluster.as_deref(), specs);
        let queue = match (&cluster, raw.queue.as_deref()) {
            (Some(cluster), Some(queue)) => {
                self.known_queue(&path.key("queue"), cluster, queue, specs)
            }
            (_, None) => {
                self.problem(path.key("queue"), "a workload needs a `queue`");
                None
            }
            (None, Some(_)) => None,
        };
        let queue_map = self.queue_map(&path.key("queue_map"), raw, cluster.as_ref(), specs);
        let partition_map = self.partition_map(&path.key("partition_map"), raw, specs);
        let user = raw.user.clone().unwrap_or_else(|| "u{uid}".to_owned());
        if user.trim().is_empty() {
            self.problem(path.key("user"), "the user template is empty");
        }
        if let Some(limit) = raw.limit {
            self.bounded(path.key("limit"), &WORKLOAD_LIMIT, limit);
        }
        let time_scale = raw.time_scale.unwrap_or(1.0);
        if !(time_scale.is_finite() && time_scale > 0.0 && time_scale <= 1e6) {
            self.problem(
                path.key("time_scale"),
                "`time_scale` must be a number above 0 and at most 1e6",
            );
        }
        let name = raw.name.clone().unwrap_or_else(|| stem(&swf));
        Some(WorkloadSpec {
            name,
            swf,
            cluster: cluster?,
            queue: queue?,
            queue_map: queue_map?,
            partition_map: partition_map?,
            user,
            limit: raw.limit,
            time_scale,
        })
    }

    /// The trace's path, resolved against the scenario's directory, if it
    /// opens as a regular file (a FIFO, which would block validation until
    /// something writes to it, or a device is refused).
    fn trace_file(&mut self, path: &FieldPath, swf: Option<&str>) -> Option<std::path::PathBuf> {
        let Some(swf) = swf else {
            self.problem(
                path.key("swf"),
                "a workload needs a trace: `swf = \"FILE\"`",
            );
            return None;
        };
        let file = self.base.join(swf);
        match mcfed_protocol::bounds::TRACE_FILE.open(&file) {
            Ok(_) => Some(file),
            Err(error) => {
                self.problem(path.key("swf"), format!("cannot open trace {error}"));
                None
            }
        }
    }

    fn workload_cluster(
        &mut self,
        path: &FieldPath,
        name: Option<&str>,
        specs: &[ClusterSpec],
    ) -> Option<ClusterName> {
        let Some(name) = name else {
            self.problem(path.clone(), "a workload needs a `cluster`");
            return None;
        };
        match specs.iter().find(|spec| spec.config.name == name) {
            Some(spec) => Some(spec.config.name.clone()),
            None => {
                self.problem(path.clone(), format!("unknown cluster `{name}`"));
                None
            }
        }
    }

    fn known_queue(
        &mut self,
        path: &FieldPath,
        cluster: &ClusterName,
        queue: &str,
        specs: &[ClusterSpec],
    ) -> Option<String> {
        let spec = specs.iter().find(|spec| &spec.config.name == cluster)?;
        let local = spec.config.queues.iter().any(|q| q.name == queue);
        let send = spec
            .forwarder
            .as_ref()
            .is_some_and(|forwarder| forwarder.send_queues.iter().any(|q| q.name == queue));
        if local || send {
            Some(queue.to_owned())
        } else {
            self.problem(
                path.clone(),
                format!("cluster `{cluster}` has no queue `{queue}`"),
            );
            None
        }
    }

    fn queue_map(
        &mut self,
        path: &FieldPath,
        raw: &RawWorkload,
        default_cluster: Option<&ClusterName>,
        specs: &[ClusterSpec],
    ) -> Option<Vec<(i64, QueueTarget)>> {
        let mut map = Vec::with_capacity(raw.queue_map.len());
        let mut valid = true;
        for (number, target) in &raw.queue_map {
            let entry = path.key(number);
            let Some(number) = self.swf_number(&entry, number) else {
                valid = false;
                continue;
            };
            let (queue, cluster) = match target.split_once('@') {
                Some((queue, cluster)) => {
                    let cluster = self.workload_cluster(&entry, Some(cluster), specs);
                    (queue, cluster)
                }
                None => (target.as_str(), None),
            };
            let Some(at) = cluster.as_ref().or(default_cluster) else {
                valid = false;
                continue;
            };
            let at = at.clone();
            match self.known_queue(&entry, &at, queue, specs) {
                Some(queue) => map.push((number, QueueTarget { queue, cluster })),
                None => valid = false,
            }
        }
        valid.then_some(map)
    }

    fn partition_map(
        &mut self,
        path: &FieldPath,
        raw: &RawWorkload,
        specs: &[ClusterSpec],
    ) -> Option<Vec<(i64, ClusterName)>> {
        let mut map = Vec::with_capacity(raw.partition_map.len());
        let mut valid = true;
        for (number, cluster) in &raw.partition_map {
            let entry = path.key(number);
            let number = self.swf_number(&entry, number);
            let cluster = self.workload_cluster(&entry, Some(cluster), specs);
            match (number, cluster) {
                (Some(number), Some(cluster)) => map.push((number, cluster)),
                _ => valid = false,
            }
        }
        valid.then_some(map)
    }

    fn swf_number(&mut self, path: &FieldPath, text: &str) -> Option<i64> {
        match text.trim().parse::<i64>() {
            Ok(number) => Some(number),
            Err(_) => {
                self.problem(
                    path.clone(),
                    format!("`{text}` is not an SWF number (an integer)"),
                );
                None
            }
        }
    }
}

/// A file's name without its extensions (`trace.swf.gz` → `trace`).
fn stem(path: &std::path::Path) -> String {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workload".to_owned());
    name.split('.').next().unwrap_or("workload").to_owned()
}
