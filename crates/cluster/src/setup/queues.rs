//! The host sets queues dispatch to (queues with the same hosts share
//! one), and the queues themselves, with what each offers (resources,
//! slots) and the policies resolved for it.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::config::{ConfigError, HostSelection, QueueConfig, SchedulingParams};
use crate::fairshare::{DecayingTotal, GroupDirectory, ShareTree};
use crate::hostset::HostSet;
use crate::job::{HostIndex, QueueIndex};
use crate::scheduler::{HostBook, PendingJobs, Queue, QueueFairshare};

use super::preemption::Relation;

/// The host sets, and each queue's set: queues with the same hosts share
/// one.
pub(super) fn host_sets(
    queues: &[QueueConfig],
    host_by_name: &FxHashMap<&str, HostIndex>,
    host_count: usize,
) -> Result<(Vec<HostSet>, Vec<usize>), ConfigError> {
    let mut set_members: Vec<Vec<HostIndex>> = Vec::new();
    let mut queue_sets = Vec::with_capacity(queues.len());
    for (index, queue) in queues.iter().enumerate() {
        let members = queue_hosts(index, queue, host_by_name, host_count)?;
        let set = match set_members.iter().position(|m| *m == members) {
            Some(set) => set,
            None => {
                set_members.push(members);
                set_members.len() - 1
            }
        };
        queue_sets.push(set);
    }
    let host_sets = set_members
        .into_iter()
        .map(|members| HostSet::new(members, host_count))
        .collect();
    Ok((host_sets, queue_sets))
}

/// The hosts of queue `index` (HOSTS), sorted.
fn queue_hosts(
    index: QueueIndex,
    queue: &QueueConfig,
    host_by_name: &FxHashMap<&str, HostIndex>,
    host_count: usize,
) -> Result<Vec<HostIndex>, ConfigError> {
    let members: Vec<HostIndex> = match &queue.hosts {
        HostSelection::All => (0..host_count).collect(),
        HostSelection::Listed(names) => {
            let mut members = Vec::with_capacity(names.len());
            for host in names {
                let Some(&host_index) = host_by_name.get(host.as_str()) else {
                    return Err(ConfigError::queue(
                        index,
                        "HOSTS",
                        format!("queue `{}` uses unknown host `{host}`", queue.name),
                    ));
                };
                if !members.contains(&host_index) {
                    members.push(host_index);
                }
            }
            members.sort_unstable();
            members
        }
    };
    // A pure send queue (SNDJOBS_TO) runs nothing here and needs no
    // hosts.
    if members.is_empty() && queue.send_to.is_empty() {
        return Err(ConfigError::queue(
            index,
            "HOSTS",
            format!("queue `{}` has no hosts", queue.name),
        ));
    }
    Ok(members)
}

/// The queues, with no job yet.
pub(super) fn queues(
    configs: Vec<QueueConfig>,
    queue_sets: Vec<usize>,
    relation: Relation,
    pool_of: Vec<Option<usize>>,
    hosts: &HostBook,
    params: &SchedulingParams,
    groups: &GroupDirectory,
) -> Vec<Queue> {
    configs
        .into_iter()
        .zip(queue_sets)
        .zip(relation.victims_of.into_iter().zip(relation.preemptors_of))
        .zip(pool_of)
        .map(|(((config, host_set), (victims, preemptors)), pool)| {
            let mut queue = queue(config, host_set, hosts, params, groups);
            queue.victims = victims;
            queue.preemptors = preemptors;
            queue.pool = pool;
            queue
        })
        .collect()
}

/// Queue `config` on host set `host_set`, with no job, no preemption
/// relation and no pool yet.
fn queue(
    config: QueueConfig,
    host_set: usize,
    hosts: &HostBook,
    params: &SchedulingParams,
    groups: &GroupDirectory,
) -> Queue {
    let members = &hosts.set(host_set).members;
    let mut resources: Vec<String> = members
        .iter()
        .flat_map(|&host| hosts[host].config.offered())
        .collect();
    resources.sort_unstable();
    resources.dedup();
    let configured_slots = members
        .iter()
        .map(|&host| u64::from(hosts[host].config.max_slots))
        .sum();
    let gpu_hosts = members
        .iter()
        .copied()
        .filter(|&host| hosts[host].config.gpus > 0)
        .collect();
    let fairshare = config.fairshare.clone().map(|shares| QueueFairshare {
        tree: ShareTree::new(shares, groups),
        factors: config
            .fairshare_factors
            .over(&params.fairshare_factors)
            .resolve(),
    });
    let guards = config.preempt_guards.over(&params.preempt_guards);
    Queue {
        config,
        host_set,
        pending: PendingJobs::new(false),
        suspended: BTreeMap::new(),
        running_order: BTreeSet::new(),
        running_slots: 0,
        suspended_slots: 0,
        pending_slots: 0,
        imported_pending_jobs: 0,
        promised_slots: 0,
        stopped: None,
        victims: Vec::new(),
        preemptors: Vec::new(),
        resources,
        configured_slots,
        gpu_hosts,
        users: FxHashMap::default(),
        fairshare,
        pool: None,
        deserved: u32::MAX,
        usage: DecayingTotal::default(),
        guards,
        reserve_cooldown: None,
        aps_group: None,
        resize_pending: BTreeMap::new(),
    }
}
