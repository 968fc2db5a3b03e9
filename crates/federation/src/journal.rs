//! What a cluster process writes to its journal, and what replaying it
//! gives back.
//!
//! A journal is a snapshot ([`DurableState`]) followed by records
//! ([`JournalRecord`]), each an *upsert* of something that changed: a job
//! of the scheduler as it stands now, a job of a send queue as it stands
//! now, a job gone, a counter update taken, a remote cluster's numbering,
//! a peer's lineage. Replaying is folding the records into the snapshot
//! ([`DurableState::apply`]). Compaction writes the live member's state
//! ([`crate::Member::durable_state`]) as the next snapshot and drops the
//! records. What the member forgets is written too (a job gone, the end
//! of a finished job its submission cluster's sync no longer lists), so a
//! restart between compactions brings none of it back. A member is
//! rebuilt from it with [`crate::Member::restore`].
//!
//! The record enum is the journal's format: variants are only ever added
//! at the end (a job-control operation that changes a job needs none — its
//! job is written again as it stands), and [`JOURNAL_FORMAT`] changes when
//! an existing variant does.

use std::collections::BTreeMap;

use mcfed_cluster::{AdvanceReservationConfig, FinishedForward, JobImage, LiveReservations};
use mcfed_forwarder::{RemoteImage, SourceImage, SourceImageState};
use mcfed_protocol::ClusterName;
use serde::{Deserialize, Serialize};

/// The version of the journal's records; a journal of another version is
/// refused rather than misread. Version 2: a send queue's job keeps the
/// `bmod -aps` value given it at the submission cluster
/// (`SourceImage::aps`). Version 3: a scheduler's job keeps its `bmod -aps`
/// value, its migration mark and its APS pending clock (`JobImage::aps`,
/// `JobImage::pend_clock`). Version 4: advance reservations made and
/// deleted live (`DurableState::reservations` and the two records).
pub const JOURNAL_FORMAT: u32 = 4;

/// What the process that writes a journal is, beyond its member: the
/// lineage of its state and its emulated time zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessFacts {
    /// The lineage of the state (see [`mcfed_protocol::Resume`]).
    pub lineage: u64,
    /// Emulated time zero, in milliseconds since the Unix epoch.
    pub epoch_unix_ms: u64,
}

/// One change, as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum JournalRecord {
    /// The process's lineage and clock.
    Process(ProcessFacts),
    /// A job of the scheduler that has not finished, as it stands now,
    /// with the forward that brought it (for a forwarded job).
    Job {
        /// The job (boxed: records are moved around in batches; on disk
        /// the box is transparent).
        image: Box<JobImage>,
        /// The forward that brought it.
        forward_seq: Option<u64>,
    },
    /// A job of the scheduler finished or left; a forwarded one that
    /// finished is kept for its submission cluster's next sync.
    JobGone {
        /// Its id.
        id: u64,
        /// For a forwarded job that finished, what its sync is answered.
        finished: Option<FinishedForward>,
    },
    /// A job of a send queue, as it stands now (boxed likewise).
    Source(Box<SourceImage>),
    /// A job of a send queue finished (or was taken out).
    SourceGone {
        /// Its id.
        id: u64,
    },
    /// A counter update was taken, numbered `seq`.
    Published {
        /// Its number.
        seq: u64,
    },
    /// A remote cluster's numbering and last update applied.
    Remote(RemoteImage),
    /// A peer resumed with `lineage`.
    Lineage {
        /// The peer.
        cluster: ClusterName,
        /// Its lineage.
        lineage: u64,
    },
    /// `brsvadd` made an advance reservation.
    ReservationAdded {
        /// The reservation.
        config: AdvanceReservationConfig,
        /// Who asked (`None`: the administrator).
        by: Option<String>,
    },
    /// `brsvdel` deleted an advance reservation.
    ReservationDeleted {
        /// Its name.
        name: String,
    },
    /// The end of a job forwarded here, kept for its submission cluster's
    /// sync (written with its [`JournalRecord::JobGone`]), is forgotten:
    /// that cluster's sync no longer lists the job (it knows the end).
    EndForgotten {
        /// The submission cluster.
        from: ClusterName,
        /// The job's id there.
        source_job: u64,
    },
    /// A job of the scheduler was parked, or put back, unchanged (its
    /// submission cluster out of step, then synced): nothing to replay (a
    /// restored member parks what is out of step again), but a snapshot
    /// being made a slice at a time encodes the job again where it is
    /// now ([`crate::SnapshotBuilder`]).
    JobMoved {
        /// Its id.
        id: u64,
    },
}

