//! The scenario file as written: serde structs mirroring the TOML, with
//! LSF's parameter names where LSF has one.
//!
//! Every table refuses unknown keys, so a misspelt parameter is an error,
//! not a silently ignored line. Values that LSF writes in more than one way
//! (durations, lists, IMPT_JOBBKLG's `infinit`) have their own types, in
//! `values`, re-exported here.
//! docs/scenarios.md documents the format.

use serde::Deserialize;

mod actions;
mod values;

pub use actions::{RawAction, RawExpect};
pub use values::{Backlog, DurationValue, EndValue, LsfValue, MAX_DURATION, WordList, YesNo};

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    /// A short title.
    pub name: Option<String>,
    /// What the scenario shows.
    pub description: Option<String>,
    /// Seed for anything random (default 0).
    pub seed: Option<u64>,
    /// When the run stops: a duration, or `"drain"` (when nothing is left
    /// to do). Default: `"drain"` with a `[[workload]]`, else the last
    /// submission plus three of the longest update intervals.
    pub end: Option<EndValue>,
    /// Federation-wide defaults of lsb.params.
    #[serde(default)]
    pub params: RawParams,
    /// The clusters.
    #[serde(default)]
    pub cluster: Vec<RawCluster>,
    /// Jobs submitted while the scenario runs.
    #[serde(default)]
    pub submit: Vec<RawJob>,
    /// Workloads read from trace files while the scenario runs.
    #[serde(default)]
    pub workload: Vec<RawWorkload>,
    /// Job control commands given while the scenario runs.
    #[serde(default)]
    pub action: Vec<RawAction>,
    /// Outcomes the scenario expects.
    #[serde(default)]
    pub expect: Vec<RawExpect>,
    /// Faults to inject.
    pub chaos: Option<RawChaos>,
}

/// `[chaos]`: seeded faults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawChaos {
    /// Seed of the fault generator (default: the scenario's seed).
    pub seed: Option<u64>,
    /// `[chaos.links]`: faults of every link without its own entry.
    pub links: Option<RawLink>,
    /// `[[chaos.link]]`: faults of the link from one cluster to another.
    #[serde(default)]
    pub link: Vec<RawLink>,
    /// Partitions between two clusters.
    #[serde(default)]
    pub partition: Vec<RawPartition>,
    /// Clusters going down and coming back.
    #[serde(default)]
    pub outage: Vec<RawOutage>,
    /// Clock skew per cluster.
    #[serde(default)]
    pub skew: Vec<RawSkew>,
}

/// Faults of a link: `[chaos.links]` (every link; no `from`/`to`) or one
/// `[[chaos.link]]` (with `from` and `to`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    /// Sender (`[[chaos.link]]` only).
    pub from: Option<String>,
    /// Receiver (`[[chaos.link]]` only).
    pub to: Option<String>,
    /// Fixed one-way delay.
    pub delay: Option<DurationValue>,
    /// Extra delay, uniform between zero and this.
    pub jitter: Option<DurationValue>,
    /// Probability a counter update is lost (job messages are retransmitted
    /// instead).
    pub loss: Option<f64>,
    /// Probability a counter update arrives twice.
    pub duplicate: Option<f64>,
    /// Probability a counter update is held back by `reorder_delay`.
    pub reorder: Option<f64>,
    /// How long a reordered update is held back (default: 2 × delay + 1s).
    pub reorder_delay: Option<DurationValue>,
    /// Retransmission delay of a lost job message (default 1s).
    pub retransmit: Option<DurationValue>,
}

/// `[[chaos.partition]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPartition {
    /// The two clusters that cannot reach each other.
    pub between: Vec<String>,
    /// When it starts.
    pub from: DurationValue,
    /// When it heals.
    pub until: DurationValue,
}

/// `[[chaos.outage]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutage {
    /// The cluster.
    pub cluster: String,
    /// When it goes down.
    pub at: DurationValue,
    /// How long it stays down.
    pub down_for: DurationValue,
}

