//! A submission cluster that comes back with a new lineage lost its
//! state: the jobs its earlier lineage forwarded are nobody's, and its
//! execution cluster withdraws them — those in the scheduler, those parked
//! while the link was down, and the ends it kept for a sync
//! (docs/reliability.md, "The lineage and the sync"). A journal must say
//! so: the execution cluster rebuilt from its journal (the records alone,
//! or a snapshot and the records since) is the live one, and brings none
//! of them back.

use std::time::Duration;

use mcfed_cluster::JobOrigin;
use mcfed_federation::history::GONE;
use mcfed_federation::{DurableState, Effects, JournalRecord, Member, MemberSpec};
use mcfed_protocol::{ClusterName, Envelope, JobRecall, JobWithdraw, Message, SimTime};

use super::snapshot_slices::{self, execution_c2, job, resume, settle, submit_jobs};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

/// `snapshot` with `records` folded in.
fn replayed(snapshot: &DurableState, records: &[JournalRecord]) -> DurableState {
    let mut state = snapshot.clone();
    for record in records.iter().cloned() {
        state.apply(record);
    }
    state
}

/// C2 rebuilt from `state`, as a restarted process is.
fn restored(state: DurableState, now: SimTime) -> Member {
    let (config, subscribers) = execution_c2();
    Member::restore(
        MemberSpec {
            config: &config,
            forwarder: None,
            subscribers: &subscribers,
            collectors: &subscribers,
            initial_jobs: &[],
        },
        state,
        now,
    )
    .expect("C2 restores")
}

/// The jobs C1 forwarded that C2 holds (in the scheduler or parked).
fn forwarded_jobs(state: &DurableState) -> usize {
    state
        .jobs
        .values()
        .filter(|(image, _)| image.forwarded_from.is_some())
        .count()
}

/// The two-cluster federation connected (C1 at lineage 1) after C2's
/// first counters, C2 keeping its history.
fn connected() -> ([Member; 2], Effects) {
    let (mut members, effects) = snapshot_slices::connected();
    members[1].keep_history(Duration::from_secs(3600));
    (members, effects)
}

