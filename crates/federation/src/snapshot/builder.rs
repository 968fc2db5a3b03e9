//! A snapshot made a slice at a time ([`SnapshotBuilder`]), so that a
//! cluster holding a million jobs is never stopped for the whole of it:
//! its jobs are encoded a slice between inputs, and every record the
//! member writes meanwhile is encoded too, after them (every job record
//! is the job as it stands, [`JournalRecord`], so for each job the entry
//! encoded last is the job as it stands now, or says it is gone). At the
//! end the newest entry of each job is kept, and the whole is the same
//! [`DurableState`](crate::DurableState) encoding
//! [`SnapshotView`](super::SnapshotView) gives at that moment.

use mcfed_cluster::{JobId, JobImage};
use rustc_hash::FxHashSet;
use serde::Serialize;

use super::Finished;
use crate::journal::{JournalRecord, ProcessFacts};
use crate::member::Member;

/// The encoded map entries (`id`, value) of one map of the state, oldest
/// first, and the ids still to encode.
#[derive(Default)]
struct Entries {
    /// The ids to encode, as they stood when the builder began.
    ids: Vec<u64>,
    /// How many of `ids` are done.
    done: usize,
    /// The entries, back to back.
    bytes: Vec<u8>,
    /// Each entry's id, where it ends in `bytes`, and whether it says the
    /// job is gone (then it is empty).
    ends: Vec<(u64, usize, bool)>,
}

impl Entries {
    fn new(ids: Vec<u64>) -> Entries {
        Entries {
            ids,
            ..Entries::default()
        }
    }

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

    /// Encodes the entries of up to `budget` more ids (`entry` gives an
    /// id's value, none if it has gone); how many ids were taken.
    fn advance<V: Serialize>(
        &mut self,
        budget: usize,
        mut entry: impl FnMut(u64) -> Option<V>,
    ) -> Result<usize, postcard::Error> {
        let end = self.ids.len().min(self.done.saturating_add(budget));
        for index in self.done..end {
            let id = self.ids[index];
            if let Some(value) = entry(id) {
                self.push(id, &value)?;
            }
        }
        let taken = end - self.done;
        self.done = end;
        Ok(taken)
    }

    fn finished(&self) -> bool {
        self.done == self.ids.len()
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
    jobs: Entries,
    sources: Entries,
}

impl SnapshotBuilder {
    /// Starts a snapshot of `member` as it stands: its jobs are those to
    /// encode (a job made later comes with a record).
    pub fn begin(member: &Member) -> SnapshotBuilder {
        // The jobs parked too (held back after a restart): one let go
        // later is the same job, and no record names it.
        let jobs = member
            .node
            .cluster()
            .jobs()
            .map(|job| job.id.0)
            .chain(member.node.parked_jobs().map(|image| image.id))
            .collect();
        let sources = member
            .forwarder
            .iter()
            .flat_map(|forwarder| forwarder.job_image_ids())
            .collect();
        SnapshotBuilder {
            jobs: Entries::new(jobs),
            sources: Entries::new(sources),
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
                _ => {}
            }
        }
        Ok(())
    }

    /// Encodes up to `budget` more of the jobs `member` held when the
    /// builder began; whether all are (then [`SnapshotBuilder::finish`]).
    pub fn advance(&mut self, member: &Member, budget: usize) -> Result<bool, postcard::Error> {
        let taken = self.jobs.advance(budget, |id| member.snapshot_job(id))?;
        let forwarder = member.forwarder.as_ref();
        self.sources.advance(budget - taken, |id| {
            forwarder.and_then(|forwarder| forwarder.job_image(id))
        })?;
        Ok(self.jobs.finished() && self.sources.finished())
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
        let SnapshotBuilder { jobs, sources } = self;
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
    /// Job `id`'s snapshot entry (its image, in the scheduler or parked,
    /// and the forward that brought it), unless it has ended.
    fn snapshot_job(&self, id: u64) -> Option<(JobImage, Option<u64>)> {
        let image = self.node.job_image(JobId(id))?;
        let forward_seq = self.forward_seq_of(&image);
        Some((image, forward_seq))
    }

    /// The forward that brought the job of `image`, for a forwarded one.
    pub(crate) fn forward_seq_of(&self, image: &JobImage) -> Option<u64> {
        let (from, source_job) = image.forwarded_from.as_ref()?;
        self.node.forward_seq_of(from, *source_job)
    }
}
