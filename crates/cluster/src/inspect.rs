//! What `bqueues` and `bqueues -l` show about a cluster's queues, as plain
//! data: limits, job counts, the MultiCluster settings and the counters a
//! receive queue publishes, the slot pool and deserved slots, and the
//! fairshare table of each user with its dynamic priority and the figures
//! behind it.
//!
//! [`QueueReport`] is the one queue view: `mcfed bqueues` (its admin
//! answer, its columns, `-l` and `-o json`), `mcfed run --show queues`
//! (text and JSON) and the snapshots expectations read are all built here,
//! by [`Cluster::report`] and [`Cluster::queue_report`]. The scenario layer
//! prints them; every figure comes from the same functions the scheduler
//! decides with. Its JSON field names are a public contract: add fields,
//! never rename one.

use std::time::Duration;

use mcfed_protocol::{QueueCounters, SimTime};
use serde::{Deserialize, Serialize};

use crate::config::{HostSelection, QueueConfig, ReceiveFrom};
use crate::fairshare::tree::ROOT;
use crate::fairshare::{NodeId, NodeKind, OTHERS_SHARE_USER, ShareAccount, ShareNode};
use crate::job::QueueIndex;
use crate::scheduler::Cluster;

/// STATUS of every queue: mcfed does not open or close queues.
pub const QUEUE_STATUS: &str = "Open:Active";

/// One cluster's queues at one time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterReport {
    /// The cluster.
    pub cluster: String,
    /// The emulated time, in seconds.
    pub time: f64,
    /// Its queues, in configuration order.
    pub queues: Vec<QueueReport>,
}

/// One queue, as `bqueues` and `bqueues -l` show it. Job counts are in
/// slots.
///
/// Everything but MAX_RSCHED_TIME comes from the cluster; MAX_RSCHED_TIME
/// belongs to the submission side (the forwarder's send queues), so a
/// caller that knows it fills it in with
/// [`QueueReport::set_max_rsched_time`].
///
/// Fields are never skipped when serialized: the report also travels in
/// postcard admin frames, which need every field in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueReport {
    /// QUEUE_NAME.
    #[serde(rename = "queue_name")]
    pub queue: String,
    /// PRIO.
    #[serde(rename = "prio")]
    pub priority: u32,
    /// STATUS: always [`QUEUE_STATUS`].
    pub status: String,
    /// MAX: QJOB_LIMIT.
    pub max: Option<u32>,
    /// JL/U: UJOB_LIMIT.
    pub jl_u: Option<u32>,
    /// JL/H: HJOB_LIMIT.
    pub jl_h: Option<u32>,
    /// NJOBS: slots of pending, running and suspended jobs.
    pub njobs: u32,
    /// PEND.
    pub pend: u32,
    /// RUN.
    pub run: u32,
    /// SUSP.
    pub susp: u32,
    /// RSV: slots held by a slot reservation of the queue.
    pub rsv: u32,
    /// SCHEDULING POLICIES: FAIRSHARE, PREEMPTIVE, PREEMPTABLE, BACKFILL,
    /// SLOT_RESERVE, TERMINATE_WHEN=PREEMPT.
    pub policies: Vec<String>,
    /// PREEMPTION as configured, if the queue preempts or is preemptable.
    pub preemption: Option<String>,
    /// HOSTS.
    pub hosts: String,
    /// SNDJOBS_TO, for a send queue (`queue@cluster` each).
    pub sndjobs_to: Vec<String>,
    /// MAX_RSCHED_TIME of a send queue, emulated seconds; set only by a
    /// caller that knows the submission side
    /// ([`QueueReport::set_max_rsched_time`]).
    pub max_rsched_time: Option<f64>,
    /// RCVJOBS_FROM, for a receive queue (`allclusters`, or the clusters).
    pub rcvjobs_from: Vec<String>,
    /// IMPT_JOBBKLG of a receive queue (`None`: infinit, or not a receive
    /// queue).
    pub impt_jobbklg: Option<u32>,
    /// The counters a receive queue publishes, as they are now.
    pub counters: Option<QueueCounters>,
    /// The queue's slot pool.
    pub slot_pool: Option<PoolReport>,
    /// The queue's fairshare table.
    pub fairshare: Option<FairshareReport>,
    /// APS_PRIORITY, in its canonical form, for an absolute priority
    /// scheduling queue.
    #[serde(default)]
    pub aps_priority: Option<String>,
    /// QUEUE_GROUP: the queues this APS queue orders with its own.
    #[serde(default)]
    pub queue_group: Vec<String>,
}

impl QueueReport {
    /// Sets MAX_RSCHED_TIME, which only the submission side knows (the
    /// forwarder's configuration of this send queue): `None` for a queue
    /// without one. The cluster's own report leaves it `None`.
    pub fn set_max_rsched_time(&mut self, limit: Option<Duration>) {
        self.max_rsched_time = limit.map(|limit| limit.as_secs_f64());
    }
}

