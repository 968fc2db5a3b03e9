//! Building a [`Cluster`] from its configuration: every check that names
//! the host, queue, user or parameter at fault, the host sets shared by
//! queues, the preemption relation, slot pools, fairshare factors, user
//! limits, and the warnings LSF gives for settings it advises against.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use mcfed_protocol::QueueName;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::config::{
    ClusterConfig, ConfigError, ConfigLocation, ConfigWarning, DEFAULT_SLEEP_TIME, DEFAULT_USER,
    HostSelection, QueueConfig,
};
use crate::fairshare::{DecayingTotal, FairshareOverrides};
use crate::hostset::HostSet;
use crate::job::{HostIndex, QueueIndex};
use crate::limits::Held;
use crate::preemption::{QueueFacts, Scope, can_preempt, preference};
use crate::scheduler::{Cluster, Group, Host, Policy, Pool, Queue, QueueFairshare, Tracking};

pub(crate) fn build(config: ClusterConfig) -> Result<Cluster, ConfigError> {
    let ClusterConfig {
        name,
        hosts: host_configs,
        queues: queue_configs,
        update_interval,
        params,
        users: user_configs,
        user_groups,
    } = config;
    let mut warnings = Vec::new();

    let mut host_by_name: FxHashMap<&str, HostIndex> = FxHashMap::default();
    for (index, host) in host_configs.iter().enumerate() {
        if host.max_slots == 0 {
            return Err(ConfigError::host(
                index,
                "MXJ",
                "a host needs at least one slot",
            ));
        }
        if host.processors == Some(0) {
            return Err(ConfigError::host(
                index,
                "ncpus",
                "a host needs at least one processor",
            ));
        }
        if host.user_slot_limit == Some(0) {
            return Err(ConfigError::host(index, "JL/U", "JL/U must be at least 1"));
        }
        if host_by_name.insert(host.name.as_str(), index).is_some() {
            return Err(ConfigError::host(
                index,
                "name",
                format!("host `{}` is defined twice", host.name),
            ));
        }
    }

    let mut queue_by_name: FxHashMap<QueueName, QueueIndex> = FxHashMap::default();
    for (index, queue) in queue_configs.iter().enumerate() {
        check_queue(index, queue)?;
        if queue_by_name.insert(queue.name.clone(), index).is_some() {
            return Err(ConfigError::queue(
                index,
                "name",
                format!("queue `{}` is defined twice", queue.name),
            ));
        }
    }
    check_factors(&params.fairshare_factors, |field| ConfigLocation::Cluster {
        field,
    })?;
    if let crate::fairshare::AdjustmentPlugin::Memory { threshold } = params.fairshare_adjustment {
        if !(threshold.is_finite() && threshold > 0.0) {
            return Err(ConfigError {
                location: ConfigLocation::Cluster {
                    field: "FAIRSHARE_ADJUSTMENT_THRESHOLD",
                },
                message: "the memory plug-in's THRESHOLD must be a positive number".into(),
            });
        }
    }
    if params.sleep_time.is_some_and(|time| time.is_zero()) {
        return Err(ConfigError {
            location: ConfigLocation::Cluster {
                field: "MBD_SLEEP_TIME",
            },
            message: "MBD_SLEEP_TIME must be longer than zero".into(),
        });
    }

    // Host sets, shared by queues with the same hosts.
    let mut set_members: Vec<Vec<HostIndex>> = Vec::new();
    let mut queue_sets = Vec::with_capacity(queue_configs.len());
    for (index, queue) in queue_configs.iter().enumerate() {
        let members: Vec<HostIndex> = match &queue.hosts {
            HostSelection::All => (0..host_configs.len()).collect(),
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
        let set = match set_members.iter().position(|m| *m == members) {
            Some(set) => set,
            None => {
                set_members.push(members);
                set_members.len() - 1
            }
        };
        queue_sets.push(set);
    }
    let mut host_sets: Vec<HostSet> = set_members
        .into_iter()
        .map(|members| HostSet::new(members, host_configs.len()))
        .collect();
    let mut hosts: Vec<Host> = host_configs
        .into_iter()
        .map(|config| Host {
            config,
            used: 0,
            jobs: Vec::new(),
            host_sets: Vec::new(),
        })
        .collect();
    for (set_index, set) in host_sets.iter_mut().enumerate() {
        for &host in &set.members.clone() {
            hosts[host].host_sets.push(set_index);
            if !hosts[host].config.closed {
                let slots = hosts[host].config.max_slots;
                set.add_open_host(host, slots, slots);
            }
        }
    }

    // The preemption relation. Jobs of backfill queues can be preempted
    // only with PREEMPT_JOBTYPE=BACKFILL; jobs of pool queues never (seed
    // 000: pool queues cannot be preemptable, and a PREEMPTIVE queue's
    // "every lower queue" does not reach them either).
    let queue_count = queue_configs.len();
    for (index, queue) in queue_configs.iter().enumerate() {
        check_preemption_lists(index, queue, &queue_configs, &queue_by_name)?;
    }
    let mut victims_of: Vec<Vec<QueueIndex>> = vec![Vec::new(); queue_count];
    let mut preemptors_of: Vec<Vec<QueueIndex>> = vec![Vec::new(); queue_count];
    fn facts(queue: &QueueConfig) -> QueueFacts<'_> {
        QueueFacts {
            name: &queue.name,
            priority: queue.priority,
            preemption: &queue.preemption,
        }
    }
    for (p, preemptor) in queue_configs.iter().enumerate() {
        for (v, victim) in queue_configs.iter().enumerate() {
            if can_preempt(facts(preemptor), facts(victim))
                && (!victim.backfill || params.preempt_backfill)
                && victim.slot_pool.is_none()
            {
                victims_of[p].push(v);
                preemptors_of[v].push(p);
            }
        }
        // Seed 003: queues with a preference number first, higher first;
        // then lower priority first; configuration order last.
        victims_of[p].sort_by_key(|&v| {
            let victim = &queue_configs[v];
            let preference = preference(&preemptor.preemption, &victim.name);
            (
                preference.is_none(),
                Reverse(preference),
                victim.priority,
                v,
            )
        });
    }
    let preemption_enabled = queue_configs
        .iter()
        .any(|queue| queue.preemption.is_enabled());
    warnings.extend(backfill_preemption_warnings(
        &queue_configs,
        &victims_of,
        params.preempt_backfill,
    ));

    // Slot pools.
    let mut pools: Vec<Pool> = Vec::new();
    let mut pool_of: Vec<Option<usize>> = vec![None; queue_count];
    for (index, queue) in queue_configs.iter().enumerate() {
        let Some(member) = &queue.slot_pool else {
            continue;
        };
        if !(1..=100).contains(&member.share) {
            return Err(ConfigError::queue(
                index,
                "SLOT_SHARE",
                "SLOT_SHARE must be between 1 and 100 (percent)",
            ));
        }
        if queue.preemption.is_enabled() {
            return Err(ConfigError::queue(
                index,
                "PREEMPTION",
                format!(
                    "queue `{}` is in slot pool `{}`: queues of a queue-based fairshare pool cannot be preemptive or preemptable",
                    queue.name, member.pool
                ),
            ));
        }
        if queue.slot_reserve.is_some() {
            warnings.push(ConfigWarning::queue(
                index,
                "SLOT_RESERVE",
                format!(
                    "queue `{}` is in slot pool `{}`: slot reservation should not be used with queue-based fairshare",
                    queue.name, member.pool
                ),
            ));
        }
        match pools.iter().position(|pool| pool.name == member.pool) {
            Some(pool_index) => {
                let pool = &mut pools[pool_index];
                let first = &queue_configs[pool.queues[0]];
                if queue_sets[index] != pool.host_set {
                    return Err(ConfigError::queue(
                        index,
                        "HOSTS",
                        format!(
                            "queue `{}` is in slot pool `{}` but does not use the same hosts as `{}`: every queue of a pool must use the same hosts",
                            queue.name, member.pool, first.name
                        ),
                    ));
                }
                for (field, differs) in [
                    (
                        "MAX_SLOTS_IN_POOL",
                        member.max_slots.is_some() && member.max_slots != pool.max_slots,
                    ),
                    (
                        "USE_PRIORITY_IN_POOL",
                        member.use_priority.is_some()
                            && member.use_priority.unwrap_or(false) != pool.use_priority,
                    ),
                ] {
                    if differs {
                        warnings.push(ConfigWarning::queue(
                            index,
                            field,
                            format!(
                                "{field} of slot pool `{}` is read from its first queue `{}`; this value is ignored",
                                member.pool, first.name
                            ),
                        ));
                    }
                }
                pool.queues.push(index);
                pool_of[index] = Some(pool_index);
            }
            None => {
                pool_of[index] = Some(pools.len());
                pools.push(Pool {
                    name: member.pool.clone(),
                    queues: vec![index],
                    host_set: queue_sets[index],
                    max_slots: member.max_slots,
                    use_priority: member.use_priority.unwrap_or(false),
                    total: 0,
                    running: 0,
                });
            }
        }
    }

    // Users and groups (lsb.users).
    let (groups, user_limits, default_limits) = user_tables(&user_configs, &user_groups)?;

    let tracking = Tracking {
        host_user: hosts
            .iter()
            .any(|host| host.config.user_slot_limit.is_some())
            || user_configs
                .iter()
                .filter(|entry| !groups.iter().any(|group| group.name == entry.name))
                .any(|entry| entry.slots_per_processor.is_some()),
        host_group: groups
            .iter()
            .any(|group| group.slots_per_processor.is_some()),
        host_queue: queue_configs
            .iter()
            .any(|queue| queue.host_job_limit.is_some()),
    };
    let policy = Policy {
        preemption_enabled,
        preempt_for: params.preempt_for,
        hist_hours: params.fairshare_factors.resolve().hist_hours,
        sleep_time: params.sleep_time.unwrap_or(DEFAULT_SLEEP_TIME),
    };

    let queues: Vec<Queue> = queue_configs
        .into_iter()
        .zip(queue_sets)
        .zip(victims_of.into_iter().zip(preemptors_of))
        .zip(pool_of)
        .map(|(((config, host_set), (victims, preemptors)), pool)| {
            let members = &host_sets[host_set].members;
            let mut resources: Vec<String> = members
                .iter()
                .flat_map(|&host| hosts[host].config.resources.iter().cloned())
                .collect();
            resources.sort_unstable();
            resources.dedup();
            let configured_slots = members
                .iter()
                .map(|&host| u64::from(hosts[host].config.max_slots))
                .sum();
            let fairshare = config.fairshare.clone().map(|shares| QueueFairshare {
                shares,
                factors: config
                    .fairshare_factors
                    .over(&params.fairshare_factors)
                    .resolve(),
            });
            let guards = config.preempt_guards.over(&params.preempt_guards);
            Queue {
                config,
                host_set,
                pending: BTreeMap::new(),
                suspended: BTreeMap::new(),
                running_order: BTreeSet::new(),
                running_slots: 0,
                suspended_slots: 0,
                pending_slots: 0,
                imported_pending_jobs: 0,
                stopped: None,
                victims,
                preemptors,
                resources,
                configured_slots,
                users: FxHashMap::default(),
                fairshare,
                pool,
                deserved: u32::MAX,
                usage: DecayingTotal::default(),
                guards,
                reserve_cooldown: None,
            }
        })
        .collect();

    Ok(Cluster::assemble(
        name,
        hosts,
        queues,
        host_sets,
        groups,
        user_limits,
        default_limits,
        pools,
        policy,
        tracking,
        params.fairshare_adjustment.build(),
        update_interval,
        warnings,
    ))
}