/// Everything a journal keeps of a member and its process: the snapshot
/// a journal starts with, and what replaying it gives.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DurableState {
    /// The cluster.
    pub cluster: Option<ClusterName>,
    /// The process's lineage and clock.
    pub process: Option<ProcessFacts>,
    /// The scheduler's jobs not finished, by id, with their forwards.
    pub jobs: BTreeMap<u64, (JobImage, Option<u64>)>,
    /// Forwarded jobs that finished, by submission cluster and id there.
    pub finished: BTreeMap<(ClusterName, u64), FinishedForward>,
    /// The id the scheduler's next job gets, at least.
    pub next_job_id: u64,
    /// The number of the last counter update taken.
    pub update_seq: u64,
    /// The send queues' jobs not finished, by id.
    pub sources: BTreeMap<u64, SourceImage>,
    /// The id the next job of a send queue gets, at least.
    pub next_source_id: u64,
    /// The remote clusters' numbering and last updates.
    pub remotes: BTreeMap<ClusterName, RemoteImage>,
    /// The peers' lineages.
    pub lineages: BTreeMap<ClusterName, u64>,
    /// The advance reservations made and deleted live (`brsvadd`,
    /// `brsvdel`).
    pub reservations: LiveReservations,
}

impl DurableState {
    /// The state of nothing, for cluster `cluster`.
    pub fn empty(cluster: ClusterName) -> Self {
        DurableState {
            cluster: Some(cluster),
            next_job_id: 1,
            next_source_id: 1,
            ..DurableState::default()
        }
    }

    /// Folds one record in.
    pub fn apply(&mut self, record: JournalRecord) {
        match record {
            JournalRecord::Process(facts) => self.process = Some(facts),
            JournalRecord::Job { image, forward_seq } => {
                self.next_job_id = self.next_job_id.max(image.id.saturating_add(1));
                self.jobs.insert(image.id, (*image, forward_seq));
            }
            JournalRecord::JobGone { id, finished } => {
                self.next_job_id = self.next_job_id.max(id.saturating_add(1));
                self.jobs.remove(&id);
                if let Some(done) = finished {
                    self.finished
                        .insert((done.from.clone(), done.source_job), done);
                }
            }
            // One id sequence serves the scheduler's jobs and the send
            // queues' (`ClusterNode::take_job_id`).
            JournalRecord::Source(image) => {
                self.next_source_id = self.next_source_id.max(image.id.saturating_add(1));
                self.next_job_id = self.next_job_id.max(self.next_source_id);
                self.note_forward(&image);
                self.sources.insert(image.id, *image);
            }
            JournalRecord::SourceGone { id } => {
                self.next_source_id = self.next_source_id.max(id.saturating_add(1));
                self.next_job_id = self.next_job_id.max(self.next_source_id);
                self.sources.remove(&id);
            }
            JournalRecord::Published { seq } => self.update_seq = self.update_seq.max(seq),
            JournalRecord::Remote(remote) => {
                let entry = self
                    .remotes
                    .entry(remote.cluster.clone())
                    .or_insert_with(|| remote.clone());
                entry.next_forward_seq = entry.next_forward_seq.max(remote.next_forward_seq);
                entry.applied_seq = entry.applied_seq.max(remote.applied_seq);
                entry.lineage = remote.lineage.or(entry.lineage);
            }
            JournalRecord::Lineage { cluster, lineage } => {
                // A new lineage: that cluster lost its state, and the ends
                // of its earlier jobs are forgotten, as live
                // (`ClusterNode`'s resume); its jobs' records say so.
                let previous = self.lineages.insert(cluster.clone(), lineage);
                if previous.is_some_and(|previous| previous != lineage) {
                    self.finished.retain(|(from, _), _| from != &cluster);
                }
            }
            JournalRecord::ReservationAdded { config, by } => self.reservations.add(config, by),
            JournalRecord::ReservationDeleted { name } => self.reservations.delete(&name),
            JournalRecord::EndForgotten { from, source_job } => {
                self.finished.remove(&(from, source_job));
            }
            JournalRecord::JobMoved { .. } => {}
        }
    }

    /// Moves every numbering `count` further: job ids, update numbers and
    /// each known execution cluster's forward numbers. After a salvage,
    /// the records lost can have handed out at most one of each per
    /// record, so none is handed out again (a gap is harmless: numbers
    /// are compared, never counted).
    pub fn skip_numbers(&mut self, count: u64) {
        self.next_job_id = self.next_job_id.saturating_add(count);
        self.next_source_id = self.next_source_id.saturating_add(count);
        self.update_seq = self.update_seq.saturating_add(count);
        for remote in self.remotes.values_mut() {
            remote.next_forward_seq = remote.next_forward_seq.saturating_add(count);
        }
    }

    /// A job forwarded makes its cluster's next forward number follow it.
    fn note_forward(&mut self, image: &SourceImage) {
        let SourceImageState::Forwarded { to, forward_seq } = &image.state else {
            return;
        };
        let entry = self
            .remotes
            .entry(to.cluster.clone())
            .or_insert_with(|| RemoteImage {
                cluster: to.cluster.clone(),
                next_forward_seq: 1,
                applied_seq: None,
                lineage: None,
            });
        entry.next_forward_seq = entry.next_forward_seq.max(forward_seq.saturating_add(1));
    }
}
