//! Seeds for what the wire and the files gained after the first fuzz
//! runs: every admin request, and the answers of a member that holds jobs
//! and an advance reservation (`brsvs`, `bjobs` and `bhist` in pages);
//! journal records and a snapshot with a job killed away
//! (`SourceImageState::KilledAway`); a snapshot made in slices while the
//! member ran; lsb.acct records naming an advance reservation (`rsvId`).
//! Written by `MCFED_WRITE_CORPUS=1 cargo test -p mcfed-fuzzing --test it
//! corpus`; the tests here check that the kept corpus still holds them.

use std::path::Path;
use std::time::Duration;

use mcfed_admin::{AdminRequest, AdminResponse, Applied, HostEvent, JobsQuery, ReservationRow};
use mcfed_cluster::AdvanceReservationConfig;
use mcfed_federation::{
    DurableState, Effects, JobRef, JournalRecord, Member, ProcessFacts, SnapshotBuilder,
};
use mcfed_forwarder::{SourceImage, SourceImageState};
use mcfed_protocol::{
    ClusterName, JobAction, JobChanges, JobSpec, QueueName, SimTime, SlotRelease,
};

use crate::corpus::corpus_dir;

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn submit(member: &mut Member, queue: &str, job: &str) {
    let spec = JobSpec::simple(job, "alice", Duration::from_secs(600));
    member
        .submit(SimTime::from_secs(10), queue, spec, &mut Effects::default())
        .expect("accepted");
}

/// One request of every kind.
fn requests() -> Vec<AdminRequest> {
    let spec = JobSpec::simple("job1", "alice", Duration::from_secs(600));
    let query = JobsQuery {
        user: Some("alice".to_owned()),
        ..JobsQuery::default()
    };
    vec![
        AdminRequest::Submit {
            queue: "normal".to_owned(),
            spec: spec.clone(),
        },
        AdminRequest::SubmitMany {
            jobs: vec![("send".to_owned(), spec)],
        },
        AdminRequest::Jobs(query.clone()),
        AdminRequest::JobsPage {
            query: query.clone(),
            after: None,
        },
        AdminRequest::JobsPage {
            query,
            after: Some(1),
        },
        AdminRequest::Queues,
        AdminRequest::Hosts,
        AdminRequest::Clusters,
        AdminRequest::Records { from: 3 },
        AdminRequest::Status,
        AdminRequest::Control {
            job: JobRef::Name("job1".to_owned()),
            action: JobAction::Kill,
        },
        AdminRequest::History,
        AdminRequest::HistoryPage { after: None },
        AdminRequest::HistoryPage { after: Some(1) },
        AdminRequest::Params,
        AdminRequest::Aps,
        AdminRequest::Host {
            host: "h1".to_owned(),
            event: HostEvent::Fail,
        },
        AdminRequest::Watch { from: 0 },
        AdminRequest::Activity,
        AdminRequest::Reservations,
        AdminRequest::ReservationAdd {
            config: AdvanceReservationConfig {
                name: "later".to_owned(),
                hosts: vec!["h1".to_owned()],
                slots: Some(1),
                start: SimTime::from_secs(3600),
                end: SimTime::from_secs(7200),
                users: vec!["all".to_owned()],
                open: true,
            },
            by: None,
        },
        AdminRequest::ReservationDelete {
            name: "later".to_owned(),
            by: None,
        },
        AdminRequest::Shutdown,
    ]
}

/// A short file name for a request or answer: its variant.
fn variant(value: &impl std::fmt::Debug) -> String {
    let text = format!("{value:?}");
    let end = text.find([' ', '(', '{']).unwrap_or(text.len());
    text[..end].to_owned()
}

/// The admin seeds: every request, and what a member answers each.
fn admin_seeds() -> Vec<(String, Vec<u8>)> {
    let mut member = mcfed_fuzzing::member();
    submit(&mut member, "normal", "job1");
    submit(&mut member, "send", "job2");
    let now = SimTime::from_secs(20);
    let mut seeds = Vec::new();
    for (index, request) in requests().into_iter().enumerate() {
        let encoded = mcfed_admin::encode(&request).expect("encodes");
        seeds.push((format!("request-{index:02}-{}", variant(&request)), encoded));
        let Applied::Answer(answer) =
            mcfed_admin::apply(request, &mut member, now, &mut Effects::default())
        else {
            continue;
        };
        let encoded = mcfed_admin::encode(&answer).expect("encodes");
        seeds.push((format!("answer-{index:02}-{}", variant(&answer)), encoded));
    }
    // A reservation in use, as `brsvs` lists it.
    let reservations = AdminResponse::Reservations(vec![ReservationRow {
        rsvid: "night".to_owned(),
        users: vec!["alice".to_owned()],
        used: 1,
        slots: 2,
        hosts: vec!["h1".to_owned()],
        start: 0.0,
        end: 3600.0,
        active: true,
    }]);
    let encoded = mcfed_admin::encode(&reservations).expect("encodes");
    seeds.push(("answer-reservation-in-use".to_owned(), encoded));
    seeds
}

