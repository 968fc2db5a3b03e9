//! Jobs killed while at an execution cluster: `bkill` at the submission
//! cluster sends the kill there and forgets the job at once
//! ([`ForwarderNode::control`]), but the kill may cross the job on its way
//! back — returned (MAX_RSCHED_TIME), refused, or lost — and the execution
//! cluster then no longer holds it. Such a job is remembered until its
//! execution cluster says what became of it: killed or ended there (counted
//! there), or sent back, when it ends here, killed
//! ([`Handled::KilledOnReturn`]) rather than vanishing uncounted. A forward
//! the kill overtook, accepted after it, is sent the kill again.

use std::sync::Arc;

use mcfed_protocol::{ClusterName, Envelope, JobAction, JobControl, Message};

use super::reply::{Names, Reply, Then};
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
    /// Its name.
    pub(super) name: Arc<str>,
}

impl KilledAway {
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
    pub(super) fn remember_killed(&mut self, id: u64, cluster: &ClusterName) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let killed = KilledAway {
            cluster: cluster.clone(),
            forward_seq: job.forward_seq,
            dest_job: job.dest_job(),
            name: Arc::clone(&job.spec.name),
        };
        self.killed_away.insert(id, killed);
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
                let name = Arc::clone(&killed.name);
                self.killed_away.remove(&id);
                tracing::info!(cluster = %self.cluster, job = id, remote = %from, how = how.as_str(), "a job killed at an execution cluster came back: it ends here, killed");
                Some(Handled::KilledOnReturn {
                    source_job: id,
                    name,
                })
            }
            Then::Status { event, .. } if event.ends_job() => {
                // Killed, or ended before the kill came: counted there.
                self.killed_away.remove(&id);
                Some(Handled::Nothing)
            }
            Then::Accept { dest_job } => {
                // The forward came after the kill: kill it again.
                killed.dest_job = Some(*dest_job);
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