/// `[[chaos.skew]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSkew {
    /// The cluster.
    pub cluster: String,
    /// Its clock runs this much ahead.
    pub ahead: Option<DurationValue>,
    /// Its clock runs this much behind.
    pub behind: Option<DurationValue>,
}

/// lsb.params: federation-wide in `[params]`, per cluster in
/// `[cluster.params]` (which wins).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawParams {
    /// How often an execution cluster sends counters.
    pub MC_PLUGIN_UPDATE_INTERVAL: Option<DurationValue>,
    /// The forwarding policy of a submission cluster.
    pub MC_PLUGIN_SCHEDULE_ENHANCE: Option<String>,
    /// mcfed's cap on forwards of one job.
    pub MAX_FORWARDS: Option<u32>,
    /// mcfed's: a remote cluster whose last counter update is older than
    /// this many of its update intervals is unreachable (0: never).
    pub MC_UNREACHABLE_UPDATES: Option<u32>,
    /// mcfed's: how long a remote cluster stays unreachable before its jobs
    /// that have not started come back (0: never).
    pub MC_RECLAIM_TIME: Option<DurationValue>,
    /// CPU_TIME_FACTOR (default 0.7).
    pub CPU_TIME_FACTOR: Option<f64>,
    /// RUN_TIME_FACTOR (default 0.7).
    pub RUN_TIME_FACTOR: Option<f64>,
    /// RUN_JOB_FACTOR (default 3).
    pub RUN_JOB_FACTOR: Option<f64>,
    /// FWD_JOB_FACTOR (default: not defined).
    pub FWD_JOB_FACTOR: Option<f64>,
    /// FAIRSHARE_ADJUSTMENT_FACTOR (default 0).
    pub FAIRSHARE_ADJUSTMENT_FACTOR: Option<f64>,
    /// HIST_HOURS (default 5).
    pub HIST_HOURS: Option<f64>,
    /// GPU_RUN_TIME_FACTOR (default 0).
    pub GPU_RUN_TIME_FACTOR: Option<f64>,
    /// COMMITTED_RUN_TIME_FACTOR (0 to 1, default 0).
    pub COMMITTED_RUN_TIME_FACTOR: Option<f64>,
    /// RUN_TIME_DECAY: `Y` decays the run time of running jobs.
    pub RUN_TIME_DECAY: Option<YesNo>,
    /// ENABLE_HIST_RUN_TIME: `Y` counts the run time of finished jobs.
    pub ENABLE_HIST_RUN_TIME: Option<YesNo>,
    /// ENABLE_GPU_HIST_RUN_TIME: `Y` counts the GPU run time of finished jobs.
    pub ENABLE_GPU_HIST_RUN_TIME: Option<YesNo>,
    /// PREEMPT_FOR: `GROUP_JLP GROUP_MAX HOST_JLU USER_JLP LEAST_RUN_TIME`.
    pub PREEMPT_FOR: Option<String>,
    /// PREEMPT_JOBTYPE: `BACKFILL` lets jobs of backfill queues be preempted.
    pub PREEMPT_JOBTYPE: Option<String>,
    /// NO_PREEMPT_RUN_TIME: `"90m"` or `"50%"`.
    pub NO_PREEMPT_RUN_TIME: Option<LsfValue>,
    /// NO_PREEMPT_FINISH_TIME: `"10m"` or `"25%"`.
    pub NO_PREEMPT_FINISH_TIME: Option<LsfValue>,
    /// MBD_SLEEP_TIME: one scheduling cycle (SLOT_RESERVE counts in them).
    pub MBD_SLEEP_TIME: Option<DurationValue>,
    /// mcfed: the fairshare adjustment plug-in, `memory` or `none`.
    pub FAIRSHARE_ADJUSTMENT_PLUGIN: Option<String>,
    /// mcfed: THRESHOLD of the memory plug-in (default 1).
    pub FAIRSHARE_ADJUSTMENT_THRESHOLD: Option<f64>,
    /// CLEAN_PERIOD: how long finished jobs are kept (default 1h).
    pub CLEAN_PERIOD: Option<DurationValue>,
    /// MAX_USER_PRIORITY: enables `bsub -sp` job priorities.
    pub MAX_USER_PRIORITY: Option<u32>,
    /// JOB_PRIORITY_OVER_TIME: `"increment/interval"` (minutes).
    pub JOB_PRIORITY_OVER_TIME: Option<String>,
    /// LSB_REQUEUE_TO_BOTTOM (lsf.conf): requeued and migrated jobs go to
    /// the bottom of their queue.
    pub LSB_REQUEUE_TO_BOTTOM: Option<YesNo>,
    /// LSB_MIG2PEND (lsf.conf): with LSB_REQUEUE_TO_BOTTOM, migrated jobs
    /// compete with pending jobs by APS value.
    pub LSB_MIG2PEND: Option<YesNo>,
}

