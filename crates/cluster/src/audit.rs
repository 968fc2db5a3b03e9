//! A full consistency check of a cluster's books, recomputed from the jobs
//! themselves: every job in exactly one state and in exactly the lists of
//! that state, every tally equal to the sum it stands for, no host over its
//! MXJ, no pool over its total. Tests (and property tests) run it after
//! every step; it is O(jobs + hosts + queues), so nothing calls it on a hot
//! path.

use std::cmp::Reverse;

use rustc_hash::FxHashMap;

use crate::fairshare::ShareTree;
use crate::fairshare::tree::ROOT;
use crate::job::{HostIndex, Job, JobId, JobState, QueueIndex, UserId};
use crate::limits::Held;
use crate::scheduler::{Cluster, victim_key};

fn check(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}

/// One queue's tallies, recomputed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct QueueTally {
    running: u32,
    suspended: u32,
    pending: u32,
    running_jobs: usize,
    /// Jobs suspended by preemption (the queue's resume list).
    resumable_jobs: usize,
    pending_jobs: usize,
}

/// What the books should hold, recomputed from the jobs.
#[derive(Debug, Default)]
struct Expected {
    host_used: Vec<u32>,
    host_gpus: Vec<u32>,
    host_jobs: Vec<Vec<JobId>>,
    queues: Vec<QueueTally>,
    user_held: FxHashMap<UserId, Held>,
    queue_user_held: FxHashMap<(QueueIndex, UserId), u32>,
    queue_user_running: FxHashMap<(QueueIndex, UserId), u32>,
    host_user: FxHashMap<(HostIndex, UserId), Held>,
    host_queue: FxHashMap<(HostIndex, QueueIndex), u32>,
    /// Indexed like `VictimSlots`: preemptor × queues + victim.
    victims: Vec<u64>,
    memory: u64,
}

pub(crate) fn audit(cluster: &Cluster) -> Result<(), String> {
    let queue_count = cluster.queues.len();
    let mut expected = Expected {
        host_used: vec![0; cluster.hosts.len()],
        host_gpus: vec![0; cluster.hosts.len()],
        host_jobs: vec![Vec::new(); cluster.hosts.len()],
        queues: vec![QueueTally::default(); queue_count],
        victims: vec![0; queue_count * queue_count],
        ..Expected::default()
    };
    for (&id, job) in cluster.jobs.iter() {
        check(job.id == id, || format!("job {id} filed under another id"))?;
        check_job_lists(cluster, id, job)?;
        match job.state {
            JobState::Pending => {
                let tally = &mut expected.queues[job.queue];
                tally.pending += job.spec.slots;
                tally.pending_jobs += 1;
            }
            JobState::Running | JobState::Suspended | JobState::UserSuspended => {
                expected.count_placed(cluster, id, job)?
            }
            JobState::PendingSuspended => {}
            JobState::ChunkWaiting => {
                let runner = cluster.chunks.runner_of(id);
                let runs = runner
                    .and_then(|runner| cluster.jobs.get(runner))
                    .is_some_and(|runner| runner.state.is_placed());
                check(runs, || {
                    format!("waiting job {id} is in no chunk of a placed job")
                })?;
            }
            JobState::Done | JobState::Exited => {
                return Err(format!("finished job {id} still listed"));
            }
        }
    }
    check_hosts(cluster, &mut expected)?;
    for index in 0..queue_count {
        check_queue(cluster, index, &expected)?;
    }
    check_users(cluster, &expected)?;
    cluster
        .limit_book
        .audit(cluster.jobs.values(), cluster.policy.preemption_enabled)?;
    check_host_tallies(cluster, &expected)?;
    check(
        expected.memory == cluster.adjustment.memory_in_use_mb(),
        || "memory in use is stale".to_owned(),
    )?;
    check_pools(cluster)
}

/// Job `id` is in exactly the lists of its state.
fn check_job_lists(cluster: &Cluster, id: JobId, job: &Job) -> Result<(), String> {
    let queue = &cluster.queues[job.queue];
    let in_pending = queue.pending.holds(job.bucket, job.arrival, id);
    let in_suspended = queue.suspended.get(&job.arrival) == Some(&id);
    let in_running = queue.running_order.contains(&(
        Reverse(victim_key(job, cluster.policy.preempt_for.least_run_time)),
        Reverse(id),
    ));
    let state = job.state.as_str();
    match job.state {
        JobState::Pending => {
            check(in_pending && !in_suspended && !in_running, || {
                format!("pending job {id} is not only in its queue's pending list")
            })?;
            check(job.placement.is_empty(), || {
                format!("pending job {id} has hosts")
            })?;
            if let Some(fairshare) = &queue.fairshare {
                let listed = queue
                    .users
                    .get(&job.user)
                    .and_then(|user| user.leaf)
                    .is_some_and(|leaf| {
                        fairshare.tree.node(leaf).pending.get(&job.arrival) == Some(&id)
                    });
                check(listed, || {
                    format!("pending job {id} missing from its share account's list")
                })?;
            }
        }
        JobState::PendingSuspended | JobState::ChunkWaiting => {
            check(!in_pending && !in_suspended && !in_running, || {
                format!("held or waiting job {id} is listed in its queue")
            })?;
            check(
                job.placement.is_empty() || job.state == JobState::ChunkWaiting,
                || format!("held job {id} has hosts"),
            )?;
        }
        JobState::Running | JobState::Suspended | JobState::UserSuspended => {
            let is_running = job.state == JobState::Running;
            check(!in_pending, || {
                format!("job {id} is both placed and pending")
            })?;
            check(in_suspended == (job.state == JobState::Suspended), || {
                format!("job {id} ({state}) in the wrong suspended list")
            })?;
            if !queue.preemptors.is_empty() {
                check(in_running == is_running, || {
                    format!("job {id} ({state}) in the wrong victim list")
                })?;
            }
        }
        JobState::Done | JobState::Exited => {}
    }
    Ok(())
}

