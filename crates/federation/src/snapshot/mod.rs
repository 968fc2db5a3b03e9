//! A member's snapshot encoded straight from its live state
//! ([`Member::snapshot_view`]), without first copying it into a
//! [`DurableState`]: a cluster holding a million jobs would otherwise
//! build a million job images in maps (seconds on the member's thread
//! and hundreds of megabytes at once) only to encode and free them. The
//! view serializes field for field as [`DurableState`] does, so a
//! snapshot written from it is read back as a [`DurableState`]; each job
//! image is made, encoded and dropped one at a time.
//!
//! [`Member::durable_state`] keeps the owned form (for tests and callers
//! that fold records in); both take the jobs from the same iterators
//! here, so they cannot drift apart.

use std::collections::BTreeMap;

use mcfed_cluster::{FinishedForward, JobImage, JobState};
use mcfed_forwarder::{RemoteImage, SourceImage};
use mcfed_protocol::ClusterName;
use serde::ser::{Error as _, SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::journal::{DurableState, ProcessFacts};
use crate::member::Member;

mod builder;

pub use builder::SnapshotBuilder;

/// A member's state as a snapshot, borrowed: serializes exactly as the
/// [`DurableState`] [`Member::durable_state`] would give (with `process`
/// set), without making it.
pub struct SnapshotView<'a> {
    member: &'a Member,
    process: Option<ProcessFacts>,
}

impl Member {
    /// This member's state as the next snapshot, with the process's
    /// facts, to be serialized in place (see [`SnapshotView`]).
    pub fn snapshot_view(&self, process: Option<ProcessFacts>) -> SnapshotView<'_> {
        SnapshotView {
            member: self,
            process,
        }
    }

    /// The scheduler's jobs not finished (and those parked), each with
    /// the forward that brought it, made one at a time.
    pub(crate) fn snapshot_jobs(&self) -> impl Iterator<Item = (JobImage, Option<u64>)> + '_ {
        let cluster = self.node.cluster();
        cluster
            .jobs()
            .filter_map(|job| cluster.job_image(job.id))
            .chain(self.node.parked_jobs().cloned())
            .map(|image| {
                let forward_seq = self.forward_seq_of(&image);
                (image, forward_seq)
            })
    }

    /// How many items [`Member::snapshot_jobs`] gives, without making
    /// them: `ClusterNode::job_image` has none for a job done or exited.
    fn snapshot_job_count(&self) -> usize {
        let live = self
            .node
            .cluster()
            .jobs()
            .filter(|job| !matches!(job.state, JobState::Done | JobState::Exited))
            .count();
        live + self.node.parked_jobs().count()
    }

    /// The send queues' jobs not finished (and those killed away and
    /// remembered), made one at a time.
    pub(crate) fn snapshot_sources(&self) -> impl Iterator<Item = SourceImage> + '_ {
        self.forwarder
            .iter()
            .flat_map(|forwarder| forwarder.job_images())
    }

    /// How many items [`Member::snapshot_sources`] gives, without making
    /// them.
    fn snapshot_source_count(&self) -> usize {
        self.forwarder
            .as_ref()
            .map_or(0, |forwarder| forwarder.job_image_count())
    }

    /// The peers' lineages and the remote clusters' numbering (a remote
    /// cluster's lineage as the forwarder knows it wins).
    pub(crate) fn snapshot_peers(
        &self,
    ) -> (
        BTreeMap<ClusterName, u64>,
        BTreeMap<ClusterName, RemoteImage>,
    ) {
        let mut lineages: BTreeMap<ClusterName, u64> = self
            .node
            .lineages()
            .map(|(peer, lineage)| (peer.clone(), lineage))
            .collect();
        let mut remotes = BTreeMap::new();
        for remote in self.forwarder.iter().flat_map(|f| f.remote_images()) {
            if let Some(lineage) = remote.lineage {
                lineages.insert(remote.cluster.clone(), lineage);
            }
            remotes.insert(remote.cluster.clone(), remote);
        }
        (lineages, remotes)
    }

    /// The id the next job of a send queue gets, at least.
    pub(crate) fn snapshot_next_source_id(&self) -> u64 {
        self.forwarder
            .as_ref()
            .map_or(1, |forwarder| forwarder.next_job_id())
    }
}

