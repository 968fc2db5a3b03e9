//! Unit tests of [`Handled`]: what `ForwarderNode::handle` says each
//! message changed, and that a stale reply changes nothing.

use mcfed_protocol::{
    Hello, JobAccept, JobEvent, JobLost, JobReject, JobReturn, JobStatus, JobSync, Message,
    RejectReason, SimTime,
};

use super::{forwarder, name, update, with_job_at_c2, with_job_forwarded_to_c2};
use crate::node::{CameBack, Handled, SourceState};
use crate::view::UpdateOutcome;

const NOW: SimTime = SimTime::from_secs(40);

fn accept(source_job: u64, forward_seq: u64) -> Message {
    Message::JobAccept(JobAccept {
        forward_seq,
        source_job,
        dest_job: 77,
    })
}

fn reject(source_job: u64, forward_seq: u64, reason: RejectReason) -> Message {
    Message::JobReject(JobReject {
        forward_seq,
        source_job,
        reason,
    })
}

fn returned(source_job: u64, dest_job: u64) -> Message {
    Message::JobReturn(JobReturn {
        source_job,
        dest_job,
        reason: "recalled".into(),
    })
}

fn lost(source_job: u64, forward_seq: u64) -> Message {
    Message::JobLost(JobLost {
        source_job,
        forward_seq,
        reason: "restarted".into(),
    })
}

fn status(source_job: u64, dest_job: u64, event: JobEvent) -> Message {
    Message::JobStatus(JobStatus {
        source_job,
        dest_job,
        event,
        at: NOW,
    })
}

#[test]
fn came_back_has_a_word_for_each_way() {
    assert_eq!(CameBack::Refused.as_str(), "refused");
    assert_eq!(CameBack::Returned.as_str(), "returned");
    assert_eq!(CameBack::Lost.as_str(), "lost");
}

#[test]
fn an_applied_update_says_so() {
    let mut node = forwarder(None);
    assert_eq!(
        node.handle(NOW, &name("C2"), update("C2", 1, 5)),
        Handled::Update(UpdateOutcome::Applied)
    );
}

#[test]
fn a_stale_update_says_which_one_was_applied() {
    let mut node = forwarder(None);
    node.handle(NOW, &name("C2"), update("C2", 2, 5));
    assert_eq!(
        node.handle(NOW, &name("C2"), update("C2", 1, 0)),
        Handled::Update(UpdateOutcome::Stale { seq: 1, applied: 2 })
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), update("C2", 2, 0)),
        Handled::Update(UpdateOutcome::Stale { seq: 2, applied: 2 })
    );
}

#[test]
fn an_update_under_another_clusters_name_is_from_an_unknown_sender() {
    let mut node = forwarder(None);
    assert_eq!(
        node.handle(NOW, &name("C3"), update("C2", 1, 5)),
        Handled::Update(UpdateOutcome::UnknownSender)
    );
    assert_eq!(node.view().applied_seq(&name("C2")), None);
    // A cluster this one does not send to, under its own name, too.
    assert_eq!(
        node.handle(NOW, &name("C9"), update("C9", 1, 5)),
        Handled::Update(UpdateOutcome::UnknownSender)
    );
}

#[test]
fn an_accept_of_the_current_forward_is_reported_once() {
    let (mut node, id) = with_job_forwarded_to_c2(None);
    assert_eq!(
        node.handle(NOW, &name("C2"), accept(id, 2)),
        Handled::Nothing
    );
    assert_eq!(
        node.handle(NOW, &name("C3"), accept(id, 1)),
        Handled::Nothing
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), accept(id, 1)),
        Handled::Accepted { source_job: id }
    );
    assert!(matches!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Accepted { dest_job: 77, .. })
    ));
    // A duplicate answers a forward that is no longer waiting.
    assert_eq!(
        node.handle(NOW, &name("C2"), accept(id, 1)),
        Handled::Nothing
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), accept(id + 1, 1)),
        Handled::Nothing,
        "a job it does not know"
    );
}

#[test]
fn a_refusal_comes_back_with_the_remote_reason() {
    let (mut node, id) = with_job_forwarded_to_c2(None);
    let reason = RejectReason::BacklogFull { limit: 50 };
    assert_eq!(
        node.handle(NOW, &name("C2"), reject(id, 2, reason.clone())),
        Handled::Nothing,
        "another forward"
    );
    assert_eq!(
        node.handle(NOW, &name("C3"), reject(id, 1, reason.clone())),
        Handled::Nothing,
        "another cluster"
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), reject(id, 1, reason.clone())),
        Handled::CameBack {
            source_job: id,
            how: CameBack::Refused,
            reason: reason.to_string(),
        }
    );
    assert_eq!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Waiting)
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), reject(id, 1, reason)),
        Handled::Nothing,
        "the job is no longer there"
    );
}