impl Expected {
    /// Counts running or suspended job `id` everywhere it holds slots.
    fn count_placed(&mut self, cluster: &Cluster, id: JobId, job: &Job) -> Result<(), String> {
        let slots = job.spec.slots;
        let placed: u32 = job.placement.iter().map(|place| place.slots).sum();
        check(placed == slots, || {
            format!("job {id} asks {slots} slots but is placed on {placed}")
        })?;
        let is_running = job.state == JobState::Running;
        let occupies =
            is_running || (job.state == JobState::UserSuspended && !job.stopped_while_suspended);
        let held = self.user_held.entry(job.user).or_default();
        *self
            .queue_user_held
            .entry((job.queue, job.user))
            .or_default() += slots;
        let tally = &mut self.queues[job.queue];
        if is_running {
            *self
                .queue_user_running
                .entry((job.queue, job.user))
                .or_default() += slots;
            tally.running += slots;
            tally.running_jobs += 1;
            held.running += slots;
            self.memory += job.spec.memory_mb;
        } else {
            tally.suspended += slots;
            tally.resumable_jobs += usize::from(job.state == JobState::Suspended);
            held.suspended += slots;
        }
        for place in &job.placement {
            self.host_jobs[place.host].push(id);
            let per_host = self.host_user.entry((place.host, job.user)).or_default();
            *self.host_queue.entry((place.host, job.queue)).or_default() += place.slots;
            if occupies {
                self.host_used[place.host] += place.slots;
                self.host_gpus[place.host] += job.spec.gpus;
            }
            if is_running {
                per_host.running += place.slots;
            } else {
                per_host.suspended += place.slots;
            }
        }
        if is_running {
            self.count_victim(cluster, job);
        }
        Ok(())
    }

    /// Running `job`'s slots that each queue that may preempt it reaches.
    fn count_victim(&mut self, cluster: &Cluster, job: &Job) {
        let queue_count = cluster.queues.len();
        for &preemptor in &cluster.queues[job.queue].preemptors {
            let set = cluster.hosts.set(cluster.queues[preemptor].host_set);
            let reachable: u32 = job
                .placement
                .iter()
                .filter(|place| {
                    set.contains(place.host) && !cluster.hosts[place.host].config.closed
                })
                .map(|place| place.slots)
                .sum();
            self.victims[preemptor * queue_count + job.queue] += u64::from(reachable);
        }
    }
}

/// Hosts' used slots and job lists, MXJ, and the host sets' indexes.
fn check_hosts(cluster: &Cluster, expected: &mut Expected) -> Result<(), String> {
    for (index, host) in cluster.hosts.iter().enumerate() {
        check(host.used == expected.host_used[index], || {
            format!(
                "host {} counts {} used slots, its running jobs hold {}",
                host.config.name, host.used, expected.host_used[index]
            )
        })?;
        check(host.used <= host.config.max_slots, || {
            format!(
                "host {} runs {} slots over its MXJ {}",
                host.config.name, host.used, host.config.max_slots
            )
        })?;
        check(host.used_gpus == expected.host_gpus[index], || {
            format!(
                "host {} counts {} GPUs in use, its running jobs hold {}",
                host.config.name, host.used_gpus, expected.host_gpus[index]
            )
        })?;
        check(host.used_gpus <= host.config.gpus, || {
            format!(
                "host {} runs {} GPUs of its {}",
                host.config.name, host.used_gpus, host.config.gpus
            )
        })?;
        let mut listed = host.jobs.clone();
        listed.sort_unstable();
        expected.host_jobs[index].sort_unstable();
        check(listed == expected.host_jobs[index], || {
            format!("host {} lists the wrong jobs", host.config.name)
        })?;
    }
    for set in cluster.hosts.sets() {
        set.audit(|host| {
            let host = &cluster.hosts[host];
            (!host.config.closed).then(|| host.free())
        })?;
    }
    Ok(())
}

