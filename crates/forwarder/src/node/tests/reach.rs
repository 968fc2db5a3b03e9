//! Unit tests of unreachable clusters: no candidates, jobs taken back after
//! the reclaim time, running ones left alone, the copies settled when the
//! cluster is heard from again; and what a journal restores.

use std::time::Duration;

use mcfed_protocol::{JobAccept, JobEvent, JobSpec, JobStatus, JobWithdraw, Message, SimTime};

use super::{config, name, update};
use crate::node::{ForwarderNode, Reachability, RestoredForwarder, SourceState};
use crate::policy::PendReason;

/// Updates every 30 s; unreachable after 150 s of silence; jobs come back
/// after 300 s more.
fn forwarder() -> ForwarderNode {
    let mut config = config(None);
    config.reachability = Reachability {
        stale_after: vec![
            (name("C2"), Duration::from_secs(150)),
            (name("C3"), Duration::from_secs(150)),
        ],
        reclaim_after: Some(Duration::from_secs(300)),
    };
    ForwarderNode::new(config)
}

fn at(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}

fn submit(node: &mut ForwarderNode, now: SimTime) -> u64 {
    node.submit(
        now,
        "send",
        JobSpec::simple("j", "u", Duration::from_secs(600)),
    )
    .expect("submit")
}

fn forwards(out: &[mcfed_protocol::Envelope]) -> Vec<(String, u64)> {
    out.iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobForward(forward) => Some((envelope.to.to_string(), forward.forward_seq)),
            _ => None,
        })
        .collect()
}

fn withdrawals(out: &[mcfed_protocol::Envelope]) -> Vec<(String, JobWithdraw)> {
    out.iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobWithdraw(withdraw) => Some((envelope.to.to_string(), withdraw.clone())),
            _ => None,
        })
        .collect()
}

fn accept(node: &mut ForwarderNode, from: &str, id: u64, seq: u64, dest_job: u64) {
    node.handle(
        at(30),
        &name(from),
        Message::JobAccept(JobAccept {
            forward_seq: seq,
            source_job: id,
            dest_job,
        }),
    );
}

fn status(node: &mut ForwarderNode, now: SimTime, from: &str, id: u64, dest: u64, event: JobEvent) {
    node.handle(
        now,
        &name(from),
        Message::JobStatus(JobStatus {
            source_job: id,
            dest_job: dest,
            event,
            at: now,
        }),
    );
}

/// C2 (5 free) and C3 (2 free) sent counters at 30 s; a job went to C2 and
/// was accepted as 77.
fn with_job_accepted_at_c2() -> (ForwarderNode, u64) {
    let mut node = forwarder();
    node.handle(at(30), &name("C2"), update("C2", 1, 5));
    node.handle(at(30), &name("C3"), update("C3", 1, 2));
    let id = submit(&mut node, at(30));
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(forwards(&out), vec![("C2".to_owned(), 1)]);
    accept(&mut node, "C2", id, 1, 77);
    node.take_records();
    (node, id)
}

#[test]
fn a_silent_cluster_is_no_candidate_and_its_link_counts_too() {
    let mut node = forwarder();
    node.handle(at(30), &name("C2"), update("C2", 1, 5));
    assert!(
        !node.is_unreachable(&name("C2"), at(180)),
        "150 s old: still fine"
    );
    assert!(node.is_unreachable(&name("C2"), at(181)));
    // C3 never sent anything: silent since the forwarder started.
    assert!(node.is_unreachable(&name("C3"), at(151)));
    let id = submit(&mut node, at(200));
    let mut out = Vec::new();
    node.schedule(at(200), &mut out);
    assert!(forwards(&out).is_empty());
    let records = node.take_records();
    assert_eq!(records[0].job_id, id);
    assert!(
        records[0].reason.starts_with("remote cluster unreachable"),
        "{}",
        records[0].reason
    );
    assert!(
        records[0]
            .candidates
            .iter()
            .all(|c| c.verdict == "ineligible" && c.why.starts_with("remote cluster unreachable"))
    );
    // An update makes C2 a candidate again: the job goes there.
    node.handle(at(210), &name("C2"), update("C2", 7, 5));
    node.schedule(at(210), &mut out);
    assert_eq!(forwards(&out), vec![("C2".to_owned(), 1)]);
    // A link known down is unreachable at once, whatever the counters.
    node.link(&name("C2"), false, at(215));
    assert!(node.is_unreachable(&name("C2"), at(215)));
    node.link(&name("C2"), true, at(216));
    assert!(!node.is_unreachable(&name("C2"), at(216)));
}

