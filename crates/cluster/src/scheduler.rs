//! One cluster's scheduler, sans-IO: hosts, queues and jobs; a dispatch pass
//! that serves queues in priority order; preemption; jobs finishing after
//! their run time.
//!
//! Nothing here reads a clock, opens a socket or spawns a thread: every
//! method that depends on time takes `now`. Engines (the in-process event
//! loop, the actix actor, a live process) call [`Cluster::advance`] whenever
//! emulated time moves or something arrives, and read the counters with
//! [`Cluster::queue_counters`].
//!
//! Slot accounting follows seed `003_f223f39848659bbb.txt`: a suspended
//! (preempted) job does not count against its hosts' MXJ, so the preempting
//! job can use the slots, but it keeps counting against its queue's
//! QJOB_LIMIT. Since jobs are only ever suspended by preemption here, a
//! host's used slots are exactly its running jobs' slots.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::Bound;
use std::time::Duration;

use mcfed_protocol::{
    ClusterName, JobEvent, JobForward, JobSpec, QueueName, RejectReason, SimTime,
};
use rustc_hash::FxHashMap;

use crate::config::{ClusterConfig, ConfigError, HostConfig, HostSelection, QueueConfig};
use crate::hostset::HostSet;
use crate::job::{
    HostIndex, Job, JobId, JobOrigin, JobState, PendingReason, Placement, QueueIndex,
};
use crate::preemption::{QueueFacts, can_preempt, preference};

/// Dispatch passes one [`Cluster::advance`] may run at one instant.
const MAX_PASSES_PER_INSTANT: usize = 64;

/// Something that happened to a job during [`Cluster::advance`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The job.
    pub job: JobId,
    /// What happened.
    pub event: JobEvent,
    /// When.
    pub at: SimTime,
    /// Where the job came from.
    pub origin: JobOrigin,
}

/// Why a job could not be submitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The queue does not exist.
    #[error("no queue named `{0}`")]
    UnknownQueue(String),
    /// The job asks for no slots.
    #[error("a job needs at least one slot")]
    NoSlots,
    /// The job can never run in the queue.
    #[error("{0}")]
    CannotRun(RejectReason),
}

/// A host and its running jobs.
#[derive(Clone, Debug)]
pub(crate) struct Host {
    pub(crate) config: HostConfig,
    /// Slots counted against MXJ (running jobs' slots).
    pub(crate) used: u32,
    /// Jobs placed on the host, running or suspended.
    pub(crate) jobs: Vec<JobId>,
    /// Host sets the host belongs to.
    host_sets: Vec<usize>,
}

impl Host {
    pub(crate) fn free(&self) -> u32 {
        if self.config.closed {
            0
        } else {
            self.config.max_slots.saturating_sub(self.used)
        }
    }

    fn has_resources(&self, resources: &[String]) -> bool {
        resources
            .iter()
            .all(|resource| self.config.resources.contains(resource))
    }
}

/// A queue and its jobs.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    pub(crate) config: QueueConfig,
    pub(crate) host_set: usize,
    /// Pending jobs by arrival order.
    pub(crate) pending: BTreeMap<u64, JobId>,
    /// Suspended jobs by arrival order.
    pub(crate) suspended: BTreeMap<u64, JobId>,
    pub(crate) running_slots: u32,
    pub(crate) suspended_slots: u32,
    pub(crate) pending_slots: u32,
    pub(crate) imported_pending_jobs: u32,
    /// Where the last dispatch pass stopped looking at this queue's pending
    /// jobs (arrival order) and why: every later job pends for that reason.
    stopped: Option<(u64, PendingReason)>,
    /// Queues this one may preempt, most preferred victim first.
    pub(crate) victims: Vec<QueueIndex>,
    /// Queues that may preempt this one.
    pub(crate) preemptors: Vec<QueueIndex>,
    /// Boolean resources offered by the queue's hosts, sorted.
    pub(crate) resources: Vec<String>,
    /// Total slots on all the queue's hosts, open or closed.
    pub(crate) configured_slots: u64,
}