#[test]
fn jobs_parked_when_their_submission_cluster_lost_its_state_stay_gone_after_a_restart() {
    let (mut members, mut effects) = connected();
    let mut records = Vec::new();
    // C1 forwards a short job, which runs first and ends (C2 keeps its
    // end for C1's next sync), and long ones that wait behind each other.
    let mut now = SimTime::from_secs(10);
    members[0]
        .submit(now, "send", job(0, 5), &mut effects)
        .expect("accepted");
    settle(&mut members, now, &mut effects);
    submit_jobs(&mut members[0], now, "send", 1..8, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    now += Duration::from_secs(10);
    settle(&mut members, now, &mut effects);
    records.extend(members[1].take_journal());
    let before = members[1].durable_state();
    assert_eq!(before.finished.len(), 1, "the short job's end is kept");
    assert!(forwarded_jobs(&before) >= 4, "jobs forwarded to C2");

    // The link goes down: C2's pending jobs of C1 are parked.
    now += Duration::from_secs(10);
    members[1].link(now, &name("C1"), false);
    members[0].link(now, &name("C2"), false);
    records.extend(members[1].take_journal());
    let parked: Vec<u64> = members[1]
        .node()
        .parked_jobs()
        .map(|image| image.id)
        .collect();
    assert!(parked.len() >= 3, "{} jobs parked", parked.len());
    let held: Vec<u64> = before.jobs.keys().copied().collect();
    let snapshots = [
        (before, records.len()),
        (members[1].durable_state(), records.len()),
    ];

    // C1 comes back with a new lineage: C2 withdraws what it held of C1.
    now += Duration::from_secs(10);
    resume(&mut members, now, 2, &mut effects);
    effects.clear();
    records.extend(members[1].take_journal());
    let live = members[1].durable_state();
    assert_eq!(
        members[1].node().parked_jobs().count(),
        0,
        "parked jobs withdrawn"
    );
    assert_eq!(forwarded_jobs(&live), 0, "C1's jobs withdrawn");
    assert!(live.finished.is_empty(), "C1's earlier ends forgotten");
    // Their history says so.
    let history = members[1].history().expect("kept");
    for id in &held {
        let record = history.job(*id).expect("recorded");
        assert_eq!(record.state, GONE, "job {id}");
        assert!(
            record
                .events()
                .iter()
                .any(|event| event.text.contains("withdrawn")),
            "job {id}: {:?}",
            record.events()
        );
    }

    // Rebuilt from the records alone, and from each snapshot and the
    // records after it.
    let mut journals = vec![(
        "records alone",
        replayed(&DurableState::empty(name("C2")), &records),
    )];
    for (index, (snapshot, taken)) in snapshots.into_iter().enumerate() {
        let label = ["snapshot before parking", "snapshot while parked"][index];
        journals.push((label, replayed(&snapshot, &records[taken..])));
    }
    for (label, state) in journals {
        assert_eq!(state.jobs, live.jobs, "{label}: the jobs");
        assert_eq!(state.finished, live.finished, "{label}: the ends kept");
        let again = restored(state, now);
        let rebuilt = again.durable_state();
        assert_eq!(
            rebuilt.jobs, live.jobs,
            "{label}: the restored member's jobs"
        );
        assert_eq!(
            rebuilt.finished, live.finished,
            "{label}: the restored member's ends"
        );
        assert_eq!(rebuilt.lineages, live.lineages, "{label}: the lineages");
        assert!(
            again
                .cluster()
                .jobs()
                .all(|job| job.origin == JobOrigin::Local),
            "{label}: no job of C1's earlier lineage comes back"
        );
    }
}

#[test]
fn jobs_parked_while_their_submission_cluster_reconnects_with_its_lineage_are_not_gone() {
    let (mut members, mut effects) = connected();
    let mut now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..6, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    now += Duration::from_secs(10);
    members[1].link(now, &name("C1"), false);
    members[0].link(now, &name("C2"), false);
    let parked: Vec<u64> = members[1]
        .node()
        .parked_jobs()
        .map(|image| image.id)
        .collect();
    assert!(parked.len() >= 3, "{} jobs parked", parked.len());
    // C1 reconnects with its lineage: hello and resume, then its sync
    // puts the parked jobs back.
    now += Duration::from_secs(10);
    resume(&mut members, now, 1, &mut effects);
    let history = members[1].history().expect("kept");
    for id in &parked {
        let record = history.job(*id).expect("recorded");
        assert!(
            !record.has_ended(),
            "parked job {id} ended: {:?}",
            record.events()
        );
    }
    settle(&mut members, now, &mut effects);
    assert_eq!(members[1].node().parked_jobs().count(), 0, "put back");
    let history = members[1].history().expect("kept");
    for id in &parked {
        let record = history.job(*id).expect("recorded");
        assert!(
            !record.has_ended(),
            "job {id} put back ended: {:?}",
            record.events()
        );
        assert!(
            members[1]
                .cluster()
                .job(mcfed_cluster::JobId(*id))
                .is_some()
        );
    }
}

#[test]
fn a_job_recalled_or_withdrawn_by_its_submission_cluster_is_sent_back_in_its_history() {
    let (mut members, mut effects) = connected();
    let now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..4, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    // C2's pending jobs of C1: (C2's id, C1's id).
    let pending: Vec<(u64, u64)> = members[1]
        .cluster()
        .jobs()
        .filter(|job| job.state == mcfed_cluster::JobState::Pending)
        .filter_map(|job| match &job.origin {
            JobOrigin::Forwarded { source_job, .. } => Some((job.id.0, *source_job)),
            JobOrigin::Local => None,
        })
        .collect();
    assert!(pending.len() >= 2, "{pending:?}");
    let (recalled, recalled_source) = pending[0];
    let (withdrawn, withdrawn_source) = pending[1];
    let forward_seq = members[1]
        .node()
        .forward_seq_of(&name("C1"), withdrawn_source)
        .expect("forwarded");
    for message in [
        Message::JobRecall(JobRecall {
            source_job: recalled_source,
            dest_job: recalled,
            reason: "recalled".into(),
        }),
        Message::JobWithdraw(JobWithdraw {
            source_job: withdrawn_source,
            forward_seq,
            pending_only: true,
            reason: "another copy won".into(),
        }),
    ] {
        let envelope = Envelope {
            from: name("C1"),
            to: name("C2"),
            message,
        };
        members[1].receive(now, envelope, &mut effects);
    }
    let history = members[1].history().expect("kept");
    for id in [recalled, withdrawn] {
        let record = history.job(id).expect("recorded");
        assert_eq!(record.state, GONE, "job {id}: {:?}", record.events());
    }
    let others = pending[2..].iter().map(|(id, _)| *id);
    for id in others {
        assert!(!history.job(id).expect("recorded").has_ended(), "job {id}");
    }
}

/// A sync that names some of the many jobs C1 forwarded sends back
/// exactly the others: their history says so, the named ones and C2's
/// own jobs go on (the history finds them by the jobs C1 forwarded that
/// have not ended, not by a walk of all it keeps).
#[test]
fn a_sync_naming_some_of_many_jobs_sends_back_exactly_the_others() {
    let (mut members, mut effects) = connected();
    let now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..40, 3600, &mut effects);
    submit_jobs(&mut members[1], now, "normal", 100..140, 3600, &mut effects);
    settle(&mut members, now, &mut effects);
    // C2's jobs of C1: (C2's id, C1's id, the forward).
    let forwarded: Vec<(u64, u64, u64)> = members[1]
        .cluster()
        .jobs()
        .filter_map(|job| match &job.origin {
            JobOrigin::Forwarded { source_job, .. } => Some((job.id.0, *source_job)),
            JobOrigin::Local => None,
        })
        .map(|(id, source_job)| {
            let seq = members[1].node().forward_seq_of(&name("C1"), source_job);
            (id, source_job, seq.expect("forwarded"))
        })
        .collect();
    assert!(forwarded.len() >= 30, "{} jobs forwarded", forwarded.len());
    let local: Vec<u64> = members[1]
        .cluster()
        .jobs()
        .filter(|job| job.origin == JobOrigin::Local)
        .map(|job| job.id.0)
        .collect();
    // The sync names every third job of C1 (and the one running, if any).
    let running = |id: u64| {
        members[1]
            .cluster()
            .job(mcfed_cluster::JobId(id))
            .is_some_and(|job| job.state != mcfed_cluster::JobState::Pending)
    };
    let (named, others): (Vec<_>, Vec<_>) = forwarded
        .iter()
        .enumerate()
        .partition(|(index, (id, _, _))| index % 3 == 0 || running(*id));
    let jobs = named
        .iter()
        .map(
            |(_, (_, source_job, forward_seq))| mcfed_protocol::HeldJob {
                source_job: *source_job,
                forward_seq: *forward_seq,
            },
        )
        .collect();
    let envelope = Envelope {
        from: name("C1"),
        to: name("C2"),
        message: Message::JobSync(mcfed_protocol::JobSync { jobs }),
    };
    members[1].receive(now, envelope, &mut effects);
    let history = members[1].history().expect("kept");
    for (_, (id, _, _)) in &others {
        let record = history.job(*id).expect("recorded");
        assert_eq!(record.state, GONE, "job {id}: {:?}", record.events());
        assert!(
            members[1]
                .cluster()
                .job(mcfed_cluster::JobId(*id))
                .is_none()
        );
    }
    for id in named.iter().map(|(_, (id, _, _))| id).chain(&local) {
        let record = history.job(*id).expect("recorded");
        assert!(!record.has_ended(), "job {id}: {:?}", record.events());
    }
    let gone = history
        .jobs()
        .iter()
        .filter(|job| job.state == GONE)
        .count();
    assert_eq!(gone, others.len(), "only the jobs the sync did not name");
}

