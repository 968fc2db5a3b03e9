//! Queue-based fairshare slot pools (seed 000): which queues share a pool,
//! the pool's settings read from its first queue, and the checks and
//! warnings for pool queues.

use crate::config::{ConfigError, ConfigWarning, QueueConfig, SlotPoolConfig};
use crate::job::QueueIndex;
use crate::scheduler::Pool;

/// The slot pools, and each queue's pool.
pub(super) fn slot_pools(
    queues: &[QueueConfig],
    queue_sets: &[usize],
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(Vec<Pool>, Vec<Option<usize>>), ConfigError> {
    let mut pools: Vec<Pool> = Vec::new();
    let mut pool_of: Vec<Option<usize>> = vec![None; queues.len()];
    for (index, queue) in queues.iter().enumerate() {
        let Some(member) = &queue.slot_pool else {
            continue;
        };
        check_member(index, queue, member, warnings)?;
        match pools.iter().position(|pool| pool.name == member.pool) {
            Some(pool_index) => {
                let pool = &mut pools[pool_index];
                let first = &queues[pool.queues[0]];
                join(
                    index,
                    queue,
                    queue_sets[index],
                    member,
                    pool,
                    first,
                    warnings,
                )?;
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
    Ok((pools, pool_of))
}

/// Checks pool queue `index` on its own: its SLOT_SHARE, no PREEMPTION,
/// and (a warning) no SLOT_RESERVE.
fn check_member(
    index: QueueIndex,
    queue: &QueueConfig,
    member: &SlotPoolConfig,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), ConfigError> {
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
    Ok(())
}

/// Queue `index` (on host set `host_set`) joins `pool`, whose first queue
/// is `first`: it must use the same hosts, and the pool's settings are
/// read from the first queue (a different value is ignored with a
/// warning).
fn join(
    index: QueueIndex,
    queue: &QueueConfig,
    host_set: usize,
    member: &SlotPoolConfig,
    pool: &mut Pool,
    first: &QueueConfig,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), ConfigError> {
    if host_set != pool.host_set {
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
    Ok(())
}
