//! The APS values of a cluster's jobs: what the formula reads of each
//! (JPRIORITY escalated by JOB_PRIORITY_OVER_TIME, the user's dynamic
//! priority for FS, the resources asked for), their ranks within their
//! queue group, and the listing `bjobs -aps` and `bjobs -prio` show.

use std::cmp::Ordering;
use std::time::Duration;

use mcfed_protocol::{JobSpec, SimTime};
use rustc_hash::FxHashMap;

use super::config::ResolvedAps;
use super::formula::{ApsBreakdown, ApsInputs, aps_value, aps_value_only};
use crate::job::{ARRIVAL_MASK, ApsSet, Job, JobId, JobState, QueueIndex, UserId};
use crate::scheduler::Cluster;

/// An APS queue (the group's parent) and the queues of its QUEUE_GROUP,
/// whose pending jobs are ordered together by the parent's APS_PRIORITY.
#[derive(Clone, Debug)]
pub(crate) struct ApsGroup {
    /// The queue with APS_PRIORITY.
    pub(crate) parent: QueueIndex,
    /// Every queue of the group, the parent first.
    pub(crate) members: Vec<QueueIndex>,
    /// The parent's APS_PRIORITY, resolved.
    pub(crate) aps: ResolvedAps,
}

/// Where a pending job (or a running job's resize request) stands in its
/// group's order: migrated jobs first, then jobs with a system value, then
/// calculated values, each highest first; ties go to the earlier
/// submission. Kept as one integer in that order (smaller goes first):
/// the tier, then the value descending (its bits in `f64::total_cmp`'s
/// order, inverted), then the submission — one comparison instead of a
/// chain, which is what sorting a deep queue's jobs every pass costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ApsKey(u128);

impl ApsKey {
    /// The key of tier `tier`, value `value` and submission `seq` (the
    /// job's arrival sequence, within [`ARRIVAL_MASK`]).
    pub(crate) fn new(tier: u8, value: f64, seq: u64) -> Self {
        let bits = value.to_bits();
        let ascending = if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        };
        ApsKey(
            (u128::from(tier) << 112)
                | (u128::from(!ascending) << 48)
                | u128::from(seq & ARRIVAL_MASK),
        )
    }

    /// The order of dispatch: `Less` goes first.
    pub(crate) fn dispatch_cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

/// A job's APS value as `bjobs -aps` shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ApsShown {
    /// A system value (`bmod -aps "system=V"`), shown in parentheses.
    System(f64),
    /// A calculated value (ADMIN included).
    Calculated(f64),
    /// Not in an APS queue: shown as `-`.
    None,
}

impl ApsShown {
    /// As `bjobs -aps` prints it: `(10)`, `109.00` or `-`.
    pub fn render(self) -> String {
        match self {
            ApsShown::System(value) => format!("({value})"),
            ApsShown::Calculated(value) => format!("{value:.2}"),
            ApsShown::None => "-".to_owned(),
        }
    }

    /// The value, if the job has one.
    pub fn value(self) -> Option<f64> {
        match self {
            ApsShown::System(value) | ApsShown::Calculated(value) => Some(value),
            ApsShown::None => None,
        }
    }
}

/// One pending job, or a running job's pending resize request, with its
/// APS value: a row of `bjobs -aps` and `bjobs -prio`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApsEntry {
    /// The job.
    pub job: JobId,
    /// Its queue.
    pub queue: QueueIndex,
    /// Its value.
    pub shown: ApsShown,
    /// The formula's parts (jobs of APS queues).
    pub breakdown: Option<ApsBreakdown>,
    /// Its JPRIORITY now.
    pub jpriority: u32,
    /// Migrated and scheduled before the pending jobs.
    pub migrated: bool,
    /// A running job's resize allocation request rather than a pending
    /// job.
    pub resize: bool,
}

/// A job's tier in its group's order (1: a system value, 2: a calculated
/// one; migrated jobs, tier 0, are the caller's) and its value as shown,
/// given its `calculated` value.
pub(super) fn shown_of(set: Option<ApsSet>, calculated: f64) -> (u8, ApsShown) {
    match set {
        Some(ApsSet::System(value)) => (1, ApsShown::System(value)),
        _ => (2, ApsShown::Calculated(calculated)),
    }
}

/// The FS figures already read in one pass: (queue, user) → priority.
pub(crate) type FsCache = FxHashMap<(QueueIndex, UserId), Option<f64>>;

/// An empty cache of FS figures, for one pass.
pub(crate) fn order_cache() -> FsCache {
    FsCache::default()
}

