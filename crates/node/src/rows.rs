//! Building what the LSF-style commands show from a cluster's node and
//! forwarder (pure functions, run inside the actors through `Inspect`).

use mcfed_cluster::{ClusterNode, JobOrigin, JobState};
use mcfed_forwarder::{ForwarderNode, SourceState};
use mcfed_protocol::{ClusterName, SimTime};
use mcfed_scenario::model::ClusterSpec;
use mcfed_transport::PeerStatus;
use rustc_hash::FxHashMap;

use crate::admin::{ForwardedFrom, ForwardedTo, HostRow, JobRow, LinkRow, QueueRow};

fn secs(time: SimTime) -> f64 {
    time.as_secs_f64()
}

/// The jobs in a cluster's own queues (local ones and those forwarded to
/// it), by job id.
pub fn cluster_jobs(node: &ClusterNode) -> Vec<JobRow> {
    let cluster = node.cluster();
    let mut rows: Vec<JobRow> = cluster
        .jobs()
        .map(|job| {
            let (from_host, forwarded_from) = match &job.origin {
                JobOrigin::Local => (cluster.name().to_string(), None),
                JobOrigin::Forwarded { from, source_job } => (
                    format!("{source_job}@{from}"),
                    Some(ForwardedFrom {
                        cluster: from.to_string(),
                        source_job: *source_job,
                    }),
                ),
            };
            let exec_host = (!job.placement.is_empty()).then(|| {
                job.placement
                    .iter()
                    .map(|place| format!("{}*{}", place.slots, cluster.host_name(place.host)))
                    .collect::<Vec<_>>()
                    .join(":")
            });
            let pending_reason = (job.state == JobState::Pending)
                .then(|| cluster.pending_reason(job).describe().to_owned());
            JobRow {
                job_id: job.id.0,
                user: job.spec.user.to_string(),
                stat: job.state.as_str().to_owned(),
                queue: cluster.queue_config(job.queue).name.to_string(),
                from_host,
                exec_host,
                job_name: job.spec.name.to_string(),
                submit_time: secs(job.submitted_at),
                slots: job.spec.slots,
                forwarded_to: None,
                forwarded_from,
                pending_reason,
                run_time: job.spec.run_time.as_secs_f64(),
                run_limit: job.spec.run_limit.map(|limit| limit.as_secs_f64()),
                resources: job.spec.resources.clone(),
                start_time: job.started_at.map(secs),
            }
        })
        .collect();
    rows.sort_by_key(|row| row.job_id);
    rows
}

/// The jobs submitted to a cluster's send queues, by job id.
pub fn forwarder_jobs(forwarder: &ForwarderNode) -> Vec<JobRow> {
    let view = forwarder.view();
    let mut rows: Vec<JobRow> = forwarder
        .jobs()
        .map(|job| {
            let stat = match job.state {
                SourceState::Running { .. } => "RUN",
                SourceState::Suspended { .. } => "SSUSP",
                SourceState::Done => "DONE",
                _ => "PEND",
            };
            let forwarded_to = job.remote_queue().map(|to| {
                let at = view.queue_ref(to);
                ForwardedTo {
                    cluster: at.cluster.to_string(),
                    queue: at.queue.to_string(),
                    dest_job: job.dest_job(),
                    forward_time: secs(job.forwarded_at),
                    forwards: job.forwards,
                }
            });
            let exec_host = match job.state {
                SourceState::Running { to, .. } | SourceState::Suspended { to, .. } => {
                    Some(format!("@{}", view.cluster_of(to)))
                }
                _ => None,
            };
            let pending_reason = match job.state {
                SourceState::Waiting => {
                    Some("Waiting at the submission cluster for a remote queue".to_owned())
                }
                SourceState::GaveUp => Some(
                    "Forwarded MAX_FORWARDS times; pending at the submission cluster".to_owned(),
                ),
                SourceState::Forwarded { .. } | SourceState::Accepted { .. } => {
                    Some("Pending at the execution cluster".to_owned())
                }
                _ => None,
            };
            JobRow {
                job_id: job.id,
                user: job.spec.user.to_string(),
                stat: stat.to_owned(),
                queue: forwarder
                    .send_queue_name(job.send_queue_index())
                    .to_string(),
                from_host: forwarder.cluster().to_string(),
                exec_host,
                job_name: job.spec.name.to_string(),
                submit_time: secs(job.submitted_at),
                slots: job.spec.slots,
                forwarded_to,
                forwarded_from: None,
                pending_reason,
                run_time: job.spec.run_time.as_secs_f64(),
                run_limit: job.spec.run_limit.map(|limit| limit.as_secs_f64()),
                resources: job.spec.resources.clone(),
                start_time: None,
            }
        })
        .collect();
    rows.sort_by_key(|row| row.job_id);
    rows
}