/// The queue at `index`: its tallies and lists, its users' figures, the
/// victim tallies it keeps as a preemptor, QJOB_LIMIT.
fn check_queue(cluster: &Cluster, index: QueueIndex, expected: &Expected) -> Result<(), String> {
    let queue = &cluster.queues[index];
    let name = &queue.config.name;
    let tally = &expected.queues[index];
    check(
        (
            queue.running_slots,
            queue.suspended_slots,
            queue.pending_slots,
        ) == (tally.running, tally.suspended, tally.pending),
        || format!("queue {name} tallies disagree with its jobs"),
    )?;
    check(
        queue.pending.len() == tally.pending_jobs && queue.suspended.len() == tally.resumable_jobs,
        || format!("queue {name} lists jobs that are not its"),
    )?;
    queue
        .pending
        .audit(|id| {
            cluster
                .jobs
                .get(id)
                .filter(|job| job.state == JobState::Pending && job.queue == index)
                .map(|job| (job.bucket, job.arrival))
        })
        .map_err(|error| format!("queue {name}: {error}"))?;
    if !queue.preemptors.is_empty() {
        check(queue.running_order.len() == tally.running_jobs, || {
            format!("queue {name} victim list has stale jobs")
        })?;
    }
    for (&user, state) in &queue.users {
        let held = expected.queue_user_held.get(&(index, user)).copied();
        let held = held.unwrap_or(0);
        check(state.held == held, || {
            format!("queue {name} user {user} holds {} not {held}", state.held)
        })?;
    }
    if let Some(fairshare) = &queue.fairshare {
        check_share_tree(cluster, index, &fairshare.tree, expected)?;
    }
    let queue_count = cluster.queues.len();
    for victim in 0..queue_count {
        let tally = cluster.victim_slots.get(index, victim);
        check(
            tally == expected.victims[index * queue_count + victim],
            || format!("victim tally of {name} over queue {victim} is stale"),
        )?;
    }
    if let Some(limit) = queue.config.job_limit {
        check(queue.held() <= limit, || {
            format!(
                "queue {name} holds {} slots over QJOB_LIMIT {limit}",
                queue.held()
            )
        })?;
    }
    Ok(())
}

/// A fairshare queue's share tree: each account's running slots are those
/// of its users' running jobs, its pending count that of their pending
/// jobs below it.
fn check_share_tree(
    cluster: &Cluster,
    index: QueueIndex,
    tree: &ShareTree,
    expected: &Expected,
) -> Result<(), String> {
    let queue = &cluster.queues[index];
    let name = &queue.config.name;
    let mut running = vec![0u32; tree.nodes().len()];
    let mut pending = vec![0u32; tree.nodes().len()];
    for (&user, state) in &queue.users {
        let Some(leaf) = state.leaf else {
            continue;
        };
        let slots = expected
            .queue_user_running
            .get(&(index, user))
            .copied()
            .unwrap_or(0);
        for node in tree.path(leaf) {
            running[node] += slots;
        }
    }
    for (node, share) in tree.nodes().iter().enumerate() {
        if share.is_leaf() {
            for on_path in std::iter::once(ROOT).chain(tree.path(node)) {
                pending[on_path] += u32::try_from(share.pending.len()).unwrap_or(u32::MAX);
            }
        }
    }
    for (node, share) in tree.nodes().iter().enumerate().skip(1) {
        check(share.account.running_slots == running[node], || {
            format!("queue {name} share account {} slots disagree", share.name)
        })?;
        check(share.pending_below == pending[node], || {
            format!(
                "queue {name} share account {} pending count disagrees",
                share.name
            )
        })?;
    }
    Ok(())
}

/// Users' and groups' cluster-wide tallies.
fn check_users(cluster: &Cluster, expected: &Expected) -> Result<(), String> {
    let held_by = |id: usize| {
        let id = UserId::try_from(id).unwrap_or(UserId::MAX);
        expected.user_held.get(&id).copied().unwrap_or_default()
    };
    for (id, user) in cluster.users.iter().enumerate() {
        check(user.held == held_by(id), || {
            format!("user {} tallies disagree with its jobs", user.name)
        })?;
    }
    for (index, group) in cluster.users.groups().iter().enumerate() {
        let mut sum = Held::default();
        for (id, user) in cluster.users.iter().enumerate() {
            if user.groups.contains(&index) {
                let held = held_by(id);
                sum.running += held.running;
                sum.suspended += held.suspended;
            }
        }
        check(group.held == sum, || {
            format!("group {} tallies disagree with its users", group.name)
        })?;
    }
    Ok(())
}

/// The per-host tallies that are kept.
fn check_host_tallies(cluster: &Cluster, expected: &Expected) -> Result<(), String> {
    cluster
        .tallies
        .audit(&expected.host_user, &expected.host_queue)
}

/// Pools: deserved slots within the total, the running tally, and
/// MAX_SLOTS_IN_POOL.
fn check_pools(cluster: &Cluster) -> Result<(), String> {
    for pool in cluster.queues.pools() {
        let deserved: u64 = pool
            .queues
            .iter()
            .map(|&queue| u64::from(cluster.queues[queue].deserved.min(u32::MAX - 1)))
            .sum();
        if cluster.cycle.pass > 0 {
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
