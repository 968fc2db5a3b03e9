//! A snapshot made a slice at a time ([`SnapshotBuilder`]), so that a
//! cluster holding a million jobs is never stopped for the whole of it:
//! its jobs are walked where they are kept and encoded a slice between
//! inputs (beginning costs no walk of them), and every record the
//! member writes meanwhile is encoded too, after them (every job record
//! is the job as it stands, [`JournalRecord`], so for each job the entry
//! encoded last is the job as it stands now, or says it is gone; a job
//! moved unchanged between the scheduler and parking is journaled as
//! moved and encoded again where it is). At the end the newest entry of
//! each job is kept, and the whole is the same
//! [`DurableState`](crate::DurableState) encoding
//! [`SnapshotView`](super::SnapshotView) gives at that moment.

use std::ops::Range;

use mcfed_cluster::{JobId, JobImage};
use rustc_hash::FxHashSet;
use serde::Serialize;

use super::Finished;
use crate::journal::{JournalRecord, ProcessFacts};
use crate::member::Member;

/// The encoded map entries (`id`, value) of one map of the state, oldest
/// first.
#[derive(Default)]
struct Entries {
    /// The entries, back to back.
    bytes: Vec<u8>,
    /// Each entry's id, where it ends in `bytes`, and whether it says the
    /// job is gone (then it is empty).
    ends: Vec<(u64, usize, bool)>,
}

/// A walk over places `0..end`, a slice at a time.
#[derive(Default)]
struct Walk {
    /// How many places are walked.
    done: usize,
    /// The places to walk.
    end: usize,
}

impl Walk {
    fn to(end: usize) -> Walk {
        Walk { done: 0, end }
    }

    /// The next `budget` places at most, taken.
    fn take(&mut self, budget: usize) -> Range<usize> {
        let start = self.done;
        self.done = self.end.min(start.saturating_add(budget));
        start..self.done
    }

    fn finished(&self) -> bool {
        self.done == self.end
    }
}

impl Entries {
    /// Encodes the entry of `id`.
    fn push(&mut self, id: u64, value: &impl Serialize) -> Result<(), postcard::Error> {
        let bytes = std::mem::take(&mut self.bytes);
        self.bytes = postcard::to_extend(&(id, value), bytes)?;
        self.ends.push((id, self.bytes.len(), false));
        Ok(())
    }

    /// Notes that the job `id` is gone.
    fn gone(&mut self, id: u64) {
        self.ends.push((id, self.bytes.len(), true));
    }

    /// Appends the map to `out`: the newest entry of each id unless it
    /// says the job is gone, then `extra`, `extra_count` entries more.
    fn finish(
        &self,
        out: Vec<u8>,
        extra: &[u8],
        extra_count: usize,
    ) -> Result<Vec<u8>, postcard::Error> {
        let mut seen = FxHashSet::default();
        let mut kept = Vec::new();
        for (index, &(id, end, gone)) in self.ends.iter().enumerate().rev() {
            if seen.insert(id) && !gone {
                let start = index.checked_sub(1).map_or(0, |before| self.ends[before].1);
                kept.push(start..end);
            }
        }
        // A map is its length, then its entries (in the order encoded).
        let mut out = postcard::to_extend(&(kept.len() + extra_count), out)?;
        for range in kept.into_iter().rev() {
            out.extend_from_slice(&self.bytes[range]);
        }
        out.extend_from_slice(extra);
        Ok(out)
    }
}

/// A snapshot of a member encoded a slice at a time: [`begin`], then
/// [`note`] every record the member writes and [`advance`] between
/// inputs until it says it is done, then [`finish`].
///
/// [`begin`]: SnapshotBuilder::begin
/// [`note`]: SnapshotBuilder::note
/// [`advance`]: SnapshotBuilder::advance
/// [`finish`]: SnapshotBuilder::finish
pub struct SnapshotBuilder {
    /// The jobs' entries: walked in the scheduler and parked, and noted.
    jobs: Entries,
    /// The scheduler's places (`Cluster::job_places`) when it began.
    places: Walk,
    /// The parked jobs, in their order, when it began (all walked at
    /// once when parking changes).
    parked: Walk,
    /// `ClusterNode::parking_changes` when the walk last looked at the
    /// parked jobs.
    parking_changes: u64,
    /// Jobs moved between the scheduler and parking since the last slice
    /// ([`JournalRecord::JobMoved`]), to encode as they stand.
    moved: Vec<u64>,
    /// The send queues' jobs' entries: walked and noted.
    sources: Entries,
    /// The walk of the send queues' jobs, in the order of their ids
    /// (`Member::source_ids`): those from `start` up to `end` are still
    /// to walk (a job with a later id arrived since, with a record).
    source_walk: Range<u64>,
}