/// Most JPRIORITY can grow to by escalation (LSF: a signed int).
const MAX_JOB_PRIORITY: u64 = i32::MAX as u64;

impl Cluster {
    /// The priority a job starts from: the JPRIORITY it was forwarded
    /// with, else its `-sp` (capped at MAX_USER_PRIORITY), else half of
    /// MAX_USER_PRIORITY; 0 when MAX_USER_PRIORITY is not set.
    pub(crate) fn base_job_priority(&self, spec: &JobSpec) -> u32 {
        spec.carried_job_priority()
            .unwrap_or_else(|| self.effective_priority(spec))
    }

    /// `job`'s JPRIORITY at `now`: its base priority, raised by
    /// JOB_PRIORITY_OVER_TIME's increment for every whole interval it has
    /// pended (see [`Job::pended`]).
    pub fn job_priority(&self, job: &Job, now: SimTime) -> u32 {
        self.escalated(self.base_job_priority(&job.spec), job.pended(now))
    }

    /// `base` after pending for `pended`.
    pub(crate) fn escalated(&self, base: u32, pended: Duration) -> u32 {
        let Some(escalation) = self.policy.priority_over_time else {
            return base;
        };
        let millis = |time: Duration| u64::try_from(time.as_millis()).unwrap_or(u64::MAX);
        let steps = millis(pended) / millis(escalation.interval).max(1);
        let raised =
            u64::from(base).saturating_add(steps.saturating_mul(u64::from(escalation.increment)));
        u32::try_from(raised.min(MAX_JOB_PRIORITY)).unwrap_or(u32::MAX)
    }

    /// The APS group a queue's jobs are ordered in, if any.
    pub(crate) fn aps_group_of(&self, queue: QueueIndex) -> Option<&ApsGroup> {
        let group = self.queues[queue].aps_group?;
        self.queues.aps_groups().get(group)
    }

    /// The user's dynamic priority in `queue` (the FS factor), through the
    /// one function that computes it; `None` without FAIRSHARE.
    fn fs_figure(
        &self,
        queue: QueueIndex,
        user: UserId,
        now: SimTime,
        cache: &mut FsCache,
    ) -> Option<f64> {
        self.queues[queue].fairshare.as_ref()?;
        *cache.entry((queue, user)).or_insert_with(|| {
            let name = &*self.users.get(user)?.name;
            self.dynamic_priority_of(queue, name, now)
        })
    }

    /// What the formula reads of `job` at `now`; `resize`: the slots of
    /// its pending resize request and when that began pending, for a
    /// request rather than the job.
    fn aps_inputs(
        &self,
        job: &Job,
        group: &ApsGroup,
        now: SimTime,
        cache: &mut FsCache,
        resize: Option<(u32, SimTime)>,
    ) -> ApsInputs {
        let pended = match resize {
            Some((_, since)) => job.pended(now) + now.saturating_since(since),
            None => job.pended(now),
        };
        let fs = if group.aps.counts_fairshare() {
            self.fs_figure(job.queue, job.user, now, cache)
        } else {
            None
        };
        let proc = resize.map_or_else(|| job.spec.max_slots(), |(slots, _)| slots);
        self.inputs_of(
            &job.spec,
            job.queue,
            group,
            (pended, proc),
            fs,
            job.aps_set(),
        )
    }

    /// What the formula reads of a job with `spec` in `queue` of `group`
    /// that has pended `pended` and asks for `proc` slots, given its user's
    /// dynamic priority `fs` (read only where FS counts) and the value
    /// `bmod -aps` set: one rule for the pending jobs here and for the jobs
    /// waiting in a send queue (`send`).
    pub(super) fn inputs_of(
        &self,
        spec: &JobSpec,
        queue: QueueIndex,
        group: &ApsGroup,
        (pended, proc): (Duration, u32),
        fs: Option<f64>,
        set: Option<ApsSet>,
    ) -> ApsInputs {
        let fs = if group.aps.counts_fairshare() {
            fs
        } else {
            self.queues[queue].fairshare.as_ref().map(|_| 0.0)
        };
        let admin = match set {
            Some(ApsSet::Admin(value)) => value,
            _ => 0.0,
        };
        ApsInputs {
            fs,
            proc: f64::from(proc),
            mem: spec.mem_request_mb() as f64,
            swap: spec.swap_request_mb() as f64,
            jpriority: f64::from(self.escalated(self.base_job_priority(spec), pended)),
            qpriority: f64::from(self.queues[queue].config.priority),
            pended,
            admin,
        }
    }