/// One cluster's scheduling state.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub(crate) name: ClusterName,
    pub(crate) hosts: Vec<Host>,
    pub(crate) queues: Vec<Queue>,
    /// Queue indices by PRIORITY, highest first (configuration order breaks
    /// ties).
    queue_order: Vec<QueueIndex>,
    queue_by_name: FxHashMap<QueueName, QueueIndex>,
    pub(crate) host_sets: Vec<HostSet>,
    /// `victim_slots[p * queues + v]`: slots held by running jobs of queue
    /// `v` on the hosts of queue `p`, for pairs where `p` may preempt `v`.
    pub(crate) victim_slots: Vec<u64>,
    jobs: FxHashMap<JobId, Job>,
    next_job_id: u64,
    next_arrival: u64,
    finish_events: BinaryHeap<Reverse<(SimTime, JobId, u32)>>,
    dirty: bool,
    /// Dispatch passes run so far.
    pass: u64,
    /// Set when a pass started or resumed a job that a higher queue may
    /// preempt: a queue served earlier in the pass may now find a victim, so
    /// another pass runs at the same instant.
    new_victims: bool,
    finished_jobs: u64,
    update_interval: Option<Duration>,
}

impl Cluster {
    /// Builds a cluster from its configuration, checking it.
    pub fn new(config: ClusterConfig) -> Result<Cluster, ConfigError> {
        let ClusterConfig {
            name,
            hosts: host_configs,
            queues: queue_configs,
            update_interval,
        } = config;
        let mut host_by_name: FxHashMap<&str, HostIndex> = FxHashMap::default();
        for (index, host) in host_configs.iter().enumerate() {
            if host.max_slots == 0 {
                return Err(ConfigError::host(
                    index,
                    "MXJ",
                    "a host needs at least one slot",
                ));
            }
            if host_by_name.insert(host.name.as_str(), index).is_some() {
                return Err(ConfigError::host(
                    index,
                    "name",
                    format!("host `{}` is defined twice", host.name),
                ));
            }
        }
        let mut queue_by_name = FxHashMap::default();
        for (index, queue) in queue_configs.iter().enumerate() {
            if queue_by_name.insert(queue.name.clone(), index).is_some() {
                return Err(ConfigError::queue(
                    index,
                    "name",
                    format!("queue `{}` is defined twice", queue.name),
                ));
            }
            if queue.job_limit == Some(0) {
                return Err(ConfigError::queue(
                    index,
                    "QJOB_LIMIT",
                    "QJOB_LIMIT must be at least 1",
                ));
            }
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

        // The preemption relation.
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
                if can_preempt(facts(preemptor), facts(victim)) {
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

        let queues: Vec<Queue> = queue_configs
            .into_iter()
            .zip(queue_sets)
            .zip(victims_of.into_iter().zip(preemptors_of))
            .map(|((config, host_set), (victims, preemptors))| {
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
                Queue {
                    config,
                    host_set,
                    pending: BTreeMap::new(),
                    suspended: BTreeMap::new(),
                    running_slots: 0,
                    suspended_slots: 0,
                    pending_slots: 0,
                    imported_pending_jobs: 0,
                    stopped: None,
                    victims,
                    preemptors,
                    resources,
                    configured_slots,
                }
            })
            .collect();
        let mut queue_order: Vec<QueueIndex> = (0..queues.len()).collect();
        queue_order.sort_by_key(|&q| (Reverse(queues[q].config.priority), q));

        Ok(Cluster {
            name,
            hosts,
            queues,
            queue_order,
            queue_by_name,
            host_sets,
            victim_slots: vec![0; queue_count * queue_count],
            jobs: FxHashMap::default(),
            next_job_id: 1,
            next_arrival: 0,
            finish_events: BinaryHeap::new(),
            dirty: false,
            pass: 0,
            new_victims: false,
            finished_jobs: 0,
            update_interval,
        })
    }

    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        &self.name
    }

    /// MC_PLUGIN_UPDATE_INTERVAL, if set.
    pub fn update_interval(&self) -> Option<Duration> {
        self.update_interval
    }

    /// The index of the queue named `name`.
    pub fn queue_index(&self, name: &str) -> Option<QueueIndex> {
        self.queue_by_name.get(name).copied()
    }

    /// The configuration of the queue at `index`.
    pub fn queue_config(&self, index: QueueIndex) -> &QueueConfig {
        &self.queues[index].config
    }

    /// Every queue's configuration, in configuration order.
    pub fn queue_configs(&self) -> impl Iterator<Item = &QueueConfig> {
        self.queues.iter().map(|queue| &queue.config)
    }

    /// The job with id `id`, unless it has finished.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(&id)
    }