impl SnapshotBuilder {
    /// Starts a snapshot of `member` as it stands. The scheduler's jobs
    /// are walked where they are kept, a slice at a time
    /// (`Cluster::jobs_in_places`, no list of them made here), then the
    /// jobs parked, then the send queues' jobs in the order of their ids
    /// (a cursor in the ids, no list of them made here); a job arriving
    /// later comes with a record. The member is journaled
    /// ([`Member::enable_journal`]): its records say what changes between
    /// slices, and the ids of its send queues' jobs are kept only then.
    pub fn begin(member: &Member) -> SnapshotBuilder {
        let source_end = member.source_ids.last().map_or(0, |last| last + 1);
        SnapshotBuilder {
            jobs: Entries::default(),
            places: Walk::to(member.node.cluster().job_places()),
            parked: Walk::to(member.node.parked_jobs().count()),
            parking_changes: member.node.parking_changes(),
            moved: Vec::new(),
            sources: Entries::default(),
            source_walk: 0..source_end,
        }
    }

    /// Encodes what `records` say of jobs (each the job as it stands, or
    /// gone), newer than everything encoded before.
    pub fn note(&mut self, records: &[JournalRecord]) -> Result<(), postcard::Error> {
        for record in records {
            match record {
                JournalRecord::Job { image, forward_seq } => {
                    self.jobs.push(image.id, &(&**image, forward_seq))?;
                }
                JournalRecord::JobGone { id, .. } => self.jobs.gone(*id),
                JournalRecord::Source(image) => self.sources.push(image.id, &**image)?,
                JournalRecord::SourceGone { id } => self.sources.gone(*id),
                JournalRecord::JobMoved { id } => self.moved.push(*id),
                _ => {}
            }
        }
        Ok(())
    }

    /// Encodes up to `budget` more of the jobs `member` held when the
    /// builder began (a place of the scheduler's counts, empty or not);
    /// whether all are (then [`SnapshotBuilder::finish`]).
    ///
    /// Every job `member` holds at the end is encoded after its last
    /// change: one that stayed where it was is met by the walk as it
    /// stands then, and every change after comes as a record; one that
    /// arrived came with a record. A job moved between the scheduler and
    /// parking, unchanged, comes with a [`JournalRecord::JobMoved`] and is
    /// encoded as it stands at the next slice; and since the parked jobs'
    /// order changes then, every job parked is encoded again once. The
    /// walk goes on: a link that goes down and up faster than a snapshot
    /// is made does not keep it from ending (it used to begin again).
    pub fn advance(&mut self, member: &Member, budget: usize) -> Result<bool, postcard::Error> {
        self.encode_moved(member)?;
        let cluster = member.node.cluster();
        let places = self.places.take(budget);
        let mut budget = budget - places.len();
        for image in cluster
            .jobs_in_places(places)
            .filter_map(|job| cluster.job_image(job.id))
        {
            self.jobs
                .push(image.id, &(&image, member.forward_seq_of(&image)))?;
        }
        let parked = self.parked.take(budget);
        budget -= parked.len();
        for image in member
            .node
            .parked_jobs()
            .skip(parked.start)
            .take(parked.len())
        {
            self.jobs
                .push(image.id, &(image, member.forward_seq_of(image)))?;
        }
        let forwarder = member.forwarder.as_ref();
        let mut ids = member.source_ids.range(self.source_walk.clone());
        for &id in ids.by_ref().take(budget) {
            self.source_walk.start = id + 1;
            if let Some(image) = forwarder.and_then(|forwarder| forwarder.job_image(id)) {
                self.sources.push(id, &image)?;
            }
        }
        if ids.next().is_none() {
            self.source_walk.start = self.source_walk.end;
        }
        Ok(self.places.finished() && self.parked.finished() && self.source_walk.is_empty())
    }

