//! A full consistency check of a cluster's books, recomputed from the jobs
//! themselves: every job in exactly one state and in exactly the lists of
//! that state, every tally equal to the sum it stands for, no host over its
//! MXJ, no pool over its total. Tests (and property tests) run it after
//! every step; it is O(jobs + hosts + queues), so nothing calls it on a hot
//! path.

use rustc_hash::FxHashMap;

use crate::job::{HostIndex, JobId, JobState, QueueIndex, UserId};
use crate::limits::Held;
use crate::scheduler::{Cluster, victim_key};

fn check(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}

pub(crate) fn audit(cluster: &Cluster) -> Result<(), String> {
    let queue_count = cluster.queues.len();
    let mut host_used = vec![0u32; cluster.hosts.len()];
    let mut host_jobs: Vec<Vec<JobId>> = vec![Vec::new(); cluster.hosts.len()];
    let mut running = vec![0u32; queue_count];
    let mut suspended = vec![0u32; queue_count];
    let mut pending = vec![0u32; queue_count];
    let mut pending_jobs = vec![0usize; queue_count];
    let mut suspended_jobs = vec![0usize; queue_count];
    let mut running_jobs = vec![0usize; queue_count];
    let mut user_held: FxHashMap<UserId, Held> = FxHashMap::default();
    let mut queue_user_held: FxHashMap<(QueueIndex, UserId), u32> = FxHashMap::default();
    let mut queue_user_running: FxHashMap<(QueueIndex, UserId), u32> = FxHashMap::default();
    let mut host_user: FxHashMap<(HostIndex, UserId), Held> = FxHashMap::default();
    let mut host_queue: FxHashMap<(HostIndex, QueueIndex), u32> = FxHashMap::default();
    let mut victims = vec![0u64; queue_count * queue_count];
    let mut memory = 0u64;

    for (&id, job) in &cluster.jobs {
        check(job.id == id, || format!("job {id} filed under another id"))?;
        let queue = &cluster.queues[job.queue];
        let in_pending = queue.pending.get(&job.arrival) == Some(&id);
        let in_suspended = queue.suspended.get(&job.arrival) == Some(&id);
        let in_running = queue.running_order.contains(&(
            std::cmp::Reverse(victim_key(job, cluster.policy.preempt_for.least_run_time)),
            std::cmp::Reverse(id),
        ));
        let slots = job.spec.slots;
        match job.state {
            JobState::Pending => {
                check(in_pending && !in_suspended && !in_running, || {
                    format!("pending job {id} is not only in its queue's pending list")
                })?;
                check(job.placement.is_empty(), || {
                    format!("pending job {id} has hosts")
                })?;
                if queue.fairshare.is_some() {
                    let listed = queue
                        .users
                        .get(&job.user)
                        .is_some_and(|user| user.pending.get(&job.arrival) == Some(&id));
                    check(listed, || {
                        format!("pending job {id} missing from its user's list")
                    })?;
                }
                pending[job.queue] += slots;
                pending_jobs[job.queue] += 1;
            }
            JobState::Running | JobState::Suspended => {
                let is_running = job.state == JobState::Running;
                check(!in_pending, || {
                    format!("job {id} is both placed and pending")
                })?;
                check(in_suspended != is_running, || {
                    format!(
                        "job {id} ({}) in the wrong suspended list",
                        job.state.as_str()
                    )
                })?;
                if !queue.preemptors.is_empty() {
                    check(in_running == is_running, || {
                        format!("job {id} ({}) in the wrong victim list", job.state.as_str())
                    })?;
                }
                let placed: u32 = job.placement.iter().map(|place| place.slots).sum();
                check(placed == slots, || {
                    format!("job {id} asks {slots} slots but is placed on {placed}")
                })?;
                let held = user_held.entry(job.user).or_default();
                *queue_user_held.entry((job.queue, job.user)).or_default() += slots;
                if is_running {
                    *queue_user_running.entry((job.queue, job.user)).or_default() += slots;
                    running[job.queue] += slots;
                    running_jobs[job.queue] += 1;
                    held.running += slots;
                    memory += job.spec.memory_mb;
                } else {
                    suspended[job.queue] += slots;
                    suspended_jobs[job.queue] += 1;
                    held.suspended += slots;
                }
                for place in &job.placement {
                    host_jobs[place.host].push(id);
                    let per_host = host_user.entry((place.host, job.user)).or_default();
                    *host_queue.entry((place.host, job.queue)).or_default() += place.slots;
                    if is_running {
                        host_used[place.host] += place.slots;
                        per_host.running += place.slots;
                    } else {
                        per_host.suspended += place.slots;
                    }
                }
                if is_running {
                    for &preemptor in &queue.preemptors {
                        let set = &cluster.host_sets[cluster.queues[preemptor].host_set];
                        let reachable: u32 = job
                            .placement
                            .iter()
                            .filter(|place| {
                                set.contains(place.host) && !cluster.hosts[place.host].config.closed
                            })
                            .map(|place| place.slots)
                            .sum();
                        victims[preemptor * queue_count + job.queue] += u64::from(reachable);
                    }
                }
            }
            JobState::Done => return Err(format!("finished job {id} still listed")),
        }
    }

    for (index, host) in cluster.hosts.iter().enumerate() {
        check(host.used == host_used[index], || {
            format!(
                "host {} counts {} used slots, its running jobs hold {}",
                host.config.name, host.used, host_used[index]
            )
        })?;
        check(host.used <= host.config.max_slots, || {
            format!(
                "host {} runs {} slots over its MXJ {}",
                host.config.name, host.used, host.config.max_slots
            )
        })?;
        let mut listed = host.jobs.clone();
        listed.sort_unstable();
        host_jobs[index].sort_unstable();
        check(listed == host_jobs[index], || {
            format!("host {} lists the wrong jobs", host.config.name)
        })?;
    }
    for set in &cluster.host_sets {
        set.audit(|host| {
            let host = &cluster.hosts[host];
            (!host.config.closed).then(|| host.free())
        })?;
    }
    for (index, queue) in cluster.queues.iter().enumerate() {
        let name = &queue.config.name;
        check(
            (
                queue.running_slots,
                queue.suspended_slots,
                queue.pending_slots,
            ) == (running[index], suspended[index], pending[index]),
            || format!("queue {name} tallies disagree with its jobs"),
        )?;
        check(
            queue.pending.len() == pending_jobs[index]
                && queue.suspended.len() == suspended_jobs[index],
            || format!("queue {name} lists jobs that are not its"),
        )?;
        if !queue.preemptors.is_empty() {
            check(queue.running_order.len() == running_jobs[index], || {
                format!("queue {name} victim list has stale jobs")
            })?;
        }
        for (&user, state) in &queue.users {
            let expected = queue_user_held.get(&(index, user)).copied().unwrap_or(0);
            check(state.held == expected, || {
                format!(
                    "queue {name} user {user} holds {} not {expected}",
                    state.held
                )
            })?;
            if queue.fairshare.is_some() {
                let expected = queue_user_running.get(&(index, user)).copied().unwrap_or(0);
                check(state.account.running_slots == expected, || {
                    format!("queue {name} user {user} fairshare slots disagree")
                })?;
            }
        }
        for victim in 0..queue_count {
            let tally = cluster.victim_slots[index * queue_count + victim];
            check(tally == victims[index * queue_count + victim], || {
                format!("victim tally of {name} over queue {victim} is stale")
            })?;
        }
        if let Some(limit) = queue.config.job_limit {
            check(queue.held() <= limit, || {
                format!(
                    "queue {name} holds {} slots over QJOB_LIMIT {limit}",
                    queue.held()
                )
            })?;
        }
    }
    for (id, user) in cluster.users.iter().enumerate() {
        let expected = user_held.get(&(id as UserId)).copied().unwrap_or_default();
        check(user.held == expected, || {
            format!("user {} tallies disagree with its jobs", user.name)
        })?;
    }
    for (index, group) in cluster.groups.iter().enumerate() {
        let mut expected = Held::default();
        for (id, user) in cluster.users.iter().enumerate() {
            if user.groups.contains(&index) {
                let held = user_held.get(&(id as UserId)).copied().unwrap_or_default();
                expected.running += held.running;
                expected.suspended += held.suspended;
            }
        }
        check(group.held == expected, || {
            format!("group {} tallies disagree with its users", group.name)
        })?;
    }
    if cluster.tracking.host_user {
        for (key, held) in &cluster.host_user_held {
            check(host_user.get(key) == Some(held), || {
                format!("per-host user tally {key:?} is stale")
            })?;
        }
        let nonempty = host_user.values().filter(|held| !held.is_empty()).count();
        check(nonempty == cluster.host_user_held.len(), || {
            "per-host user tallies are missing".to_owned()
        })?;
    }
    if cluster.tracking.host_queue {
        check(host_queue == cluster.host_queue_held, || {
            "per-host queue tallies are stale".to_owned()
        })?;
    }
    check(memory == cluster.memory_in_use_mb, || {
        "memory in use is stale".to_owned()
    })?;
    for pool in &cluster.pools {
        let deserved: u64 = pool
            .queues
            .iter()
            .map(|&queue| u64::from(cluster.queues[queue].deserved.min(u32::MAX - 1)))
            .sum();
        if cluster.pass > 0 {
            check(deserved <= u64::from(pool.total), || {
                format!(
                    "pool {} hands out {deserved} slots of {}",
                    pool.name, pool.total
                )
            })?;
        }
        let used: u32 = pool
            .queues
            .iter()
            .map(|&queue| cluster.queues[queue].running_slots)
            .sum();
        check(used == pool.running, || {
            format!("pool {} running tally is stale", pool.name)
        })?;
        if let Some(max) = pool.max_slots {
            check(used <= max, || {
                format!(
                    "pool {} runs {used} slots over MAX_SLOTS_IN_POOL {max}",
                    pool.name
                )
            })?;
        }
    }
    Ok(())
}
