//! What a journal keeps of the submission side and puts back: every job
//! submitted here that has not finished ([`SourceImage`]), the numbering
//! of jobs and of forwards to each remote cluster, the last counter update
//! applied from each, and each one's lineage ([`RemoteImage`]). Jobs whose
//! state changed are noted for the journal when asked
//! ([`ForwarderNode::track_changes`]).

use mcfed_protocol::{ApsChange, ClusterName, JobSpec, QueueName, QueueRef, SimTime};
use serde::{Deserialize, Serialize};

use super::killed::KilledAway;
use super::{ForwarderNode, LeftBehind, SourceJob, SourceState};
use crate::policy::JobRequest;
use crate::view::{RemoteQueueId, ResourceId};

/// Where a job submitted here stands, as a journal keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceImageState {
    /// Pending at the submission cluster.
    Waiting,
    /// Sent to `to`; no answer yet.
    Forwarded {
        /// The receive queue.
        to: QueueRef,
        /// The forward's sequence number.
        forward_seq: u64,
    },
    /// Taken by `to` as `dest_job`, not started.
    Accepted {
        /// The receive queue.
        to: QueueRef,
        /// Its id there.
        dest_job: u64,
    },
    /// Running at `to`.
    Running {
        /// The receive queue.
        to: QueueRef,
        /// Its id there.
        dest_job: u64,
    },
    /// Suspended at `to`.
    Suspended {
        /// The receive queue.
        to: QueueRef,
        /// Its id there.
        dest_job: u64,
    },
    /// Forwarded MAX_FORWARDS times; left pending here.
    GaveUp,
    /// Held here by `bstop` (PSUSP).
    Held,
    /// Stopped at `to` by `bstop` (USUSP).
    Stopped {
        /// The receive queue.
        to: QueueRef,
        /// Its id there.
        dest_job: u64,
    },
    /// Held at `to` by `bstop` while pending there (PSUSP).
    HeldThere {
        /// The receive queue.
        to: QueueRef,
        /// Its id there.
        dest_job: u64,
    },
    /// Killed here (`bkill`) while at `cluster`, which has not said yet
    /// what became of it: gone from the send queue, remembered until then
    /// (a variant added last: journals written before it read the same).
    KilledAway {
        /// Where the kill was sent.
        cluster: ClusterName,
        /// The forward it was killed at.
        forward_seq: u64,
        /// Its id there, if it had been accepted.
        dest_job: Option<u64>,
    },
}

/// A job submitted here, as a journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceImage {
    /// Its id here.
    pub id: u64,
    /// Its send queue.
    pub send_queue: QueueName,
    /// What it asks for.
    pub spec: JobSpec,
    /// When it was submitted.
    pub submitted_at: SimTime,
    /// Where it stands.
    pub state: SourceImageState,
    /// How many times it has been forwarded.
    pub forwards: u32,
    /// The sequence number of its current forward.
    pub forward_seq: u64,
    /// When it was last forwarded.
    pub forwarded_at: SimTime,
    /// Whether its current forward has been recalled.
    pub recalled: bool,
    /// The queues it was forwarded to, in order.
    pub previous_targets: Vec<QueueRef>,
    /// Why it is being decided again, if it is.
    pub note: Option<String>,
    /// A copy left at a cluster that was unreachable when it was taken
    /// back: the queue, the forward, its id there if known.
    pub left_behind: Option<(QueueRef, u64, Option<u64>)>,
    /// The system or ADMIN value `bmod -aps` gave it while it waited here.
    pub aps: Option<ApsChange>,
}

/// What a journal keeps of one remote cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteImage {
    /// The cluster.
    pub cluster: ClusterName,
    /// The sequence number its next forward gets.
    pub next_forward_seq: u64,
    /// The last counter update applied from it.
    pub applied_seq: Option<u64>,
    /// The lineage it last resumed with.
    pub lineage: Option<u64>,
}

/// What [`ForwarderNode::restore`] puts back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RestoredForwarder {
    /// Jobs not finished, in the order they were submitted.
    pub jobs: Vec<SourceImage>,
    /// The id the next job gets, at least.
    pub next_job_id: u64,
    /// The remote clusters.
    pub remotes: Vec<RemoteImage>,
}

impl ForwarderNode {
    /// Notes, from now on, every job whose state changes, for
    /// [`ForwarderNode::take_changes`] (a journal).
    pub fn track_changes(&mut self) {
        if self.changes.is_none() {
            self.changes = Some(Vec::new());
        }
    }