    /// Encodes the jobs moved between the scheduler and parking since the
    /// last slice as they stand (or as gone), and, when parking changed,
    /// every job parked now (the walk of the parked jobs is then done):
    /// the cost is the jobs parked and moved, not every job held.
    fn encode_moved(&mut self, member: &Member) -> Result<(), postcard::Error> {
        if member.node.parking_changes() != self.parking_changes {
            tracing::debug!("jobs were parked or put back: the parked ones encoded again");
            let mut parked = 0;
            for image in member.node.parked_jobs() {
                parked += 1;
                self.jobs
                    .push(image.id, &(image, member.forward_seq_of(image)))?;
            }
            self.parked = Walk::to(parked);
            self.parked.take(parked);
            self.parking_changes = member.node.parking_changes();
        }
        for id in std::mem::take(&mut self.moved) {
            match member.node.job_image(JobId(id)) {
                Some(image) => self
                    .jobs
                    .push(id, &(&image, member.forward_seq_of(&image)))?,
                None => self.jobs.gone(id),
            }
        }
        Ok(())
    }

    /// The snapshot of `member` as it stands now, with `process`: the
    /// encoding of its `DurableState`. Every job not encoded yet is
    /// encoded here.
    pub fn finish(
        self,
        member: &Member,
        process: Option<ProcessFacts>,
    ) -> Result<Vec<u8>, postcard::Error> {
        self.finish_later(member, process)?()
    }

    /// [`SnapshotBuilder::finish`] in two parts: what needs `member`
    /// (every job not encoded yet, and the state's other fields) now, and
    /// the rest in the function returned, which needs no member and may
    /// run on another thread: keeping each job's newest entry and joining
    /// them into the snapshot's bytes, most of the end's cost (about 0.2 s
    /// at a million jobs, docs/performance.md).
    pub fn finish_later(
        mut self,
        member: &Member,
        process: Option<ProcessFacts>,
    ) -> Result<impl FnOnce() -> Result<Vec<u8>, postcard::Error> + Send + 'static, postcard::Error>
    {
        while !self.advance(member, usize::MAX)? {}
        let (lineages, remotes) = member.snapshot_peers();
        // The fields of `DurableState`, in its order, around the two maps.
        let head = postcard::to_extend(&Some(member.name()), Vec::new())?;
        let head = postcard::to_extend(&process, head)?;
        let middle = postcard::to_extend(&Finished(member), Vec::new())?;
        let middle = postcard::to_extend(&member.node.cluster().next_job_id(), middle)?;
        let middle = postcard::to_extend(&member.node.update_seq(), middle)?;
        let tail = postcard::to_extend(&member.snapshot_next_source_id(), Vec::new())?;
        let tail = postcard::to_extend(&remotes, tail)?;
        let tail = postcard::to_extend(&lineages, tail)?;
        let tail = postcard::to_extend(&member.node.cluster().live_reservations(), tail)?;
        let SnapshotBuilder { jobs, sources, .. } = self;
        Ok(move || {
            let capacity = head.len() + jobs.bytes.len() + middle.len();
            let mut out = Vec::with_capacity(capacity + sources.bytes.len() + tail.len() + 32);
            out.extend_from_slice(&head);
            out = jobs.finish(out, &[], 0)?;
            out.extend_from_slice(&middle);
            out = sources.finish(out, &[], 0)?;
            out.extend_from_slice(&tail);
            Ok(out)
        })
    }
}

impl Member {
    /// The forward that brought the job of `image`, for a forwarded one.
    pub(crate) fn forward_seq_of(&self, image: &JobImage) -> Option<u64> {
        let (from, source_job) = image.forwarded_from.as_ref()?;
        self.node.forward_seq_of(from, *source_job)
    }
}