#[test]
fn a_refusal_of_an_accepted_job_is_stale() {
    let (mut node, id) = with_job_at_c2(None);
    assert_eq!(
        node.handle(NOW, &name("C2"), reject(id, 1, RejectReason::NotAllowed)),
        Handled::Nothing
    );
    assert!(matches!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Accepted { .. })
    ));
}

#[test]
fn a_return_comes_back_with_the_remote_reason() {
    let (mut node, id) = with_job_at_c2(None);
    assert_eq!(
        node.handle(NOW, &name("C2"), returned(id, 78)),
        Handled::Nothing
    );
    assert_eq!(
        node.handle(NOW, &name("C3"), returned(id, 77)),
        Handled::Nothing
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), returned(id, 77)),
        Handled::CameBack {
            source_job: id,
            how: CameBack::Returned,
            reason: "recalled".into(),
        }
    );
    assert_eq!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Waiting)
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), returned(id, 77)),
        Handled::Nothing,
        "the job is no longer there"
    );
}

#[test]
fn a_loss_comes_back_with_the_remote_reason() {
    let (mut node, id) = with_job_at_c2(None);
    assert_eq!(node.handle(NOW, &name("C2"), lost(id, 2)), Handled::Nothing);
    assert_eq!(node.handle(NOW, &name("C3"), lost(id, 1)), Handled::Nothing);
    assert_eq!(
        node.handle(NOW, &name("C2"), lost(id, 1)),
        Handled::CameBack {
            source_job: id,
            how: CameBack::Lost,
            reason: "restarted".into(),
        }
    );
    assert_eq!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Waiting)
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), lost(id, 1)),
        Handled::Nothing,
        "the job is no longer there"
    );
}

#[test]
fn status_changes_are_reported_and_finished_jobs_are_gone() {
    let (mut node, id) = with_job_at_c2(None);
    assert_eq!(
        node.handle(NOW, &name("C2"), status(id, 78, JobEvent::Started)),
        Handled::Nothing
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), status(id, 77, JobEvent::Started)),
        Handled::Status {
            source_job: id,
            event: JobEvent::Started,
        }
    );
    assert!(matches!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Running { dest_job: 77, .. })
    ));
    assert_eq!(
        node.handle(NOW, &name("C2"), status(id, 77, JobEvent::Finished)),
        Handled::Status {
            source_job: id,
            event: JobEvent::Finished,
        }
    );
    assert!(node.job(id).is_none());
    assert_eq!(
        node.handle(NOW, &name("C2"), status(id, 77, JobEvent::Finished)),
        Handled::Nothing,
        "the job is gone"
    );
}

#[test]
fn hellos_say_whether_the_cluster_restarted() {
    let mut node = forwarder(None);
    let hello = |cluster: &str, incarnation| {
        Message::Hello(Hello::with_incarnation(name(cluster), incarnation))
    };
    assert_eq!(
        node.handle(NOW, &name("C2"), hello("C2", 5)),
        Handled::Hello { restarted: false }
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), hello("C2", 5)),
        Handled::Hello { restarted: false }
    );
    assert_eq!(
        node.handle(NOW, &name("C2"), hello("C2", 6)),
        Handled::Hello { restarted: true }
    );
    assert_eq!(
        node.handle(NOW, &name("C9"), hello("C9", 1)),
        Handled::Nothing,
        "not a cluster it sends to"
    );
}

#[test]
fn messages_not_for_the_forwarder_change_nothing() {
    let mut node = forwarder(None);
    assert_eq!(
        node.handle(NOW, &name("C2"), Message::JobSync(JobSync { jobs: vec![] })),
        Handled::Nothing
    );
}

/// An update that only restates the figures leaves waiting jobs alone (they
/// would be decided the same way); one that moves them decides them again.
#[test]
fn only_an_update_that_moves_the_figures_decides_waiting_jobs_again() {
    let mut node = forwarder(None);
    let now = SimTime::from_secs(30);
    node.handle(now, &name("C2"), update("C2", 1, 0));
    node.handle(now, &name("C3"), update("C3", 1, 0));
    // 20 slots: more than any queue has; it waits here.
    let mut wide = mcfed_protocol::JobSpec::simple("wide", "u", std::time::Duration::from_secs(60));
    wide.slots = 20;
    node.submit(now, "send", wide).expect("submit");
    let mut out = Vec::new();
    node.schedule(now, &mut out);
    assert!(out.is_empty(), "nothing can take it");
    assert_eq!(node.waiting_jobs(), 1);
    assert!(!node.needs_session_at(now));
    let later = SimTime::from_secs(60);
    node.handle(later, &name("C2"), update("C2", 2, 0));
    assert!(
        !node.needs_session_at(later),
        "the same figures, newer: no session"
    );
    node.handle(later, &name("C2"), update("C2", 3, 4));
    assert!(node.needs_session_at(later), "4 slots freed: decided again");
}
