//! Jobs leaving the cluster (`remove_job`) keep the books consistent.

use super::*;

#[test]
fn removing_jobs_keeps_the_books() {
    let mut c = cluster(
        hosts(2, 2),
        vec![
            preemptive("high", 90),
            fairshare_queue("low", "USER_SHARES[[default, 1]]"),
        ],
    );
    let low: Vec<JobId> = (0..5).map(|_| submit(&mut c, "low", "u", 1, 60)).collect();
    advance(&mut c, SimTime::ZERO);
    let high = submit_at(&mut c, minutes(1), "high", spec("v", 1, 60));
    advance(&mut c, minutes(1));
    let suspended = low
        .iter()
        .copied()
        .find(|&id| state(&c, id) == Some(JobState::Suspended))
        .expect("one low job suspended");
    for id in [suspended, low[4], high] {
        assert!(c.remove_job(id).is_some());
        c.audit().expect("consistent books after removal");
    }
    advance(&mut c, minutes(2));
}

#[test]
fn forwarded_jobs_from_users_without_shares_are_refused() {
    let mut fs = fairshare_queue("fs", "USER_SHARES[[alice, 1]]");
    fs.receive_from = Some(mcfed_cluster::ReceiveFrom::All);
    let mut c = cluster(hosts(1, 1), vec![fs]);
    let forward = JobForward {
        forward_seq: 1,
        source_job: 7,
        queue: name("fs"),
        send_queue: mcfed_protocol::QueueName::new("send").expect("a queue name"),
        spec: spec("mallory", 1, 10),
        submitted_at: SimTime::ZERO,
        attempt: 0,
    };
    let from = ClusterName::new("C1").expect("valid");
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &from, &forward),
        Err(RejectReason::NoShares {
            user: "mallory".into()
        })
    );
}
