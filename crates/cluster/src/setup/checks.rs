//! The checks of a configuration that need no other step: hosts, queues,
//! lsb.params, and the queues named in PREEMPTION lists. Each error names
//! the host, queue or parameter at fault.

use mcfed_protocol::QueueName;
use rustc_hash::FxHashMap;

use crate::config::{ConfigError, ConfigLocation, HostConfig, QueueConfig, SchedulingParams};
use crate::fairshare::{AdjustmentPlugin, FairshareOverrides};
use crate::job::{HostIndex, QueueIndex};
use crate::preemption::Scope;

/// Checks every host; returns the hosts by name.
pub(super) fn check_hosts(hosts: &[HostConfig]) -> Result<FxHashMap<&str, HostIndex>, ConfigError> {
    let mut host_by_name: FxHashMap<&str, HostIndex> = FxHashMap::default();
    for (index, host) in hosts.iter().enumerate() {
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
    Ok(host_by_name)
}

/// Checks every queue on its own; returns the queues by name.
pub(super) fn check_queues(
    queues: &[QueueConfig],
) -> Result<FxHashMap<QueueName, QueueIndex>, ConfigError> {
    let mut queue_by_name: FxHashMap<QueueName, QueueIndex> = FxHashMap::default();
    for (index, queue) in queues.iter().enumerate() {
        check_queue(index, queue)?;
        if queue_by_name.insert(queue.name.clone(), index).is_some() {
            return Err(ConfigError::queue(
                index,
                "name",
                format!("queue `{}` is defined twice", queue.name),
            ));
        }
    }
    Ok(queue_by_name)
}

/// Checks lsb.params: the fairshare factors, the adjustment plug-in's
/// THRESHOLD, MBD_SLEEP_TIME.
pub(super) fn check_params(params: &SchedulingParams) -> Result<(), ConfigError> {
    check_factors(&params.fairshare_factors, |field| ConfigLocation::Cluster {
        field,
    })?;
    if let AdjustmentPlugin::Memory { threshold } = params.fairshare_adjustment {
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
    if let Some(max) = params.max_user_priority {
        if max == 0 || max > crate::config::MAX_MAX_USER_PRIORITY {
            return Err(ConfigError {
                location: ConfigLocation::Cluster {
                    field: "MAX_USER_PRIORITY",
                },
                message: format!(
                    "MAX_USER_PRIORITY must be between 1 and {}",
                    crate::config::MAX_MAX_USER_PRIORITY
                ),
            });
        }
    }
    if params.job_priority_over_time.is_some() && params.max_user_priority.is_none() {
        return Err(ConfigError {
            location: ConfigLocation::Cluster {
                field: "JOB_PRIORITY_OVER_TIME",
            },
            message: "JOB_PRIORITY_OVER_TIME escalates user-assigned job priorities: it needs MAX_USER_PRIORITY".into(),
        });
    }
    if params.clean_period.is_some_and(|period| period.is_zero()) {
        return Err(ConfigError {
            location: ConfigLocation::Cluster {
                field: "CLEAN_PERIOD",
            },
            message: "CLEAN_PERIOD must be longer than zero".into(),
        });
    }
    Ok(())
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
    if let Some(value) = factors.committed_run_time.filter(|&value| value > 1.0) {
        return Err(ConfigError {
            location: location("COMMITTED_RUN_TIME_FACTOR"),
            message: format!("COMMITTED_RUN_TIME_FACTOR must be between 0 and 1 (got {value})"),
        });
    }
    Ok(())
}

/// Checks that a queue's PREEMPTION lists name queues of the cluster with
/// the right priority relation.
pub(super) fn check_preemption_lists(
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
