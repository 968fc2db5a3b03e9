//! A first-come-first-served queue's order: its pending jobs are tried in
//! the queue's order (user priority, then arrival) until one fails for the
//! whole queue.
//!
//! The turn does not look at every job. Pending jobs sit in buckets of
//! jobs the pass cannot tell apart (`scheduler::pending`), and the turn
//! walks the buckets' next jobs in order, merged through a heap. When a
//! job fails for a reason that stands for its bucket ([`Scope::Class`]:
//! the same slots, resources and, where a limit reads it, user — or the
//! user is at a limit), its bucket is set aside: its later jobs would fail
//! the same way. Whatever changes the books (a job starts, a reservation
//! is made or dropped) brings every bucket set aside back at the walk's
//! place, and so does a shrinking `smallest_failure` for a bucket whose
//! failure was not a plain shortage of slots (the shortcut it gives may
//! name another reason). The jobs set aside in between are exactly those
//! the plain walk would have tried with that same outcome, so the pass
//! starts the same jobs and gives every job the same reason; the reasons
//! of the jobs it jumped over are kept as ranges in their buckets.
//!
//! A cluster told to [`Cluster::scan_every_job`] sets no bucket aside, and
//! so tries every pending job, as the comparison property in
//! `tests/it/indexed_dispatch.rs` has it do.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::dispatch::{Outcome, Round, Scope, Turn};
use crate::job::{JobId, PendingReason, QueueIndex};
use crate::scheduler::{BucketIndex, Cluster, PendingJobs};

use super::{Flow, Next};

/// A bucket set aside: its jobs after `after` fail for `reason` until
/// something changes — or, `lasting`, for the rest of the turn.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SetAside {
    bucket: BucketIndex,
    /// The bucket's generation (its place may be reused once it empties).
    generation: u32,
    after: u64,
    reason: PendingReason,
    lasting: bool,
}

/// A bucket's next job: its order key, the bucket, the job.
type Head = Reverse<(u64, BucketIndex, JobId)>;

/// The vectors of a walk, kept between passes (a pass must not allocate
/// for each queue's turn).
#[derive(Clone, Debug, Default)]
pub(crate) struct WalkBuffers {
    heads: Vec<Head>,
    aside: Vec<SetAside>,
}

/// One walk over a queue's buckets.
struct Walk {
    /// Each bucket's next job to try (buckets set aside are not here).
    heads: BinaryHeap<Head>,
    aside: Vec<SetAside>,
    /// The pass, for the ranges the walk skips.
    pass: u64,
    /// Jobs taken out of the queue's list that the walk knows of: when
    /// others go (a chunk takes them), heads are checked before use.
    removed: u64,
    check_heads: bool,
}

impl Walk {
    /// Every bucket's first job, in `buffers`.
    fn new(pending: &PendingJobs, pass: u64, buffers: WalkBuffers) -> Self {
        let WalkBuffers { mut heads, aside } = buffers;
        for head in pending.heads() {
            heads.push(Reverse(head));
        }
        Walk {
            heads: BinaryHeap::from(heads),
            aside,
            pass,
            removed: pending.removed(),
            check_heads: false,
        }
    }

    /// The next job to try: the earliest of the buckets' next jobs.
    fn next(&mut self, pending: &PendingJobs) -> Option<(u64, BucketIndex, JobId)> {
        while let Some(Reverse((key, bucket, id))) = self.heads.pop() {
            if !self.check_heads {
                return Some((key, bucket, id));
            }
            match pending.next_in_bucket(bucket, key) {
                Some((next, id)) if next == key => return Some((key, bucket, id)),
                Some((next, id)) => self.heads.push(Reverse((next, bucket, id))),
                None => {}
            }
        }
        None
    }

    /// After a try: jobs that left the list other than `tried` (which
    /// started, if it left) make heads to be checked from now on.
    fn note_removals(&mut self, pending: &PendingJobs, tried_left: bool) {
        let expected = self.removed + u64::from(tried_left);
        if pending.removed() != expected {
            self.check_heads = true;
        }
        self.removed = pending.removed();
    }

    /// Bucket `bucket`'s next job after `key` goes in the heap.
    fn push_after(&mut self, pending: &PendingJobs, bucket: BucketIndex, key: u64) {
        if let Some((next, id)) = key
            .checked_add(1)
            .and_then(|from| pending.next_in_bucket(bucket, from))
        {
            self.heads.push(Reverse((next, bucket, id)));
        }
    }

    /// The buckets set aside that `again` picks come back after `key`:
    /// the jobs they skipped up to it keep their reasons.
    fn bring_back(
        &mut self,
        pending: &mut PendingJobs,
        key: u64,
        again: impl Fn(&SetAside) -> bool,
    ) {
        if self.aside.is_empty() {
            return;
        }
        let (heads, pass) = (&mut self.heads, self.pass);
        self.aside.retain(|aside| {
            if !again(aside) {
                return true;
            }
            record(pending, *aside, key.saturating_sub(1), pass);
            if let Some((next, id)) = key
                .checked_add(1)
                .and_then(|from| pending.next_in_bucket(aside.bucket, from))
            {
                heads.push(Reverse((next, aside.bucket, id)));
            }
            false
        });
    }

    /// The walk ends with the jobs up to `last` reached; its vectors go
    /// back to be reused.
    fn finish(self, pending: &mut PendingJobs, last: u64) -> WalkBuffers {
        let Walk {
            heads,
            mut aside,
            pass,
            ..
        } = self;
        for set_aside in aside.drain(..) {
            record(pending, set_aside, last, pass);
        }
        let mut heads = heads.into_vec();
        heads.clear();
        WalkBuffers { heads, aside }
    }
}

