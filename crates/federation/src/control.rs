//! Job control at the federation level: [`Member::control`] finds the job
//! — one of the scheduler's, or one of a send queue, here or at the
//! execution cluster it was forwarded to — and has the half that holds it
//! act on it. A command given at a job's submission cluster reaches the
//! execution cluster as a [`JobControl`] message, which that member hands
//! its scheduler ([`Member::receive`]); its answer comes back as a notice.
//! Scenario actions, the actor engine and cluster processes all come
//! through here.

use mcfed_cluster::{ControlError, HostEvent, JobId};
use mcfed_forwarder::Controlled;
use mcfed_protocol::{ClusterName, JobAction, JobControl, JobControlReply, JobEvent, SimTime};

use crate::effects::{Effects, JobNotice, NoticeKind};
use crate::member::{Member, capitalised};

/// Which job a command names.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JobRef {
    /// By id in this cluster.
    Id(u64),
    /// By name (`-J NAME`): the job of that name with the lowest id.
    Name(String),
}

impl std::fmt::Display for JobRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobRef::Id(id) => write!(f, "<{id}>"),
            JobRef::Name(name) => write!(f, "named <{name}>"),
        }
    }
}

/// What a job control command did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlOutcome {
    /// Done here, on job `job`.
    Done {
        /// The job's id here.
        job: u64,
    },
    /// Job `job` is at `cluster`: the command was sent there (a killed job
    /// is gone from here at once).
    Sent {
        /// The job's id here.
        job: u64,
        /// The execution cluster.
        cluster: ClusterName,
    },
}

impl ControlOutcome {
    /// The job's id here.
    pub fn job(&self) -> u64 {
        match self {
            ControlOutcome::Done { job } | ControlOutcome::Sent { job, .. } => *job,
        }
    }

    /// What the command says it did, in LSF's words (`Job <3> is being
    /// terminated`), saying where a command went.
    pub fn message(&self, action: &JobAction) -> String {
        let job = self.job();
        let what = match action {
            JobAction::Kill => format!("Job <{job}> is being terminated"),
            JobAction::Stop => format!("Job <{job}> is being stopped"),
            JobAction::Resume => format!("Job <{job}> is being resumed"),
            JobAction::Requeue => format!("Job <{job}> is being requeued"),
            JobAction::Switch(queue) => format!("Job <{job}> is switched to queue <{queue}>"),
            JobAction::Modify(_) => format!("Parameters of job <{job}> are being changed"),
            JobAction::Migrate => format!("Job <{job}> is being migrated"),
            JobAction::Release(_) => format!("Job <{job}> resize request is accepted"),
        };
        match self {
            ControlOutcome::Done { .. } => what,
            ControlOutcome::Sent { cluster, .. } => {
                format!("{what} (the request was sent to its execution cluster <{cluster}>)")
            }
        }
    }
}

/// Why a job control command was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ControlRefused {
    /// No job of that id or name is here.
    #[error("Job {0}: no matching job found")]
    NoSuchJob(JobRef),
    /// The job has already ended (it is in the history).
    #[error("Job <{0}>: the job has already finished")]
    Finished(u64),
    /// The job's half refused it.
    #[error("Job <{job}>: {reason}")]
    Refused {
        /// The job's id here.
        job: u64,
        /// Why.
        reason: String,
    },
}

impl Member {
    /// The id of the job `job` names, if the member holds it (a job of a
    /// send queue first, then one of the scheduler's).
    pub fn find_job(&self, job: &JobRef) -> Option<u64> {
        match job {
            JobRef::Id(id) => {
                let known = self
                    .forwarder
                    .as_ref()
                    .is_some_and(|f| f.job(*id).is_some())
                    || self.node.cluster().job(JobId(*id)).is_some();
                known.then_some(*id)
            }
            JobRef::Name(name) => self
                .forwarder
                .as_ref()
                .and_then(|forwarder| forwarder.job_named(name))
                .or_else(|| self.node.cluster().job_named(name).map(|id| id.0)),
        }
    }

