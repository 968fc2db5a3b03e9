//! End-to-end: absolute priority scheduling on a live `mcfed cluster`
//! process — `bjobs -aps` in dispatch order with its values, `bmod -aps`
//! system and ADMIN values, `bmod -apsn`, `bjobs -prio`, `bqueues -l`'s
//! APS_PRIORITY, `brequeue` resetting a job's APS values (seed 001,
//! "Job re-queuing"), `bmig` refused outside RERUNNABLE queues and
//! `host-fail` / `host-recover`.

use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::common;
use common::federation::{Cluster, Queue, Scenario};
use common::live::{Federation, ask, federation_of};
use common::{eventually, mcfed_at};

/// One one-slot host; `normal` orders its pending jobs by JPRIORITY.
fn scenario() -> String {
    Scenario::new("aps live")
        .param("MAX_USER_PRIORITY", 100)
        .cluster(
            Cluster::new("Cluster1").hosts("a", 1, 1).queue(
                Queue::new("normal")
                    .key("PRIORITY", 30)
                    .key("APS_PRIORITY", JPRIORITY),
            ),
        )
        .text()
}

/// Absolute priority scheduling by the user-given job priority alone.
const JPRIORITY: &str = "WEIGHT[[JPRIORITY, 1]]";

/// Runs `mcfed COMMAND ... --cluster Cluster1 ...` against the process.
fn run(fed: &Federation, command: &[&str]) -> Output {
    mcfed_at("Cluster1", &fed.address("Cluster1"), &fed.certs, command)
}

fn ok(output: Output) -> String {
    common::succeeded(&output)
}

/// `bjobs -aps -o json`: (job id, APS as shown, kind) in dispatch order.
fn aps_order(fed: &Federation) -> Vec<(u64, String, String)> {
    let rows = ask(fed, "bjobs", "Cluster1", &["-aps"]);
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            (
                row["job_id"].as_u64().expect("id"),
                row["aps"].as_str().expect("aps").to_owned(),
                row["aps_kind"].as_str().expect("kind").to_owned(),
            )
        })
        .collect()
}

fn state_of(fed: &Federation, job: u64) -> Option<String> {
    let jobs: Value = ask(fed, "bjobs", "Cluster1", &["-a"]);
    jobs.as_array()?
        .iter()
        .find(|row| row["job_id"] == job)
        .and_then(|row| row["stat"].as_str().map(str::to_owned))
}

fn ids(order: &[(u64, String, String)]) -> Vec<u64> {
    order.iter().map(|(id, _, _)| *id).collect()
}