/// Every queue of the cluster, in configuration order.
pub fn queues(node: &ClusterNode, spec: &ClusterSpec) -> Vec<QueueRow> {
    let cluster = node.cluster();
    cluster
        .queue_configs()
        .enumerate()
        .map(|(index, config)| {
            let (run, susp, pend) = cluster.queue_slot_usage(index);
            let rcvjobs_from = match &config.receive_from {
                None => Vec::new(),
                Some(mcfed_cluster::ReceiveFrom::All) => vec!["allclusters".to_owned()],
                Some(mcfed_cluster::ReceiveFrom::Listed(clusters)) => {
                    clusters.iter().map(ToString::to_string).collect()
                }
            };
            let max_rsched_time = spec
                .forwarder
                .as_ref()
                .and_then(|forwarder| {
                    forwarder
                        .send_queues
                        .iter()
                        .find(|queue| queue.name == config.name)
                })
                .and_then(|queue| queue.max_rsched_time)
                .map(|limit| limit.as_secs_f64());
            QueueRow {
                queue_name: config.name.to_string(),
                prio: config.priority,
                status: "Open:Active".to_owned(),
                max: config.job_limit,
                njobs: run + susp + pend,
                pend,
                run,
                susp,
                sndjobs_to: config.send_to.iter().map(ToString::to_string).collect(),
                rcvjobs_from,
                impt_jobbklg: config
                    .impt_jobbklg
                    .filter(|_| config.receive_from.is_some()),
                preemption: config.preemption.to_string(),
                counters: config
                    .receive_from
                    .is_some()
                    .then(|| cluster.queue_counters(index)),
                max_rsched_time,
            }
        })
        .collect()
}

/// Every host of the cluster, in configuration order.
pub fn hosts(node: &ClusterNode) -> Vec<HostRow> {
    let cluster = node.cluster();
    let mut usage: FxHashMap<usize, (u32, u32)> = FxHashMap::default();
    for job in cluster.jobs() {
        for place in &job.placement {
            let entry = usage.entry(place.host).or_default();
            match job.state {
                JobState::Running => entry.0 += place.slots,
                JobState::Suspended => entry.1 += place.slots,
                _ => {}
            }
        }
    }
    cluster
        .host_configs()
        .enumerate()
        .map(|(index, config)| {
            let (run, ssusp) = usage.get(&index).copied().unwrap_or_default();
            let status = if config.closed {
                "closed_Adm"
            } else if run >= config.max_slots {
                "closed"
            } else {
                "ok"
            };
            HostRow {
                host_name: config.name.clone(),
                status: status.to_owned(),
                max: config.max_slots,
                njobs: run + ssusp,
                run,
                ssusp,
                resources: config.resources.clone(),
            }
        })
        .collect()
}

/// What the forwarder knows of a remote cluster: the sequence number of
/// the last update applied and when its snapshot was taken, per remote
/// queue `queue@cluster`.
pub type ViewFacts = FxHashMap<String, (Option<u64>, Option<f64>)>;

/// Reads [`ViewFacts`] from a forwarder.
pub fn view_facts(forwarder: &ForwarderNode) -> ViewFacts {
    let view = forwarder.view();
    let mut facts = FxHashMap::default();
    for (_, targets) in forwarder.send_queues() {
        for &target in targets {
            let at = view.queue_ref(target);
            facts.insert(
                at.to_string(),
                (
                    view.applied_seq(&at.cluster),
                    view.taken_at(target).map(secs),
                ),
            );
        }
    }
    facts
}

/// The MultiCluster links (`bclusters`): each send queue's targets, then
/// each receive queue's senders.
pub fn links(
    spec: &ClusterSpec,
    peers: &[(ClusterName, PeerStatus)],
    facts: &ViewFacts,
) -> Vec<LinkRow> {
    let peer = |cluster: &ClusterName| peers.iter().find(|(name, _)| name == cluster);
    let status = |cluster: &ClusterName| {
        if peer(cluster).is_some_and(|(_, status)| status.is_up()) {
            "ok"
        } else {
            "disc"
        }
    };
    let incarnation =
        |cluster: &ClusterName| peer(cluster).and_then(|(_, status)| status.incarnation);
    let mut rows = Vec::new();
    if let Some(forwarder) = &spec.forwarder {
        for queue in &forwarder.send_queues {
            for target in &queue.send_to {
                let (seq, at) = facts.get(&target.to_string()).copied().unwrap_or_default();
                rows.push(LinkRow {
                    local_queue: queue.name.to_string(),
                    job_flow: "send".to_owned(),
                    remote: target.queue.to_string(),
                    cluster: target.cluster.to_string(),
                    status: status(&target.cluster).to_owned(),
                    incarnation: incarnation(&target.cluster),
                    last_update_seq: seq,
                    last_update_at: at,
                });
            }
        }
    }
    for queue in &spec.config.queues {
        let senders: Vec<ClusterName> = match &queue.receive_from {
            None => continue,
            Some(mcfed_cluster::ReceiveFrom::All) => spec.subscribers.clone(),
            Some(mcfed_cluster::ReceiveFrom::Listed(clusters)) => clusters.clone(),
        };
        for sender in senders {
            rows.push(LinkRow {
                local_queue: queue.name.to_string(),
                job_flow: "recv".to_owned(),
                remote: "-".to_owned(),
                status: status(&sender).to_owned(),
                incarnation: incarnation(&sender),
                cluster: sender.to_string(),
                last_update_seq: None,
                last_update_at: None,
            });
        }
    }
    rows
}