    /// Every job that has not finished, in no particular order.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// How many jobs have finished.
    pub fn finished_jobs(&self) -> u64 {
        self.finished_jobs
    }

    /// Every host's configuration, in configuration order (a host's index
    /// is its place here).
    pub fn host_configs(&self) -> impl Iterator<Item = &HostConfig> {
        self.hosts.iter().map(|host| &host.config)
    }

    /// The name of the host at `index`.
    pub fn host_name(&self, index: HostIndex) -> &str {
        &self.hosts[index].config.name
    }

    /// Checks that `spec` could ever run in queue `queue`.
    fn check_runnable(&self, queue: QueueIndex, spec: &JobSpec) -> Result<(), RejectReason> {
        let queue = &self.queues[queue];
        if let Some(missing) = spec
            .resources
            .iter()
            .find(|resource| queue.resources.binary_search(resource).is_err())
        {
            return Err(RejectReason::MissingResource(missing.clone()));
        }
        if u64::from(spec.slots) > queue.configured_slots {
            return Err(RejectReason::TooManySlots {
                asked: spec.slots,
                total: u32::try_from(queue.configured_slots).unwrap_or(u32::MAX),
            });
        }
        if !spec.resources.is_empty() {
            let qualified: u64 = self.host_sets[queue.host_set]
                .members
                .iter()
                .map(|&host| &self.hosts[host])
                .filter(|host| host.has_resources(&spec.resources))
                .map(|host| u64::from(host.config.max_slots))
                .sum();
            if qualified < u64::from(spec.slots) {
                return Err(RejectReason::NotEnoughQualifiedSlots {
                    asked: spec.slots,
                    qualified: u32::try_from(qualified).unwrap_or(u32::MAX),
                });
            }
        }
        Ok(())
    }

