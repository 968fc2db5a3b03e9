//! Building what the LSF-style commands show from a cluster's node and
//! forwarder (pure functions, run inside the actors through `Inspect`).

use mcfed_cluster::{ClusterNode, JobOrigin, JobState};
use mcfed_forwarder::{ForwarderNode, SourceState};
use mcfed_protocol::{ClusterName, SimTime};
use mcfed_scenario::model::ClusterSpec;
use mcfed_transport::PeerStatus;
use rustc_hash::FxHashMap;

use crate::admin::{
    CountersRow, ForwardedFrom, ForwardedTo, HostRow, JobRow, LinkRow, QueueReport, ViewRow,
};

mod history;

pub use history::{finished_jobs, history, params};

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
            let options = job.spec.options();
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
                finish_time: None,
                output_file: options.output_file,
                error_file: options.error_file,
                user_priority: options.user_priority,
            }
        })
        .collect();
    rows.sort_by_key(|row| row.job_id);
    rows
}

/// The jobs submitted to a cluster's send queues, by job id.
pub fn forwarder_jobs(forwarder: &ForwarderNode, now: SimTime) -> Vec<JobRow> {
    let view = forwarder.view();
    let unreachable = |job: &mcfed_forwarder::node::SourceJob| {
        job.remote_queue()
            .is_some_and(|to| forwarder.is_unreachable(view.cluster_of(to), now))
    };
    let mut rows: Vec<JobRow> = forwarder
        .jobs()
        .map(|job| {
            let stat = match job.state {
                // LSF's UNKWN: started where nobody can be asked.
                SourceState::Running { .. }
                | SourceState::Suspended { .. }
                | SourceState::Stopped { .. }
                    if unreachable(job) =>
                {
                    "UNKWN"
                }
                state => state.as_str(),
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
                SourceState::Running { to, .. }
                | SourceState::Suspended { to, .. }
                | SourceState::Stopped { to, .. } => Some(format!("@{}", view.cluster_of(to))),
                _ => None,
            };
            let pending_reason = match job.state {
                SourceState::Waiting => {
                    Some("Waiting at the submission cluster for a remote queue".to_owned())
                }
                SourceState::GaveUp => Some(
                    "Forwarded MAX_FORWARDS times; pending at the submission cluster".to_owned(),
                ),
                SourceState::Forwarded { .. } | SourceState::Accepted { .. }
                    if unreachable(job) =>
                {
                    Some("Pending at the execution cluster; remote cluster unreachable".to_owned())
                }
                SourceState::Forwarded { .. } | SourceState::Accepted { .. } => {
                    Some("Pending at the execution cluster".to_owned())
                }
                SourceState::Held => Some("Held at the submission cluster by bstop".to_owned()),
                SourceState::HeldThere { .. } => {
                    Some("Held at the execution cluster by bstop".to_owned())
                }
                _ => None,
            };
            let options = job.spec.options();
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
                finish_time: None,
                output_file: options.output_file,
                error_file: options.error_file,
                user_priority: options.user_priority,
            }
        })
        .collect();
    rows.sort_by_key(|row| row.job_id);
    rows
}

/// Every queue of the cluster at `now`, in configuration order: the
/// cluster's own [`QueueReport`]s, with MAX_RSCHED_TIME (which only the
/// submission side knows) filled in from the scenario's send queues.
pub fn queues(node: &ClusterNode, spec: &ClusterSpec, now: SimTime) -> Vec<QueueReport> {
    let mut queues = node.cluster().report(now).queues;
    if let Some(forwarder) = &spec.forwarder {
        for queue in &mut queues {
            if let Some(send) = forwarder
                .send_queues
                .iter()
                .find(|send| send.name.as_str() == queue.queue)
            {
                queue.set_max_rsched_time(send.max_rsched_time);
            }
        }
    }
    queues
}

