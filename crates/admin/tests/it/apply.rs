//! Admin commands applied to a federation member through the crate's
//! public API, as a cluster process and a scenario's `[[action]]` apply
//! them: a request decoded from the admin channel's bytes (garbage is an
//! error, not a panic), applied to a member at a time, its answer; the
//! requests only the process can answer handed back to it.

use std::time::Duration;

use mcfed_admin::{
    AdminRequest, AdminResponse, Applied, Controlled, HostEvent, JobRow, JobsQuery, Submitted,
    apply, decode, encode,
};
use mcfed_federation::{Effects, JobRef, Member};
use mcfed_protocol::{JobAction, JobSpec, SimTime};

/// Local: one one-slot host and queue `normal`; Send sends `send` to
/// Local's `normal`.
const FEDERATION: &str = r#"
name = "admin"
[params]
MC_PLUGIN_UPDATE_INTERVAL = "10s"

[[cluster]]
name = "Local"
[[cluster.host]]
name = "a"
MXJ = 1
[[cluster.queue]]
name = "normal"
RCVJOBS_FROM = "Send"

[[cluster]]
name = "Send"
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "normal@Local"
"#;

/// The member `name` of [`FEDERATION`] at time zero, keeping its history.
fn member(name: &str) -> Member {
    let scenario = mcfed_scenario::parse("admin.toml", FEDERATION).expect("valid");
    let spec = scenario
        .clusters
        .iter()
        .find(|spec| spec.config.name.as_str() == name)
        .expect("a cluster of the federation");
    let (mut member, _) = Member::build(spec.member_spec()).expect("builds");
    member.keep_history(Duration::from_secs(3600));
    member.take_start(&mut Effects::default());
    member
}

/// `request` applied to `member` at `now`, answered by the member.
fn answer(member: &mut Member, now: SimTime, request: AdminRequest) -> AdminResponse {
    match apply(request, member, now, &mut Effects::default()) {
        Applied::Answer(answer) => answer,
        Applied::ForProcess(request) => panic!("{request:?} is the process's to answer"),
    }
}

fn submit(member: &mut Member, now: SimTime, queue: &str, name: &str) -> Submitted {
    let spec = JobSpec::simple(name, "ann", Duration::from_secs(600));
    match answer(
        member,
        now,
        AdminRequest::Submit {
            queue: queue.to_owned(),
            spec,
        },
    ) {
        AdminResponse::Submitted(submitted) => submitted,
        other => panic!("not submitted: {other:?}"),
    }
}

fn jobs(member: &mut Member, now: SimTime, query: JobsQuery) -> Vec<JobRow> {
    match answer(member, now, AdminRequest::Jobs(query)) {
        AdminResponse::Jobs(rows) => rows,
        other => panic!("not jobs: {other:?}"),
    }
}

/// (id, name, state) of each row.
fn states(rows: &[JobRow]) -> Vec<(u64, &str, &str)> {
    rows.iter()
        .map(|row| (row.job_id, row.job_name.as_str(), row.stat.as_str()))
        .collect()
}

#[test]
fn bsub_and_bjobs_applied_to_a_member_submit_dispatch_and_list() {
    let mut local = member("Local");
    let first = submit(&mut local, SimTime::ZERO, "normal", "first");
    let second = submit(&mut local, SimTime::ZERO, "normal", "second");
    assert_eq!(
        (first.job_id, second.job_id),
        (1, 2),
        "ids in submission order"
    );
    assert_eq!(first.cluster, "Local");
    assert!(!first.forwarded, "a local queue keeps its jobs");
    let now = SimTime::from_secs(1);
    local.step(now, &mut Effects::default());
    let all = jobs(&mut local, now, JobsQuery::default());
    assert_eq!(
        states(&all),
        [(1, "first", "RUN"), (2, "second", "PEND")],
        "one slot: the first runs"
    );
    let pending = JobsQuery {
        pending: true,
        ..JobsQuery::default()
    };
    assert_eq!(
        states(&jobs(&mut local, now, pending)),
        [(2, "second", "PEND")]
    );
    let named = JobsQuery {
        name: Some("sec*".to_owned()),
        ..JobsQuery::default()
    };
    assert_eq!(
        states(&jobs(&mut local, now, named)),
        [(2, "second", "PEND")]
    );
    let refused = answer(
        &mut local,
        now,
        AdminRequest::Submit {
            queue: "nosuch".to_owned(),
            spec: JobSpec::simple("lost", "ann", Duration::from_secs(1)),
        },
    );
    assert!(
        matches!(&refused, AdminResponse::Error(why) if why.contains("nosuch")),
        "{refused:?}"
    );
}