#[test]
fn jobs_that_had_not_started_come_back_after_the_reclaim_time() {
    let (mut node, id) = with_job_accepted_at_c2();
    // C3 keeps sending; C2 falls silent after its update at 30 s: it is
    // unreachable from 180 s, and its jobs come back at 480 s.
    node.handle(at(450), &name("C3"), update("C3", 15, 2));
    assert_eq!(node.next_event_time(), Some(at(480)));
    let mut out = Vec::new();
    node.schedule(at(479), &mut out);
    assert!(matches!(
        node.job(id).map(|j| j.state),
        Some(SourceState::Accepted { .. })
    ));
    node.schedule(at(480), &mut out);
    let withdrawn = withdrawals(&out);
    assert_eq!(withdrawn.len(), 1);
    assert_eq!(withdrawn[0].0, "C2");
    assert!(withdrawn[0].1.pending_only);
    assert_eq!(forwards(&out), vec![("C3".to_owned(), 1)], "decided again");
    let records = node.take_records();
    assert!(
        records[0]
            .note
            .as_deref()
            .is_some_and(|note| note.starts_with("taken back from high@C2")),
        "{:?}",
        records[0].note
    );
    assert_eq!(
        node.next_event_time(),
        Some(at(900)),
        "nothing left at C2; the job now at C3 comes back if C3 falls silent too"
    );
    // The sync when C2 is back does not list the copy left there: C2
    // withdraws it.
    node.handle(
        at(500),
        &name("C2"),
        Message::Hello(mcfed_protocol::Hello::with_incarnation(name("C2"), 3)),
    );
    out.clear();
    node.schedule(at(500), &mut out);
    let sync = out
        .iter()
        .find_map(|e| match &e.message {
            Message::JobSync(sync) => Some(sync.clone()),
            _ => None,
        })
        .expect("a sync");
    assert!(sync.jobs.is_empty(), "{sync:?}");
}

#[test]
fn running_jobs_stay_and_only_show_unknown() {
    let (mut node, id) = with_job_accepted_at_c2();
    status(&mut node, at(40), "C2", id, 77, JobEvent::Started);
    assert_eq!(node.next_event_time(), None, "nothing to take back");
    let mut out = Vec::new();
    node.schedule(at(10_000), &mut out);
    assert!(withdrawals(&out).is_empty());
    assert!(matches!(
        node.job(id).map(|j| j.state),
        Some(SourceState::Running { .. })
    ));
    assert!(node.is_unreachable(&name("C2"), at(10_000)));
}

/// The job was taken back from C2 at 480 s and forwarded to C3 (forward 1
/// there).
fn with_copy_left_at_c2() -> (ForwarderNode, u64) {
    let (mut node, id) = with_job_accepted_at_c2();
    node.handle(at(450), &name("C3"), update("C3", 15, 2));
    let mut out = Vec::new();
    node.schedule(at(480), &mut out);
    assert_eq!(forwards(&out), vec![("C3".to_owned(), 1)]);
    (node, id)
}