/// The dynamic-priority factors and the switches of its optional terms,
/// which lsb.params and lsb.queues both take under the same names.
pub trait RawFactors {
    /// Their values, in the order of `mcfed_cluster::fairshare::FACTOR_NAMES`.
    fn factor_values(&self) -> [Option<f64>; 8];
    /// The switches, in the order of `mcfed_cluster::fairshare::SWITCH_NAMES`.
    fn switch_values(&self) -> [Option<bool>; 3];
}

macro_rules! raw_factors {
    ($type:ty) => {
        impl RawFactors for $type {
            fn factor_values(&self) -> [Option<f64>; 8] {
                [
                    self.CPU_TIME_FACTOR,
                    self.RUN_TIME_FACTOR,
                    self.RUN_JOB_FACTOR,
                    self.FWD_JOB_FACTOR,
                    self.FAIRSHARE_ADJUSTMENT_FACTOR,
                    self.HIST_HOURS,
                    self.GPU_RUN_TIME_FACTOR,
                    self.COMMITTED_RUN_TIME_FACTOR,
                ]
            }
            fn switch_values(&self) -> [Option<bool>; 3] {
                [
                    self.RUN_TIME_DECAY.map(|yes| yes.0),
                    self.ENABLE_HIST_RUN_TIME.map(|yes| yes.0),
                    self.ENABLE_GPU_HIST_RUN_TIME.map(|yes| yes.0),
                ]
            }
        }
    };
}
raw_factors!(RawParams);

impl RawParams {
    /// The lsb.params fields set here that a cluster may report problems
    /// with.
    pub fn set_fields(&self) -> Vec<&'static str> {
        let mut set: Vec<&'static str> = mcfed_cluster::fairshare::FACTOR_NAMES
            .into_iter()
            .zip(self.factor_values())
            .filter_map(|(name, value)| value.map(|_| name))
            .collect();
        for (name, value) in mcfed_cluster::fairshare::SWITCH_NAMES
            .into_iter()
            .zip(self.switch_values())
        {
            if value.is_some() {
                set.push(name);
            }
        }
        for (name, present) in [
            ("PREEMPT_FOR", self.PREEMPT_FOR.is_some()),
            ("PREEMPT_JOBTYPE", self.PREEMPT_JOBTYPE.is_some()),
            ("NO_PREEMPT_RUN_TIME", self.NO_PREEMPT_RUN_TIME.is_some()),
            (
                "NO_PREEMPT_FINISH_TIME",
                self.NO_PREEMPT_FINISH_TIME.is_some(),
            ),
            ("MBD_SLEEP_TIME", self.MBD_SLEEP_TIME.is_some()),
            (
                "FAIRSHARE_ADJUSTMENT_PLUGIN",
                self.FAIRSHARE_ADJUSTMENT_PLUGIN.is_some(),
            ),
            (
                "FAIRSHARE_ADJUSTMENT_THRESHOLD",
                self.FAIRSHARE_ADJUSTMENT_THRESHOLD.is_some(),
            ),
            ("CLEAN_PERIOD", self.CLEAN_PERIOD.is_some()),
            ("MAX_USER_PRIORITY", self.MAX_USER_PRIORITY.is_some()),
            (
                "JOB_PRIORITY_OVER_TIME",
                self.JOB_PRIORITY_OVER_TIME.is_some(),
            ),
            (
                "LSB_REQUEUE_TO_BOTTOM",
                self.LSB_REQUEUE_TO_BOTTOM.is_some(),
            ),
            ("LSB_MIG2PEND", self.LSB_MIG2PEND.is_some()),
        ] {
            if present {
                set.push(name);
            }
        }
        set
    }
}
raw_factors!(RawQueue);

