//! Absolute priority scheduling's configuration: each APS queue with its
//! QUEUE_GROUP becomes a group, and the settings seed 001 says APS cannot
//! be used with are refused ("Fair share"): queue-based fairshare
//! (SLOT_POOL/SLOT_SHARE) here, DISPATCH_ORDER=QUEUE and cross-queue
//! fairshare in `setup::dispatch_order`. mcfed models no host-partition
//! fairshare or time-based SLA, so neither can conflict. Each queue's own
//! settings are checked in configuration order (the first fault found is
//! the one reported), CHUNK_JOB_SIZE in `setup::chunks`.

use mcfed_protocol::QueueName;
use rustc_hash::FxHashMap;

use crate::aps::ApsGroup;
use crate::config::{ConfigError, ConfigWarning, QueueConfig};
use crate::job::QueueIndex;

/// The APS groups of `queues`, and each queue's group.
pub(super) fn aps_groups(
    queues: &[QueueConfig],
    by_name: &FxHashMap<QueueName, QueueIndex>,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(Vec<ApsGroup>, Vec<Option<usize>>), ConfigError> {
    let mut groups = Vec::new();
    let mut group_of: Vec<Option<usize>> = vec![None; queues.len()];
    for (index, queue) in queues.iter().enumerate() {
        check_queue(index, queue, warnings)?;
        let Some(aps) = &queue.aps_priority else {
            if !queue.queue_group.is_empty() {
                return Err(ConfigError::queue(
                    index,
                    "QUEUE_GROUP",
                    format!(
                        "queue `{}` has a QUEUE_GROUP but no APS_PRIORITY: QUEUE_GROUP orders several queues' jobs by the APS_PRIORITY of the queue that names them",
                        queue.name
                    ),
                ));
            }
            continue;
        };
        let group = groups.len();
        let mut members = vec![index];
        for name in &queue.queue_group {
            let member = member_of(index, queue, name, queues, by_name, &group_of)?;
            if !members.contains(&member) {
                members.push(member);
            }
        }
        for &member in &members {
            check_member(index, queue, member, queues)?;
            group_of[member] = Some(group);
        }
        groups.push(ApsGroup {
            parent: index,
            members,
            aps: aps.resolve(),
        });
    }
    Ok((groups, group_of))
}

/// One queue's own settings, in this order: its ordering across queues
/// (DISPATCH_ORDER, FAIRSHARE_QUEUES), what APS cannot be used with, and
/// CHUNK_JOB_SIZE.
fn check_queue(
    index: QueueIndex,
    queue: &QueueConfig,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), ConfigError> {
    super::dispatch_order::check(index, queue, warnings)?;
    if queue.aps_priority.is_some() && queue.slot_pool.is_some() {
        return Err(ConfigError::queue(
            index,
            "APS_PRIORITY",
            format!(
                "queue `{}`: APS_PRIORITY cannot be used with queue-based fairshare (SLOT_POOL/SLOT_SHARE)",
                queue.name
            ),
        ));
    }
    super::chunks::check(index, queue)
}

/// The queue named `name` in the QUEUE_GROUP of APS queue `parent`.
fn member_of(
    parent: QueueIndex,
    queue: &QueueConfig,
    name: &QueueName,
    queues: &[QueueConfig],
    by_name: &FxHashMap<QueueName, QueueIndex>,
    group_of: &[Option<usize>],
) -> Result<QueueIndex, ConfigError> {
    let fail = |message: String| Err(ConfigError::queue(parent, "QUEUE_GROUP", message));
    let Some(&member) = by_name.get(name) else {
        return fail(format!(
            "queue `{}` names unknown queue `{name}` in QUEUE_GROUP",
            queue.name
        ));
    };
    if member == parent {
        return Ok(member);
    }
    if queues[member].aps_priority.is_some() {
        return fail(format!(
            "queue `{name}` has its own APS_PRIORITY: a queue of `{}`'s QUEUE_GROUP is ordered by `{}`'s",
            queue.name, queue.name
        ));
    }
    if group_of[member].is_some() {
        return fail(format!(
            "queue `{name}` is in the QUEUE_GROUP of another APS queue already"
        ));
    }
    Ok(member)
}

/// A queue of an APS group cannot be used with what APS cannot, and a
/// group's queues are all send queues or all local ones.
fn check_member(
    parent: QueueIndex,
    queue: &QueueConfig,
    member: QueueIndex,
    queues: &[QueueConfig],
) -> Result<(), ConfigError> {
    let other = &queues[member];
    let fail = |message: String| Err(ConfigError::queue(parent, "QUEUE_GROUP", message));
    if member != parent {
        if other.dispatch_order_queue {
            return fail(format!(
                "queue `{}` of the QUEUE_GROUP sets DISPATCH_ORDER=QUEUE, which APS cannot be used with",
                other.name
            ));
        }
        if other.slot_pool.is_some() {
            return fail(format!(
                "queue `{}` of the QUEUE_GROUP is in a slot pool: APS cannot be used with queue-based fairshare (SLOT_POOL/SLOT_SHARE)",
                other.name
            ));
        }
    }
    if other.send_to.is_empty() != queue.send_to.is_empty() {
        return fail(format!(
            "queue `{}` and `{}` are not both send queues (or both local): a QUEUE_GROUP orders jobs that are scheduled in one place",
            queue.name, other.name
        ));
    }
    Ok(())
}