#[test]
fn a_copy_left_behind_that_started_first_wins() {
    let (mut node, id) = with_copy_left_at_c2();
    // C2 comes back: the copy there had started after all. The copy sent
    // to C3 has not: it is withdrawn, and the job runs at C2.
    status(&mut node, at(500), "C2", id, 77, JobEvent::Started);
    let mut out = Vec::new();
    node.schedule(at(500), &mut out);
    let withdrawn = withdrawals(&out);
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    assert_eq!(withdrawn[0].0, "C3");
    assert!(!withdrawn[0].1.pending_only);
    assert!(matches!(
        node.job(id).map(|j| j.state),
        Some(SourceState::Running { dest_job: 77, .. })
    ));
    // Its end from C2 is believed; a late accept from C3 is not.
    accept(&mut node, "C3", id, 1, 5);
    assert!(matches!(
        node.job(id).map(|j| j.state),
        Some(SourceState::Running { .. })
    ));
    status(&mut node, at(900), "C2", id, 77, JobEvent::Finished);
    assert!(node.job(id).is_none());
}

#[test]
fn a_copy_decided_again_that_started_wins() {
    let (mut node, id) = with_copy_left_at_c2();
    accept(&mut node, "C3", id, 1, 5);
    status(&mut node, at(490), "C3", id, 5, JobEvent::Started);
    status(&mut node, at(500), "C2", id, 77, JobEvent::Started);
    let mut out = Vec::new();
    node.schedule(at(500), &mut out);
    let withdrawn = withdrawals(&out);
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    assert_eq!(withdrawn[0].0, "C2");
    assert!(!withdrawn[0].1.pending_only);
    assert!(matches!(
        node.job(id).map(|j| j.state),
        Some(SourceState::Running { dest_job: 5, .. })
    ));
}

#[test]
fn a_copy_left_behind_that_was_still_pending_is_withdrawn_again() {
    let (mut node, id) = with_copy_left_at_c2();
    // The sync's answer: C2 still holds it, pending.
    accept(&mut node, "C2", id, 1, 77);
    let mut out = Vec::new();
    node.schedule(at(500), &mut out);
    let withdrawn = withdrawals(&out);
    assert_eq!(withdrawn.len(), 1);
    assert!(withdrawn[0].1.pending_only);
    // C2 lost it (it restarted without it): the copy is forgotten.
    node.handle(
        at(510),
        &name("C2"),
        Message::JobLost(mcfed_protocol::JobLost {
            source_job: id,
            forward_seq: 1,
            reason: "gone".into(),
        }),
    );
    assert!(node.job(id).is_some_and(|job| job.left_behind.is_none()));
    assert!(matches!(
        node.job(id).map(|j| j.state),
        Some(SourceState::Forwarded { .. })
    ));
}

#[test]
fn a_restored_forwarder_has_its_jobs_numbering_and_copies_left_behind() {
    let (mut node, id) = with_copy_left_at_c2();
    let waiting = submit(&mut node, at(490));
    let images: Vec<_> = [id, waiting]
        .iter()
        .map(|&job| node.job_image(job).expect("image"))
        .collect();
    let restored = RestoredForwarder {
        jobs: images.clone(),
        next_job_id: node.next_job_id(),
        remotes: node.remote_images(),
    };
    let mut again = forwarder();
    assert!(again.restore(restored, at(600)).is_empty());
    let again_images: Vec<_> = [id, waiting]
        .iter()
        .map(|&job| again.job_image(job).expect("image"))
        .collect();
    assert_eq!(again_images, images);
    assert_eq!(again.remote_images(), node.remote_images());
    assert_eq!(again.waiting_jobs(), 1);
    // New ids and forwards number on; an old update is old news.
    assert_eq!(submit(&mut again, at(601)), waiting + 1);
    again.handle(at(601), &name("C3"), update("C3", 15, 2));
    assert_eq!(again.view().applied_seq(&name("C3")), Some(15), "kept");
    again.handle(at(602), &name("C3"), update("C3", 16, 3));
    let mut out = Vec::new();
    again.schedule(at(602), &mut out);
    let seqs: Vec<u64> = forwards(&out).iter().map(|(_, seq)| *seq).collect();
    assert!(seqs.iter().all(|&seq| seq >= 2), "{seqs:?}");
    // A forward restored unanswered still weighs on its queue.
    assert_eq!(
        again.view().unreflected_forwards(&name("C3")),
        1 + seqs.len()
    );
}