/// Every host of the cluster, in configuration order.
pub fn hosts(node: &ClusterNode) -> Vec<HostRow> {
    let cluster = node.cluster();
    // RUN, SSUSP and USUSP slots of each host.
    let mut usage: FxHashMap<usize, [u32; 3]> = FxHashMap::default();
    for job in cluster.jobs() {
        for place in &job.placement {
            let entry = usage.entry(place.host).or_default();
            match job.state {
                JobState::Running => entry[0] += place.slots,
                JobState::Suspended => entry[1] += place.slots,
                JobState::UserSuspended => entry[2] += place.slots,
                _ => {}
            }
        }
    }
    cluster
        .host_configs()
        .enumerate()
        .map(|(index, config)| {
            let [run, ssusp, ususp] = usage.get(&index).copied().unwrap_or_default();
            let status = if config.closed {
                "closed_Adm"
            } else if cluster.host_used_slots(index) >= config.max_slots {
                "closed"
            } else {
                "ok"
            };
            let queues = cluster
                .queue_configs()
                .filter(|queue| match &queue.hosts {
                    mcfed_cluster::HostSelection::All => true,
                    mcfed_cluster::HostSelection::Listed(hosts) => hosts.contains(&config.name),
                })
                .map(|queue| queue.name.to_string())
                .collect();
            HostRow {
                host_name: config.name.clone(),
                status: status.to_owned(),
                max: config.max_slots,
                njobs: run + ssusp + ususp,
                run,
                ssusp,
                resources: config.resources.clone(),
                ususp,
                ncpus: config.processor_count(),
                jl_u: config.user_slot_limit,
                queues,
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

/// The counters a forwarder holds of each remote queue it sends to, in
/// the order its send queues name them (each queue once), with their age
/// at `now`.
pub fn views(forwarder: &ForwarderNode, now: SimTime) -> Vec<ViewRow> {
    let view = forwarder.view();
    let mut seen = Vec::new();
    let mut rows = Vec::new();
    for (_, targets) in forwarder.send_queues() {
        for &target in targets {
            if seen.contains(&target) {
                continue;
            }
            seen.push(target);
            let at = view.queue_ref(target);
            rows.push(ViewRow {
                queue: at.queue.to_string(),
                cluster: at.cluster.to_string(),
                figures: view.figures(target).map(|figures| CountersRow {
                    priority: figures.priority,
                    total: figures.total,
                    available: figures.available,
                    running: figures.running,
                    pending: figures.pending,
                    preemptable_available: figures.preemptable_available,
                    imported_pending: figures.imported_pending,
                    impt_jobbklg: figures.impt_jobbklg,
                }),
                taken_at: view.taken_at(target).map(secs),
                age: view.view_age(target, now).map(|age| age.as_secs_f64()),
                last_update_seq: view.applied_seq(&at.cluster),
            });
        }
    }
    rows
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use mcfed_federation::Member;
    use mcfed_run::inspect::queues_json;
    use mcfed_run::probe::{Snapshot, snapshot};
    use serde_json::Value;

    use super::*;
    use crate::admin::{self, AdminResponse};

    fn bundled(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("scenarios") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                bundled(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "toml") {
                found.push(path);
            }
        }
    }

    /// The queues as `mcfed bqueues -o json` prints them: the admin
    /// answer, through a postcard frame.
    fn admin_view(member: &Member, spec: &ClusterSpec, now: SimTime) -> Vec<Value> {
        let answer = AdminResponse::Queues(queues(member.node(), spec, now));
        let bytes = admin::encode(&answer).expect("encodes");
        let AdminResponse::Queues(rows) = admin::decode(&bytes).expect("decodes") else {
            panic!("a queues answer");
        };
        let json: Value =
            serde_json::from_str(&crate::lsf::json(&rows)).expect("bqueues -o json is JSON");
        json.as_array().expect("an array").clone()
    }

    /// The queues as `mcfed run --show queues --report json` prints them.
    fn show_view(member: &Member, now: SimTime) -> Vec<Value> {
        let snapshot = Snapshot {
            time: now.as_secs_f64(),
            clusters: vec![snapshot(member, now, &Default::default())],
        };
        let json: Value =
            serde_json::from_str(&queues_json(&snapshot, None).expect("JSON")).expect("JSON");
        json["clusters"][0]["queues"]
            .as_array()
            .expect("an array")
            .clone()
    }

    fn keys(queue: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = queue
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys
    }

    /// Every queue of every bundled scenario reads the same through
    /// `--show queues` and through the admin `Queues` answer: the same
    /// fields with the same values, except MAX_RSCHED_TIME, which only the
    /// admin answer (built with the submission side at hand) fills in.
    #[test]
    fn show_queues_and_bqueues_are_one_view() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut files = Vec::new();
        bundled(&root, &mut files);
        files.sort();
        assert!(files.len() > 10, "the bundled scenarios: {files:?}");
        let (mut queues_seen, mut rsched_seen, mut counters_seen) = (0, 0, 0);
        for file in &files {
            // Whether every bundled scenario is valid is checked elsewhere
            // (the engines' tests); this one looks at those that load.
            let Ok(scenario) = mcfed_scenario::load(file) else {
                continue;
            };
            for spec in &scenario.clusters {
                let (member, _) = Member::build(spec.member_spec()).expect("builds");
                let now = SimTime::ZERO;
                let admin = admin_view(&member, spec, now);
                let show = show_view(&member, now);
                assert_eq!(admin.len(), show.len(), "{}", file.display());
                for (mut admin, show) in admin.into_iter().zip(show) {
                    queues_seen += 1;
                    assert_eq!(keys(&admin), keys(&show), "{}", file.display());
                    assert!(show["max_rsched_time"].is_null());
                    if !admin["max_rsched_time"].is_null() {
                        rsched_seen += 1;
                        assert!(!admin["sndjobs_to"].as_array().expect("list").is_empty());
                        admin["max_rsched_time"] = Value::Null;
                    }
                    if !admin["counters"].is_null() {
                        counters_seen += 1;
                    }
                    assert_eq!(admin, show, "{}", file.display());
                }
            }
        }
        assert!(queues_seen > 0 && rsched_seen > 0 && counters_seen > 0);
    }

    /// The documented `bqueues -o json` names and the `--show queues` ones
    /// are all there.
    #[test]
    fn the_queue_view_keeps_both_views_field_names() {
        let scenario = mcfed_scenario::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../scenarios/forwarding/recall-max-rsched-time.toml"),
        )
        .expect("loads");
        let spec = &scenario.clusters[0];
        let (member, _) = Member::build(spec.member_spec()).expect("builds");
        let queue = &admin_view(&member, spec, SimTime::ZERO)[0];
        for key in [
            "queue_name",
            "prio",
            "status",
            "max",
            "jl_u",
            "jl_h",
            "njobs",
            "pend",
            "run",
            "susp",
            "rsv",
            "policies",
            "preemption",
            "hosts",
            "sndjobs_to",
            "max_rsched_time",
            "rcvjobs_from",
            "impt_jobbklg",
            "counters",
            "slot_pool",
            "fairshare",
            "aps_priority",
            "queue_group",
        ] {
            assert!(queue.get(key).is_some(), "no `{key}` in {queue}");
        }
        assert_eq!(keys(queue).len(), 23, "{queue}");
        assert_eq!(queue["status"], "Open:Active");
    }

    /// `bqueues` and `bqueues -l` print the one view, MAX_RSCHED_TIME
    /// included.
    #[test]
    fn bqueues_prints_the_one_view() {
        let scenario = mcfed_scenario::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../scenarios/forwarding/recall-max-rsched-time.toml"),
        )
        .expect("loads");
        let spec = &scenario.clusters[0];
        let (member, _) = Member::build(spec.member_spec()).expect("builds");
        let rows = queues(member.node(), spec, SimTime::ZERO);
        let long = crate::lsf::queues(&rows, true);
        assert!(
            long.starts_with("QUEUE: send\nPARAMETERS/STATISTICS\n"),
            "{long}"
        );
        assert!(
            long.contains("SNDJOBS_TO: HighPriority@Cluster2 HighPriority@Cluster3\n"),
            "{long}"
        );
        assert!(long.contains("MAX_RSCHED_TIME: 00:02:00\n"), "{long}");
        assert!(long.contains("HOSTS:  all\n"), "{long}");
        let short = crate::lsf::queues(&rows, false);
        let lines: Vec<&str> = short.lines().collect();
        assert_eq!(
            lines[0],
            "QUEUE_NAME  PRIO  STATUS       MAX  JL/U  JL/P  JL/H  NJOBS  PEND  RUN  SUSP",
            "{short}"
        );
        assert!(
            lines[1].starts_with("send        1     Open:Active  -"),
            "{short}"
        );

        let spec = &scenario.clusters[1];
        let (member, _) = Member::build(spec.member_spec()).expect("builds");
        let long = crate::lsf::queues(&queues(member.node(), spec, SimTime::ZERO), true);
        assert!(long.contains("RCVJOBS_FROM: Cluster1\n"), "{long}");
        assert!(long.contains("IMPT_JOBBKLG: "), "{long}");
        assert!(long.contains("COUNTERS: total "), "{long}");
    }
}