    /// Applies `action` to the job `job` names at `now`: the scheduler acts
    /// on its own jobs; the forwarder acts on a job of a send queue still
    /// here, and sends the command to the execution cluster of one
    /// forwarded there. What it changed goes to `effects` (transitions, a
    /// notice, envelopes); a dispatch pass or a session is due after it.
    pub fn control(
        &mut self,
        now: SimTime,
        job: &JobRef,
        action: &JobAction,
        effects: &mut Effects,
    ) -> Result<ControlOutcome, ControlRefused> {
        let Some(id) = self.find_job(job) else {
            return Err(match job {
                JobRef::Id(id) if self.history.as_ref().is_some_and(|h| h.job(*id).is_some()) => {
                    ControlRefused::Finished(*id)
                }
                _ => ControlRefused::NoSuchJob(job.clone()),
            });
        };
        let local = self.local_time(now);
        self.check_send_queue_aps(id, action)?;
        if let Some(forwarder) = self.forwarder.as_mut().filter(|f| f.job(id).is_some()) {
            let name = forwarder.job(id).map(|job| job.spec.name.clone());
            let controlled = forwarder
                .control(local, id, action, &mut effects.envelopes)
                .map_err(|reason| ControlRefused::Refused { job: id, reason })?;
            let spec = forwarder.job(id).map(|job| job.spec.clone());
            // Journaled with this input, before the command leaves.
            self.note_changes(&[]);
            let own = self.node.name().clone();
            return Ok(match controlled {
                Controlled::Here(event) => {
                    self.note_sent_job(now, id, event, spec, None);
                    effects.notices.push(JobNotice {
                        source_job: id,
                        name: name.unwrap_or_else(|| "".into()),
                        from: own,
                        kind: NoticeKind::Control(event),
                        reason: Some(action.to_string()),
                    });
                    ControlOutcome::Done { job: id }
                }
                Controlled::Sent { cluster } => {
                    let event = (action == &JobAction::Kill).then_some(JobEvent::Killed);
                    if let Some(event) = event {
                        effects.notices.push(JobNotice {
                            source_job: id,
                            name: name.unwrap_or_else(|| "".into()),
                            from: cluster.clone(),
                            kind: NoticeKind::Control(event),
                            reason: Some(format!("{action} sent to {cluster}")),
                        });
                    }
                    let note = format!("{action} sent to cluster <{cluster}>");
                    self.note_sent_job(
                        now,
                        id,
                        event.unwrap_or(JobEvent::Modified),
                        spec,
                        Some(note),
                    );
                    ControlOutcome::Sent { job: id, cluster }
                }
            });
        }
        let first = effects.transitions.len();
        self.node
            .control(
                now,
                JobId(id),
                action,
                &mut effects.envelopes,
                &mut effects.transitions,
            )
            .map_err(|error: ControlError| ControlRefused::Refused {
                job: id,
                reason: error.to_string(),
            })?;
        // The job as the command left it goes to the journal (a pending
        // job's bmod, bswitch or bstop changes no running state a later
        // step would write).
        self.note_changes(&effects.transitions[first..]);
        if self.history.is_some() {
            self.record_transitions(&effects.transitions[first..]);
        }
        Ok(ControlOutcome::Done { job: id })
    }

    /// `bmod -aps` on job `id` of a send queue while it waits here: the
    /// scheduler, which holds the send queue's APS_PRIORITY, checks it as
    /// it checks one given a pending job of its own (the queue is ordered
    /// by APS; the value is non-zero and within APS_PRIORITY's maximum).
    /// A forwarded job's is the execution cluster's to check.
    fn check_send_queue_aps(&self, id: u64, action: &JobAction) -> Result<(), ControlRefused> {
        let JobAction::Modify(changes) = action else {
            return Ok(());
        };
        let (Some(change), Some(forwarder)) = (changes.aps, self.forwarder.as_ref()) else {
            return Ok(());
        };
        let Some(job) = forwarder.job(id).filter(|job| job.remote_queue().is_none()) else {
            return Ok(());
        };
        let queue = forwarder.send_queue_name(job.send_queue_index());
        self.node
            .cluster()
            .check_queue_aps_change(queue.as_str(), change)
            .map_err(|error| ControlRefused::Refused {
                job: id,
                reason: error.to_string(),
            })
    }