#[test]
fn pend_reason_has_a_name_for_unreachable() {
    assert_ne!(PendReason::RemoteUnreachable, PendReason::NoEligibleQueue);
}

#[test]
fn a_restored_job_is_not_taken_back_before_its_cluster_answers_for_it() {
    let (node, id) = with_job_accepted_at_c2();
    let restored = RestoredForwarder {
        jobs: vec![node.job_image(id).expect("image")],
        next_job_id: node.next_job_id(),
        remotes: node.remote_images(),
    };
    let mut again = forwarder();
    assert!(again.restore(restored, at(600)).is_empty());
    // C2 stays silent well past the reclaim time: maybe it started the job
    // and the word was lost with the restarted process; it stays.
    let mut out = Vec::new();
    again.schedule(at(5_000), &mut out);
    assert!(withdrawals(&out).is_empty());
    assert!(matches!(
        again.job(id).map(|j| j.state),
        Some(SourceState::Accepted { .. })
    ));
    // Once C2 has answered for it (the sync after reconnecting), it is
    // taken back the next time C2 is unreachable for long enough.
    accept(&mut again, "C2", id, 1, 77);
    // Its last update was taken at 4980 s: unreachable from 5130 s, its
    // jobs come back at 5430 s.
    again.handle(at(5_000), &name("C2"), update("C2", 166, 5));
    let mut out = Vec::new();
    again.schedule(at(5_000 + 451), &mut out);
    assert_eq!(withdrawals(&out).len(), 1, "{out:?}");
}

/// An update from a cluster counted unreachable decides the waiting jobs
/// again even when it restates the figures: it makes the cluster a
/// candidate again (an update that only restates a reachable cluster's
/// figures does not).
#[test]
fn an_update_ending_an_unreachable_spell_decides_waiting_jobs_again() {
    let mut node = forwarder();
    node.handle(at(30), &name("C2"), update("C2", 1, 4));
    node.handle(at(30), &name("C3"), update("C3", 1, 4));
    // 170 s of silence from both: unreachable, so the job waits here.
    submit(&mut node, at(200));
    let mut out = Vec::new();
    node.schedule(at(200), &mut out);
    assert!(forwards(&out).is_empty(), "no cluster is in reach");
    assert!(!node.needs_session_at(at(200)));
    node.handle(at(210), &name("C2"), update("C2", 7, 4));
    assert!(
        node.needs_session_at(at(210)),
        "the same figures, but C2 is back in reach"
    );
    let mut out = Vec::new();
    node.schedule(at(210), &mut out);
    assert_eq!(forwards(&out), vec![("C2".to_owned(), 1)]);
}

/// A link coming up decides the waiting jobs again.
#[test]
fn a_link_coming_up_decides_waiting_jobs_again() {
    let mut node = forwarder();
    node.handle(at(30), &name("C2"), update("C2", 1, 4));
    node.handle(at(30), &name("C3"), update("C3", 1, 4));
    node.link(&name("C2"), false, at(40));
    node.link(&name("C3"), false, at(40));
    submit(&mut node, at(50));
    let mut out = Vec::new();
    node.schedule(at(50), &mut out);
    assert!(forwards(&out).is_empty(), "both links are down");
    assert!(!node.needs_session_at(at(50)));
    node.link(&name("C3"), true, at(60));
    assert!(node.needs_session_at(at(60)), "C3 is back");
    let mut out = Vec::new();
    node.schedule(at(60), &mut out);
    assert_eq!(forwards(&out), vec![("C3".to_owned(), 1)]);
}