fn check_queue(index: usize, queue: &QueueConfig) -> Result<(), ConfigError> {
    for (field, value) in [
        ("QJOB_LIMIT", queue.job_limit),
        ("UJOB_LIMIT", queue.user_job_limit),
        ("HJOB_LIMIT", queue.host_job_limit),
        ("SLOT_RESERVE", queue.slot_reserve),
    ] {
        if value == Some(0) {
            return Err(ConfigError::queue(
                index,
                field,
                format!("{field} must be at least 1"),
            ));
        }
    }
    check_factors(&queue.fairshare_factors, |field| ConfigLocation::Queue {
        index,
        field,
    })
}

fn check_factors(
    factors: &FairshareOverrides,
    location: impl Fn(&'static str) -> ConfigLocation,
) -> Result<(), ConfigError> {
    for (field, value) in factors.named_values() {
        if let Some(value) = value {
            if !(value.is_finite() && value >= 0.0) {
                return Err(ConfigError {
                    location: location(field),
                    message: format!("{field} must be a number of at least 0 (got {value})"),
                });
            }
        }
    }
    Ok(())
}

type LimitPair = (Option<u32>, Option<f64>);

#[allow(clippy::type_complexity)]
fn user_tables(
    users: &[crate::config::UserLimitConfig],
    user_groups: &[crate::config::UserGroupConfig],
) -> Result<(Vec<Group>, FxHashMap<String, LimitPair>, LimitPair), ConfigError> {
    let mut groups: Vec<Group> = Vec::with_capacity(user_groups.len());
    for (index, group) in user_groups.iter().enumerate() {
        if group.name == DEFAULT_USER || group.name.is_empty() {
            return Err(ConfigError::user_group(
                index,
                "name",
                format!("`{}` cannot name a user group", group.name),
            ));
        }
        if groups.iter().any(|other| other.name == group.name) {
            return Err(ConfigError::user_group(
                index,
                "name",
                format!("user group `{}` is defined twice", group.name),
            ));
        }
        if group.members.is_empty() {
            return Err(ConfigError::user_group(
                index,
                "GROUP_MEMBER",
                format!("user group `{}` has no members", group.name),
            ));
        }
        groups.push(Group {
            name: group.name.clone(),
            members: group.members.clone(),
            max_jobs: None,
            slots_per_processor: None,
            held: Held::default(),
        });
    }
    let mut seen = FxHashSet::default();
    let mut user_limits = FxHashMap::default();
    let mut default_limits = (None, None);
    for (index, entry) in users.iter().enumerate() {
        if !seen.insert(entry.name.as_str()) {
            return Err(ConfigError::user(
                index,
                "name",
                format!("`{}` has two entries in lsb.users", entry.name),
            ));
        }
        if let Some(per_processor) = entry.slots_per_processor {
            if !(per_processor.is_finite() && per_processor > 0.0) {
                return Err(ConfigError::user(
                    index,
                    "JL/P",
                    "JL/P must be a positive number of slots per processor",
                ));
            }
        }
        let limits = (entry.max_jobs, entry.slots_per_processor);
        if entry.name == DEFAULT_USER {
            default_limits = limits;
        } else if let Some(group) = groups.iter_mut().find(|group| group.name == entry.name) {
            group.max_jobs = entry.max_jobs;
            group.slots_per_processor = entry.slots_per_processor;
        } else {
            user_limits.insert(entry.name.clone(), limits);
        }
    }
    Ok((groups, user_limits, default_limits))
}

/// Seed 003: a preemptive queue that can preempt jobs of a backfill queue
/// may delay a higher-priority queue's reserved jobs; LSF allows it with a
/// warning.
fn backfill_preemption_warnings(
    queues: &[QueueConfig],
    victims_of: &[Vec<QueueIndex>],
    preempt_backfill: bool,
) -> Vec<ConfigWarning> {
    if !preempt_backfill {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (index, preemptor) in queues.iter().enumerate() {
        let Some(backfill) = victims_of[index]
            .iter()
            .map(|&victim| &queues[victim])
            .find(|victim| victim.backfill)
        else {
            continue;
        };
        let Some(reserving) = queues
            .iter()
            .find(|queue| queue.slot_reserve.is_some() && queue.priority > preemptor.priority)
        else {
            continue;
        };
        warnings.push(ConfigWarning::queue(
            index,
            "PREEMPTION",
            format!(
                "queue `{}` (PRIORITY {}) can preempt backfill jobs of `{}`; this may delay jobs with slot reservations in the higher-priority queue `{}` (PRIORITY {})",
                preemptor.name,
                preemptor.priority,
                backfill.name,
                reserving.name,
                reserving.priority
            ),
        ));
    }
    warnings
}

/// Checks that a queue's PREEMPTION lists name queues of the cluster with
/// the right priority relation.
fn check_preemption_lists(
    index: usize,
    queue: &QueueConfig,
    all: &[QueueConfig],
    by_name: &FxHashMap<QueueName, QueueIndex>,
) -> Result<(), ConfigError> {
    let lookup = |name: &QueueName| {
        by_name.get(name).map(|&i| &all[i]).ok_or_else(|| {
            ConfigError::queue(
                index,
                "PREEMPTION",
                format!(
                    "queue `{}` names unknown queue `{name}` in PREEMPTION",
                    queue.name
                ),
            )
        })
    };
    if let Some(Scope::Listed(targets)) = &queue.preemption.preemptive {
        for target in targets {
            let other = lookup(&target.queue)?;
            if other.priority >= queue.priority {
                return Err(ConfigError::queue(
                    index,
                    "PREEMPTION",
                    format!(
                        "queue `{}` (PRIORITY {}) lists `{}` (PRIORITY {}) as preemptable, but a preemptive queue can only preempt lower-priority queues",
                        queue.name, queue.priority, other.name, other.priority
                    ),
                ));
            }
        }
    }
    if let Some(Scope::Listed(preemptors)) = &queue.preemption.preemptable {
        for name in preemptors {
            let other = lookup(name)?;
            if other.priority <= queue.priority {
                return Err(ConfigError::queue(
                    index,
                    "PREEMPTION",
                    format!(
                        "queue `{}` (PRIORITY {}) lists `{}` (PRIORITY {}) as a preemptor, but only higher-priority queues can preempt it",
                        queue.name, queue.priority, other.name, other.priority
                    ),
                ));
            }
        }
    }
    Ok(())
}