/// One cluster.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    /// Its name.
    pub name: String,
    /// A directory of LSF configuration (lsb.params, lsb.queues, lsb.hosts,
    /// lsb.users, …) its hosts, queues, users and params are imported from
    /// (docs/lsf-import.md), relative to the scenario file.
    pub lsf_config: Option<String>,
    /// Where its process listens (`host:port`) when clusters run as
    /// processes (`mcfed cluster`, `mcfed launch`).
    pub address: Option<String>,
    /// Its lsb.params.
    #[serde(default)]
    pub params: RawParams,
    /// Its hosts.
    #[serde(default)]
    pub host: Vec<RawHost>,
    /// Its queues.
    #[serde(default)]
    pub queue: Vec<RawQueue>,
    /// lsb.users' User section: limits per user, group, or `default`.
    #[serde(default)]
    pub user: Vec<RawUser>,
    /// lsb.users' UserGroup section.
    #[serde(default)]
    pub user_group: Vec<RawUserGroup>,
    /// lsb.resources' Limit sections.
    #[serde(default)]
    pub limit: Vec<RawLimit>,
    /// Advance reservations, as `brsvadd` makes them.
    #[serde(default)]
    pub reservation: Vec<RawReservation>,
    /// lsb.resources' ResourceReservation sections: who besides the
    /// administrator may make advance reservations, where and when.
    #[serde(default)]
    pub reservation_policy: Vec<RawReservationPolicy>,
    /// Jobs present when the scenario starts.
    #[serde(default)]
    pub job: Vec<RawJob>,
}

/// One line of lsb.users' User section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawUser {
    /// A user, a user group, or `default`.
    pub name: String,
    /// MAX_JOBS: slots the user (or group as a whole) may use.
    pub MAX_JOBS: Option<u32>,
    /// JL/P: slots per processor of a host.
    #[serde(rename = "JL/P")]
    pub JL_P: Option<f64>,
}

/// One advance reservation, in `brsvadd`'s terms.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReservation {
    /// Its name (`-N`), which jobs name (`reservation`, `bsub -U`).
    pub name: String,
    /// Its hosts (`-m`): host names or host entries.
    pub hosts: WordList,
    /// How many of their slots it reserves (`-n`; default all).
    pub slots: Option<u32>,
    /// When it becomes active (`-b`).
    pub start: DurationValue,
    /// When it ends (`-e`).
    pub end: DurationValue,
    /// The users whose jobs may use it (`-u`; `all`: any).
    pub users: WordList,
    /// An open reservation (`-o`): its jobs still running at its end keep
    /// running; a closed one (the default) kills them.
    #[serde(default)]
    pub open: bool,
}

/// One ResourceReservation section of lsb.resources: an advance
/// reservation policy.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawReservationPolicy {
    /// NAME.
    pub NAME: String,
    /// USERS: who may make reservations (`all`, `~user`; default `all`).
    pub USERS: Option<WordList>,
    /// HOSTS: the hosts or host entries they may reserve (`all`,
    /// `~host`; default all).
    pub HOSTS: Option<WordList>,
    /// TIME_WINDOW: when reservations may lie (`8:00-18:00`, several
    /// separated by spaces; default any time).
    pub TIME_WINDOW: Option<WordList>,
}

