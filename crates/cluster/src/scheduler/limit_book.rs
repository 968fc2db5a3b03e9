//! The limit book: lsb.resources' Limit sections, which jobs each one
//! counts, and the slots and jobs held against each of its instances (one
//! per user, queue or host for its PER_ kinds, one for all together
//! otherwise). Kept as jobs start, stop and finish; a cluster without
//! Limit sections pays nothing.
//!
//! Seed 003's slot counting: a limit that names queues is a queue-level
//! limit and counts suspended jobs always; any other counts only running
//! jobs once preemption is enabled (suspended jobs "never count against the
//! total job slot limit for individual users"; "the total number of jobs at
//! ... the host ... level is not limited by the number of suspended jobs").

use rustc_hash::FxHashMap;

use crate::config::{Consumers, LimitConfig};
use crate::fairshare::GroupDirectory;
use crate::job::{HostIndex, Job, QueueIndex, UserId};
use crate::limits::Held;

use super::accounting::Change;

/// One Limit section, resolved against the cluster's queues and hosts.
#[derive(Clone, Debug)]
pub(crate) struct Limit {
    pub(crate) name: String,
    /// USERS or PER_USER (`None`: every user).
    users: Option<Consumers>,
    pub(crate) per_user: bool,
    /// Which queues it counts, by index.
    queues: Vec<bool>,
    pub(crate) per_queue: bool,
    /// Which hosts it counts, by index (`None`: HOSTS and PER_HOST unset,
    /// every host together).
    hosts: Option<Vec<bool>>,
    pub(crate) per_host: bool,
    pub(crate) slots: Option<u32>,
    pub(crate) jobs: Option<u32>,
    /// It names queues: suspended jobs always count.
    queue_level: bool,
}

/// One instance of a limit: its user, queue and host where it counts them
/// apart.
pub(crate) type LimitKey = (usize, Option<UserId>, Option<QueueIndex>, Option<HostIndex>);

/// What one instance holds: slots and jobs, running and suspended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LimitTally {
    pub(crate) slots: Held,
    pub(crate) jobs: Held,
}

/// The Limit sections and what each instance holds.
#[derive(Clone, Debug, Default)]
pub(crate) struct LimitBook {
    limits: Vec<Limit>,
    /// Per limit, per user id: whether it counts the user.
    users: Vec<Vec<bool>>,
    tallies: FxHashMap<LimitKey, LimitTally>,
}

impl Limit {
    /// `config`, with the cluster's `queue_names` and `host_names`.
    pub(crate) fn new(config: &LimitConfig, queue_names: &[&str], host_names: &[&str]) -> Self {
        let kind = |together: &Option<Consumers>, apart: &Option<Consumers>| {
            (together.clone().or_else(|| apart.clone()), apart.is_some())
        };
        let (users, per_user) = kind(&config.users, &config.per_user);
        let (queues, per_queue) = kind(&config.queues, &config.per_queue);
        let (hosts, per_host) = kind(&config.hosts, &config.per_host);
        let by_name = |consumers: &Option<Consumers>, names: &[&str]| -> Vec<bool> {
            names
                .iter()
                .map(|name| {
                    consumers
                        .as_ref()
                        .is_none_or(|c| c.matches(name, |_| false))
                })
                .collect()
        };
        Limit {
            name: config.name.clone(),
            queue_level: queues.is_some(),
            queues: by_name(&queues, queue_names),
            hosts: hosts.as_ref().map(|_| by_name(&hosts, host_names)),
            users,
            per_user,
            per_queue,
            per_host,
            slots: config.slots,
            jobs: config.jobs,
        }
    }

    /// Whether it counts hosts at all (HOSTS or PER_HOST).
    pub(crate) fn names_hosts(&self) -> bool {
        self.hosts.is_some()
    }

    /// Whether it counts slots on `host`.
    pub(crate) fn covers_host(&self, host: HostIndex) -> bool {
        self.hosts
            .as_ref()
            .is_none_or(|hosts| hosts.get(host).copied().unwrap_or(false))
    }

    /// Whether it counts every user and queue (a pure host limit).
    pub(crate) fn covers_everyone(&self) -> bool {
        self.users
            .as_ref()
            .is_none_or(|users| users.all && users.excluded.is_empty())
            && self.queues.iter().all(|&counted| counted)
    }

    /// Whether suspended jobs count against it.
    pub(crate) fn counts_suspended(&self, preemption_enabled: bool) -> bool {
        self.queue_level || !preemption_enabled
    }
}

impl LimitBook {
    /// The book of `limits`, with no user and nothing held.
    pub(crate) fn new(limits: Vec<Limit>) -> Self {
        let users = vec![Vec::new(); limits.len()];
        LimitBook {
            limits,
            users,
            tallies: FxHashMap::default(),
        }
    }

