//! A message the transport could not send (its frame would pass the
//! bound, or it does not encode) is never dropped in silence. A job's
//! forward that cannot be sent can be sent to no cluster: the job ends at
//! its submission cluster (EXIT), the reason in its history, a refusal its
//! owner sees in `bjobs -a` and `bhist` — not a job pending "at the
//! execution cluster" forever.

use mcfed_forwarder::SourceState;
use mcfed_protocol::{Envelope, JobAction, JobEvent, Message, SimTime};

use crate::effects::{Effects, JobNotice, NoticeKind};
use crate::member::Member;

impl Member {
    /// `envelope`, which this member sent, could not be sent (`why`): a
    /// job's forward still waiting for its answer ends the job here (see
    /// the module documentation). Returns the job it ended, if any; other
    /// messages concern no job's owner (the caller logs them).
    pub fn unsendable(
        &mut self,
        now: SimTime,
        envelope: &Envelope,
        why: &str,
        effects: &mut Effects,
    ) -> Option<u64> {
        let Message::JobForward(forward) = &envelope.message else {
            return None;
        };
        let id = forward.source_job;
        let local = self.local_time(now);
        let forwarder = self.forwarder.as_mut()?;
        let job = forwarder.job(id)?;
        let waits_there = matches!(job.state, SourceState::Forwarded { .. })
            && job
                .remote_queue()
                .is_some_and(|to| forwarder.view().cluster_of(to) == &envelope.to);
        if !waits_there {
            return None;
        }
        let name = job.spec.name.clone();
        // Ended as a kill of a forwarded job is (the forward forgotten, the
        // job gone from the send queue, journaled); the command the kill
        // would send to the execution cluster is not sent: the job never
        // got there.
        let mut never_sent = Vec::new();
        forwarder
            .control(local, id, &JobAction::Kill, &mut never_sent)
            .ok()?;
        self.note_changes(&[]);
        let reason = format!(
            "its forward to cluster <{}> cannot be sent: {why}",
            envelope.to
        );
        if let Some(history) = &mut self.history {
            history.enter(id, now, "EXIT", format!("Exited: refused: {reason}"));
        }
        effects.notices.push(JobNotice {
            source_job: id,
            name,
            from: self.node.name().clone(),
            kind: NoticeKind::Control(JobEvent::Killed),
            reason: Some(reason),
        });
        Some(id)
    }
}