/// One Limit section of lsb.resources.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawLimit {
    /// NAME.
    pub NAME: String,
    /// USERS: users and groups counted together (`all`, `~name`).
    pub USERS: Option<WordList>,
    /// PER_USER: users counted each apart.
    pub PER_USER: Option<WordList>,
    /// QUEUES: queues counted together.
    pub QUEUES: Option<WordList>,
    /// PER_QUEUE: queues counted each apart.
    pub PER_QUEUE: Option<WordList>,
    /// HOSTS: hosts (or host entries) counted together.
    pub HOSTS: Option<WordList>,
    /// PER_HOST: hosts counted each apart.
    pub PER_HOST: Option<WordList>,
    /// SLOTS: at most this many slots.
    pub SLOTS: Option<u32>,
    /// JOBS: at most this many jobs.
    pub JOBS: Option<u32>,
}

/// One user group.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawUserGroup {
    /// The group's name.
    pub name: String,
    /// GROUP_MEMBER: its users and user groups (`all`: every user).
    pub GROUP_MEMBER: WordList,
    /// USER_SHARES: the group's share tree, `"[user1, 4] [others, 10]"`
    /// (hierarchical fairshare).
    pub USER_SHARES: Option<String>,
}

/// One host, or `count` alike hosts named `name1`..`nameN`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawHost {
    /// The host's name, or the group's prefix when `count` is given.
    pub name: String,
    /// How many alike hosts (default 1: just `name`).
    pub count: Option<u32>,
    /// Job slots per host.
    pub MXJ: u32,
    /// Boolean resources of the host(s).
    #[serde(default)]
    pub resources: Vec<String>,
    /// Closed by the administrator.
    #[serde(default)]
    pub closed: bool,
    /// Processors, the unit of JL/P (default: MXJ).
    pub ncpus: Option<u32>,
    /// JL/U: slots each user may hold on the host.
    #[serde(rename = "JL/U")]
    pub JL_U: Option<u32>,
    /// Memory of the host in MB (for the fairshare adjustment plug-in).
    pub memory_mb: Option<u64>,
    /// GPUs on the host.
    pub ngpus: Option<u32>,
    /// The host type (lsf.cluster's `type`): `select[type==X]` asks for it.
    #[serde(rename = "type")]
    pub host_type: Option<String>,
    /// The host model (lsf.cluster's `model`): `select[model==X]` asks
    /// for it.
    pub model: Option<String>,
}

