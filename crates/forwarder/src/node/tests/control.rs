//! Job control at the submission cluster: a job still here is acted on
//! here; a job at an execution cluster gets a `JobControl` sent there.

use std::time::Duration;

use mcfed_protocol::{
    HeldJob, Hello, JobAccept, JobAction, JobChanges, JobControl, JobEvent, JobReturn, JobSpec,
    JobStatus, JobSync, Message, QueueName, SimTime,
};

use super::{forwarder, name, update, with_job_at_c2};
use crate::node::{
    Controlled, ForwarderNode, Handled, RestoredForwarder, SourceImageState, SourceState,
};

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

/// A forwarder rebuilt from what a journal keeps of `node` (every image
/// and numbering), as after a crash of its process.
fn restored(node: &ForwarderNode) -> ForwarderNode {
    let mut again = super::forwarder(None);
    again.track_changes();
    let problems = again.restore(
        RestoredForwarder {
            jobs: node.job_images().collect(),
            next_job_id: node.next_job_id(),
            remotes: node.remote_images(),
        },
        at(60),
    );
    assert!(problems.is_empty(), "{problems:?}");
    again
}

#[test]
fn a_killed_job_is_remembered_through_a_restart() {
    let (mut node, id) = with_job_at_c2(None);
    node.track_changes();
    let mut out = Vec::new();
    node.control(at(40), id, &JobAction::Kill, &mut out)
        .expect("sent");
    // The journal writes it as killed there, not gone.
    assert!(node.take_changes().contains(&id));
    let image = node.job_image(id).expect("remembered");
    assert_eq!(
        image.state,
        SourceImageState::KilledAway {
            cluster: name("C2"),
            forward_seq: 1,
            dest_job: Some(77),
        }
    );
    assert_eq!(node.job_image_count(), node.job_images().count());
    // The cluster is killed -9 and restarts from its journal; the return
    // that crossed the kill comes then: it still ends here, killed, once.
    let mut again = restored(&node);
    assert_eq!(again.job_image(id), Some(image));
    assert!(again.job(id).is_none(), "not a job of a send queue");
    assert_eq!(again.waiting_jobs(), 0);
    let returned = || {
        Message::JobReturn(JobReturn {
            source_job: id,
            dest_job: 77,
            reason: "recalled".into(),
        })
    };
    assert_eq!(
        again.handle(at(61), &name("C2"), returned()),
        Handled::KilledOnReturn {
            source_job: id,
            name: "j".into()
        }
    );
    assert_eq!(
        again.handle(at(62), &name("C2"), returned()),
        Handled::Nothing
    );
    // Settled: the journal writes it gone, and a later restart forgets it.
    assert!(again.take_changes().contains(&id));
    assert_eq!(again.job_image(id), None);
    assert_eq!(restored(&again).job_image_count(), 0);
}

#[test]
fn a_forward_the_kill_overtook_is_killed_again_after_a_restart() {
    let (mut node, id) = super::with_job_forwarded_to_c2(None);
    let mut out = Vec::new();
    node.control(at(31), id, &JobAction::Kill, &mut out)
        .expect("sent");
    let mut again = restored(&node);
    // After the restart, C2 says hello: the sync lists the killed job, so
    // C2 answers for it even if the kill was lost with the crash.
    let hello = Message::Hello(Hello::with_incarnation(name("C2"), 5));
    again.handle(at(61), &name("C2"), hello);
    out.clear();
    again.schedule(at(61), &mut out);
    let sync = Message::JobSync(JobSync {
        jobs: vec![HeldJob {
            source_job: id,
            forward_seq: 1,
        }],
    });
    assert!(
        out.iter()
            .any(|envelope| envelope.to == "C2" && envelope.message == sync),
        "{out:?}"
    );
    // C2 accepted the forward: the kill is sent again.
    let accept = Message::JobAccept(JobAccept {
        forward_seq: 1,
        source_job: id,
        dest_job: 77,
    });
    assert_eq!(again.handle(at(62), &name("C2"), accept), Handled::Nothing);
    out.clear();
    again.schedule(at(62), &mut out);
    let kill = Message::JobControl(JobControl {
        source_job: id,
        action: JobAction::Kill,
    });
    assert!(
        out.iter()
            .any(|envelope| envelope.to == "C2" && envelope.message == kill),
        "{out:?}"
    );
    // Killed there: counted there, forgotten here.
    let killed = Message::JobStatus(JobStatus {
        source_job: id,
        dest_job: 77,
        event: JobEvent::Killed,
        at: at(63),
    });
    assert_eq!(again.handle(at(63), &name("C2"), killed), Handled::Nothing);
    assert_eq!(again.job_image(id), None);
}
