//! Job control at the submission cluster: a job still here is acted on
//! here; a job at an execution cluster gets a `JobControl` sent there.

use std::time::Duration;

use mcfed_protocol::{
    JobAction, JobChanges, JobControl, JobEvent, JobSpec, JobStatus, Message, QueueName, SimTime,
};

use super::{forwarder, name, update, with_job_at_c2};
use crate::node::{Controlled, SourceState};

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
