//! CHUNK_JOB_SIZE (seed 001, "Chunk jobs"): at least 1 (1: no chunks),
//! and only in a queue whose jobs run here — a send queue's jobs run
//! elsewhere, so its receive queue is the one to chunk them.

use crate::config::{ConfigError, QueueConfig};
use crate::job::QueueIndex;

/// Queue `index`'s CHUNK_JOB_SIZE.
pub(super) fn check(index: QueueIndex, queue: &QueueConfig) -> Result<(), ConfigError> {
    let name = &queue.name;
    if queue.chunk_job_size == Some(0) {
        return Err(ConfigError::queue(
            index,
            "CHUNK_JOB_SIZE",
            format!("queue `{name}`: CHUNK_JOB_SIZE must be at least 1 (1: no chunks)"),
        ));
    }
    if queue.chunk_job_size.is_some_and(|size| size > 1) && !queue.send_to.is_empty() {
        return Err(ConfigError::queue(
            index,
            "CHUNK_JOB_SIZE",
            format!(
                "queue `{name}` is a send queue: its jobs run elsewhere, so it dispatches no chunks (give CHUNK_JOB_SIZE to the receive queue)"
            ),
        ));
    }
    Ok(())
}