/// One queue.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawQueue {
    /// Its name.
    pub name: String,
    /// PRIORITY (default 1).
    pub PRIORITY: Option<u32>,
    /// HOSTS: `all` (default) or host names / host entry names.
    pub HOSTS: Option<WordList>,
    /// PREEMPTION, as in lsb.queues.
    pub PREEMPTION: Option<String>,
    /// QJOB_LIMIT.
    pub QJOB_LIMIT: Option<u32>,
    /// RCVJOBS_FROM: cluster names or `allclusters`.
    pub RCVJOBS_FROM: Option<WordList>,
    /// IMPT_JOBBKLG: a number or `infinit` (default 50).
    pub IMPT_JOBBKLG: Option<Backlog>,
    /// SNDJOBS_TO: `queue@cluster` entries.
    pub SNDJOBS_TO: Option<WordList>,
    /// MAX_RSCHED_TIME (send queues): how long a forwarded job may pend at
    /// the execution cluster before it is recalled.
    pub MAX_RSCHED_TIME: Option<DurationValue>,
    /// UJOB_LIMIT: slots per user in the queue.
    pub UJOB_LIMIT: Option<u32>,
    /// HJOB_LIMIT: slots of the queue per host.
    pub HJOB_LIMIT: Option<u32>,
    /// SLOT_POOL: the queue-based fairshare pool.
    pub SLOT_POOL: Option<String>,
    /// SLOT_SHARE: percent of the pool.
    pub SLOT_SHARE: Option<u32>,
    /// MAX_SLOTS_IN_POOL (read from the pool's first queue).
    pub MAX_SLOTS_IN_POOL: Option<u32>,
    /// USE_PRIORITY_IN_POOL (read from the pool's first queue).
    pub USE_PRIORITY_IN_POOL: Option<YesNo>,
    /// FAIRSHARE: `USER_SHARES[[user, shares] ...]`.
    pub FAIRSHARE: Option<String>,
    /// CPU_TIME_FACTOR (default 0.7).
    pub CPU_TIME_FACTOR: Option<f64>,
    /// RUN_TIME_FACTOR (default 0.7).
    pub RUN_TIME_FACTOR: Option<f64>,
    /// RUN_JOB_FACTOR (default 3).
    pub RUN_JOB_FACTOR: Option<f64>,
    /// FWD_JOB_FACTOR (default: not defined).
    pub FWD_JOB_FACTOR: Option<f64>,
    /// FAIRSHARE_ADJUSTMENT_FACTOR (default 0).
    pub FAIRSHARE_ADJUSTMENT_FACTOR: Option<f64>,
    /// HIST_HOURS (default 5).
    pub HIST_HOURS: Option<f64>,
    /// GPU_RUN_TIME_FACTOR (default 0).
    pub GPU_RUN_TIME_FACTOR: Option<f64>,
    /// COMMITTED_RUN_TIME_FACTOR (0 to 1, default 0).
    pub COMMITTED_RUN_TIME_FACTOR: Option<f64>,
    /// RUN_TIME_DECAY: `Y` decays the run time of running jobs.
    pub RUN_TIME_DECAY: Option<YesNo>,
    /// ENABLE_HIST_RUN_TIME: `Y` counts the run time of finished jobs.
    pub ENABLE_HIST_RUN_TIME: Option<YesNo>,
    /// ENABLE_GPU_HIST_RUN_TIME: `Y` counts the GPU run time of finished jobs.
    pub ENABLE_GPU_HIST_RUN_TIME: Option<YesNo>,
    /// SLOT_RESERVE: `MAX_RESERVE_TIME[n]`.
    pub SLOT_RESERVE: Option<String>,
    /// BACKFILL: `Y` or `N`.
    pub BACKFILL: Option<YesNo>,
    /// TERMINATE_WHEN: `PREEMPT`.
    pub TERMINATE_WHEN: Option<String>,
    /// NO_PREEMPT_RUN_TIME for the queue's jobs.
    pub NO_PREEMPT_RUN_TIME: Option<LsfValue>,
    /// NO_PREEMPT_FINISH_TIME for the queue's jobs.
    pub NO_PREEMPT_FINISH_TIME: Option<LsfValue>,
    /// RUNLIMIT: the run limit of jobs that give none (`"2h"`).
    pub RUNLIMIT: Option<LsfValue>,
    /// RUNTIME: the run-time estimate of jobs that give none (`"30m"`).
    pub RUNTIME: Option<LsfValue>,
    /// APS_PRIORITY: absolute priority scheduling, as lsb.queues writes it
    /// (`"WEIGHT[[JPRIORITY, 1] [QPRIORITY, 10]] LIMIT[[...]] GRACE_PERIOD[[...]]"`).
    pub APS_PRIORITY: Option<String>,
    /// QUEUE_GROUP: queues whose jobs this APS queue orders with its own.
    pub QUEUE_GROUP: Option<WordList>,
    /// CHUNK_JOB_SIZE: one-slot jobs dispatched together to one slot.
    pub CHUNK_JOB_SIZE: Option<u32>,
    /// RERUNNABLE: `Y` reruns jobs whose host fails (and allows bmig).
    pub RERUNNABLE: Option<YesNo>,
    /// DISPATCH_ORDER: `QUEUE` (cross-queue fairshare's; refused with APS).
    pub DISPATCH_ORDER: Option<String>,
    /// FAIRSHARE_QUEUES: cross-queue fairshare, obsolete and not modelled.
    pub FAIRSHARE_QUEUES: Option<WordList>,
}