impl Serialize for SnapshotView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let member = self.member;
        let (lineages, remotes) = member.snapshot_peers();
        // The fields of `DurableState`, in its order.
        let mut state = serializer.serialize_struct("DurableState", 11)?;
        state.serialize_field("cluster", &Some(member.name()))?;
        state.serialize_field("process", &self.process)?;
        state.serialize_field("jobs", &Jobs(member))?;
        state.serialize_field("finished", &Finished(member))?;
        state.serialize_field("next_job_id", &member.node.cluster().next_job_id())?;
        state.serialize_field("update_seq", &member.node.update_seq())?;
        state.serialize_field("sources", &Sources(member))?;
        state.serialize_field("next_source_id", &member.snapshot_next_source_id())?;
        state.serialize_field("remotes", &remotes)?;
        state.serialize_field("lineages", &lineages)?;
        state.serialize_field("reservations", &member.node.cluster().live_reservations())?;
        state.end()
    }
}

/// `DurableState::jobs`, as a map serialized in place.
struct Jobs<'a>(&'a Member);

impl Serialize for Jobs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = self
            .0
            .snapshot_jobs()
            .map(|(image, forward_seq)| (image.id, (image, forward_seq)));
        counted_map(serializer, self.0.snapshot_job_count(), entries)
    }
}

/// `DurableState::finished`, as a map serialized in place.
pub(crate) struct Finished<'a>(&'a Member);

impl Serialize for Finished<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let count = self.0.node.finished_forwards().count();
        let entries = self
            .0
            .node
            .finished_forwards()
            .map(|done: FinishedForward| ((done.from.clone(), done.source_job), done));
        counted_map(serializer, count, entries)
    }
}

/// `DurableState::sources`, as a map serialized in place.
struct Sources<'a>(&'a Member);

impl Serialize for Sources<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = self.0.snapshot_sources().map(|image| (image.id, image));
        counted_map(serializer, self.0.snapshot_source_count(), entries)
    }
}

/// Serializes `entries` as a map of `len` entries (a length-prefixed
/// encoding needs it first); an error, never a wrong snapshot, if they
/// are not that many.
fn counted_map<S, K, V>(
    serializer: S,
    len: usize,
    entries: impl Iterator<Item = (K, V)>,
) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    K: Serialize,
    V: Serialize,
{
    let mut map = serializer.serialize_map(Some(len))?;
    let mut written = 0usize;
    for (key, value) in entries {
        written += 1;
        if written > len {
            break;
        }
        map.serialize_entry(&key, &value)?;
    }
    if written != len {
        return Err(S::Error::custom(format!(
            "a snapshot map counted {len} entries but has {written} or more"
        )));
    }
    map.end()
}

/// The owned form of the same state (see [`Member::durable_state`]).
pub(crate) fn durable_state(member: &Member) -> DurableState {
    let mut state = DurableState::empty(member.name().clone());
    for (image, forward_seq) in member.snapshot_jobs() {
        state.jobs.insert(image.id, (image, forward_seq));
    }
    for done in member.node.finished_forwards() {
        state
            .finished
            .insert((done.from.clone(), done.source_job), done);
    }
    state.next_job_id = member.node.cluster().next_job_id();
    state.update_seq = member.node.update_seq();
    state.sources = member
        .snapshot_sources()
        .map(|image| (image.id, image))
        .collect();
    state.next_source_id = member.snapshot_next_source_id();
    (state.lineages, state.remotes) = member.snapshot_peers();
    state.reservations = member.node.cluster().live_reservations();
    state
}