    /// `event` happens to host `host` of this cluster at `now` (a
    /// scenario's `host_fail`/`host_recover`, or `mcfed host-fail` on a
    /// live process): its jobs rerun (RERUNNABLE queues) or exit, as
    /// transitions in `effects` like any other. Returns what it did, in
    /// words.
    pub fn host_event(
        &mut self,
        now: SimTime,
        host: &str,
        event: HostEvent,
        effects: &mut Effects,
    ) -> Result<String, String> {
        let first = effects.transitions.len();
        let (rerun, exited) = self
            .node
            .host_event(
                now,
                host,
                event,
                &mut effects.envelopes,
                &mut effects.transitions,
            )
            .map_err(|error| error.to_string())?;
        self.note_changes(&effects.transitions[first..]);
        if let Some(history) = self.history.as_mut() {
            for transition in &effects.transitions[first..] {
                if transition.event == JobEvent::Killed {
                    history.enter(
                        transition.job.0,
                        transition.at,
                        "EXIT",
                        format!("Exited: its host <{host}> failed (its queue is not RERUNNABLE)"),
                    );
                } else {
                    history.transition(transition, self.node.cluster());
                }
            }
        }
        Ok(match event {
            HostEvent::Fail => {
                format!("Host <{host}> failed: {rerun} job(s) rerun, {exited} exited")
            }
            HostEvent::Recover => format!("Host <{host}> is back"),
        })
    }

    /// The history of job `id` of a send queue after a command: `event`
    /// done here, or the command sent (`sent`: what was sent where; the
    /// job's spec after it is `spec`).
    fn note_sent_job(
        &mut self,
        now: SimTime,
        id: u64,
        event: JobEvent,
        spec: Option<mcfed_protocol::JobSpec>,
        sent: Option<String>,
    ) {
        let Some(history) = &mut self.history else {
            return;
        };
        if let (Some(spec), Some(kept)) = (spec, history.spec_mut(id)) {
            *kept = spec;
        }
        let (state, text) = match (event, sent) {
            (JobEvent::Killed, Some(sent)) => ("EXIT", format!("Exited: killed by bkill ({sent})")),
            (_, Some(sent)) => return history.note(id, now, capitalised(&sent)),
            (JobEvent::Killed, None) => ("EXIT", "Exited: killed by bkill".to_owned()),
            (JobEvent::Held, None) => ("PSUSP", "Held by bstop (PSUSP)".to_owned()),
            (JobEvent::Released, None) => ("PEND", "Released by bresume".to_owned()),
            (JobEvent::Switched, None) => {
                return history.note(id, now, "Switched to another send queue".to_owned());
            }
            (_, None) => return history.note(id, now, "Parameters changed by bmod".to_owned()),
        };
        history.enter(id, now, state, text);
    }

    /// A submission cluster's command about a job it forwarded here.
    pub(crate) fn control_from(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        control: &JobControl,
        effects: &mut Effects,
    ) {
        let first = effects.transitions.len();
        self.node.control_forwarded(
            now,
            from,
            control,
            &mut effects.envelopes,
            &mut effects.transitions,
        );
        self.note_changes(&effects.transitions[first..]);
        if self.history.is_some() {
            self.record_transitions(&effects.transitions[first..]);
        }
    }

    /// An execution cluster's answer to a command sent there.
    pub(crate) fn control_reply(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        reply: JobControlReply,
        effects: &mut Effects,
    ) {
        let (done, detail) = match &reply.outcome {
            Ok(what) => (true, format!("{}: {what}", reply.action)),
            Err(why) => (false, format!("{} refused: {why}", reply.action)),
        };
        if let Some(history) = &mut self.history {
            history.note(reply.source_job, now, capitalised(&detail));
        }
        let name = self
            .forwarder
            .as_ref()
            .and_then(|forwarder| forwarder.job(reply.source_job))
            .map(|job| job.spec.name.clone())
            .or_else(|| {
                self.history
                    .as_ref()
                    .and_then(|history| history.job(reply.source_job))
                    .map(|record| record.spec.name.clone())
            })
            .unwrap_or_else(|| "".into());
        effects.notices.push(JobNotice {
            source_job: reply.source_job,
            name,
            from: from.clone(),
            kind: NoticeKind::ControlReply { done },
            reason: Some(detail),
        });
    }
}