/// The jobs of a bucket set aside, up to `last`, were skipped (unless
/// the bucket emptied and its place went to another).
fn record(pending: &mut PendingJobs, aside: SetAside, last: u64, pass: u64) {
    if pending.generation(aside.bucket) != aside.generation {
        return;
    }
    if let Some(first) = aside.after.checked_add(1) {
        pending.skip(aside.bucket, (first, last), pass, aside.reason);
    }
}

/// A first-come-first-served queue's order for one turn.
pub(crate) struct ArrivalOrder {
    queue: QueueIndex,
    walk: Walk,
    turn: Turn,
    /// The job being tried and what it was tried against.
    current: Option<Current>,
    /// The last order key the turn reached (it stops early at a failure
    /// for the whole queue).
    last: u64,
    /// Try every job: set no bucket aside ([`Cluster::scan_every_job`]).
    every: bool,
}

/// The job being tried: where it is, and the books before the try.
#[derive(Clone, Copy, Debug)]
struct Current {
    key: u64,
    bucket: BucketIndex,
    version: u64,
    smallest_failure: u32,
    added: u64,
}

impl ArrivalOrder {
    /// `queue`'s order, with the walk's vectors kept from the last turn.
    pub(super) fn new(cluster: &mut Cluster, queue: QueueIndex) -> Self {
        let buffers = std::mem::take(&mut cluster.walk_buffers);
        ArrivalOrder {
            queue,
            walk: Walk::new(&cluster.queues[queue].pending, cluster.cycle.pass, buffers),
            turn: Turn::new(Round::Main),
            current: None,
            last: u64::MAX,
            every: cluster.scan_every_job,
        }
    }

    pub(super) fn next(&mut self, cluster: &Cluster) -> Option<Next> {
        let pending = &cluster.queues[self.queue].pending;
        let (key, bucket, id) = self.walk.next(pending)?;
        self.current = Some(Current {
            key,
            bucket,
            version: cluster.cycle.version,
            smallest_failure: self.turn.smallest_failure,
            added: pending.added(),
        });
        Some(Next::pending(self.queue, id))
    }

    pub(super) fn turn(&mut self) -> &mut Turn {
        &mut self.turn
    }

    /// After the try of the current job: set its bucket aside if its
    /// failure stands for the bucket, bring back the buckets a change may
    /// have freed, and go on with the bucket's next job.
    pub(super) fn tried(&mut self, cluster: &mut Cluster, outcome: Outcome) -> Flow {
        let Some(Current {
            key,
            bucket,
            version,
            smallest_failure,
            added,
        }) = self.current.take()
        else {
            return Flow::Continue;
        };
        let queue = self.queue;
        let unchanged = cluster.cycle.version == version;
        let mut set_aside = false;
        if let Outcome::Failed { reason, scope } = outcome {
            if scope == Scope::Queue {
                cluster.stop_queue(queue, reason);
                self.last = key.saturating_sub(1);
                return Flow::Stop;
            }
            if !self.every && unchanged && matches!(scope, Scope::Class | Scope::User) {
                // A plain job short of slots where no limit is checked
                // before the shortcut: every later job of its bucket takes
                // the shortcut, whatever else starts.
                let pending = &cluster.queues[queue].pending;
                let lasting = reason == PendingReason::NotEnoughSlots
                    && pending.is_plain(bucket)
                    && cluster.without_queue_limits(queue);
                self.walk.aside.push(SetAside {
                    bucket,
                    generation: pending.generation(bucket),
                    after: key,
                    reason,
                    lasting,
                });
                set_aside = true;
            }
        }
        let pending = &mut cluster.queues[queue].pending;
        let walk = &mut self.walk;
        walk.note_removals(pending, matches!(outcome, Outcome::Started));
        if pending.added() != added {
            // Jobs came in (a requeue): every bucket from here on.
            walk.bring_back(pending, key, |_| true);
            walk.heads.clear();
            let from = key.saturating_add(1);
            let heads = pending.heads().filter_map(|(_, bucket, _)| {
                let (next, id) = pending.next_in_bucket(bucket, from)?;
                Some(Reverse((next, bucket, id)))
            });
            walk.heads.extend(heads);
            return Flow::Continue;
        }
        if !unchanged {
            walk.bring_back(pending, key, |aside| !aside.lasting);
        } else if self.turn.smallest_failure != smallest_failure {
            walk.bring_back(pending, key, |aside| {
                aside.reason != PendingReason::NotEnoughSlots
            });
        }
        if !set_aside {
            walk.push_after(pending, bucket, key);
        }
        Flow::Continue
    }

    /// The turn is over: the buckets still set aside note what they
    /// skipped, and the walk's vectors go back to the cluster.
    pub(super) fn finish(self, cluster: &mut Cluster) {
        let pending = &mut cluster.queues[self.queue].pending;
        cluster.walk_buffers = self.walk.finish(pending, self.last);
    }
}

impl Cluster {
    /// Whether dispatch passes try every pending job of a first-come,
    /// first-served queue (`true`) or jump over the jobs that fail as one
    /// already tried (the default). Both give the same passes; the plain
    /// walk is kept for the property that says so.
    #[doc(hidden)]
    pub fn scan_every_job(&mut self, every: bool) {
        self.scan_every_job = every;
    }

    /// Whether no queue-level or user-level limit is checked before the
    /// shortcut for slots (`Turn::smallest_failure`) in `queue`'s turn:
    /// no QJOB_LIMIT, slot pool, UJOB_LIMIT, user or group limit or
    /// lsb.resources Limit (the last three make the buckets per user).
    fn without_queue_limits(&self, queue: QueueIndex) -> bool {
        let state = &self.queues[queue];
        state.config.job_limit.is_none() && state.pool.is_none() && !state.pending.by_user()
    }
}
