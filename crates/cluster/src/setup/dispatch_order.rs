//! How a queue's jobs are ordered across queues: DISPATCH_ORDER=QUEUE
//! and FAIRSHARE_QUEUES, the switches of cross-queue fairshare, which mcfed
//! does not model (obsolete since LSF 7.0; QUEUE_GROUP with APS_PRIORITY
//! replaces it). Seed 001 ("Fair share"): APS cannot be used with either,
//! which is refused; without APS, FAIRSHARE_QUEUES is refused and
//! DISPATCH_ORDER=QUEUE, alone, has no effect (a warning).

use crate::config::{ConfigError, ConfigWarning, QueueConfig};
use crate::job::QueueIndex;

/// Queue `index`'s DISPATCH_ORDER and FAIRSHARE_QUEUES.
pub(super) fn check(
    index: QueueIndex,
    queue: &QueueConfig,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), ConfigError> {
    let name = &queue.name;
    if !queue.fairshare_queues.is_empty() {
        let message = if queue.aps_priority.is_some() {
            format!(
                "queue `{name}`: APS_PRIORITY cannot be used with cross-queue fairshare (FAIRSHARE_QUEUES); QUEUE_GROUP, which replaces FAIRSHARE_QUEUES (obsolete since LSF 7.0), orders several queues' jobs by APS"
            )
        } else {
            format!(
                "queue `{name}`: cross-queue fairshare (FAIRSHARE_QUEUES) is obsolete since LSF 7.0 and mcfed does not model it; QUEUE_GROUP with APS_PRIORITY orders several queues' jobs together"
            )
        };
        return Err(ConfigError::queue(index, "FAIRSHARE_QUEUES", message));
    }
    if !queue.dispatch_order_queue {
        return Ok(());
    }
    if queue.aps_priority.is_some() {
        return Err(ConfigError::queue(
            index,
            "DISPATCH_ORDER",
            format!("queue `{name}`: APS_PRIORITY cannot be used with DISPATCH_ORDER=QUEUE"),
        ));
    }
    warnings.push(ConfigWarning::queue(
        index,
        "DISPATCH_ORDER",
        format!(
            "queue `{name}`: DISPATCH_ORDER=QUEUE only orders cross-queue fairshare, which mcfed does not model: it has no effect"
        ),
    ));
    Ok(())
}