#[test]
fn bjobs_aps_bmod_aps_and_brequeue_on_a_live_cluster() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation_of(dir.path(), &scenario());
    let _one = fed.start("Cluster1", None);
    // Job 1 runs; 2 (-sp 90), 3 and 4 (-sp 5) pend.
    for (name, priority) in [("runner", "50"), ("a", "90"), ("b", "5"), ("d", "5")] {
        ok(run(
            &fed,
            &[
                "bsub",
                "-q",
                "normal",
                "-J",
                name,
                "--run-time",
                "10h",
                "-sp",
                priority,
            ],
        ));
    }
    eventually(Duration::from_secs(20), "job 1 runs", || {
        state_of(&fed, 1).as_deref() == Some("RUN")
    });
    assert_eq!(ids(&aps_order(&fed)), vec![2, 3, 4], "by JPRIORITY");
    let text = ok(run(&fed, &["bjobs", "-aps"]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("JOBID") && lines[0].ends_with("APS"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("2 ") && lines[1].ends_with("90.00"),
        "{text}"
    );

    // A system value goes before every calculated value; ADMIN is added.
    ok(run(&fed, &["bmod", "-aps", "system=1", "3"]));
    ok(run(&fed, &["bmod", "-aps", "admin=100", "4"]));
    let order = aps_order(&fed);
    assert_eq!(
        order,
        vec![
            (3, "(1)".to_owned(), "system".to_owned()),
            (4, "105.00".to_owned(), "calculated".to_owned()),
            (2, "90.00".to_owned(), "calculated".to_owned()),
        ]
    );
    let prio = ok(run(&fed, &["bjobs", "-prio"]));
    let header: Vec<&str> = prio
        .lines()
        .next()
        .expect("header")
        .split_whitespace()
        .collect();
    let row4: Vec<&str> = prio
        .lines()
        .find(|line| line.starts_with("4 "))
        .expect("job 4")
        .split_whitespace()
        .collect();
    let column = |name: &str| header.iter().position(|h| *h == name).expect(name);
    assert_eq!(row4[column("JPRIORITY")], "5.00", "{prio}");
    assert_eq!(row4[column("ADMIN")], "100.00", "{prio}");
    assert_eq!(row4[column("APS")], "105.00", "{prio}");
    // -apsn takes the ADMIN value away; a running job takes none.
    ok(run(&fed, &["bmod", "-apsn", "4"]));
    assert_eq!(ids(&aps_order(&fed)), vec![3, 2, 4]);
    let refused = run(&fed, &["bmod", "-aps", "admin=5", "1"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");

    let queue = ok(run(&fed, &["bqueues", "-l", "normal"]));
    assert!(
        queue.contains("APS_PRIORITY: WEIGHT[[JPRIORITY, 1]]"),
        "{queue}"
    );
    assert!(
        queue.contains("SCHEDULING POLICIES:  APS_PRIORITY"),
        "{queue}"
    );

    // The runner ends early: b (system value) runs. brequeue of b: a new
    // submission for APS, its system value gone; a (90) takes the slot.
    ok(run(&fed, &["bkill", "1"]));
    eventually(Duration::from_secs(20), "job 3 runs", || {
        state_of(&fed, 3).as_deref() == Some("RUN")
    });
    ok(run(&fed, &["brequeue", "3"]));
    eventually(Duration::from_secs(20), "job 2 runs", || {
        state_of(&fed, 2).as_deref() == Some("RUN")
    });
    let order = aps_order(&fed);
    assert_eq!(
        order,
        vec![
            (4, "5.00".to_owned(), "calculated".to_owned()),
            (3, "5.00".to_owned(), "calculated".to_owned()),
        ],
        "the requeued job's system value is reset, and as a new submission it ties behind 4"
    );

    // bmig needs a RERUNNABLE queue; a failed host's job in a queue that
    // is not RERUNNABLE exits.
    let migrate = run(&fed, &["bmig", "2"]);
    assert_eq!(migrate.status.code(), Some(1), "{migrate:?}");
    assert!(String::from_utf8_lossy(&migrate.stderr).contains("not RERUNNABLE"));
    let failed = ok(run(&fed, &["host-fail", "a"]));
    assert!(
        failed.contains("Host <a> failed: 0 job(s) rerun, 1 exited"),
        "{failed}"
    );
    assert_eq!(state_of(&fed, 2).as_deref(), Some("EXIT"));
    // A failed host is shown as LSF shows a host that is down.
    let hosts = ok(run(
        &fed,
        &["bhosts", "-noheader", "-o", "host_name status"],
    ));
    assert_eq!(hosts.trim(), "a  unavail", "{hosts}");
    let back = ok(run(&fed, &["host-recover", "a"]));
    assert!(back.contains("Host <a> is back"), "{back}");
    eventually(
        Duration::from_secs(20),
        "job 4 runs on the recovered host",
        || state_of(&fed, 4).as_deref() == Some("RUN"),
    );
}

/// Cluster1 sends from `send` (APS by JPRIORITY) to Cluster2, which is
/// not started: the jobs wait at Cluster1.
fn send_queue() -> String {
    Scenario::new("aps send queue live")
        .param("MAX_USER_PRIORITY", 100)
        .cluster(
            Cluster::new("Cluster1")
                .hosts("a", 1, 1)
                .queue(Queue::sending("send", "normal@Cluster2").key("APS_PRIORITY", JPRIORITY)),
        )
        .cluster(
            Cluster::new("Cluster2")
                .hosts("b", 1, 1)
                .queue(Queue::receiving("normal", "Cluster1")),
        )
        .text()
}

#[test]
fn bjobs_aps_and_bmod_aps_on_a_live_send_queue() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation_of(dir.path(), &send_queue());
    let _one = fed.start("Cluster1", None);
    for (name, priority) in [("low", "10"), ("high", "90")] {
        ok(run(
            &fed,
            &["bsub", "-q", "send", "-J", name, "-sp", priority],
        ));
    }
    eventually(Duration::from_secs(20), "both jobs wait", || {
        aps_order(&fed).len() == 2
    });
    assert_eq!(
        aps_order(&fed),
        vec![
            (2, "90.00".to_owned(), "calculated".to_owned()),
            (1, "10.00".to_owned(), "calculated".to_owned()),
        ],
        "the send queue's forwarding order"
    );
    ok(run(&fed, &["bmod", "-aps", "system=3", "1"]));
    assert_eq!(
        aps_order(&fed),
        vec![
            (1, "(3)".to_owned(), "system".to_owned()),
            (2, "90.00".to_owned(), "calculated".to_owned()),
        ]
    );
    let zero = run(&fed, &["bmod", "-aps", "admin=0", "2"]);
    assert_eq!(zero.status.code(), Some(1), "{zero:?}");
    assert!(String::from_utf8_lossy(&zero.stderr).contains("cannot be zero"));
}