/// Requests with values at their extremes, one after another (the
/// `admin` target applies them in turn): pages after the last id, a job
/// id and limits at their largest, an unknown host, a long name.
fn odd_requests() -> Vec<AdminRequest> {
    let control = |job: JobRef, action: JobAction| AdminRequest::Control { job, action };
    let changes = JobChanges {
        run_limit: Some(Some(Duration::MAX)),
        slots: Some(u32::MAX),
        user_priority: Some(u32::MAX),
        aps: None,
    };
    vec![
        AdminRequest::JobsPage {
            query: JobsQuery::default(),
            after: Some(u64::MAX),
        },
        AdminRequest::HistoryPage {
            after: Some(u64::MAX),
        },
        control(JobRef::Id(u64::MAX), JobAction::Kill),
        control(JobRef::Name("j".repeat(300)), JobAction::Stop),
        control(JobRef::Id(1), JobAction::Modify(changes)),
        control(
            JobRef::Id(2),
            JobAction::Release(SlotRelease::Hosts(vec![("h1".to_owned(), u32::MAX)])),
        ),
        AdminRequest::Submit {
            queue: "normal".to_owned(),
            spec: JobSpec::simple("long", "alice", Duration::from_secs(u64::MAX / 1000)),
        },
        AdminRequest::Host {
            host: "nohost".to_owned(),
            event: HostEvent::Fail,
        },
    ]
}

/// [`odd_requests`], encoded back to back.
fn odd_requests_seed() -> Vec<u8> {
    odd_requests()
        .iter()
        .flat_map(|request| mcfed_admin::encode(request).expect("encodes"))
        .collect()
}

/// A job of the send queue killed here while at Cluster2.
fn killed_away(id: u64, dest_job: Option<u64>) -> SourceImage {
    let to = "high@Cluster2".parse().expect("valid");
    SourceImage {
        id,
        send_queue: QueueName::new("send").expect("valid"),
        spec: JobSpec::simple(format!("job{id}"), "alice", Duration::from_secs(600)),
        submitted_at: SimTime::from_secs(10),
        state: SourceImageState::KilledAway {
            cluster: name("Cluster2"),
            forward_seq: 6,
            dest_job,
        },
        forwards: 1,
        forward_seq: 6,
        forwarded_at: SimTime::from_secs(12),
        recalled: false,
        previous_targets: vec![to],
        note: None,
        left_behind: None,
        aps: None,
    }
}

fn framed(payload: &[u8], out: &mut Vec<u8>) {
    mcfed_journal::format::encode_frame(payload, out);
}

/// The journal seeds: records (jobs killed away, an end a sync forgot, a
/// job parked or put back) and a snapshot with jobs killed away, and a
/// snapshot made in slices while the member took jobs.
fn journal_seeds() -> Vec<(String, Vec<u8>)> {
    let records = [
        JournalRecord::Source(Box::new(killed_away(4, Some(21)))),
        JournalRecord::Source(Box::new(killed_away(5, None))),
        JournalRecord::SourceGone { id: 4 },
        JournalRecord::EndForgotten {
            from: name("Cluster2"),
            source_job: 7,
        },
        JournalRecord::JobMoved { id: 3 },
    ];
    let mut body = Vec::new();
    for record in &records {
        framed(&postcard::to_allocvec(record).expect("encodes"), &mut body);
    }
    let mut state = DurableState::empty(name("Cluster1"));
    state.sources.insert(5, killed_away(5, Some(22)));
    state.next_source_id = 6;
    let mut snapshot = Vec::new();
    framed(
        &postcard::to_allocvec(&state).expect("encodes"),
        &mut snapshot,
    );

    let mut member = mcfed_fuzzing::member();
    submit(&mut member, "normal", "job1");
    submit(&mut member, "send", "job2");
    member.take_journal();
    let mut building = SnapshotBuilder::begin(&member);
    building.advance(&member, 1).expect("encodes");
    submit(&mut member, "normal", "job3");
    submit(&mut member, "send", "job4");
    building.note(&member.take_journal()).expect("encodes");
    let facts = ProcessFacts {
        lineage: 3,
        epoch_unix_ms: 1_700_000_000_000,
    };
    let sliced = building.finish(&member, Some(facts)).expect("encodes");
    let mut sliced_frame = Vec::new();
    framed(&sliced, &mut sliced_frame);
    vec![
        ("records-killed-away".to_owned(), body),
        ("snapshot-killed-away".to_owned(), snapshot),
        ("snapshot-in-slices".to_owned(), sliced_frame),
    ]
}

