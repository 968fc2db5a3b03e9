//! Job control at the submission cluster: a job still here is acted on
//! here; a job at an execution cluster gets a `JobControl` sent there.

use std::time::Duration;

use mcfed_protocol::{
    JobAccept, JobAction, JobChanges, JobControl, JobEvent, JobReturn, JobSpec, JobStatus, Message,
    QueueName, SimTime,
};

use super::{forwarder, name, update, with_job_at_c2};
use crate::node::{Controlled, Handled, SourceState};

fn at(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}

#[test]
fn a_waiting_job_is_held_released_modified_and_killed_here() {
    let mut node = forwarder(None);
    let id = node
        .submit_as(
            at(1),
            42,
            "send",
            JobSpec::simple("j", "u", Duration::from_secs(60)),
        )
        .expect("submit");
    assert_eq!(id, 42, "the cluster's own id");
    let mut out = Vec::new();
    assert_eq!(
        node.control(at(2), id, &JobAction::Stop, &mut out),
        Ok(Controlled::Here(JobEvent::Held))
    );
    assert_eq!(node.job(id).map(|job| job.state), Some(SourceState::Held));
    assert_eq!(node.waiting_jobs(), 0, "a held job is not decided");
    assert!(
        node.control(at(2), id, &JobAction::Requeue, &mut out)
            .is_err()
    );
    let wider = JobAction::Modify(JobChanges {
        slots: Some(4),
        ..JobChanges::default()
    });
    assert_eq!(
        node.control(at(3), id, &wider, &mut out),
        Ok(Controlled::Here(JobEvent::Modified))
    );
    assert_eq!(node.job(id).map(|job| job.spec.slots), Some(4));
    assert_eq!(
        node.control(at(4), id, &JobAction::Resume, &mut out),
        Ok(Controlled::Here(JobEvent::Released))
    );
    assert_eq!(node.waiting_jobs(), 1);
    let local = JobAction::Switch(QueueName::new("local").expect("valid"));
    assert!(node.control(at(5), id, &local, &mut out).is_err());
    assert_eq!(
        node.control(at(5), id, &JobAction::Kill, &mut out),
        Ok(Controlled::Here(JobEvent::Killed))
    );
    assert!(node.job(id).is_none());
    assert_eq!(node.waiting_jobs(), 0);
    assert!(out.is_empty(), "nothing is sent for a job still here");
    // The next id the forwarder gives follows the cluster's.
    let next = node
        .submit(
            at(6),
            "send",
            JobSpec::simple("k", "u", Duration::from_secs(60)),
        )
        .expect("submit");
    assert_eq!(next, 43);
}

#[test]
fn a_job_at_an_execution_cluster_gets_the_command_sent_there() {
    let (mut node, id) = with_job_at_c2(None);
    let mut out = Vec::new();
    assert_eq!(
        node.control(at(40), id, &JobAction::Stop, &mut out),
        Ok(Controlled::Sent {
            cluster: name("C2")
        })
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, "C2");
    assert_eq!(
        out[0].message,
        Message::JobControl(JobControl {
            source_job: id,
            action: JobAction::Stop
        })
    );
    // What C2 reports back changes the job's state here.
    let stopped = Message::JobStatus(JobStatus {
        source_job: id,
        dest_job: 77,
        event: JobEvent::Stopped,
        at: at(41),
    });
    node.handle(at(41), &name("C2"), stopped);
    assert_eq!(node.job(id).map(|job| job.state.as_str()), Some("USUSP"));
    // A kill removes it here at once, and its forward no longer weighs on
    // the remote queue.
    assert_eq!(node.view().unreflected_forwards(&name("C2")), 1);
    out.clear();
    node.control(at(42), id, &JobAction::Kill, &mut out)
        .expect("sent");
    assert!(node.job(id).is_none());
    assert_eq!(out.len(), 1);
    assert_eq!(node.view().unreflected_forwards(&name("C2")), 0);
    // Its late status changes nothing.
    let killed = Message::JobStatus(JobStatus {
        source_job: id,
        dest_job: 77,
        event: JobEvent::Killed,
        at: at(43),
    });
    assert_eq!(
        node.handle(at(43), &name("C2"), killed),
        crate::node::Handled::Nothing
    );
    node.handle(at(43), &name("C2"), update("C2", 2, 5));
}

#[test]
fn a_killed_job_that_comes_back_ends_here_killed() {
    let (mut node, id) = with_job_at_c2(None);
    let mut out = Vec::new();
    node.control(at(40), id, &JobAction::Kill, &mut out)
        .expect("sent");
    assert!(node.job(id).is_none());
    // C2 had returned it (a recall) before the kill came: the return
    // crosses the kill, and the job ends here, killed, once.
    let returned = || {
        Message::JobReturn(JobReturn {
            source_job: id,
            dest_job: 77,
            reason: "recalled".into(),
        })
    };
    assert_eq!(
        node.handle(at(41), &name("C2"), returned()),
        Handled::KilledOnReturn {
            source_job: id,
            name: "j".into()
        }
    );
    assert_eq!(
        node.handle(at(42), &name("C2"), returned()),
        Handled::Nothing
    );
    assert!(node.job(id).is_none(), "not decided again");
    assert_eq!(node.waiting_jobs(), 0);
}

#[test]
fn a_killed_job_that_ended_there_or_came_from_elsewhere_changes_nothing_here() {
    let (mut node, id) = with_job_at_c2(None);
    let mut out = Vec::new();
    node.control(at(40), id, &JobAction::Kill, &mut out)
        .expect("sent");
    let returned = Message::JobReturn(JobReturn {
        source_job: id,
        dest_job: 77,
        reason: "recalled".into(),
    });
    // Another cluster's word about it, or another copy's, is not its fate.
    assert_eq!(
        node.handle(at(41), &name("C3"), returned.clone()),
        Handled::Nothing
    );
    let other_copy = Message::JobReturn(JobReturn {
        source_job: id,
        dest_job: 78,
        reason: "recalled".into(),
    });
    assert_eq!(
        node.handle(at(41), &name("C2"), other_copy),
        Handled::Nothing
    );
    // It finished there before the kill came: counted there, forgotten here.
    let finished = Message::JobStatus(JobStatus {
        source_job: id,
        dest_job: 77,
        event: JobEvent::Finished,
        at: at(41),
    });
    assert_eq!(node.handle(at(42), &name("C2"), finished), Handled::Nothing);
    assert_eq!(node.handle(at(43), &name("C2"), returned), Handled::Nothing);
}

#[test]
fn a_forward_the_kill_overtook_is_killed_again_when_accepted() {
    let (mut node, id) = super::with_job_forwarded_to_c2(None);
    let mut out = Vec::new();
    node.control(at(31), id, &JobAction::Kill, &mut out)
        .expect("sent");
    assert_eq!(out.len(), 1);
    // The kill came before the forward, which C2 then accepted.
    let accept = Message::JobAccept(JobAccept {
        forward_seq: 1,
        source_job: id,
        dest_job: 77,
    });
    assert_eq!(node.handle(at(35), &name("C2"), accept), Handled::Nothing);
    assert!(node.needs_session(), "the kill is sent again");
    out.clear();
    node.schedule(at(35), &mut out);
    let kill = Message::JobControl(JobControl {
        source_job: id,
        action: JobAction::Kill,
    });
    assert!(
        out.iter()
            .any(|envelope| envelope.to == "C2" && envelope.message == kill),
        "{out:?}"
    );
}