    /// Submits a job to `queue` at `now`. It pends until the next
    /// [`Cluster::advance`].
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
        origin: JobOrigin,
    ) -> Result<JobId, SubmitError> {
        let queue_index = self
            .queue_index(queue)
            .ok_or_else(|| SubmitError::UnknownQueue(queue.to_owned()))?;
        if spec.slots == 0 {
            return Err(SubmitError::NoSlots);
        }
        self.check_runnable(queue_index, &spec)
            .map_err(SubmitError::CannotRun)?;
        Ok(self.enqueue(now, queue_index, spec, origin))
    }

    /// Takes a job forwarded by `from`, or says why not: the queue must
    /// receive from `from` (RCVJOBS_FROM), have room under IMPT_JOBBKLG, and
    /// be able to run the job at all.
    pub fn receive_forward(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        forward: &JobForward,
    ) -> Result<JobId, RejectReason> {
        let queue_index = self
            .queue_index(forward.queue.as_str())
            .ok_or(RejectReason::UnknownQueue)?;
        let queue = &self.queues[queue_index];
        match &queue.config.receive_from {
            Some(receive_from) if receive_from.accepts(from) => {}
            _ => return Err(RejectReason::NotAllowed),
        }
        if let Some(limit) = queue.config.impt_jobbklg {
            if queue.imported_pending_jobs >= limit {
                return Err(RejectReason::BacklogFull { limit });
            }
        }
        if forward.spec.slots == 0 {
            return Err(RejectReason::TooManySlots {
                asked: 0,
                total: u32::try_from(queue.configured_slots).unwrap_or(u32::MAX),
            });
        }
        self.check_runnable(queue_index, &forward.spec)?;
        let origin = JobOrigin::Forwarded {
            from: from.clone(),
            source_job: forward.source_job,
        };
        Ok(self.enqueue(now, queue_index, forward.spec.clone(), origin))
    }

    fn enqueue(
        &mut self,
        now: SimTime,
        queue: QueueIndex,
        spec: JobSpec,
        origin: JobOrigin,
    ) -> JobId {
        let id = JobId(self.next_job_id);
        self.next_job_id += 1;
        let arrival = self.next_arrival;
        self.next_arrival += 1;
        let state = &mut self.queues[queue];
        state.pending.insert(arrival, id);
        state.pending_slots += spec.slots;
        if matches!(origin, JobOrigin::Forwarded { .. }) {
            state.imported_pending_jobs += 1;
        }
        let remaining = spec.run_time;
        self.jobs.insert(
            id,
            Job {
                id,
                queue,
                spec,
                origin,
                state: JobState::Pending,
                submitted_at: now,
                started_at: None,
                remaining,
                running_since: now,
                placement: Vec::new(),
                pending_reason: PendingReason::NewJob,
                reason_pass: 0,
                arrival,
                run_epoch: 0,
            },
        );
        self.dirty = true;
        id
    }

    /// When the cluster next needs [`Cluster::advance`] on its own (the next
    /// job to finish), or `None` when nothing is running.
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        while let Some(Reverse((at, job, epoch))) = self.finish_events.peek().copied() {
            if self.is_current_finish(job, epoch) {
                return Some(at);
            }
            self.finish_events.pop();
        }
        None
    }

    /// Whether a dispatch pass is due (something arrived or was freed).
    pub fn needs_dispatch(&self) -> bool {
        self.dirty
    }

    fn is_current_finish(&self, job: JobId, epoch: u32) -> bool {
        self.jobs
            .get(&job)
            .is_some_and(|job| job.state == JobState::Running && job.run_epoch == epoch)
    }

    /// Moves the cluster to `now`: finishes the jobs whose run time is over,
    /// then runs a dispatch pass if anything changed. Appends what happened
    /// to `transitions`.
    pub fn advance(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        // Preemption chains are finite (a queue only preempts lower ones),
        // so passes settle; the cap only guards against a bug looping.
        let mut passes = 0;
        loop {
            while let Some(Reverse((at, job, epoch))) = self.finish_events.peek().copied() {
                if at > now {
                    break;
                }
                self.finish_events.pop();
                if self.is_current_finish(job, epoch) {
                    self.finish(job, at, transitions);
                }
            }
            if !self.dirty {
                break;
            }
            self.dirty = false;
            self.new_victims = false;
            self.dispatch(now, transitions);
            passes += 1;
            if self.new_victims {
                if passes < MAX_PASSES_PER_INSTANT {
                    self.dirty = true;
                } else {
                    tracing::warn!(cluster = %self.name, %now, "dispatch did not settle; deferring");
                }
            }
        }
    }

    fn finish(&mut self, id: JobId, at: SimTime, transitions: &mut Vec<Transition>) {
        let Some(mut job) = self.jobs.remove(&id) else {
            return;
        };
        self.release_hosts(&job);
        self.queues[job.queue].running_slots -= job.spec.slots;
        job.state = JobState::Done;
        self.finished_jobs += 1;
        self.dirty = true;
        transitions.push(Transition {
            job: id,
            event: JobEvent::Finished,
            at,
            origin: job.origin.clone(),
        });
    }

    /// The dispatch pass: queues in priority order; in each, suspended jobs
    /// resume first (seed 001), then pending jobs start first come, first
    /// served, preempting lower-priority work where the queue may.
    fn dispatch(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        self.pass += 1;
        for order in 0..self.queue_order.len() {
            let queue = self.queue_order[order];
            self.resume_suspended(queue, now, transitions);
            self.dispatch_pending(queue, now, transitions);
        }
    }

    fn resume_suspended(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        if self.queues[queue].suspended.is_empty() {
            return;
        }
        let candidates: Vec<JobId> = self.queues[queue].suspended.values().copied().collect();
        for id in candidates {
            let fits = self.jobs[&id]
                .placement
                .iter()
                .all(|place| self.hosts[place.host].free() >= place.slots);
            if fits {
                self.resume(id, now, transitions);
            }
        }
    }

    fn dispatch_pending(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        // Within one pass free slots only shrink, so once a job without
        // resource needs fails for want of slots, any job as large fails too.
        let mut smallest_failure = u32::MAX;
        let can_preempt_any = !self.queues[queue].victims.is_empty();
        self.queues[queue].stopped = None;
        let mut cursor = Bound::Unbounded;
        loop {
            let state = &self.queues[queue];
            let Some((&arrival, &id)) = state.pending.range((cursor, Bound::Unbounded)).next()
            else {
                break;
            };
            cursor = Bound::Excluded(arrival);
            let job = &self.jobs[&id];
            let slots = job.spec.slots;
            if let Some(limit) = state.config.job_limit {
                let held = state.running_slots + state.suspended_slots;
                if held + slots > limit {
                    self.set_reason(id, PendingReason::QueueJobLimit);
                    if held >= limit {
                        self.queues[queue].stopped = Some((arrival, PendingReason::QueueJobLimit));
                        break;
                    }
                    continue;
                }
            }
            let plain = job.spec.resources.is_empty();
            if plain && slots >= smallest_failure {
                self.set_reason(id, PendingReason::NotEnoughSlots);
                continue;
            }
            let started = match self.find_placement(queue, id) {
                Some(placement) => {
                    self.start(id, placement, now, transitions);
                    true
                }
                None => can_preempt_any && self.preempt_for(queue, id, now, transitions),
            };
            if !started {
                self.set_reason(id, PendingReason::NotEnoughSlots);
                if plain {
                    smallest_failure = smallest_failure.min(slots);
                }
                let set = &self.host_sets[self.queues[queue].host_set];
                if set.free_slots == 0 && !can_preempt_any {
                    self.queues[queue].stopped = Some((arrival, PendingReason::NotEnoughSlots));
                    break;
                }
            }
        }
    }

    fn set_reason(&mut self, id: JobId, reason: PendingReason) {
        let pass = self.pass;
        if let Some(job) = self.jobs.get_mut(&id) {
            job.pending_reason = reason;
            job.reason_pass = pass;
        }
    }

    /// Why a pending job has not started, as of the last dispatch pass.
    /// Jobs the pass did not reach (it stops at a queue's job limit, or when
    /// no slot is left) share the reason it stopped for.
    pub fn pending_reason(&self, job: &Job) -> PendingReason {
        if job.state != JobState::Pending {
            return PendingReason::NewJob;
        }
        if job.reason_pass == self.pass && self.pass > 0 {
            return job.pending_reason;
        }
        match self.queues[job.queue].stopped {
            Some((arrival, reason)) if job.arrival > arrival => reason,
            _ => job.pending_reason,
        }
    }

    /// Free slots for job `id` on its queue's hosts, least-loaded hosts
    /// (most free slots) first, or `None` if there are not enough.
    fn find_placement(&self, queue: QueueIndex, id: JobId) -> Option<Vec<Placement>> {
        let job = &self.jobs[&id];
        let set = &self.host_sets[self.queues[queue].host_set];
        let mut needed = job.spec.slots;
        if job.spec.resources.is_empty() && set.free_slots < u64::from(needed) {
            return None;
        }
        let mut placement = Vec::new();
        for (host, free) in set.hosts_with_free_slots() {
            if !self.hosts[host].has_resources(&job.spec.resources) {
                continue;
            }
            let take = free.min(needed);
            placement.push(Placement { host, slots: take });
            needed -= take;
            if needed == 0 {
                return Some(placement);
            }
        }
        None
    }

    /// Tries to make room for job `id` by suspending running jobs of queues
    /// `queue` may preempt. Victims are taken from the least-loaded hosts
    /// first and, on a host, from the most preferred victim queue, newest job
    /// first. Nothing is suspended unless the job can then start.
    fn preempt_for(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) -> bool {
        let queue_count = self.queues.len();
        let (slots, resources) = {
            let job = &self.jobs[&id];
            (job.spec.slots, job.spec.resources.clone())
        };
        let set = &self.host_sets[self.queues[queue].host_set];
        let usable = |host: &Host| host.has_resources(&resources) && !host.config.closed;
        // Is there enough to reach at all?
        let reachable: u64 = if resources.is_empty() {
            let victims: u64 = self.queues[queue]
                .victims
                .iter()
                .map(|&v| self.victim_slots[queue * queue_count + v])
                .sum();
            set.free_slots + victims
        } else {
            set.members
                .iter()
                .filter(|&&host| usable(&self.hosts[host]))
                .map(|&host| {
                    let host_state = &self.hosts[host];
                    let victims: u32 = host_state
                        .jobs
                        .iter()
                        .filter(|job| self.is_victim_of(queue, job))
                        .map(|job| slots_on(&self.jobs[job], host))
                        .sum();
                    u64::from(host_state.free() + victims)
                })
                .sum()
        };
        if reachable < u64::from(slots) {
            return false;
        }
        let mut free_now: u64 = set
            .members
            .iter()
            .filter(|&&host| usable(&self.hosts[host]))
            .map(|&host| u64::from(self.hosts[host].free()))
            .sum();
        let mut hosts: Vec<HostIndex> = set
            .members
            .iter()
            .copied()
            .filter(|&host| {
                usable(&self.hosts[host])
                    && self.hosts[host]
                        .jobs
                        .iter()
                        .any(|job| self.is_victim_of(queue, job))
            })
            .collect();
        hosts.sort_by(|&a, &b| {
            let load = |host: HostIndex| {
                let host = &self.hosts[host];
                u64::from(host.used) * 1_000_000 / u64::from(host.config.max_slots)
            };
            load(a).cmp(&load(b)).then(a.cmp(&b))
        });
        let preference_rank = |victim_queue: QueueIndex| {
            self.queues[queue]
                .victims
                .iter()
                .position(|&v| v == victim_queue)
                .unwrap_or(usize::MAX)
        };
        let mut chosen: Vec<JobId> = Vec::new();
        'hosts: for host in hosts {
            let mut on_host: Vec<&Job> = self.hosts[host]
                .jobs
                .iter()
                .filter(|job| self.is_victim_of(queue, job) && !chosen.contains(job))
                .map(|job| &self.jobs[job])
                .collect();
            on_host.sort_by_key(|job| {
                (
                    preference_rank(job.queue),
                    Reverse(job.running_since),
                    Reverse(job.arrival),
                )
            });
            for victim in on_host {
                free_now += victim
                    .placement
                    .iter()
                    .filter(|place| usable(&self.hosts[place.host]) && set.contains(place.host))
                    .map(|place| u64::from(place.slots))
                    .sum::<u64>();
                chosen.push(victim.id);
                if free_now >= u64::from(slots) {
                    break 'hosts;
                }
            }
        }
        if free_now < u64::from(slots) {
            return false;
        }
        for victim in chosen {
            self.suspend(victim, now, transitions);
        }
        match self.find_placement(queue, id) {
            Some(placement) => {
                self.start(id, placement, now, transitions);
                true
            }
            None => false,
        }
    }

    fn is_victim_of(&self, queue: QueueIndex, job: &JobId) -> bool {
        let job = &self.jobs[job];
        job.state == JobState::Running && self.queues[queue].victims.contains(&job.queue)
    }

    /// Adds `delta` slots of running job `job` to the victim tallies of the
    /// queues that may preempt its queue.
    fn tally_victim(&mut self, job: &Job, add: bool) {
        let queue_count = self.queues.len();
        for &preemptor in &self.queues[job.queue].preemptors {
            let set = &self.host_sets[self.queues[preemptor].host_set];
            let slots: u64 = job
                .placement
                .iter()
                .filter(|place| set.contains(place.host) && !self.hosts[place.host].config.closed)
                .map(|place| u64::from(place.slots))
                .sum();
            let tally = &mut self.victim_slots[preemptor * queue_count + job.queue];
            if add {
                *tally += slots;
            } else {
                *tally -= slots;
            }
        }
    }

    fn occupy_hosts(&mut self, job: &Job) {
        for place in &job.placement {
            let host = &mut self.hosts[place.host];
            let old = host.free();
            host.used += place.slots;
            host.jobs.push(job.id);
            let new = host.free();
            for &set in &host.host_sets {
                if !host.config.closed {
                    self.host_sets[set].update_free(place.host, old, new);
                }
            }
        }
        self.tally_victim(job, true);
    }

    fn vacate_hosts(&mut self, job: &Job, keep_listed: bool) {
        for place in &job.placement {
            let host = &mut self.hosts[place.host];
            let old = host.free();
            host.used -= place.slots;
            if !keep_listed {
                host.jobs.retain(|&other| other != job.id);
            }
            let new = host.free();
            for &set in &host.host_sets {
                if !host.config.closed {
                    self.host_sets[set].update_free(place.host, old, new);
                }
            }
        }
        self.tally_victim(job, false);
    }

    fn release_hosts(&mut self, job: &Job) {
        self.vacate_hosts(job, false);
    }

    fn start(
        &mut self,
        id: JobId,
        placement: Vec<Placement>,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let Some(mut job) = self.jobs.remove(&id) else {
            return;
        };
        let queue = &mut self.queues[job.queue];
        queue.pending.remove(&job.arrival);
        queue.pending_slots -= job.spec.slots;
        queue.running_slots += job.spec.slots;
        if matches!(job.origin, JobOrigin::Forwarded { .. }) {
            queue.imported_pending_jobs -= 1;
        }
        if !self.queues[job.queue].preemptors.is_empty() {
            self.new_victims = true;
        }
        job.state = JobState::Running;
        job.started_at = Some(now);
        job.running_since = now;
        job.placement = placement;
        self.occupy_hosts(&job);
        self.finish_events
            .push(Reverse((now + job.remaining, id, job.run_epoch)));
        let origin = job.origin.clone();
        self.jobs.insert(id, job);
        transitions.push(Transition {
            job: id,
            event: JobEvent::Started,
            at: now,
            origin,
        });
    }

    fn suspend(&mut self, id: JobId, now: SimTime, transitions: &mut Vec<Transition>) {
        let Some(mut job) = self.jobs.remove(&id) else {
            return;
        };
        self.vacate_hosts(&job, true);
        let queue = &mut self.queues[job.queue];
        queue.running_slots -= job.spec.slots;
        queue.suspended_slots += job.spec.slots;
        queue.suspended.insert(job.arrival, id);
        job.remaining = job
            .remaining
            .saturating_sub(now.saturating_since(job.running_since));
        job.state = JobState::Suspended;
        job.run_epoch += 1;
        let origin = job.origin.clone();
        self.jobs.insert(id, job);
        transitions.push(Transition {
            job: id,
            event: JobEvent::Suspended,
            at: now,
            origin,
        });
    }

    fn resume(&mut self, id: JobId, now: SimTime, transitions: &mut Vec<Transition>) {
        let Some(mut job) = self.jobs.remove(&id) else {
            return;
        };
        // The job stayed listed on its hosts while suspended.
        for place in &job.placement {
            self.hosts[place.host].jobs.retain(|&other| other != id);
        }
        self.occupy_hosts(&job);
        let queue = &mut self.queues[job.queue];
        queue.suspended.remove(&job.arrival);
        queue.suspended_slots -= job.spec.slots;
        queue.running_slots += job.spec.slots;
        if !self.queues[job.queue].preemptors.is_empty() {
            self.new_victims = true;
        }
        job.state = JobState::Running;
        job.running_since = now;
        self.finish_events
            .push(Reverse((now + job.remaining, id, job.run_epoch)));
        let origin = job.origin.clone();
        self.jobs.insert(id, job);
        transitions.push(Transition {
            job: id,
            event: JobEvent::Resumed,
            at: now,
            origin,
        });
    }
}