/// The lsb.acct seed: the hand-written records, each naming an advance
/// reservation (one name LSF writes, one with a quote and a space).
fn lsb_acct_seed() -> Vec<u8> {
    use mcfed_trace::lsb_acct::{AcctReader, write_job_finish};
    let path = corpus_dir("lsb_acct").join("east.acct");
    let file = std::fs::File::open(path).expect("east.acct");
    let reader = AcctReader::new("east.acct", std::io::BufReader::new(file));
    let names = ["alice#12", "night \"shift\""];
    let mut out = Vec::new();
    for (index, record) in reader.flatten().enumerate() {
        let mut record = record;
        record.rsv_id = names[index % names.len()].to_owned();
        write_job_finish(&mut out, &record).expect("writes");
    }
    out
}

/// Writes the seeds of this file into the corpus.
pub(crate) fn write() {
    let write = |target: &str, file: &str, bytes: &[u8]| {
        std::fs::write(corpus_dir(target).join(file), bytes).expect("write");
    };
    let admin = corpus_dir("admin");
    std::fs::create_dir_all(&admin).expect("admin corpus");
    for (file, bytes) in admin_seeds() {
        write("admin", &file, &bytes);
    }
    write("admin", "requests-odd-values", &odd_requests_seed());
    for (file, bytes) in journal_seeds() {
        write("journal", &file, &bytes);
    }
    write("lsb_acct", "reservations.acct", &lsb_acct_seed());
}

fn kept(target: &str, file: &str) -> Vec<u8> {
    let path = corpus_dir(target).join(file);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", Path::display(&path)))
}

#[test]
fn the_admin_corpus_holds_every_request_and_the_paged_answers() {
    let mut files: Vec<_> = std::fs::read_dir(corpus_dir("admin"))
        .expect("fuzz/corpus/admin")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    files.sort();
    let kept_as = |prefix: &str| -> Vec<Vec<u8>> {
        files
            .iter()
            .filter(|path| path.to_string_lossy().contains(prefix))
            .map(|path| std::fs::read(path).expect("read"))
            .collect()
    };
    let requests: Vec<String> = kept_as("request-")
        .iter()
        .map(|bytes| mcfed_admin::decode::<AdminRequest>(bytes).expect("a request"))
        .map(|request| variant(&request))
        .collect();
    for request in requests_wanted() {
        assert!(requests.contains(&request), "no {request} request is kept");
    }
    let answers: Vec<AdminResponse> = kept_as("answer-")
        .iter()
        .map(|bytes| mcfed_admin::decode(bytes).expect("an answer"))
        .collect();
    let has = |wanted: &dyn Fn(&AdminResponse) -> bool| answers.iter().any(wanted);
    assert!(has(
        &|answer| matches!(answer, AdminResponse::JobsPage(page) if !page.rows.is_empty())
    ));
    assert!(has(
        &|answer| matches!(answer, AdminResponse::HistoryPage(page) if !page.reply.jobs.is_empty())
    ));
    assert!(has(
        &|answer| matches!(answer, AdminResponse::Reservations(rows) if !rows.is_empty())
    ));
}

fn requests_wanted() -> Vec<String> {
    requests().iter().map(variant).collect()
}

#[test]
fn the_journal_corpus_holds_jobs_killed_away_and_a_snapshot_in_slices() {
    let body = kept("journal", "records-killed-away");
    let scan = mcfed_journal::format::scan_records::<JournalRecord>(&body);
    assert!(scan.damage.is_empty());
    let killed = |image: &SourceImage| matches!(image.state, SourceImageState::KilledAway { .. });
    assert!(
        scan.records
            .iter()
            .any(|record| matches!(record, JournalRecord::Source(image) if killed(image)))
    );
    let snapshot: DurableState =
        mcfed_journal::format::decode_snapshot(&kept("journal", "snapshot-killed-away"))
            .expect("a snapshot");
    assert!(snapshot.sources.values().any(killed));
    let sliced: DurableState =
        mcfed_journal::format::decode_snapshot(&kept("journal", "snapshot-in-slices"))
            .expect("a snapshot");
    assert_eq!((sliced.jobs.len(), sliced.sources.len()), (2, 2));
}

#[test]
fn the_lsb_acct_corpus_holds_records_in_a_reservation() {
    let bytes = kept("lsb_acct", "reservations.acct");
    let records: Vec<_> =
        mcfed_trace::lsb_acct::AcctReader::new("reservations.acct", bytes.as_slice())
            .collect::<Result<_, _>>()
            .expect("every record reads");
    assert!(records.len() >= 2);
    assert!(
        records
            .iter()
            .any(|record| record.rsv_id == "night \"shift\"")
    );
}

#[test]
fn the_admin_corpus_holds_requests_with_odd_values_a_member_answers() {
    let kept = kept("admin", "requests-odd-values");
    assert_eq!(kept, odd_requests_seed());
    // Applied to a member in turn: answered or refused, no panic.
    mcfed_fuzzing::admin(&kept);
}
