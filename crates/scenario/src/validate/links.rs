//! Forwarding links between clusters: a queue's RCVJOBS_FROM and
//! SNDJOBS_TO, the check that every SNDJOBS_TO entry names a queue that
//! receives from the sender, a cluster's address, and the forwarder and
//! subscribers of each cluster that follow from its links.

use mcfed_cluster::{QueueConfig, ReceiveFrom};
use mcfed_forwarder::{ForwarderConfig, Reachability, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{ClusterName, QueueName, QueueRef};
use rustc_hash::FxHashSet;

use super::clusters::ClusterDraft;
use crate::check::Checker;
use crate::format::{RawCluster, RawQueue};
use crate::locate::FieldPath;
use crate::model::ClusterSpec;

impl Checker<'_> {
    /// A queue's RCVJOBS_FROM, if set: `allclusters` or a list of known
    /// clusters.
    pub(super) fn receive_from(
        &mut self,
        queue: &RawQueue,
        queue_path: &FieldPath,
        known_clusters: &FxHashSet<ClusterName>,
    ) -> Option<ReceiveFrom> {
        let words = &queue.RCVJOBS_FROM.as_ref()?.0;
        if words.iter().any(|word| word == "allclusters") {
            return Some(ReceiveFrom::All);
        }
        let mut clusters = Vec::new();
        for (position, word) in words.iter().enumerate() {
            let entry = queue_path.key("RCVJOBS_FROM").index(position);
            let Some(cluster) = self.name::<ClusterName>(entry.clone(), word) else {
                continue;
            };
            if !known_clusters.contains(&cluster) {
                self.problem(
                    entry,
                    format!(
                        "queue `{}` receives from unknown cluster `{cluster}`",
                        queue.name
                    ),
                );
            }
            clusters.push(cluster);
        }
        if clusters.is_empty() {
            self.problem(
                queue_path.key("RCVJOBS_FROM"),
                "RCVJOBS_FROM lists no cluster",
            );
        }
        Some(ReceiveFrom::Listed(clusters))
    }

    /// A queue's SNDJOBS_TO, each entry a `queue@cluster`; empty if not
    /// set. Whether the targets exist is checked by
    /// [`Checker::check_send_targets`] once every cluster is known.
    pub(super) fn send_to(&mut self, queue: &RawQueue, queue_path: &FieldPath) -> Vec<QueueRef> {
        let mut send_to = Vec::new();
        let Some(targets) = &queue.SNDJOBS_TO else {
            return send_to;
        };
        for (position, word) in targets.0.iter().enumerate() {
            let entry = queue_path.key("SNDJOBS_TO").index(position);
            match word.parse::<QueueRef>() {
                Ok(at) => send_to.push(at),
                Err(error) => self.problem(entry, error.to_string()),
            }
        }
        if targets.0.is_empty() {
            self.problem(queue_path.key("SNDJOBS_TO"), "SNDJOBS_TO lists no queue");
        }
        send_to
    }

    /// Where the cluster's process listens, `host:port`, if given.
    pub(super) fn address(&mut self, raw: &RawCluster, path: &FieldPath) -> Option<String> {
        let address = raw.address.as_ref()?;
        match mcfed_protocol::address::split_address(address) {
            Some(_) => Some(address.clone()),
            None => {
                self.problem(
                    path.key("address"),
                    format!("`{address}` is not an address of the form host:port"),
                );
                None
            }
        }
    }

    /// Explains queues that both send and receive, and names forwarding
    /// cycles. LSF accepts a queue with both SNDJOBS_TO and RCVJOBS_FROM:
    /// the jobs submitted to it may be forwarded, and the jobs it receives
    /// from other clusters run in its cluster — a job is forwarded once,
    /// never on from the cluster it was forwarded to. mcfed does the same
    /// (its send queues run nothing submitted to them), so a cycle of send
    /// queues sends no job round; the warning says so.
    pub(super) fn explain_send_receive(&mut self, drafts: &[ClusterDraft]) {
        for draft in drafts {
            for (index, queue) in draft.config.queues.iter().enumerate() {
                if queue.send_to.is_empty() || queue.receive_from.is_none() {
                    continue;
                }
                let here = QueueRef {
                    cluster: draft.name.clone(),
                    queue: queue.name.clone(),
                };
                let field = draft.path.key("queue").index(index).key("SNDJOBS_TO");
                let cycle = forwarding_cycle(drafts, &here)
                    .map(|cycle| {
                        let names: Vec<String> = cycle.iter().map(ToString::to_string).collect();
                        format!("it is in the forwarding cycle {}; ", names.join(" -> "))
                    })
                    .unwrap_or_default();
                self.warning(
                    field,
                    format!(
                        "queue `{}` both sends (SNDJOBS_TO) and receives (RCVJOBS_FROM): {cycle}as in LSF, jobs submitted to it are forwarded and jobs forwarded to it run here on its hosts, never forwarded again, so no job goes round",
                        queue.name
                    ),
                );
            }
        }
    }

    /// Two clusters may not listen on the same address.
    pub(super) fn check_addresses(&mut self, drafts: &[ClusterDraft]) {
        let mut seen: Vec<(&str, &ClusterName)> = Vec::new();
        for draft in drafts {
            let Some(address) = draft.address.as_deref() else {
                continue;
            };
            if let Some((_, other)) = seen.iter().find(|(known, _)| *known == address) {
                self.problem(
                    draft.path.key("address"),
                    format!(
                        "clusters `{other}` and `{}` both listen on {address}: each cluster's process needs its own address",
                        draft.name
                    ),
                );
            } else {
                seen.push((address, &draft.name));
            }
        }
    }

    /// Every SNDJOBS_TO entry must name a queue of another cluster that
    /// receives from this one.
    pub(super) fn check_send_targets(&mut self, drafts: &[ClusterDraft]) {
        for draft in drafts {
            for (queue_index, queue) in draft.config.queues.iter().enumerate() {
                for (position, at) in queue.send_to.iter().enumerate() {
                    if let Some(message) = send_target_problem(drafts, draft, queue, at) {
                        let entry = draft
                            .path
                            .key("queue")
                            .index(queue_index)
                            .key("SNDJOBS_TO")
                            .index(position);
                        self.problem(entry, message);
                    }
                }
            }
        }
    }
}