impl Cluster {
    /// Takes job `id` out of the cluster, whatever its state, and returns it
    /// (`bkill`; used when a submission cluster recalls or withdraws a job
    /// it forwarded). A pending job leaves its queue; a running or suspended
    /// one frees its slots. No transition is reported; a dispatch pass is
    /// due.
    pub fn remove_job(&mut self, id: JobId) -> Option<Job> {
        let job = self.jobs.remove(&id)?;
        let slots = job.spec.slots;
        match job.state {
            JobState::Pending => {
                let queue = &mut self.queues[job.queue];
                queue.pending.remove(&job.arrival);
                queue.pending_slots -= slots;
                if matches!(job.origin, JobOrigin::Forwarded { .. }) {
                    queue.imported_pending_jobs -= 1;
                }
            }
            JobState::Running => {
                self.release_hosts(&job);
                self.queues[job.queue].running_slots -= slots;
            }
            JobState::Suspended => {
                // Its slots were freed when it was suspended; it stayed
                // listed on its hosts.
                for place in &job.placement {
                    self.hosts[place.host].jobs.retain(|&other| other != id);
                }
                let queue = &mut self.queues[job.queue];
                queue.suspended.remove(&job.arrival);
                queue.suspended_slots -= slots;
            }
            JobState::Done => {}
        }
        self.dirty = true;
        Some(job)
    }
}

fn slots_on(job: &Job, host: HostIndex) -> u32 {
    job.placement
        .iter()
        .filter(|place| place.host == host)
        .map(|place| place.slots)
        .sum()
}

/// Checks that a queue's PREEMPTION lists name queues of the cluster with
/// the right priority relation.
fn check_preemption_lists(
    index: usize,
    queue: &QueueConfig,
    all: &[QueueConfig],
    by_name: &FxHashMap<QueueName, QueueIndex>,
) -> Result<(), ConfigError> {
    use crate::preemption::Scope;
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