/// A queue's place in its slot pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolReport {
    /// SLOT_POOL.
    pub pool: String,
    /// SLOT_SHARE, percent.
    pub slot_share: u32,
    /// Slots the queue deserves, as of the last dispatch pass.
    pub deserved_slots: u32,
    /// The pool's total: slots in use by its queues plus free slots, capped
    /// by MAX_SLOTS_IN_POOL.
    pub pool_slots: u32,
    /// MAX_SLOTS_IN_POOL.
    pub max_slots_in_pool: Option<u32>,
    /// USE_PRIORITY_IN_POOL.
    pub use_priority_in_pool: bool,
    /// Decayed slot-hours the queue has used.
    pub accumulated_slot_hours: f64,
}

/// A fairshare queue's shares and users.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FairshareReport {
    /// USER_SHARES as configured.
    pub user_shares: String,
    /// One row per user.
    pub users: Vec<UserShareReport>,
}

/// One row of SHARE_INFO_FOR: a share account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserShareReport {
    /// USER/GROUP: a user, a group (its name with a `/`, as LSF prints
    /// groups), or `others`.
    pub user: String,
    /// The group whose share tree the account is in (null at the top
    /// level).
    #[serde(default)]
    pub parent: Option<String>,
    /// The users seen whose jobs count against it directly (a user's own
    /// account: that user; a collective one: its users seen so far).
    #[serde(default)]
    pub users: Vec<String>,
    /// SHARES.
    pub shares: u32,
    /// PRIORITY: the dynamic priority now.
    pub priority: f64,
    /// STARTED: slots of running jobs.
    pub started: u32,
    /// RESERVED: slots reserved.
    pub reserved: u32,
    /// CPU_TIME: decayed CPU time, seconds.
    pub cpu_time: f64,
    /// RUN_TIME: run time of running jobs, seconds.
    pub run_time: f64,
    /// ADJUST: the fairshare adjustment plug-in's value.
    pub adjust: f64,
}

impl UserShareReport {
    /// Whether this is the account of `name`: a user's own, the one a user
    /// counts against, or a group's (`name` or `name/`).
    pub fn answers_for(&self, name: &str) -> bool {
        self.user == name
            || self.user.strip_suffix('/') == Some(name)
            || self.users.iter().any(|user| user == name)
    }
}

impl Cluster {
    /// Every queue at `now` (no earlier than the last [`Cluster::advance`]).
    pub fn report(&self, now: SimTime) -> ClusterReport {
        ClusterReport {
            cluster: self.name.to_string(),
            time: now.as_secs_f64(),
            queues: (0..self.queues.len())
                .map(|queue| self.queue_report(queue, now))
                .collect(),
        }
    }

    /// The queue at `index` at `now`.
    pub fn queue_report(&self, index: QueueIndex, now: SimTime) -> QueueReport {
        let queue = &self.queues[index];
        let config = &queue.config;
        QueueReport {
            queue: config.name.to_string(),
            priority: config.priority,
            status: QUEUE_STATUS.to_owned(),
            max: config.job_limit,
            jl_u: config.user_job_limit,
            jl_h: config.host_job_limit,
            njobs: queue.pending_slots + queue.running_slots + queue.suspended_slots,
            pend: queue.pending_slots,
            run: queue.running_slots,
            susp: queue.suspended_slots,
            rsv: self.reserved_slots(index, None),
            policies: policies(config),
            preemption: config
                .preemption
                .is_enabled()
                .then(|| config.preemption.to_string()),
            hosts: match &config.hosts {
                HostSelection::All => "all".to_owned(),
                HostSelection::Listed(hosts) => hosts.join(" "),
            },
            sndjobs_to: config.send_to.iter().map(ToString::to_string).collect(),
            max_rsched_time: None,
            rcvjobs_from: match &config.receive_from {
                None => Vec::new(),
                Some(ReceiveFrom::All) => vec!["allclusters".to_owned()],
                Some(ReceiveFrom::Listed(clusters)) => {
                    clusters.iter().map(ToString::to_string).collect()
                }
            },
            impt_jobbklg: config
                .impt_jobbklg
                .filter(|_| config.receive_from.is_some()),
            counters: config
                .receive_from
                .is_some()
                .then(|| self.queue_counters(index, now)),
            slot_pool: self.pool_report(index, now),
            fairshare: self.fairshare_report(index, now),
            aps_priority: config.aps_priority.as_ref().map(ToString::to_string),
            queue_group: config.queue_group.iter().map(ToString::to_string).collect(),
        }
    }

