//! Absolute priority scheduling's keys (seed 001): a queue's APS_PRIORITY,
//! QUEUE_GROUP, CHUNK_JOB_SIZE, RERUNNABLE, DISPATCH_ORDER and
//! FAIRSHARE_QUEUES, and lsb.params' JOB_PRIORITY_OVER_TIME with lsf.conf's
//! LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND. Values are written as LSF writes
//! them; what they may not be used with is checked by the cluster
//! (`mcfed_cluster`'s setup), whose refusals are located here too.

use mcfed_cluster::{ApsPriority, PriorityEscalation, QueueConfig, SchedulingParams};
use mcfed_protocol::QueueName;

use super::pick;
use crate::check::Checker;
use crate::format::{RawParams, RawQueue};
use crate::locate::FieldPath;

impl Checker<'_> {
    /// A queue's APS keys into `config`.
    pub(crate) fn queue_aps(&mut self, raw: &RawQueue, path: &FieldPath, config: &mut QueueConfig) {
        if let Some(text) = &raw.APS_PRIORITY {
            match text.parse::<ApsPriority>() {
                Ok(aps) => config.aps_priority = Some(aps),
                Err(error) => self.problem(path.key("APS_PRIORITY"), error.to_string()),
            }
        }
        config.queue_group = self.queue_names(raw.QUEUE_GROUP.as_ref(), path, "QUEUE_GROUP");
        config.fairshare_queues =
            self.queue_names(raw.FAIRSHARE_QUEUES.as_ref(), path, "FAIRSHARE_QUEUES");
        config.chunk_job_size = raw.CHUNK_JOB_SIZE;
        config.rerunnable = raw.RERUNNABLE.is_some_and(|yes| yes.0);
        if let Some(order) = &raw.DISPATCH_ORDER {
            match order.trim() {
                "QUEUE" => config.dispatch_order_queue = true,
                other => self.problem(
                    path.key("DISPATCH_ORDER"),
                    format!("DISPATCH_ORDER takes QUEUE (cross-queue fairshare), not `{other}`"),
                ),
            }
        }
    }

    /// The queue names of a list key.
    fn queue_names(
        &mut self,
        words: Option<&crate::format::WordList>,
        path: &FieldPath,
        field: &str,
    ) -> Vec<QueueName> {
        let Some(words) = words else {
            return Vec::new();
        };
        if words.0.is_empty() {
            self.problem(path.key(field), format!("{field} names no queue"));
        }
        words
            .0
            .iter()
            .enumerate()
            .filter_map(|(index, word)| self.name(path.key(field).index(index), word))
            .collect()
    }

    /// lsb.params' JOB_PRIORITY_OVER_TIME and lsf.conf's
    /// LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND, the cluster's own winning.
    pub(crate) fn aps_params(
        &mut self,
        own: &RawParams,
        federation: &RawParams,
        path: &FieldPath,
        params: &mut SchedulingParams,
    ) {
        if let Some((text, field)) = pick(
            &own.JOB_PRIORITY_OVER_TIME,
            &federation.JOB_PRIORITY_OVER_TIME,
            path,
            "JOB_PRIORITY_OVER_TIME",
        ) {
            match text.parse::<PriorityEscalation>() {
                Ok(escalation) => params.job_priority_over_time = Some(escalation),
                Err(error) => self.problem(field, error.to_string()),
            }
        }
        params.requeue_to_bottom = own
            .LSB_REQUEUE_TO_BOTTOM
            .or(federation.LSB_REQUEUE_TO_BOTTOM)
            .is_some_and(|yes| yes.0);
        params.mig2pend = own
            .LSB_MIG2PEND
            .or(federation.LSB_MIG2PEND)
            .is_some_and(|yes| yes.0);
    }
}