    /// `job`'s rank, value and breakdown in `group` at `now`.
    pub(crate) fn aps_rank(
        &self,
        job: &Job,
        group: &ApsGroup,
        now: SimTime,
        cache: &mut FsCache,
        resize: Option<(u32, SimTime)>,
    ) -> (ApsKey, ApsShown, ApsBreakdown) {
        let breakdown = aps_value(&group.aps, &self.aps_inputs(job, group, now, cache, resize));
        let (key, shown) = self.key_of(job, breakdown.value);
        (key, shown, breakdown)
    }

    /// `job`'s rank in `group` at `now` alone: what a dispatch pass sorts
    /// by (the same inputs and formula as [`Cluster::aps_rank`], without
    /// the parts).
    fn aps_key(
        &self,
        job: &Job,
        group: &ApsGroup,
        now: SimTime,
        cache: &mut FsCache,
        resize: Option<(u32, SimTime)>,
    ) -> ApsKey {
        if let Some(ApsSet::System(_)) = job.aps_set() {
            // A system value stands for the calculated one.
            return self.key_of(job, 0.0).0;
        }
        let inputs = self.aps_inputs(job, group, now, cache, resize);
        self.key_of(job, aps_value_only(&group.aps, &inputs)).0
    }

    /// `job`'s key and shown value given its `calculated` value: migrated
    /// jobs first (unless LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND make
    /// them compete), then system values, then calculated values.
    fn key_of(&self, job: &Job, calculated: f64) -> (ApsKey, ApsShown) {
        let migrated = job.migrated() && !(self.policy.requeue_to_bottom && self.policy.mig2pend);
        let (tier, shown) = shown_of(job.aps_set(), calculated);
        let tier = if migrated { 0 } else { tier };
        let key = ApsKey::new(tier, shown.value().unwrap_or(0.0), job.arrival);
        (key, shown)
    }

    /// The entry of pending job `id` (or of its resize request, if it is
    /// running with one) at `now`.
    pub fn aps_entry(&self, id: JobId, now: SimTime) -> Option<ApsEntry> {
        let job = self.jobs.get(id)?;
        let resize = self.resize_request(job);
        if job.state != JobState::Pending && resize.is_none() {
            return None;
        }
        let mut cache = FsCache::default();
        Some(self.entry_of(job, now, &mut cache, resize).1)
    }

    fn entry_of(
        &self,
        job: &Job,
        now: SimTime,
        cache: &mut FsCache,
        resize: Option<(u32, SimTime)>,
    ) -> (Option<ApsKey>, ApsEntry) {
        let mut entry = ApsEntry {
            job: job.id,
            queue: job.queue,
            shown: ApsShown::None,
            breakdown: None,
            jpriority: self.job_priority(job, now),
            migrated: job.migrated(),
            resize: resize.is_some(),
        };
        let Some(group) = self.aps_group_of(job.queue) else {
            return (None, entry);
        };
        let (key, shown, breakdown) = self.aps_rank(job, group, now, cache, resize);
        entry.shown = shown;
        entry.breakdown = Some(breakdown);
        entry.jpriority = breakdown.figures[super::ApsTerm::JPriority.index()] as u32;
        (Some(key), entry)
    }