    /// The queue's place in its slot pool, if it has one.
    fn pool_report(&self, index: QueueIndex, now: SimTime) -> Option<PoolReport> {
        let queue = &self.queues[index];
        let pool = self.queues.pool(queue.pool?);
        Some(PoolReport {
            pool: pool.name.clone(),
            slot_share: queue.share(),
            deserved_slots: if self.cycle.pass == 0 {
                0
            } else {
                queue.deserved
            },
            pool_slots: pool.total,
            max_slots_in_pool: pool.max_slots,
            use_priority_in_pool: pool.use_priority,
            accumulated_slot_hours: queue.usage.value_at(now, self.policy.hist_hours),
        })
    }

    /// The queue's fairshare table, if it is a fairshare queue: every
    /// share account — users and groups named in its shares, and every
    /// user it has seen — depth first down the share tree.
    fn fairshare_report(&self, index: QueueIndex, now: SimTime) -> Option<FairshareReport> {
        let tree = &self.queues[index].fairshare.as_ref()?.tree;
        let mut rows = Vec::new();
        let mut stack: Vec<NodeId> = tree.node(ROOT).children.iter().rev().copied().collect();
        while let Some(node) = stack.pop() {
            rows.push(self.share_row(index, node, now));
            stack.extend(tree.node(node).children.iter().rev().copied());
        }
        Some(FairshareReport {
            user_shares: tree.shares().to_string(),
            users: rows,
        })
    }

    fn share_row(&self, queue: QueueIndex, node: NodeId, now: SimTime) -> UserShareReport {
        let tree = &self.queues[queue]
            .fairshare
            .as_ref()
            .expect("a fairshare queue")
            .tree;
        let share = tree.node(node);
        let (priority, usage) = self.node_priority(queue, node, now).unwrap_or_default();
        let row_name = |node: &ShareNode| match node.kind {
            NodeKind::User => node.name.clone(),
            NodeKind::Collective if node.name == OTHERS_SHARE_USER => node.name.clone(),
            _ => format!("{}/", node.name),
        };
        let mut users: Vec<String> = self.queues[queue]
            .users
            .iter()
            .filter(|(_, state)| state.leaf == Some(node))
            .map(|(&user, _)| self.users[user].name.to_string())
            .collect();
        users.sort_unstable();
        UserShareReport {
            user: row_name(share),
            users,
            parent: share
                .parent
                .filter(|&parent| parent != ROOT)
                .map(|parent| row_name(tree.node(parent))),
            shares: share.account.shares,
            priority,
            started: share.account.running_slots,
            reserved: usage.job_slots as u32 - share.account.running_slots,
            cpu_time: usage.cpu_time * 3600.0,
            run_time: usage.run_time * 3600.0,
            adjust: usage.fairshare_adjustment,
        }
    }

    /// The dynamic priority in the queue at `index` at `now` of `name`'s
    /// share account: a user's (the account its jobs count against, which
    /// may be a group's), or a group's named in the queue's share tree; or,
    /// for a user the queue has not seen, what it would be with no use.
    /// `None` if the queue has no fairshare or the name no shares in it.
    pub fn dynamic_priority_of(&self, index: QueueIndex, name: &str, now: SimTime) -> Option<f64> {
        let queue = &self.queues[index];
        let tree = &queue.fairshare.as_ref()?.tree;
        let leaf = self
            .users
            .id_of(name)
            .and_then(|id| queue.users.get(&id))
            .and_then(|user| user.leaf);
        let group = || {
            tree.nodes().iter().position(|node| {
                node.name == name && matches!(node.kind, NodeKind::Interior | NodeKind::Collective)
            })
        };
        if let Some(node) = leaf.or_else(group) {
            return self
                .node_priority(index, node, now)
                .map(|(priority, _)| priority);
        }
        let shares = tree.leaf_shares(name, self.users.directory())?;
        self.account_priority(index, &ShareAccount::new(shares), 0, now)
            .map(|(priority, _)| priority)
    }
}

/// SCHEDULING POLICIES of a queue.
fn policies(config: &QueueConfig) -> Vec<String> {
    [
        (config.aps_priority.is_some(), "APS_PRIORITY"),
        (config.fairshare.is_some(), "FAIRSHARE"),
        (config.slot_pool.is_some(), "QUEUE_BASED_FAIRSHARE"),
        (config.preemption.preemptive.is_some(), "PREEMPTIVE"),
        (config.preemption.preemptable.is_some(), "PREEMPTABLE"),
        (config.backfill, "BACKFILL"),
        (config.slot_reserve.is_some(), "SLOT_RESERVE"),
        (config.terminate_when_preempt, "TERMINATE_WHEN=PREEMPT"),
    ]
    .into_iter()
    .filter(|&(set, _)| set)
    .map(|(_, policy)| policy.to_owned())
    .collect()
}
