//! Building a [`Cluster`] from its configuration, step by step: every
//! check that names the host, queue, user or parameter at fault
//! (`setup::checks`), the host sets shared by queues and the queues
//! themselves (`setup::queues`), the preemption relation
//! (`setup::preemption`), slot pools (`setup::pools`), APS groups
//! (`setup::aps`) with each queue's ordering across queues
//! (`setup::dispatch_order`) and chunks (`setup::chunks`), users, groups
//! and their limits (`setup::users`), and the warnings LSF gives for
//! settings it advises against.

mod aps;
mod checks;
mod chunks;
mod dispatch_order;
mod limits;
mod pools;
mod preemption;
mod queues;
mod users;

use crate::config::{ClusterConfig, ConfigError, DEFAULT_SLEEP_TIME, SchedulingParams};
use crate::scheduler::{
    Adjustment, Cluster, Cycle, Host, HostBook, HostTallies, JobBook, PendingJobs, Policy,
    QueueBook, VictimSlots,
};

pub(crate) fn build(config: ClusterConfig) -> Result<Cluster, ConfigError> {
    let ClusterConfig {
        name,
        hosts: host_configs,
        queues: queue_configs,
        update_interval,
        params,
        users: user_configs,
        user_groups,
        limits: limit_configs,
        advance_reservations,
        reservation_policies,
    } = config;
    let mut host_configs = host_configs;
    let mut warnings = Vec::new();

    checks::check_hosts(&host_configs)?;
    let limit_book = limits::limit_book(&limit_configs, &queue_configs, &mut host_configs)?;
    let host_by_name = checks::check_hosts(&host_configs)?;
    let queue_by_name = checks::check_queues(&queue_configs)?;
    checks::check_params(&params)?;
    let (host_sets, queue_sets) =
        queues::host_sets(&queue_configs, &host_by_name, host_configs.len())?;
    let relation = preemption::relation(&queue_configs, &queue_by_name, &params)?;
    warnings.extend(preemption::backfill_warnings(
        &queue_configs,
        &relation.victims_of,
        params.preempt_backfill,
    ));
    let (pools, pool_of) = pools::slot_pools(&queue_configs, &queue_sets, &mut warnings)?;
    let (aps_groups, aps_group_of) =
        aps::aps_groups(&queue_configs, &queue_by_name, &mut warnings)?;
    let users = users::user_book(&user_configs, &user_groups)?;
    let advance = crate::advance::resolve(advance_reservations, |name| {
        let &index = host_by_name.get(name)?;
        Some((index, host_configs[index].max_slots))
    })?;

    let hosts = HostBook::new(host_configs.into_iter().map(Host::new).collect(), host_sets);
    let tracking = users::tracking(&hosts, &user_configs, &users, &queue_configs);
    let policy = policy(&params, relation.enabled, update_interval);
    let adjustment = Adjustment::new(params.fairshare_adjustment.build(), &hosts);
    let mut queues = queues::queues(
        queue_configs,
        queue_sets,
        relation,
        pool_of,
        &hosts,
        &params,
        users.directory(),
    );
    // Whether a job's chances depend on its user: some limit reads it.
    let users_limited =
        users.has_limits() || !limit_book.is_empty() || tracking.host_user || tracking.host_group;
    for (queue, group) in queues.iter_mut().zip(aps_group_of) {
        queue.aps_group = group;
        let by_user = users_limited || queue.config.user_job_limit.is_some();
        queue.pending = PendingJobs::new(by_user);
    }
    Ok(Cluster {
        name,
        policy,
        warnings,
        victim_slots: VictimSlots::new(queues.len()),
        limit_book,
        queues: QueueBook::new(queues, pools, aps_groups),
        hosts,
        users,
        tallies: HostTallies::new(tracking),
        adjustment,
        jobs: JobBook::default(),
        reservations: Vec::new(),
        advance,
        advance_seen: mcfed_protocol::SimTime::ZERO,
        advance_live: crate::advance::live::LiveBook {
            policies: reservation_policies,
            deleted: Vec::new(),
        },
        chunks: crate::chunks::ChunkBook::default(),
        cycle: Cycle::default(),
        changes: None,
        held_ends: Default::default(),
        scan_every_job: false,
        walk_buffers: Default::default(),
    })
}

/// The cluster-wide policy from lsb.params.
fn policy(
    params: &SchedulingParams,
    preemption_enabled: bool,
    update_interval: Option<std::time::Duration>,
) -> Policy {
    Policy {
        preemption_enabled,
        preempt_for: params.preempt_for,
        hist_hours: params.fairshare_factors.resolve().hist_hours,
        sleep_time: params.sleep_time.unwrap_or(DEFAULT_SLEEP_TIME),
        update_interval,
        max_user_priority: params.max_user_priority,
        priority_over_time: params.job_priority_over_time,
        requeue_to_bottom: params.requeue_to_bottom,
        mig2pend: params.mig2pend,
    }
}