    /// The jobs changed since the last call, in order (possibly repeated),
    /// when tracking.
    pub fn take_changes(&mut self) -> Vec<u64> {
        self.changes
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The id the next job gets.
    pub fn next_job_id(&self) -> u64 {
        self.next_job_id
    }

    /// The image of job `id`, unless it has finished: a job of a send
    /// queue, or one killed at an execution cluster and remembered
    /// (`killed`).
    pub fn job_image(&self, id: u64) -> Option<SourceImage> {
        self.live_image(id)
            .or_else(|| self.killed_away.get(&id).map(KilledAway::image))
    }

    /// The images [`ForwarderNode::job_image`] has, one at a time (a
    /// snapshot's).
    pub fn job_images(&self) -> impl Iterator<Item = SourceImage> + '_ {
        let live = self.jobs.keys().filter_map(|&id| self.live_image(id));
        live.chain(self.killed_away.values().map(KilledAway::image))
    }

    /// The ids of the images [`ForwarderNode::job_images`] gives (and of
    /// jobs done, which have none).
    pub fn job_image_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.jobs.keys().chain(self.killed_away.keys()).copied()
    }

    /// How many images [`ForwarderNode::job_images`] gives, without
    /// making them.
    pub fn job_image_count(&self) -> usize {
        let live = self
            .jobs
            .values()
            .filter(|job| job.state != SourceState::Done)
            .count();
        live + self.killed_away.len()
    }

    /// The image of job `id` of a send queue, unless it has finished.
    pub(super) fn live_image(&self, id: u64) -> Option<SourceImage> {
        let job = self.jobs.get(&id)?;
        let at = |to: RemoteQueueId| self.view.queue_ref(to).clone();
        let state = match job.state {
            SourceState::Waiting => SourceImageState::Waiting,
            SourceState::Forwarded { to, forward_seq } => SourceImageState::Forwarded {
                to: at(to),
                forward_seq,
            },
            SourceState::Accepted { to, dest_job } => SourceImageState::Accepted {
                to: at(to),
                dest_job,
            },
            SourceState::Running { to, dest_job } => SourceImageState::Running {
                to: at(to),
                dest_job,
            },
            SourceState::Suspended { to, dest_job } => SourceImageState::Suspended {
                to: at(to),
                dest_job,
            },
            SourceState::GaveUp => SourceImageState::GaveUp,
            SourceState::Held => SourceImageState::Held,
            SourceState::Stopped { to, dest_job } => SourceImageState::Stopped {
                to: at(to),
                dest_job,
            },
            SourceState::HeldThere { to, dest_job } => SourceImageState::HeldThere {
                to: at(to),
                dest_job,
            },
            SourceState::Done => return None,
        };
        Some(SourceImage {
            id,
            send_queue: self.send_queues[job.send_queue].name.clone(),
            spec: job.spec.clone(),
            submitted_at: job.submitted_at,
            state,
            forwards: job.forwards,
            forward_seq: job.forward_seq,
            forwarded_at: job.forwarded_at,
            recalled: job.recalled,
            previous_targets: job.previous_targets.iter().map(|&to| at(to)).collect(),
            note: job.note.clone(),
            left_behind: job
                .left_behind
                .map(|left| (at(left.queue), left.forward_seq, left.dest_job)),
            aps: job.aps,
        })
    }

    /// What a journal keeps of each remote cluster.
    pub fn remote_images(&self) -> Vec<RemoteImage> {
        self.view
            .clusters()
            .map(|cluster| RemoteImage {
                cluster: cluster.clone(),
                next_forward_seq: self.view.next_forward_seq(cluster).unwrap_or(1),
                applied_seq: self.view.applied_seq(cluster),
                lineage: self.lineages.get(cluster).copied(),
            })
            .collect()
    }

    /// Puts back what a journal kept, at `now`: the remote clusters' numbering,
    /// last updates and lineages, then the jobs. The view's figures stay
    /// unknown until the next updates; a cluster that sends none counts as
    /// silent from `now`. Returns the jobs that could not be put back as
    /// they were, with why.
    pub fn restore(&mut self, restored: RestoredForwarder, now: SimTime) -> Vec<(u64, String)> {
        self.restart_at(now);
        for remote in restored.remotes {
            self.view
                .restore_cluster(&remote.cluster, remote.next_forward_seq, remote.applied_seq);
            if let Some(lineage) = remote.lineage {
                self.lineages.insert(remote.cluster, lineage);
            }
        }
        let mut problems = Vec::new();
        for image in restored.jobs {
            let id = image.id;
            if let Err(why) = self.restore_job(image) {
                problems.push((id, why));
            }
            self.next_job_id = self.next_job_id.max(id.saturating_add(1));
        }
        self.next_job_id = self.next_job_id.max(restored.next_job_id);
        problems
    }

    fn restore_job(&mut self, image: SourceImage) -> Result<(), String> {
        if matches!(image.state, SourceImageState::KilledAway { .. }) {
            let id = image.id;
            if let Some(killed) = KilledAway::from_image(image) {
                self.killed_away.insert(id, killed);
            }
            return Ok(());
        }
        let &send_queue = self
            .send_queue_by_name
            .get(image.send_queue.as_str())
            .ok_or_else(|| format!("`{}` is no longer a send queue", image.send_queue))?;
        let mut resources: Vec<ResourceId> = image
            .spec
            .resources
            .iter()
            .map(|name| self.view.resource_id(name))
            .collect();
        resources.sort_unstable();
        resources.dedup();
        let queue_id = |view: &crate::view::RemoteView, to: &QueueRef| view.queue_id(to);
        let previous_targets = image
            .previous_targets
            .iter()
            .filter_map(|to| queue_id(&self.view, to))
            .collect();
        let left_behind = image.left_behind.as_ref().and_then(|(to, seq, dest)| {
            Some(LeftBehind {
                queue: queue_id(&self.view, to)?,
                forward_seq: *seq,
                dest_job: *dest,
            })
        });
        let id = image.id;
        let slots = image.spec.slots;
        self.jobs.insert(
            id,
            SourceJob {
                id,
                request: JobRequest {
                    slots,
                    resources,
                    gpus: image.spec.gpus,
                    refused: Vec::new(),
                },
                spec: image.spec,
                send_queue,
                submitted_at: image.submitted_at,
                state: SourceState::Waiting,
                forwards: image.forwards,
                note: image.note,
                last_pend: None,
                parked: false,
                refusals: Vec::new(),
                waiting_key: 0,
                forward_seq: image.forward_seq,
                forwarded_at: image.forwarded_at,
                recalled: image.recalled,
                previous_targets,
                left_behind,
                aps: image.aps.filter(|change| *change != ApsChange::Clear),
            },
        );
        let located = |to: &QueueRef| {
            queue_id(&self.view, to).ok_or_else(|| format!("`{to}` is no longer a remote queue"))
        };
        let state = match &image.state {
            SourceImageState::Waiting => None,
            SourceImageState::GaveUp => Some(SourceState::GaveUp),
            SourceImageState::Held => Some(SourceState::Held),
            SourceImageState::Stopped { to, dest_job } => {
                located(to).ok().map(|to| SourceState::Stopped {
                    to,
                    dest_job: *dest_job,
                })
            }
            SourceImageState::HeldThere { to, dest_job } => {
                located(to).ok().map(|to| SourceState::HeldThere {
                    to,
                    dest_job: *dest_job,
                })
            }
            // Remembered apart, never a job of a send queue (above).
            SourceImageState::KilledAway { .. } => None,
            SourceImageState::Forwarded { to, forward_seq } => {
                located(to).ok().map(|to| SourceState::Forwarded {
                    to,
                    forward_seq: *forward_seq,
                })
            }
            SourceImageState::Accepted { to, dest_job } => {
                located(to).ok().map(|to| SourceState::Accepted {
                    to,
                    dest_job: *dest_job,
                })
            }
            SourceImageState::Running { to, dest_job } => {
                located(to).ok().map(|to| SourceState::Running {
                    to,
                    dest_job: *dest_job,
                })
            }
            SourceImageState::Suspended { to, dest_job } => {
                located(to).ok().map(|to| SourceState::Suspended {
                    to,
                    dest_job: *dest_job,
                })
            }
        };
        let Some(state) = state else {
            self.enqueue_waiting(id);
            return match image.state {
                SourceImageState::Waiting => Ok(()),
                _ => Err("its remote queue is gone: it waits to be decided again".to_owned()),
            };
        };
        if let SourceState::Forwarded { to, forward_seq } = state {
            self.view.restore_forward(to, forward_seq, slots);
        }

        if let (SourceState::Accepted { .. }, false) = (state, image.recalled) {
            let job = &self.jobs[&id];
            if let Some(limit) = self.send_queues[job.send_queue].max_rsched_time {
                let deadline = job.forwarded_at + limit;
                self.recalls.insert((deadline, id), id);
            }
        }
        self.set_state(id, state);
        if !matches!(
            state,
            SourceState::Waiting | SourceState::GaveUp | SourceState::Held
        ) {
            self.reach.unconfirmed.insert(id);
            self.count_forwarded(id, false);
        }
        Ok(())
    }
}