/// What is wrong with `at`, an entry of the SNDJOBS_TO of `queue` of the
/// cluster `draft`, if anything.
fn send_target_problem(
    drafts: &[ClusterDraft],
    draft: &ClusterDraft,
    queue: &QueueConfig,
    at: &QueueRef,
) -> Option<String> {
    if at.cluster == draft.name {
        return Some(format!(
            "queue `{}` sends to its own cluster ({at})",
            queue.name
        ));
    }
    let Some(target) = drafts.iter().find(|other| other.name == at.cluster) else {
        return Some(format!(
            "queue `{}` sends to unknown cluster `{}` ({at})",
            queue.name, at.cluster
        ));
    };
    let Some(receiver) = target.config.queues.iter().find(|q| q.name == at.queue) else {
        return Some(format!(
            "cluster `{}` has no queue `{}` ({at})",
            at.cluster, at.queue
        ));
    };
    match &receiver.receive_from {
        Some(from) if from.accepts(&draft.name) => None,
        Some(_) => Some(format!(
            "{at} does not receive jobs from `{}`: add it to that queue's RCVJOBS_FROM",
            draft.name
        )),
        None => Some(format!(
            "{at} is not a receive queue: set RCVJOBS_FROM on it"
        )),
    }
}

/// A cycle of SNDJOBS_TO links through `start` (`start -> ... -> start`),
/// if there is one: a depth-first walk over the queues that send.
fn forwarding_cycle(drafts: &[ClusterDraft], start: &QueueRef) -> Option<Vec<QueueRef>> {
    fn targets<'d>(drafts: &'d [ClusterDraft], at: &QueueRef) -> &'d [QueueRef] {
        drafts
            .iter()
            .find(|draft| draft.name == at.cluster)
            .and_then(|draft| draft.config.queues.iter().find(|q| q.name == at.queue))
            .map_or(&[], |queue| queue.send_to.as_slice())
    }
    fn walk(
        drafts: &[ClusterDraft],
        start: &QueueRef,
        path: &mut Vec<QueueRef>,
        seen: &mut FxHashSet<String>,
    ) -> bool {
        let Some(at) = path.last().cloned() else {
            return false;
        };
        for next in targets(drafts, &at) {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.to_string()) {
                path.push(next.clone());
                if walk(drafts, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.clone()];
    let mut seen = FxHashSet::default();
    walk(drafts, start, &mut path, &mut seen).then_some(path)
}

/// The queue whose APS_PRIORITY orders `queue`'s jobs: itself, or the
/// APS queue whose QUEUE_GROUP names it (the cluster's setup checks that
/// a group's queues are all send queues or all local ones).
fn aps_group(queues: &[QueueConfig], queue: &QueueConfig) -> Option<QueueName> {
    if queue.aps_priority.is_some() {
        return Some(queue.name.clone());
    }
    queues
        .iter()
        .find(|parent| parent.aps_priority.is_some() && parent.queue_group.contains(&queue.name))
        .map(|parent| parent.name.clone())
}

/// The forwarder of a cluster with send queues; `None` without. A remote
/// cluster is unreachable once its last update is older than
/// MC_UNREACHABLE_UPDATES of its own MC_PLUGIN_UPDATE_INTERVAL.
pub(super) fn forwarder(draft: &ClusterDraft, drafts: &[ClusterDraft]) -> Option<ForwarderConfig> {
    let send_queues: Vec<SendQueueConfig> = draft
        .config
        .queues
        .iter()
        .filter(|queue| !queue.send_to.is_empty())
        .map(|queue| SendQueueConfig {
            name: queue.name.clone(),
            send_to: queue.send_to.clone(),
            max_rsched_time: draft.max_rsched_time.get(&queue.name).copied(),
            fairshare: queue.fairshare.is_some(),
            aps_group: aps_group(&draft.config.queues, queue),
        })
        .collect();
    // Counters go stale only where they come: to a submission cluster
    // that collects them (MC_PLUGIN_SCHEDULE_ENHANCE set), from one that
    // sends them (MC_PLUGIN_UPDATE_INTERVAL set).
    let collects = draft.mode != ScheduleMode::Default;
    let stale_after = drafts
        .iter()
        .filter(|_| draft.unreachable_updates > 0 && collects)
        .filter(|remote| {
            send_queues
                .iter()
                .any(|queue| queue.send_to.iter().any(|at| at.cluster == remote.name))
        })
        .filter_map(|remote| {
            let interval = remote.config.update_interval?;
            Some((
                remote.name.clone(),
                interval.saturating_mul(draft.unreachable_updates),
            ))
        })
        .collect();
    (!send_queues.is_empty()).then(|| ForwarderConfig {
        cluster: draft.name.clone(),
        mode: draft.mode,
        send_queues,
        max_forwards: draft.max_forwards,
        reachability: Reachability {
            stale_after,
            reclaim_after: draft.reclaim_time,
        },
    })
}

/// Sets the subscribers of each cluster: the submission clusters that send
/// to it; and its collectors: those whose MC_PLUGIN_SCHEDULE_ENHANCE is set
/// (seed 004: only they collect queue information).
pub(super) fn add_subscribers(specs: &mut [ClusterSpec]) {
    for index in 0..specs.len() {
        let target = specs[index].config.name.clone();
        let subscribers: Vec<ClusterName> = specs
            .iter()
            .filter(|spec| {
                spec.forwarder.as_ref().is_some_and(|forwarder| {
                    forwarder
                        .send_queues
                        .iter()
                        .any(|queue| queue.send_to.iter().any(|at| at.cluster == target))
                })
            })
            .map(|spec| spec.config.name.clone())
            .collect();
        let collectors = subscribers
            .iter()
            .filter(|name| {
                specs.iter().any(|spec| {
                    &spec.config.name == *name
                        && spec
                            .forwarder
                            .as_ref()
                            .is_some_and(|f| f.mode != ScheduleMode::Default)
                })
            })
            .cloned()
            .collect();
        specs[index].subscribers = subscribers;
        specs[index].collectors = collectors;
    }
}
