//! `[[workload]]`: the trace file (which must open: `swf` or `lsb_acct`,
//! one of them), the cluster and queue its jobs go to, the queue and
//! partition maps (an lsb.acct's queue map is by queue name, and it has no
//! partitions), the user template, and the bounds on `limit`,
//! `time_scale` and `sort_window`.

use mcfed_protocol::{Bound, ClusterName};

use crate::check::Checker;
use crate::format::RawWorkload;
use crate::locate::FieldPath;
use crate::model::ClusterSpec;
use mcfed_trace::workload::lsb_acct::{DEFAULT_WINDOW, MAX_WINDOW};
use mcfed_trace::workload::{AcctMapping, QueueTarget, TraceFormat, WorkloadSpec};

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
        let mut workloads: Vec<WorkloadSpec> = raw
            .iter()
            .enumerate()
            .filter_map(|(index, workload)| self.workload(&root.index(index), workload, specs))
            .collect();
        self.common_epoch(&root, &mut workloads);
        workloads
    }

    /// One time zero for every lsb.acct workload: the earliest submission
    /// in the first window of any of their logs, so that the logs of
    /// several clusters keep their times together.
    fn common_epoch(&mut self, root: &FieldPath, workloads: &mut [WorkloadSpec]) {
        let mut epoch: Option<i64> = None;
        for (index, workload) in workloads.iter().enumerate() {
            let TraceFormat::LsbAcct(mapping) = &workload.format else {
                continue;
            };
            match mcfed_trace::lsb_acct::earliest_submit(&workload.swf, mapping.window) {
                Ok(Some(earliest)) => {
                    epoch = Some(epoch.map_or(earliest, |epoch| epoch.min(earliest)));
                }
                Ok(None) => {}
                Err(error) => self.problem(root.index(index).key("lsb_acct"), error.to_string()),
            }
        }
        for workload in workloads {
            if let TraceFormat::LsbAcct(mapping) = &mut workload.format {
                mapping.epoch = epoch;
            }
        }
    }

    fn workload(
        &mut self,
        path: &FieldPath,
        raw: &RawWorkload,
        specs: &[ClusterSpec],
    ) -> Option<WorkloadSpec> {
        let (swf, lsb_acct) = self.trace_file(path, raw)?;
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
        let format = match (lsb_acct, &cluster) {
            (false, _) => {
                if raw.sort_window.is_some() {
                    self.problem(
                        path.key("sort_window"),
                        "`sort_window` is for an lsb.acct workload (an SWF trace is sorted in a window of its own)",
                    );
                }
                Some(TraceFormat::Swf)
            }
            (true, Some(cluster)) => self.acct_mapping(path, raw, cluster, specs),
            (true, None) => None,
        };
        let (queue_map, partition_map) = match format {
            Some(TraceFormat::Swf) => (
                self.queue_map(&path.key("queue_map"), raw, cluster.as_ref(), specs),
                self.partition_map(&path.key("partition_map"), raw, specs),
            ),
            _ => (Some(Vec::new()), Some(Vec::new())),
        };
        let default_user = if lsb_acct { "{user}" } else { "u{uid}" };
        let user = raw.user.clone().unwrap_or_else(|| default_user.to_owned());
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
            format: format?,
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
    /// something writes to it, or a device is refused), and whether it is
    /// an lsb.acct.
    fn trace_file(
        &mut self,
        path: &FieldPath,
        raw: &RawWorkload,
    ) -> Option<(std::path::PathBuf, bool)> {
        let (key, file, lsb_acct) = match (&raw.swf, &raw.lsb_acct) {
            (Some(swf), None) => ("swf", swf, false),
            (None, Some(acct)) => ("lsb_acct", acct, true),
            (Some(_), Some(_)) => {
                self.problem(
                    path.key("lsb_acct"),
                    "a workload reads one trace: `swf` or `lsb_acct`, not both",
                );
                return None;
            }
            (None, None) => {
                self.problem(
                    path.key("swf"),
                    "a workload needs a trace: `swf = \"FILE\"` or `lsb_acct = \"FILE\"`",
                );
                return None;
            }
        };
        let file = self.base.join(file);
        match mcfed_protocol::bounds::TRACE_FILE.open(&file) {
            Ok(_) => Some((file, lsb_acct)),
            Err(error) => {
                self.problem(path.key(key), format!("cannot open trace {error}"));
                None
            }
        }
    }

    /// How an lsb.acct workload at `cluster` maps its records: the queue
    /// map by LSF queue name, the cluster's queues, the federation's
    /// clusters, the sorting window.
    fn acct_mapping(
        &mut self,
        path: &FieldPath,
        raw: &RawWorkload,
        cluster: &ClusterName,
        specs: &[ClusterSpec],
    ) -> Option<TraceFormat> {
        let mut valid = true;
        if !raw.partition_map.is_empty() {
            self.problem(
                path.key("partition_map"),
                "an lsb.acct has no partitions: `partition_map` is for SWF traces",
            );
            valid = false;
        }
        let mut queue_map = Vec::with_capacity(raw.queue_map.len());
        for (name, target) in &raw.queue_map {
            let entry = path.key("queue_map").key(name);
            let (queue, target_cluster) = match target.split_once('@') {
                Some((queue, at)) => (queue, self.workload_cluster(&entry, Some(at), specs)),
                None => (target.as_str(), None),
            };
            if target.contains('@') && target_cluster.is_none() {
                valid = false;
                continue;
            }
            let at = target_cluster.as_ref().unwrap_or(cluster).clone();
            match self.known_queue(&entry, &at, queue, specs) {
                Some(queue) => queue_map.push((
                    name.clone(),
                    QueueTarget {
                        queue,
                        cluster: target_cluster,
                    },
                )),
                None => valid = false,
            }
        }
        let window = match raw.sort_window {
            None => DEFAULT_WINDOW,
            Some(window) if (1..=MAX_WINDOW as u64).contains(&window) => window as usize,
            Some(_) => {
                self.problem(
                    path.key("sort_window"),
                    format!("`sort_window` must be between 1 and {MAX_WINDOW} records"),
                );
                valid = false;
                DEFAULT_WINDOW
            }
        };
        let spec = specs.iter().find(|spec| &spec.config.name == cluster)?;
        let mut queues: Vec<String> = spec
            .config
            .queues
            .iter()
            .map(|queue| queue.name.to_string())
            .collect();
        if let Some(forwarder) = &spec.forwarder {
            queues.extend(forwarder.send_queues.iter().map(|q| q.name.to_string()));
        }
        valid.then(|| {
            TraceFormat::LsbAcct(AcctMapping {
                queue_map,
                queues,
                clusters: specs.iter().map(|spec| spec.config.name.clone()).collect(),
                window,
                epoch: None,
            })
        })
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
