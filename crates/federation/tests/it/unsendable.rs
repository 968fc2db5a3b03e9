//! A forward the transport cannot send (issue 26, Deliver 1): the job ends
//! at its submission cluster, EXIT with the reason in its history, instead
//! of pending "at the execution cluster" forever.

use std::time::Duration;

use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig, ReceiveFrom};
use mcfed_federation::{Effects, Member, MemberSpec, NoticeKind};
use mcfed_forwarder::{ForwarderConfig, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{ClusterName, JobEvent, JobSpec, Message, QueueName, SimTime};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn queue(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

/// C1 with a send queue to `high@C2`, and C2 with one host.
fn federation() -> (Member, Member) {
    let mut c1 = ClusterConfig::new(name("C1"));
    let mut send = QueueConfig::new(queue("send"));
    send.send_to = vec!["high@C2".parse().expect("valid")];
    c1.queues = vec![send];
    let forwarder = ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: queue("send"),
            send_to: vec!["high@C2".parse().expect("valid")],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 3,
        reachability: Default::default(),
    };
    let mut c2 = ClusterConfig::new(name("C2"));
    c2.hosts = vec![HostConfig::new("b1", 1)];
    let mut high = QueueConfig::new(queue("high"));
    high.receive_from = Some(ReceiveFrom::Listed(vec![name("C1")]));
    c2.queues = vec![high];
    let (mut one, _) = Member::build(MemberSpec {
        config: &c1,
        forwarder: Some(&forwarder),
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    })
    .expect("C1 builds");
    let (two, _) = Member::build(MemberSpec {
        config: &c2,
        forwarder: None,
        subscribers: &[name("C1")],
        collectors: &[name("C1")],
        initial_jobs: &[],
    })
    .expect("C2 builds");
    one.keep_history(Duration::from_secs(3600));
    (one, two)
}

#[test]
fn a_forward_that_cannot_be_sent_ends_its_job_where_its_owner_sees_it() {
    let (mut one, mut two) = federation();
    let mut effects = Effects::default();
    one.take_start(&mut effects);
    two.take_start(&mut effects);
    effects.clear();
    let t = SimTime::from_secs(10);
    two.publish(t, &mut effects);
    for envelope in std::mem::take(&mut effects.envelopes) {
        one.receive(t, envelope, &mut effects);
    }
    effects.clear();
    let spec = JobSpec::simple("big", "bob", Duration::from_secs(60));
    let id = one
        .submit(t, "send", spec, &mut effects)
        .expect("submitted")
        .job_id;
    one.step(t, &mut effects);
    let forward = effects
        .envelopes
        .iter()
        .find(|envelope| matches!(envelope.message, Message::JobForward(_)))
        .cloned()
        .expect("the job is forwarded");
    effects.clear();

    let t = SimTime::from_secs(11);
    assert_eq!(
        one.unsendable(t, &forward, "frame too large", &mut effects),
        Some(id)
    );
    assert!(
        one.forwarder().and_then(|f| f.job(id)).is_none(),
        "gone from the send queue"
    );
    assert!(effects.envelopes.is_empty(), "nothing is sent for it");
    assert_eq!(effects.notices.len(), 1);
    assert_eq!(
        effects.notices[0].kind,
        NoticeKind::Control(JobEvent::Killed)
    );
    let record = one
        .history()
        .and_then(|h| h.job(id))
        .expect("in the history");
    assert_eq!(record.state, "EXIT");
    let events = record.events();
    let last = events.last().expect("events");
    assert!(
        last.text.contains("cannot be sent: frame too large") && last.text.contains("<C2>"),
        "{events:?}"
    );
    // Said once: the same forward again, or any other message, ends nothing.
    assert_eq!(
        one.unsendable(t, &forward, "again", &mut Effects::default()),
        None
    );
}