/// C2 keeps the end of a job C1 forwarded for C1's next sync; once that
/// sync (same lineage) no longer lists it, C2 forgets it, and its journal
/// says so: rebuilt from the records alone, or from a snapshot that kept
/// the end and the records after, C2 does not bring it back.
#[test]
fn an_end_a_sync_no_longer_lists_stays_forgotten_after_a_restart() {
    let (mut members, mut effects) = connected();
    let mut records = members[1].take_journal();
    let mut now = SimTime::from_secs(10);
    submit_jobs(&mut members[0], now, "send", 0..3, 5, &mut effects);
    settle(&mut members, now, &mut effects);
    // The jobs run one after the other and end; C1 hears of each.
    for _ in 0..3 {
        now += Duration::from_secs(10);
        settle(&mut members, now, &mut effects);
    }
    records.extend(members[1].take_journal());
    let kept = members[1].durable_state();
    assert_eq!(kept.finished.len(), 3, "the ends are kept for C1's sync");
    let taken = records.len();

    // The link goes down and comes up: C1 resumes with its lineage, and
    // its sync lists none of them (it knows they ended).
    now += Duration::from_secs(10);
    members[1].link(now, &name("C1"), false);
    members[0].link(now, &name("C2"), false);
    now += Duration::from_secs(10);
    resume(&mut members, now, 1, &mut effects);
    settle(&mut members, now, &mut effects);
    records.extend(members[1].take_journal());
    let live = members[1].durable_state();
    assert!(live.finished.is_empty(), "the ends are forgotten");

    let journals = [
        (
            "records alone",
            replayed(&DurableState::empty(name("C2")), &records),
        ),
        ("snapshot with the ends", replayed(&kept, &records[taken..])),
    ];
    for (label, state) in journals {
        assert_eq!(state.finished, live.finished, "{label}: the ends kept");
        let rebuilt = restored(state, now).durable_state();
        assert_eq!(rebuilt.finished, live.finished, "{label}: restored");
    }
}
