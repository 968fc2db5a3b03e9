//! A message whose frame would exceed the limit is handed back to the
//! process as `Event::Unsendable`, never dropped in silence (issue 26,
//! item 3: a job whose forward exceeded the 1 MiB frame was acknowledged
//! and stuck forever); the link stays up and later messages go on.

use crate::common;
use common::{federation, name, peer, start};

use std::time::Duration;

use mcfed_protocol::{Envelope, FrameError, JobRecall, MAX_FRAME_SIZE, Message};
use mcfed_transport::{Event, Peer};
use tokio::sync::mpsc::UnboundedReceiver;

fn recall(job: u64, reason: String) -> Envelope {
    Envelope {
        from: name("Cluster1"),
        to: name("Cluster2"),
        message: Message::JobRecall(JobRecall {
            source_job: job,
            dest_job: job,
            reason,
        }),
    }
}

/// The first event `pick` takes, within 20 s.
async fn first<T>(
    events: &mut UnboundedReceiver<Event>,
    mut pick: impl FnMut(Event) -> Option<T>,
) -> Option<T> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .ok()??;
        if let Some(found) = pick(event) {
            return Some(found);
        }
    }
}

#[tokio::test]
async fn a_message_over_the_frame_limit_is_handed_back_and_the_link_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (two, mut two_events) = start(
        dir.path(),
        "Cluster2",
        vec![Peer::unknown(name("Cluster1"))],
    );
    let (one, mut one_events) = start(
        dir.path(),
        "Cluster1",
        vec![peer("Cluster2", two.local_addr())],
    );
    let oversized = "x".repeat(MAX_FRAME_SIZE + 1);
    one.send(recall(1, oversized.clone())).expect("queued");
    one.send(recall(2, "small".to_owned())).expect("queued");
    let (envelope, error) = first(&mut one_events, |event| match event {
        Event::Unsendable { envelope, error } => Some((envelope, error)),
        _ => None,
    })
    .await
    .expect("handed back");
    assert_eq!(envelope, recall(1, oversized));
    assert!(
        matches!(error, FrameError::TooLarge { max, .. } if max == MAX_FRAME_SIZE),
        "{error}"
    );
    let arrived = first(&mut two_events, |event| match event {
        Event::Message(Envelope {
            message: Message::JobRecall(recall),
            ..
        }) => Some(recall.source_job),
        _ => None,
    })
    .await;
    assert_eq!(arrived, Some(2), "the next message went on the same link");
}
