//! What a [`Cluster`] tells about itself: its configuration, hosts,
//! queues, jobs and users, preemptions in a batch of transitions, and a
//! full audit of its books.

use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, JobEvent, SimTime};

use crate::config::{ConfigWarning, HostConfig, QueueConfig};
use crate::fairshare::FairshareAdjustment;
use crate::job::{HostIndex, Job, JobId, QueueIndex};

use super::{Cluster, PreemptionNote, Transition};

impl Cluster {
    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        &self.name
    }

    /// Settings LSF accepts but warns about (a SLOT_RESERVE in a pool queue,
    /// a preemptive queue that can preempt backfill jobs, ...).
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// The latest time the cluster was given (by a submission, an arrival
    /// or [`Cluster::advance`]).
    pub fn now(&self) -> SimTime {
        self.cycle.now
    }

    /// MC_PLUGIN_UPDATE_INTERVAL, if set.
    pub fn update_interval(&self) -> Option<Duration> {
        self.policy.update_interval
    }

    /// Installs a fairshare adjustment plug-in in place of the configured
    /// one (its weight is still FAIRSHARE_ADJUSTMENT_FACTOR).
    pub fn set_fairshare_adjustment(&mut self, plugin: Arc<dyn FairshareAdjustment>) {
        self.adjustment.set_plugin(plugin);
    }

    /// The index of the queue named `name`.
    pub fn queue_index(&self, name: &str) -> Option<QueueIndex> {
        self.queues.index_of(name)
    }

    /// The number of queues.
    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// The configuration of the queue at `index`.
    pub fn queue_config(&self, index: QueueIndex) -> &QueueConfig {
        &self.queues[index].config
    }

    /// Every queue's configuration, in configuration order.
    pub fn queue_configs(&self) -> impl Iterator<Item = &QueueConfig> {
        self.queues.iter().map(|queue| &queue.config)
    }

    /// Every host's configuration, in configuration order (a host's index
    /// is its place here).
    pub fn host_configs(&self) -> impl Iterator<Item = &HostConfig> {
        self.hosts.iter().map(|host| &host.config)
    }

    /// The job with id `id`, unless it has finished.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(id)
    }

    /// Every job that has not finished, in no particular order.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// How many jobs have not finished.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// How many places the cluster keeps jobs in, some empty: a job keeps
    /// its place from when it arrives until it leaves the cluster, and a
    /// place freed goes to a later job. A walk of the places with a cursor
    /// ([`Cluster::jobs_in_places`]) meets every job that stayed
    /// meanwhile, in at most as many steps as jobs were held at once.
    pub fn job_places(&self) -> usize {
        self.jobs.slot_count()
    }

    /// The jobs in places `places` (of [`Cluster::job_places`]).
    pub fn jobs_in_places(&self, places: std::ops::Range<usize>) -> impl Iterator<Item = &Job> {
        self.jobs.in_slots(places)
    }

    /// The name of a job's user.
    pub fn user_name<'a>(&'a self, job: &'a Job) -> &'a str {
        self.users
            .get(job.user)
            .map_or(&*job.spec.user, |user| &*user.name)
    }

    /// How many jobs have finished.
    pub fn finished_jobs(&self) -> u64 {
        self.jobs.finished()
    }

    /// How many jobs were killed (`bkill`).
    pub fn exited_jobs(&self) -> u64 {
        self.jobs.exited()
    }

    /// Takes the next job id without filing a job under it: the
    /// submission side numbers the jobs of send queues from the cluster's
    /// own sequence, so every job of a cluster has its own id.
    pub fn take_job_id(&mut self) -> JobId {
        self.jobs.take_id()
    }

    /// The job named `name`, if one that has not finished has that name
    /// (the one with the lowest id when several have).
    pub fn job_named(&self, name: &str) -> Option<JobId> {
        self.jobs
            .values()
            .filter(|job| *job.spec.name == *name)
            .map(|job| job.id)
            .min()
    }

    /// The name of the host at `index`.
    pub fn host_name(&self, index: HostIndex) -> &str {
        &self.hosts[index].config.name
    }

    /// Whether the host at `index` has failed and not recovered (it is
    /// closed meanwhile; `bhosts` shows it `unavail`).
    pub fn host_failed(&self, index: HostIndex) -> bool {
        self.hosts[index].failed
    }

    /// Slots used by running jobs on the host at `index` (never more than
    /// its MXJ).
    pub fn host_used_slots(&self, index: HostIndex) -> u32 {
        self.hosts[index].used
    }

    /// Whether some queue is PREEMPTIVE or PREEMPTABLE.
    pub fn preemption_enabled(&self) -> bool {
        self.policy.preemption_enabled
    }

    /// The preemptions among `transitions` (as just returned by
    /// [`Cluster::advance`]), with the jobs' names.
    pub fn preemption_notes(&self, transitions: &[Transition]) -> Vec<PreemptionNote> {
        let name = |id: JobId| {
            self.jobs
                .get(id)
                .map_or_else(|| format!("job {id}"), |job| job.spec.name.to_string())
        };
        transitions
            .iter()
            .filter_map(|transition| {
                let preemptor = transition.preempted_by?;
                Some(PreemptionNote {
                    at: transition.at,
                    victim: transition.job,
                    victim_name: name(transition.job),
                    preemptor,
                    preemptor_name: name(preemptor),
                    requeued: transition.event == JobEvent::Requeued,
                })
            })
            .collect()
    }

    /// Checks that every index and tally agrees with the jobs themselves,
    /// and that no host runs more than its MXJ. For tests and debugging;
    /// O(jobs + hosts + queues).
    pub fn audit(&self) -> Result<(), String> {
        crate::audit::audit(self)
    }
}
