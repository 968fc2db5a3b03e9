//! Jobs killed while at an execution cluster: `bkill` at the submission
//! cluster sends the kill there and forgets the job at once
//! ([`ForwarderNode::control`]), but the kill may cross the job on its way
//! back — returned (MAX_RSCHED_TIME), refused, or lost — and the execution
//! cluster then no longer holds it. Such a job is remembered until its
//! execution cluster says what became of it: killed or ended there (counted
//! there), or sent back, when it ends here, killed
//! ([`Handled::KilledOnReturn`]) rather than vanishing uncounted. A forward
//! the kill overtook, accepted after it, is sent the kill again.
//!
//! The memory is journaled like the jobs themselves: a remembered job's
//! image ([`ForwarderNode::job_image`]) is the job as it was killed, in
//! state [`SourceImageState::KilledAway`], and it is written again when
//! its execution cluster settles it (then gone). A restored forwarder
//! remembers it again ([`ForwarderNode::restore`]), so a job that comes
//! back after a crash of this cluster still ends here, killed, once. A
//! sync to its execution cluster lists it (`ForwarderNode::hello`), so
//! that cluster answers for it even if every word of it was lost.

use std::sync::Arc;

use mcfed_protocol::{ClusterName, Envelope, JobAction, JobControl, Message};

use super::reply::{Names, Reply, Then};
use super::restore::{SourceImage, SourceImageState};
use super::{ForwarderNode, Handled};

/// What is remembered of a job killed at an execution cluster.
#[derive(Clone, Debug)]
pub(super) struct KilledAway {
    /// Where the kill was sent.
    pub(super) cluster: ClusterName,
    /// The forward it was killed at.
    pub(super) forward_seq: u64,
    /// Its id there, if it had been accepted.
    pub(super) dest_job: Option<u64>,
    /// The job as it was killed (its state aside), for the journal.
    pub(super) image: Box<SourceImage>,
}

impl KilledAway {
    /// Remembers a job the journal kept in state
    /// [`SourceImageState::KilledAway`]; `None` for any other image.
    pub(super) fn from_image(image: SourceImage) -> Option<KilledAway> {
        let SourceImageState::KilledAway {
            cluster,
            forward_seq,
            dest_job,
        } = &image.state
        else {
            return None;
        };
        Some(KilledAway {
            cluster: cluster.clone(),
            forward_seq: *forward_seq,
            dest_job: *dest_job,
            image: Box::new(image),
        })
    }

    /// The image the journal keeps of it.
    pub(super) fn image(&self) -> SourceImage {
        SourceImage {
            state: SourceImageState::KilledAway {
                cluster: self.cluster.clone(),
                forward_seq: self.forward_seq,
                dest_job: self.dest_job,
            },
            ..(*self.image).clone()
        }
    }

    /// Its name.
    fn name(&self) -> Arc<str> {
        Arc::clone(&self.image.spec.name)
    }

    /// Whether `names` names the forward the job was killed at.
    fn named_by(&self, names: Names) -> bool {
        match names {
            Names::Answer { forward_seq } | Names::Forward { forward_seq } => {
                forward_seq == self.forward_seq
            }
            Names::DestJob(dest_job) => self.dest_job.is_none_or(|known| known == dest_job),
        }
    }
}

impl ForwarderNode {
    /// Remembers job `id`, about to be forgotten, as killed at `cluster`.
    /// The journal writes it as such once the job is forgotten (its next
    /// image is the remembered one).
    pub(super) fn remember_killed(&mut self, id: u64, cluster: &ClusterName) {
        let (Some(job), Some(image)) = (self.jobs.get(&id), self.live_image(id)) else {
            return;
        };
        let killed = KilledAway {
            cluster: cluster.clone(),
            forward_seq: job.forward_seq,
            dest_job: job.dest_job(),
            image: Box::new(image),
        };
        self.killed_away.insert(id, killed);
        self.note_change(id);
    }

    /// Forgets job `id` as killed away: it is settled (the journal writes
    /// it gone).
    fn settle_killed(&mut self, id: u64) {
        if self.killed_away.remove(&id).is_some() {
            self.note_change(id);
        }
    }

    /// The forwards of jobs killed at `cluster` that it has not answered
    /// for, as a sync lists them: `(id, forward)`.
    pub(super) fn killed_at<'a>(
        &'a self,
        cluster: &'a ClusterName,
    ) -> impl Iterator<Item = (u64, u64)> + 'a {
        self.killed_away
            .iter()
            .filter(move |(_, killed)| &killed.cluster == cluster)
            .map(|(&id, killed)| (id, killed.forward_seq))
    }

    /// A reply from `from` about a job killed there, if it is one: what it
    /// settles.
    pub(super) fn killed_reply(&mut self, from: &ClusterName, reply: &Reply) -> Option<Handled> {
        let id = reply.source_job;
        let killed = self
            .killed_away
            .get_mut(&id)
            .filter(|killed| &killed.cluster == from && killed.named_by(reply.names))?;
        match &reply.then {
            Then::ComeBack { how, .. } => {
                let name = killed.name();
                self.settle_killed(id);
                tracing::info!(cluster = %self.cluster, job = id, remote = %from, how = how.as_str(), "a job killed at an execution cluster came back: it ends here, killed");
                Some(Handled::KilledOnReturn {
                    source_job: id,
                    name,
                })
            }
            Then::Status { event, .. } if event.ends_job() => {
                // Killed, or ended before the kill came: counted there.
                self.settle_killed(id);
                Some(Handled::Nothing)
            }
            Then::Accept { dest_job } => {
                // The forward came after the kill: kill it again.
                killed.dest_job = Some(*dest_job);
                self.note_change(id);
                self.outgoing.push(Envelope {
                    from: self.cluster.clone(),
                    to: from.clone(),
                    message: Message::JobControl(JobControl {
                        source_job: id,
                        action: JobAction::Kill,
                    }),
                });
                Some(Handled::Nothing)
            }
            Then::Status { .. } => Some(Handled::Nothing),
        }
    }
}