    /// The Limit sections, in configuration order.
    #[inline]
    pub(crate) fn rules(&self) -> &[Limit] {
        &self.limits
    }

    /// Limit section `limit`.
    #[inline]
    pub(crate) fn rule(&self, limit: usize) -> &Limit {
        &self.limits[limit]
    }

    /// Whether there is any Limit section.
    pub(crate) fn is_empty(&self) -> bool {
        self.limits.is_empty()
    }

    /// Learns user `id`, named `name`: which limits count it.
    pub(crate) fn note_user(&mut self, id: UserId, name: &str, groups: &GroupDirectory) {
        for (limit, users) in self.limits.iter().zip(&mut self.users) {
            let index = id as usize;
            if users.len() <= index {
                users.resize(index + 1, false);
            }
            users[index] = limit.users.as_ref().is_none_or(|consumers| {
                consumers.matches(name, |group| groups.contains(group, name))
            });
        }
    }

    /// Whether limit `limit` counts jobs of `user` in `queue`.
    pub(crate) fn counts(&self, limit: usize, user: UserId, queue: QueueIndex) -> bool {
        self.limits[limit]
            .queues
            .get(queue)
            .copied()
            .unwrap_or(false)
            && self.users[limit]
                .get(user as usize)
                .copied()
                .unwrap_or(false)
    }

    /// The instance of `limit` a job of `user` in `queue` on `host` (for a
    /// limit that counts hosts apart) counts against.
    pub(crate) fn key(
        &self,
        limit: usize,
        user: UserId,
        queue: QueueIndex,
        host: Option<HostIndex>,
    ) -> LimitKey {
        let rule = &self.limits[limit];
        (
            limit,
            rule.per_user.then_some(user),
            rule.per_queue.then_some(queue),
            host.filter(|_| rule.per_host),
        )
    }

    /// What instance `key` holds.
    pub(crate) fn tally(&self, key: &LimitKey) -> LimitTally {
        self.tallies.get(key).copied().unwrap_or_default()
    }

    /// Job `job` moves by `change`: every limit instance it counts
    /// against follows (slots on the hosts a host limit counts; the job
    /// once per instance).
    pub(crate) fn account(&mut self, job: &Job, change: Change) {
        for limit in 0..self.limits.len() {
            if !self.counts(limit, job.user, job.queue) {
                continue;
            }
            let rule = &self.limits[limit];
            let mut seen: Vec<LimitKey> = Vec::new();
            for place in &job.placement {
                if !rule.covers_host(place.host) {
                    continue;
                }
                let key = self.key(limit, job.user, job.queue, Some(place.host));
                let tally = self.tallies.entry(key).or_default();
                change.apply_held(&mut tally.slots, place.slots);
                if !seen.contains(&key) {
                    change.apply_held(&mut tally.jobs, 1);
                    seen.push(key);
                }
            }
            for key in seen {
                if self
                    .tallies
                    .get(&key)
                    .is_some_and(|tally| tally.slots.is_empty() && tally.jobs.is_empty())
                {
                    self.tallies.remove(&key);
                }
            }
        }
    }
}

impl LimitBook {
    /// Checks the tallies against `jobs`, recounted from nothing, and that
    /// no instance holds more than its limit (for the audit).
    pub(crate) fn audit<'a>(
        &self,
        jobs: impl Iterator<Item = &'a Job>,
        preemption_enabled: bool,
    ) -> Result<(), String> {
        for (key, tally) in &self.tallies {
            let rule = &self.limits[key.0];
            let counts = rule.counts_suspended(preemption_enabled);
            let over = rule
                .slots
                .is_some_and(|slots| tally.slots.counted(counts) > slots)
                || rule
                    .jobs
                    .is_some_and(|jobs| tally.jobs.counted(counts) > jobs);
            if over {
                return Err(format!(
                    "Limit {} instance {key:?} holds {tally:?}, over its limit",
                    rule.name
                ));
            }
        }
        use super::accounting::Holding;
        let mut fresh = LimitBook {
            limits: self.limits.clone(),
            users: self.users.clone(),
            tallies: FxHashMap::default(),
        };
        for job in jobs {
            // Jobs stopped by `bstop` (USUSP) hold their slots too.
            let Some(holding) = Holding::of(job) else {
                continue;
            };
            fresh.account(job, Change::new(Holding::Nothing, holding));
        }
        match self
            .tallies
            .iter()
            .find(|(key, tally)| fresh.tallies.get(key) != Some(tally))
            .or_else(|| {
                fresh
                    .tallies
                    .iter()
                    .find(|(key, _)| !self.tallies.contains_key(key))
            }) {
            Some((key, _)) => Err(format!(
                "Limit {} instance {key:?} tallies disagree with its jobs",
                self.limits[key.0].name
            )),
            None => Ok(()),
        }
    }
}