#[test]
fn job_control_applied_to_a_member_acts_and_refuses_an_unknown_job() {
    let mut local = member("Local");
    submit(&mut local, SimTime::ZERO, "normal", "first");
    submit(&mut local, SimTime::ZERO, "normal", "second");
    let now = SimTime::from_secs(1);
    local.step(now, &mut Effects::default());
    let killed = answer(
        &mut local,
        now,
        AdminRequest::control("second", JobAction::Kill),
    );
    assert_eq!(
        killed,
        AdminResponse::Controlled(Controlled {
            job_id: 2,
            sent_to: None,
            message: "Job <2> is being terminated".to_owned(),
        })
    );
    assert_eq!(
        killed.outcome().as_deref(),
        Ok("Job <2> is being terminated")
    );
    let later = SimTime::from_secs(2);
    local.step(later, &mut Effects::default());
    let all = JobsQuery {
        finished: mcfed_admin::Finished::Also,
        ..JobsQuery::default()
    };
    assert_eq!(
        states(&jobs(&mut local, later, all)),
        [(1, "first", "RUN"), (2, "second", "EXIT")]
    );
    let unknown = answer(
        &mut local,
        later,
        AdminRequest::Control {
            job: JobRef::Id(99),
            action: JobAction::Stop,
        },
    );
    assert!(
        matches!(unknown.outcome(), Err(why) if why.contains("no matching job")),
        "{unknown:?}"
    );
}

#[test]
fn a_job_submitted_to_a_send_queue_waits_at_the_forwarder() {
    let mut send = member("Send");
    let submitted = submit(&mut send, SimTime::ZERO, "send", "away");
    assert!(submitted.forwarded, "a send queue forwards");
    let rows = jobs(&mut send, SimTime::ZERO, JobsQuery::default());
    assert_eq!(states(&rows), [(submitted.job_id, "away", "PEND")]);
    assert_eq!(rows[0].queue, "send");
}

#[test]
fn a_host_event_applied_to_a_member_is_said_and_an_unknown_host_refused() {
    let mut local = member("Local");
    let failed = answer(
        &mut local,
        SimTime::ZERO,
        AdminRequest::host("a", HostEvent::Fail),
    );
    assert!(
        matches!(&failed, AdminResponse::HostChanged(what) if !what.is_empty()),
        "{failed:?}"
    );
    let unknown = answer(
        &mut local,
        SimTime::ZERO,
        AdminRequest::host("nosuch", HostEvent::Fail),
    );
    assert!(
        matches!(&unknown, AdminResponse::Error(why) if why.contains("nosuch")),
        "{unknown:?}"
    );
}

#[test]
fn requests_only_the_process_can_answer_come_back_to_it_unchanged() {
    let mut local = member("Local");
    for request in [
        AdminRequest::Clusters,
        AdminRequest::Records { from: 3 },
        AdminRequest::Status,
        AdminRequest::Shutdown,
        AdminRequest::Params,
        AdminRequest::Watch { from: 0 },
    ] {
        match apply(
            request.clone(),
            &mut local,
            SimTime::ZERO,
            &mut Effects::default(),
        ) {
            Applied::ForProcess(back) => assert_eq!(back, request),
            Applied::Answer(answer) => panic!("{request:?} answered by the member: {answer:?}"),
        }
        assert!(!request.changes_member(), "{request:?} only reads");
    }
    assert!(AdminRequest::control("x", JobAction::Kill).changes_member());
    assert!(AdminRequest::host("a", HostEvent::Fail).changes_member());
}

#[test]
fn requests_and_answers_cross_the_codec_and_garbage_is_an_error() {
    let requests = [
        AdminRequest::Submit {
            queue: "normal".to_owned(),
            spec: JobSpec::simple("job", "ann", Duration::from_secs(60)),
        },
        AdminRequest::Jobs(JobsQuery {
            name: Some("job*".to_owned()),
            ..JobsQuery::default()
        }),
        AdminRequest::control("job", JobAction::Requeue),
        AdminRequest::Records { from: 7 },
    ];
    for request in &requests {
        let bytes = encode(request).expect("encodes");
        let back: AdminRequest = decode(&bytes).expect("decodes");
        assert_eq!(&back, request);
        // Cut anywhere, a request is refused, not misread or a panic.
        for cut in 0..bytes.len() {
            if let Ok(misread) = decode::<AdminRequest>(&bytes[..cut]) {
                panic!("{} bytes of {request:?} read as {misread:?}", cut);
            }
        }
    }
    let answer = AdminResponse::Error("Job <9>: no matching job found".to_owned());
    let back: AdminResponse = decode(&encode(&answer).expect("encodes")).expect("decodes");
    assert_eq!(back, answer);
    let error = decode::<AdminRequest>(&[0xff; 8]).expect_err("garbage");
    assert!(
        error
            .to_string()
            .starts_with("admin message does not decode"),
        "{error}"
    );
}