    /// Every pending job, and every running job's pending resize request,
    /// in `bjobs -aps` order: jobs of APS queues by rank (migrated first,
    /// then system values, then calculated values, highest first), then
    /// the jobs of queues without APS by queue priority and their order
    /// in the queue; ties go to the earlier submission.
    pub fn aps_listing(&self, now: SimTime) -> Vec<ApsEntry> {
        let mut cache = FsCache::default();
        let mut ranked: Vec<(ApsKey, ApsEntry)> = Vec::new();
        let mut others: Vec<((std::cmp::Reverse<u32>, u64), ApsEntry)> = Vec::new();
        for job in self.jobs.values() {
            let resize = self.resize_request(job);
            if job.state != JobState::Pending && resize.is_none() {
                continue;
            }
            match self.entry_of(job, now, &mut cache, resize) {
                (Some(key), entry) => ranked.push((key, entry)),
                (None, entry) => {
                    let priority = self.queues[job.queue].config.priority;
                    others.push(((std::cmp::Reverse(priority), job.arrival), entry));
                }
            }
        }
        ranked.sort_by(|a, b| a.0.dispatch_cmp(&b.0).then_with(|| a.1.job.cmp(&b.1.job)));
        others.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.job.cmp(&b.1.job)));
        ranked
            .into_iter()
            .map(|(_, entry)| entry)
            .chain(others.into_iter().map(|(_, entry)| entry))
            .collect()
    }

    /// The order in which the next dispatch pass would try the pending
    /// jobs of `queue` at `now` (and running jobs' resize requests): for a
    /// queue of an APS group, its group's order; for a first-come,
    /// first-served queue, its order by priority and arrival. `None` for a
    /// fairshare queue without APS (it picks by user priority as it goes).
    pub fn dispatch_order(&self, queue: QueueIndex, now: SimTime) -> Option<Vec<JobId>> {
        if let Some(group) = self.aps_group_of(queue) {
            let open = vec![true; group.members.len()];
            let mut candidates = self.aps_candidates(group, &open, now);
            candidates.sort_by(|a, b| a.0.dispatch_cmp(&b.0));
            return Some(candidates.into_iter().map(|(_, id)| id).collect());
        }
        let state = &self.queues[queue];
        if state.fairshare.is_some() {
            return None;
        }
        let mut order: Vec<(u64, JobId)> = state
            .pending
            .unordered()
            .chain(
                state
                    .resize_pending
                    .iter()
                    .map(|(&arrival, &(id, _))| (arrival, id)),
            )
            .collect();
        order.sort_unstable();
        Some(order.into_iter().map(|(_, id)| id).collect())
    }

    /// The pending jobs and resize requests of `group`'s queues whose
    /// `open` flag is set, each with its rank at `now`, in dispatch order
    /// (so that sorting them again by [`ApsKey::dispatch_cmp`] only finds
    /// them in order).
    pub(crate) fn aps_candidates(
        &self,
        group: &ApsGroup,
        open: &[bool],
        now: SimTime,
    ) -> Vec<(ApsKey, JobId)> {
        let mut cache = FsCache::default();
        let members = || {
            group
                .members
                .iter()
                .zip(open)
                .filter(|(_, open)| **open)
                .map(|(&queue, _)| &self.queues[queue])
        };
        let count = members()
            .map(|state| state.pending.len() + state.resize_pending.len())
            .sum();
        let mut candidates = Vec::with_capacity(count);
        for state in members() {
            for (_, id) in state.pending.unordered() {
                if let Some(job) = self.jobs.get(id) {
                    candidates.push((self.aps_key(job, group, now, &mut cache, None), id));
                }
            }
            for &(id, since) in state.resize_pending.values() {
                if let Some(job) = self.jobs.get(id) {
                    let wanted = job.spec.max_slots().saturating_sub(job.spec.slots);
                    let key = self.aps_key(job, group, now, &mut cache, Some((wanted, since)));
                    candidates.push((key, id));
                }
            }
        }
        candidates.sort_unstable_by_key(|(key, _)| *key);
        candidates
    }

    /// A running job's pending resize request: the slots it asks for and
    /// when it began pending.
    pub(crate) fn resize_request(&self, job: &Job) -> Option<(u32, SimTime)> {
        if job.state != JobState::Running || !job.spec.auto_resizes() {
            return None;
        }
        let (_, since) = self.queues[job.queue].resize_pending.get(&job.arrival)?;
        Some((job.spec.max_slots().saturating_sub(job.spec.slots), *since))
    }
}

#[cfg(test)]
mod tests {
    use super::ApsKey;

    #[test]
    fn the_key_sorts_tier_then_value_highest_first_then_submission() {
        // The order spelt out as a chain of comparisons.
        let reference = |a: &(u8, f64, u64), b: &(u8, f64, u64)| {
            a.0.cmp(&b.0)
                .then_with(|| b.1.total_cmp(&a.1))
                .then_with(|| a.2.cmp(&b.2))
        };
        let values = [
            -1_000_000.0,
            -350.5,
            -1.0,
            -0.0,
            0.0,
            1e-9,
            1.0,
            90.0,
            350.25,
            1_000_000.0,
        ];
        let mut keys = Vec::new();
        for tier in 0..3 {
            for &value in &values {
                for seq in [0, 7, (1 << 48) - 1] {
                    keys.push((tier, value, seq));
                }
            }
        }
        for a in &keys {
            for b in &keys {
                let (x, y) = (ApsKey::new(a.0, a.1, a.2), ApsKey::new(b.0, b.1, b.2));
                assert_eq!(x.dispatch_cmp(&y), reference(a, b), "{a:?} against {b:?}");
            }
        }
    }
}
