//! A member and its journal: the records each input produces when the
//! member is journaled ([`Member::enable_journal`], [`Member::take_journal`]),
//! the state a snapshot keeps ([`Member::durable_state`]), and a member
//! rebuilt from it ([`Member::restore`]).
//!
//! Every input method ends by noting what changed: the scheduler's jobs
//! that arrived, left or made a transition, and the send queues' jobs whose
//! state changed, each written as it stands now. A driver takes the
//! records after each input and makes them durable before it lets
//! anything the input produced out (envelopes, a `bsub` acknowledgement).

use mcfed_cluster::{JobId, JobOrigin, RestoredNode, Transition};
use mcfed_forwarder::RestoredForwarder;
use mcfed_protocol::{ClusterName, Message, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::build::{BuildError, MemberSpec};
use crate::journal::{DurableState, JournalRecord};
use crate::member::Member;

impl Member {
    /// Journals this member from now on: every input notes what it
    /// changed, for [`Member::take_journal`].
    pub fn enable_journal(&mut self) {
        if self.journal.is_none() {
            self.journal = Some(Vec::new());
            self.node.track_changes();
            self.parking_seen = ParkingSeen::of(&self.node);
            if let Some(forwarder) = &mut self.forwarder {
                forwarder.track_changes();
                self.source_ids = forwarder.job_image_ids().collect();
            }
        }
    }

    /// Whether the member is journaled.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// The records of what changed since the last call (empty when not
    /// journaled). A record that a later one of the same job replaces
    /// (every job record is the job as it stands) is left out: a job
    /// submitted and started within one batch is written once.
    pub fn take_journal(&mut self) -> Vec<JournalRecord> {
        let Some(journal) = &mut self.journal else {
            return Vec::new();
        };
        // The next batch is likely about as large: start it so.
        let capacity = journal.len();
        let records = std::mem::replace(journal, Vec::with_capacity(capacity));
        latest_per_job(records)
    }

    /// Notes a peer's lineage.
    pub(crate) fn note_lineage(&mut self, cluster: &ClusterName, lineage: u64) {
        if let (Some(journal), true) = (&mut self.journal, lineage != 0) {
            journal.push(JournalRecord::Lineage {
                cluster: cluster.clone(),
                lineage,
            });
        }
    }

    /// Writes what changed — jobs that arrived or left, the jobs of
    /// `transitions`, send-queue jobs whose state changed — as records.
    pub(crate) fn note_changes(&mut self, transitions: &[Transition]) {
        let Some(journal) = &mut self.journal else {
            return;
        };
        let mut finished: FxHashMap<JobId, (ClusterName, u64)> = FxHashMap::default();
        let mut seen = FxHashSet::default();
        let mut ids = Vec::new();
        for transition in transitions {
            // Whatever ended it (finished, killed, its run limit, its
            // reservation's end): the node keeps the end for the
            // submission cluster's next sync, and so must a replay.
            if let (true, JobOrigin::Forwarded { from, source_job }) =
                (transition.event.ends_job(), &transition.origin)
            {
                finished.insert(transition.job, (from.clone(), *source_job));
            }
            if seen.insert(transition.job) {
                ids.push(transition.job);
            }
        }
        for id in self.node.take_changes() {
            if seen.insert(id) {
                ids.push(id);
            }
        }
        for id in ids {
            let record = match self.node.job_image(id) {
                Some(image) => {
                    let forward_seq = image
                        .forwarded_from
                        .as_ref()
                        .and_then(|(from, source_job)| self.node.forward_seq_of(from, *source_job));
                    JournalRecord::Job {
                        image: Box::new(image),
                        forward_seq,
                    }
                }
                None => JournalRecord::JobGone {
                    id: id.0,
                    finished: finished.get(&id).and_then(|(from, source_job)| {
                        self.node.finished_forward(from, *source_job)
                    }),
                },
            };
            journal.push(record);
        }
        if self.node.parking_changes() != self.parking_seen.changes {
            let now = ParkingSeen::of(&self.node);
            let mut moved: Vec<u64> = now
                .ids
                .symmetric_difference(&self.parking_seen.ids)
                .copied()
                .collect();
            moved.sort_unstable();
            journal.extend(moved.into_iter().map(|id| JournalRecord::JobMoved { id }));
            self.parking_seen = now;
        }
        if let Some(forwarder) = &mut self.forwarder {
            let mut seen = FxHashSet::default();
            for id in forwarder.take_changes() {
                if !seen.insert(id) {
                    continue;
                }
                journal.push(match forwarder.job_image(id) {
                    Some(image) => {
                        self.source_ids.insert(id);
                        JournalRecord::Source(Box::new(image))
                    }
                    None => {
                        self.source_ids.remove(&id);
                        JournalRecord::SourceGone { id }
                    }
                });
            }
        }
    }

    /// The ends this member keeps of jobs `from` forwarded (their ids
    /// there), before `message`, a sync from it, forgets those it does
    /// not list (`ClusterNode`'s sync), when journaled; none otherwise.
    pub(crate) fn ends_a_sync_can_forget(&self, from: &ClusterName, message: &Message) -> Vec<u64> {
        let (Some(_), Message::JobSync(_)) = (&self.journal, message) else {
            return Vec::new();
        };
        self.node
            .finished_forwards()
            .filter(|done| &done.from == from)
            .map(|done| done.source_job)
            .collect()
    }

    /// Journals the ends of `from`'s jobs `ends` that are no longer kept
    /// (a sync that did not list them): a restart from the journal must
    /// not bring them back.
    pub(crate) fn note_forgotten_ends(&mut self, from: &ClusterName, ends: Vec<u64>) {
        let Some(journal) = &mut self.journal else {
            return;
        };
        for source_job in ends {
            if self.node.finished_forward(from, source_job).is_none() {
                journal.push(JournalRecord::EndForgotten {
                    from: from.clone(),
                    source_job,
                });
            }
        }
    }

    /// Everything a journal keeps of this member, as it stands now (the
    /// next snapshot). The process facts are the caller's.
    pub fn durable_state(&self) -> DurableState {
        crate::snapshot::durable_state(self)
    }

    /// Rebuilds a member from `spec` and the state its journal kept, at
    /// `now`: the jobs present at start are not made again (they are in
    /// the state, or finished); the scheduler's jobs come back with their
    /// ids, states, hosts and remaining run times, the send queues' jobs
    /// where they were, and every numbering goes on. Until each submission
    /// cluster's next sync, its pending jobs here are held back (it may
    /// have decided them again meanwhile). The member is journaled.
    pub fn restore(
        spec: MemberSpec<'_>,
        state: DurableState,
        now: SimTime,
    ) -> Result<Member, BuildError> {
        let empty = MemberSpec {
            initial_jobs: &[],
            ..spec
        };
        let (mut member, _) = Member::build(empty)?;
        // The jobs present at start keep their ids 1 to n (and their origin
        // in the totals), whether restored or finished.
        member.bundled = spec
            .initial_jobs
            .iter()
            .map(|group| group.jobs.len() as u64)
            .sum();
        let DurableState {
            jobs,
            finished,
            next_job_id,
            update_seq,
            sources,
            next_source_id,
            mut remotes,
            lineages,
            reservations,
            ..
        } = state;
        // One id sequence serves the scheduler's jobs and the send queues'
        // (`ClusterNode::take_job_id`): it goes on past both.
        let next_job_id = next_job_id.max(next_source_id);
        member.node.restore(RestoredNode {
            jobs: jobs.into_values().collect(),
            finished: finished.into_values().collect(),
            update_seq,
            next_job_id,
            lineages: lineages
                .iter()
                .map(|(cluster, lineage)| (cluster.clone(), *lineage))
                .collect(),
        });
        for problem in member.node.restore_reservations(reservations) {
            tracing::warn!(cluster = %member.name(), %problem, "an advance reservation was not restored");
        }
        member.node.out_of_step_with_all();
        let local = member.local_time(now);
        let name = member.name().clone();
        if let Some(forwarder) = &mut member.forwarder {
            for (cluster, remote) in remotes.iter_mut() {
                remote.lineage = lineages.get(cluster).copied().or(remote.lineage);
            }
            let problems = forwarder.restore(
                RestoredForwarder {
                    jobs: sources.into_values().collect(),
                    next_job_id,
                    remotes: remotes.into_values().collect(),
                },
                local,
            );
            for (job, why) in problems {
                tracing::warn!(cluster = %name, job, %why, "a job of a send queue restored differently");
            }
        }
        member.publish_clock = crate::publish::PublishClock::after(now);
        member.restored_at = Some(now);
        member.enable_journal();
        Ok(member)
    }
}

/// The jobs a journaled member saw parked (its submission cluster out of
/// step), and `ClusterNode::parking_changes` then: a job that moved
/// between the scheduler and parking since, unchanged, is journaled as
/// moved ([`JournalRecord::JobMoved`]), for a snapshot being made.
#[derive(Debug, Default)]
pub(crate) struct ParkingSeen {
    changes: u64,
    ids: FxHashSet<u64>,
}

impl ParkingSeen {
    /// What `node` has parked now.
    fn of(node: &mcfed_cluster::ClusterNode) -> ParkingSeen {
        ParkingSeen {
            changes: node.parking_changes(),
            ids: node.parked_jobs().map(|image| image.id).collect(),
        }
    }
}

/// `records` without those a later record of the same job replaces, in
/// order.
fn latest_per_job(records: Vec<JournalRecord>) -> Vec<JournalRecord> {
    let key = |record: &JournalRecord| match record {
        JournalRecord::Job { image, .. } => Some((0u8, image.id)),
        JournalRecord::JobGone { id, .. } => Some((0, *id)),
        JournalRecord::Source(image) => Some((1, image.id)),
        JournalRecord::SourceGone { id } => Some((1, *id)),
        _ => None,
    };
    let mut seen = FxHashSet::default();
    let mut kept: Vec<JournalRecord> = Vec::with_capacity(records.len());
    for record in records.into_iter().rev() {
        if key(&record).is_none_or(|key| seen.insert(key)) {
            kept.push(record);
        }
    }
    kept.reverse();
    kept
}
