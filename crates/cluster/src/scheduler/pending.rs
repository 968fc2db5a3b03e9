//! A queue's pending jobs, kept in buckets of jobs that a dispatch pass
//! cannot tell apart — the same slots, GPUs and boolean resources, and,
//! when some limit reads the user, the same user — each bucket in the
//! queue's order (user priority, then arrival). Within a pass, one job's
//! failure stands for every later job of its bucket until something
//! changes (a job starts, a reservation is made, ...), so the pass jumps
//! over them: it walks the buckets' heads instead of every job
//! (`dispatch::order::arrival`), as production schedulers cache a failed job
//! class within a session. The queue's whole order is the buckets merged
//! ([`PendingJobs::iter`]).
//!
//! The jobs a pass jumps over do not have their pending reason written:
//! their bucket keeps the ranges of order keys it skipped in the pass,
//! with the reason, and [`PendingJobs::skipped_reason`] answers for them.
//! A job leaving the list while its reason is only in a range takes it
//! along (`Cluster::remove_pending`); a job entering a skipped
//! range in the same pass is cut out of it, since the pass never saw it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::btree_map::{self, BTreeMap};

use rustc_hash::FxHashMap;

use crate::job::{Job, JobId, PendingReason, UserId};

/// A bucket's index in its queue's [`PendingJobs`].
pub(crate) type BucketIndex = u32;

/// Empty buckets kept for reuse by their key before they are let go (a
/// queue that empties and fills again keeps its buckets).
const KEPT_EMPTY_BUCKETS: usize = 64;

/// What puts two pending jobs of a queue in the same bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct BucketKey {
    /// The job's boolean resources, interned (0: none).
    resources: u32,
    gpus: u32,
    /// The job's user, when some limit reads it; else `UserId::MAX`.
    user: UserId,
    slots: u32,
}

/// Order keys `first..=last` of a bucket that a pass skipped, and why
/// their jobs did not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SkippedRange {
    first: u64,
    last: u64,
    reason: PendingReason,
}

/// Jobs of one bucket, by order key, and what the latest pass skipped.
#[derive(Clone, Debug)]
struct Bucket {
    key: BucketKey,
    /// Bumped each time the bucket's place is reused for another key, so
    /// a walk that knew the old bucket by its index can tell.
    generation: u32,
    /// In `bucket_of` (a bucket let go is not, until reused).
    listed: bool,
    jobs: BTreeMap<u64, JobId>,
    /// The pass the ranges are from.
    skipped_pass: u64,
    /// Ranges skipped in that pass, in key order, not overlapping.
    skipped: Vec<SkippedRange>,
}

impl Bucket {
    /// The range of pass `pass` holding `key`, if any.
    fn range_of(&self, key: u64, pass: u64) -> Option<usize> {
        if self.skipped_pass != pass || self.skipped.is_empty() {
            return None;
        }
        let after = self.skipped.partition_point(|range| range.last < key);
        (after < self.skipped.len() && self.skipped[after].first <= key).then_some(after)
    }

    /// Cuts `key` out of the range of pass `pass` holding it.
    fn unskip(&mut self, key: u64, pass: u64) {
        let Some(at) = self.range_of(key, pass) else {
            return;
        };
        let range = self.skipped[at];
        let mut parts = Vec::with_capacity(2);
        if range.first < key {
            parts.push(SkippedRange {
                last: key - 1,
                ..range
            });
        }
        if key < range.last {
            parts.push(SkippedRange {
                first: key + 1,
                ..range
            });
        }
        self.skipped.splice(at..=at, parts);
    }
}

/// A queue's pending jobs (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct PendingJobs {
    /// Buckets, those let go included (empty, not listed).
    buckets: Vec<Bucket>,
    bucket_of: FxHashMap<BucketKey, BucketIndex>,
    /// The bucket of the last job put in (jobs come in runs of one kind;
    /// this saves hashing their keys).
    last: Option<(BucketKey, BucketIndex)>,
    /// Buckets let go, to reuse.
    free: Vec<BucketIndex>,
    /// Listed buckets that are empty.
    empty: usize,
    /// Interned boolean resource lists (their number is the index plus 1).
    resources: FxHashMap<Vec<String>, u32>,
    /// Some limit reads the user: jobs of different users never share a
    /// bucket.
    by_user: bool,
    /// Pending jobs.
    len: usize,
    /// Jobs put in and taken out so far (a walk notices the jobs that
    /// come and go while it runs).
    added: u64,
    removed: u64,
}

impl PendingJobs {
    /// No jobs; buckets per user when `by_user`.
    pub(crate) fn new(by_user: bool) -> Self {
        PendingJobs {
            by_user,
            ..PendingJobs::default()
        }
    }

    /// The number of pending jobs.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether no job is pending.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether buckets are per user (some limit reads the user).
    pub(crate) fn by_user(&self) -> bool {
        self.by_user
    }

