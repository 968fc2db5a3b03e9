//! `bclusters`: the MultiCluster links, each send queue's targets then
//! each receive queue's senders, with the last counter update taken of
//! each remote queue.

use mcfed_federation::MemberConfig;
use mcfed_forwarder::ForwarderNode;
use mcfed_protocol::ClusterName;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::cmd::jobs::secs;
use crate::table::Table;

/// What a cluster knows of a peer's link: whether it is up (connected
/// both ways), and the peer's incarnation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerLink {
    /// Connected both ways.
    pub up: bool,
    /// The peer's incarnation, once it said hello.
    pub incarnation: Option<u64>,
}

/// One MultiCluster link, as `bclusters` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkRow {
    /// LOCAL_QUEUE.
    pub local_queue: String,
    /// JOB_FLOW: send or recv.
    pub job_flow: String,
    /// REMOTE: the remote receive queue (send queues), else `-`.
    pub remote: String,
    /// CLUSTER: the remote cluster.
    pub cluster: String,
    /// STATUS: ok (connected both ways) or disc.
    pub status: String,
    /// The remote cluster's incarnation, from its last hello.
    pub incarnation: Option<u64>,
    /// For send queues: the sequence number of the last counter update
    /// applied from the remote cluster.
    pub last_update_seq: Option<u64>,
    /// For send queues: when that update was taken (emulated seconds).
    pub last_update_at: Option<f64>,
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
    spec: &MemberConfig,
    peers: &[(ClusterName, PeerLink)],
    facts: &ViewFacts,
) -> Vec<LinkRow> {
    let peer = |cluster: &ClusterName| {
        peers
            .iter()
            .find(|(name, _)| name == cluster)
            .map(|(_, link)| *link)
            .unwrap_or_default()
    };
    let status = |cluster: &ClusterName| if peer(cluster).up { "ok" } else { "disc" };
    let incarnation = |cluster: &ClusterName| peer(cluster).incarnation;
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
    for queue in &spec.cluster.queues {
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

/// `bclusters`' columns.
pub fn clusters_table(rows: &[LinkRow]) -> Table {
    let mut table = Table::new(
        "bclusters",
        "CLUSTERS",
        &["LOCAL_QUEUE", "JOB_FLOW", "REMOTE", "CLUSTER", "STATUS"],
    );
    table.rows = rows
        .iter()
        .map(|row| {
            vec![
                row.local_queue.clone(),
                row.job_flow.clone(),
                row.remote.clone(),
                row.cluster.clone(),
                row.status.clone(),
            ]
        })
        .collect();
    table
}

/// `bclusters`: the job forwarding links.
pub fn clusters(rows: &[LinkRow]) -> String {
    format!(
        "[Job Forwarding Information ]\n{}",
        clusters_table(rows).text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_under_lsf_headers() {
        let text = clusters(&[LinkRow {
            local_queue: "send".into(),
            job_flow: "send".into(),
            remote: "HighPriority".into(),
            cluster: "Cluster2".into(),
            status: "ok".into(),
            incarnation: None,
            last_update_seq: None,
            last_update_at: None,
        }]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[Job Forwarding Information ]");
        assert_eq!(
            lines[1],
            "LOCAL_QUEUE  JOB_FLOW  REMOTE        CLUSTER   STATUS"
        );
        assert_eq!(
            lines[2],
            "send         send      HighPriority  Cluster2  ok"
        );
    }
}