/// A job entry: in `[[cluster.job]]` (present at start) or `[[submit]]`
/// (submitted during the run). One struct serves both; validation checks
/// which keys each place allows (`at` and `cluster` only in `[[submit]]`,
/// `state` only in `[[cluster.job]]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJob {
    /// When it is submitted (`[[submit]]` only).
    pub at: Option<DurationValue>,
    /// The cluster it is submitted to (`[[submit]]` only).
    pub cluster: Option<String>,
    /// The queue.
    pub queue: String,
    /// The job's name (numbered `name-1`, `name-2`, ... when `count` > 1).
    pub name: Option<String>,
    /// How many alike jobs (default 1).
    pub count: Option<u32>,
    /// Spacing between the submissions of a `count` group (default 0).
    pub every: Option<DurationValue>,
    /// The submitting user (default `user1`).
    pub user: Option<String>,
    /// Slots (`bsub -n`, default 1).
    pub slots: Option<u32>,
    /// How long it runs once started (default 1h).
    pub run_time: Option<DurationValue>,
    /// Run limit (`bsub -W`).
    pub run_limit: Option<DurationValue>,
    /// Run-time estimate (`bsub -We`): never enforced; NO_PREEMPT_FINISH_TIME
    /// reads it before the run limit.
    pub run_estimate: Option<DurationValue>,
    /// GPUs the job uses on each of its hosts (`bsub -gpu "num=N"`).
    pub gpus: Option<u32>,
    /// Boolean resources every host of the job must have, and the host
    /// type and model it asks for (`"type==LINUX86"`, `"model==XeonE5"`,
    /// as in `select[...]`).
    #[serde(default)]
    pub resources: Vec<String>,
    /// Fraction of its slots' CPU it keeps busy (default 1.0).
    pub cpu_utilisation: Option<f32>,
    /// Memory it uses, in MB (default 0).
    pub memory_mb: Option<u64>,
    /// The job priority (`bsub -sp`; needs MAX_USER_PRIORITY).
    pub priority: Option<u32>,
    /// Memory it asks for, MB (`bsub -R "rusage[mem=N]"`; APS's MEM).
    pub mem: Option<u64>,
    /// Swap it asks for, MB (`bsub -R "rusage[swp=N]"`; APS's SWAP).
    pub swap: Option<u64>,
    /// A resizable job's most slots (`bsub -n slots,max_slots`).
    pub max_slots: Option<u32>,
    /// Autoresizable (`bsub -ar`, with `max_slots`).
    pub auto_resize: Option<bool>,
    /// The advance reservation it runs in (`bsub -U`).
    pub reservation: Option<String>,
    /// For jobs present at start: `running` or `pending`, checked once the
    /// first dispatch pass has run.
    pub state: Option<String>,
}

/// `[[workload]]`: jobs read from a trace file (docs/scenarios.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// The workload's name, which prefixes its jobs' names (default: the
    /// file's name without extensions).
    pub name: Option<String>,
    /// An SWF trace, plain or gzip, relative to the scenario file.
    pub swf: Option<String>,
    /// Or LSF's accounting log (lsb.acct), plain or gzip.
    pub lsb_acct: Option<String>,
    /// lsb.acct: records held at once to put them in submit order.
    pub sort_window: Option<u64>,
    /// The cluster its jobs go to.
    pub cluster: Option<String>,
    /// The queue its jobs go to.
    pub queue: Option<String>,
    /// SWF queue number (lsb.acct: LSF queue name) → `queue` or
    /// `queue@cluster`.
    #[serde(default)]
    pub queue_map: std::collections::BTreeMap<String, String>,
    /// SWF partition number → cluster.
    #[serde(default)]
    pub partition_map: std::collections::BTreeMap<String, String>,
    /// The user name: `{uid}` and `{gid}` are replaced (default `u{uid}`).
    pub user: Option<String>,
    /// Read only the first this many jobs.
    pub limit: Option<u64>,
    /// Multiplies submission times (default 1).
    pub time_scale: Option<f64>,
}