    /// Every pending job with its order key, in the queue's order (the
    /// buckets merged).
    pub(crate) fn iter(&self) -> Merged<'_> {
        let mut cursors = Vec::new();
        let mut heads = BinaryHeap::new();
        for bucket in self.buckets.iter().filter(|bucket| !bucket.jobs.is_empty()) {
            let mut cursor = bucket.jobs.iter();
            if let Some((&key, &id)) = cursor.next() {
                heads.push(Reverse((key, id, cursors.len())));
            }
            cursors.push(cursor);
        }
        Merged { cursors, heads }
    }

    /// Every pending job in the queue's order.
    pub(crate) fn values(&self) -> impl Iterator<Item = JobId> + '_ {
        self.iter().map(|(_, id)| id)
    }

    /// Every pending job with its order key, bucket by bucket (for those
    /// who sort them their own way).
    pub(crate) fn unordered(&self) -> impl Iterator<Item = (u64, JobId)> + '_ {
        self.buckets
            .iter()
            .flat_map(|bucket| bucket.jobs.iter().map(|(&key, &id)| (key, id)))
    }

    /// The first job in the queue's order after order key `key` (from the
    /// start when `None`).
    pub(crate) fn next_after(&self, key: Option<u64>) -> Option<(u64, JobId)> {
        let from = match key {
            Some(key) => key.checked_add(1)?,
            None => 0,
        };
        self.buckets
            .iter()
            .filter_map(|bucket| bucket.jobs.range(from..).next())
            .map(|(&key, &id)| (key, id))
            .min()
    }

    /// Whether job `id` pends here at order key `key` in bucket `bucket`.
    pub(crate) fn holds(&self, bucket: BucketIndex, key: u64, id: JobId) -> bool {
        self.buckets
            .get(bucket as usize)
            .is_some_and(|entry| entry.listed && entry.jobs.get(&key) == Some(&id))
    }

    /// The slots each user's pending jobs ask for (buckets per user only:
    /// empty when no limit reads the user).
    pub(crate) fn slots_by_user(&self) -> impl Iterator<Item = (UserId, u32)> + '_ {
        self.buckets
            .iter()
            .filter(|bucket| self.by_user && !bucket.jobs.is_empty())
            .map(|bucket| {
                let count = u32::try_from(bucket.jobs.len()).unwrap_or(u32::MAX);
                (bucket.key.user, count.saturating_mul(bucket.key.slots))
            })
    }

    /// How many jobs have been put in so far.
    pub(crate) fn added(&self) -> u64 {
        self.added
    }

    /// How many jobs have been taken out so far.
    pub(crate) fn removed(&self) -> u64 {
        self.removed
    }

    /// Puts `job` in at its order key, during pass `pass`; returns its
    /// bucket, for the job to keep.
    pub(crate) fn insert(&mut self, job: &Job, pass: u64) -> BucketIndex {
        self.added += 1;
        self.len += 1;
        let key = self.bucket_key(job);
        let index = match self.last {
            Some((last, index)) if last == key => index,
            _ => match self.bucket_of.get(&key) {
                Some(&index) => index,
                None => self.new_bucket(key),
            },
        };
        self.last = Some((key, index));
        let bucket = &mut self.buckets[index as usize];
        if bucket.jobs.is_empty() {
            self.empty -= 1;
        }
        bucket.jobs.insert(job.arrival, job.id);
        // The pass did not see this job: it is no part of a range it
        // skipped.
        bucket.unskip(job.arrival, pass);
        index
    }

    /// Takes `job` (in bucket `bucket`) out (the caller keeps the reason
    /// a pass skipped it for, [`PendingJobs::skipped_reason`]).
    pub(crate) fn remove(&mut self, job: &Job, bucket: BucketIndex) {
        let entry = &mut self.buckets[bucket as usize];
        if entry.jobs.remove(&job.arrival).is_none() {
            return;
        }
        self.removed += 1;
        self.len -= 1;
        if entry.jobs.is_empty() {
            self.empty += 1;
            if self.empty > KEPT_EMPTY_BUCKETS {
                self.let_go_of_empty_buckets();
            }
        }
    }

    /// Why pass `pass` skipped the job at `key` of bucket `bucket`, if it
    /// did.
    pub(crate) fn skipped_reason(
        &self,
        bucket: BucketIndex,
        key: u64,
        pass: u64,
    ) -> Option<PendingReason> {
        let bucket = self.buckets.get(bucket as usize)?;
        bucket
            .range_of(key, pass)
            .map(|at| bucket.skipped[at].reason)
    }

    /// Pass `pass` skipped the jobs of bucket `bucket` with keys in
    /// `first..=last` (ranges come in key order within a pass) for
    /// `reason`.
    pub(crate) fn skip(
        &mut self,
        bucket: BucketIndex,
        (first, last): (u64, u64),
        pass: u64,
        reason: PendingReason,
    ) {
        if first > last {
            return;
        }
        let bucket = &mut self.buckets[bucket as usize];
        if bucket.skipped_pass != pass {
            bucket.skipped_pass = pass;
            bucket.skipped.clear();
        }
        bucket.skipped.push(SkippedRange {
            first,
            last,
            reason,
        });
    }

    /// Every bucket holding jobs, with its first job.
    pub(crate) fn heads(&self) -> impl Iterator<Item = (u64, BucketIndex, JobId)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter_map(|(index, bucket)| {
                let (&key, &id) = bucket.jobs.first_key_value()?;
                Some((key, index as BucketIndex, id))
            })
    }

    /// The first job of bucket `bucket` at or after order key `from`.
    pub(crate) fn next_in_bucket(&self, bucket: BucketIndex, from: u64) -> Option<(u64, JobId)> {
        let jobs = &self.buckets.get(bucket as usize)?.jobs;
        // Most often the jobs before `from` have started: the first is it.
        let (&first, &id) = jobs.first_key_value()?;
        if first >= from {
            return Some((first, id));
        }
        let (&key, &id) = jobs.range(from..).next()?;
        Some((key, id))
    }

    /// Which use of its place bucket `bucket` is (see `Bucket::generation`).
    pub(crate) fn generation(&self, bucket: BucketIndex) -> u32 {
        self.buckets
            .get(bucket as usize)
            .map_or(0, |bucket| bucket.generation)
    }

    /// Whether bucket `bucket`'s jobs ask for no resource and no GPU.
    pub(crate) fn is_plain(&self, bucket: BucketIndex) -> bool {
        self.buckets
            .get(bucket as usize)
            .is_some_and(|bucket| bucket.key.resources == 0 && bucket.key.gpus == 0)
    }

    /// The bucket `job` goes in.
    fn bucket_key(&mut self, job: &Job) -> BucketKey {
        let resources = if job.spec.resources.is_empty() {
            0
        } else if let Some(&id) = self.resources.get(job.spec.resources.as_slice()) {
            id
        } else {
            let id = u32::try_from(self.resources.len() + 1).unwrap_or(u32::MAX);
            self.resources.insert(job.spec.resources.clone(), id);
            id
        };
        BucketKey {
            resources,
            gpus: job.spec.gpus,
            user: if self.by_user { job.user } else { UserId::MAX },
            slots: job.spec.slots,
        }
    }

    /// A new empty bucket for `key`.
    fn new_bucket(&mut self, key: BucketKey) -> BucketIndex {
        let index = match self.free.pop() {
            Some(index) => {
                let bucket = &mut self.buckets[index as usize];
                bucket.key = key;
                bucket.generation = bucket.generation.wrapping_add(1);
                bucket.listed = true;
                bucket.skipped_pass = 0;
                bucket.skipped.clear();
                index
            }
            None => {
                self.buckets.push(Bucket {
                    key,
                    generation: 0,
                    listed: true,
                    jobs: BTreeMap::new(),
                    skipped_pass: 0,
                    skipped: Vec::new(),
                });
                BucketIndex::try_from(self.buckets.len() - 1).unwrap_or(BucketIndex::MAX)
            }
        };
        self.bucket_of.insert(key, index);
        self.empty += 1;
        index
    }

    /// Lets go of every empty bucket (their places are reused).
    fn let_go_of_empty_buckets(&mut self) {
        self.last = None;
        for (index, bucket) in self.buckets.iter_mut().enumerate() {
            if bucket.listed && bucket.jobs.is_empty() {
                bucket.listed = false;
                bucket.skipped.clear();
                self.bucket_of.remove(&bucket.key);
                self.free.push(index as BucketIndex);
            }
        }
        self.empty = 0;
    }

    /// Checks the buckets: each job in the bucket of its key, and the
    /// count.
    pub(crate) fn audit(
        &self,
        bucket_of_job: impl Fn(JobId) -> Option<(BucketIndex, u64)>,
    ) -> Result<(), String> {
        let mut count = 0;
        let mut empty = 0;
        for (index, bucket) in self.buckets.iter().enumerate() {
            let index = index as BucketIndex;
            if bucket.listed != (self.bucket_of.get(&bucket.key) == Some(&index)) {
                return Err(format!("pending bucket {index} is listed wrongly"));
            }
            if bucket.listed && bucket.jobs.is_empty() {
                empty += 1;
            }
            for (&key, &id) in &bucket.jobs {
                if !bucket.listed || bucket_of_job(id) != Some((index, key)) {
                    return Err(format!("pending job {id} is not in its own bucket"));
                }
            }
            count += bucket.jobs.len();
        }
        if count != self.len || empty != self.empty {
            return Err(format!(
                "{} pending jobs ({} empty buckets) counted, {count} ({empty}) in buckets",
                self.len, self.empty
            ));
        }
        Ok(())
    }
}

/// A queue's pending jobs in its order: the buckets merged.
pub(crate) struct Merged<'a> {
    cursors: Vec<btree_map::Iter<'a, u64, JobId>>,
    heads: BinaryHeap<Reverse<(u64, JobId, usize)>>,
}

impl Iterator for Merged<'_> {
    type Item = (u64, JobId);

    fn next(&mut self) -> Option<(u64, JobId)> {
        let Reverse((key, id, cursor)) = self.heads.pop()?;
        if let Some((&next, &next_id)) = self.cursors[cursor].next() {
            self.heads.push(Reverse((next, next_id, cursor)));
        }
        Some((key, id))
    }
}
