//! End-to-end: clusters as separate `mcfed cluster` processes talking QUIC
//! with mutual TLS, driven by `mcfed launch` or by hand with the LSF-style
//! commands. Every process is killed when its guard drops, so a failing
//! test leaves no orphans; every wait has a deadline.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::common;
use common::live::*;
use common::{eventually, mcfed};

const EXAMPLES: [&str; 4] = [
    "example1-count-preemptable",
    "example2-preemptable-queue-priority",
    "example3-high-queue-priority",
    "example4-preemptable-slots",
];

/// The decision records of `--report json` output (a run's closes with a
/// `summary` record that a launched run does not have).
fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("every line is a JSON object"))
        .filter(|record| record["record"] != "summary")
        .collect()
}

/// A decision without the fields that depend on wall-clock jitter.
fn timeless(mut record: Value) -> Value {
    if let Some(object) = record.as_object_mut() {
        object.remove("time");
        object.remove("view_age");
        if let Some(candidates) = object.get_mut("candidates").and_then(Value::as_array_mut) {
            for candidate in candidates {
                if let Some(candidate) = candidate.as_object_mut() {
                    candidate.remove("view_age");
                }
            }
        }
    }
    record
}

/// The four worked examples, a job refused on arrival (IMPT_JOBBKLG filled
/// by another submission cluster) and a job recalled back and forth
/// (MAX_RSCHED_TIME, MAX_FORWARDS): launched as one process per cluster,
/// each reaches the same decisions as in-process `mcfed run`.
#[test]
fn launch_reaches_the_same_decisions_as_run() {
    let mut files: Vec<String> = EXAMPLES
        .iter()
        .map(|name| format!("scenarios/forwarding/{name}.toml"))
        .collect();
    files.push("scenarios/forwarding/backlog-refusal.toml".to_owned());
    files.push("scenarios/forwarding/recall-max-rsched-time.toml".to_owned());
    let handles: Vec<_> = files
        .into_iter()
        .map(|file| {
            std::thread::spawn(move || {
                let launched = mcfed(&[
                    "launch",
                    &file,
                    "--report",
                    "json",
                    "--check",
                    "--speed",
                    "40",
                    "--base-port",
                    "0",
                    "--connect-timeout",
                    "20s",
                ]);
                let run = mcfed(&["run", &file, "--report", "json"]);
                (file, launched, run)
            })
        })
        .collect();
    for handle in handles {
        let (file, launched, run) = handle.join().expect("thread");
        let stderr = String::from_utf8_lossy(&launched.stderr);
        assert!(launched.status.success(), "{file}: {stderr}");
        assert!(stderr.contains("expectations held"), "{file}: {stderr}");
        let launched = json_lines(&launched);
        let run = json_lines(&run);
        assert_eq!(launched.len(), run.len(), "{file}: as many decisions");
        for (over_quic, in_process) in launched.iter().zip(&run) {
            let late = over_quic["time"].as_f64().expect("time")
                - in_process["time"].as_f64().expect("time");
            // Emulated time runs 40 times faster than the wall clock: a
            // few milliseconds of scheduling are a fraction of a second.
            assert!((0.0..5.0).contains(&late), "{file}: decided {late}s late");
            assert_eq!(
                timeless(over_quic.clone()),
                timeless(in_process.clone()),
                "{file}"
            );
        }
    }
}

#[test]
fn killed_execution_cluster_gives_its_jobs_back_and_its_updates_resume() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation(dir.path());
    let scenario = fed.scenario.clone();
    let decisions = dir.path().join("cluster1.jsonl");
    let _one = fed.start("Cluster1", Some(decisions.clone()));
    let mut two = fed.start("Cluster2", None);
    let _three = fed.start("Cluster3", None);
    eventually(
        Duration::from_secs(30),
        "Cluster1 is connected and has counters",
        || links_up_with_updates(&ask(&fed, "bclusters", "Cluster1", &[])),
    );
    let clusters = text(&fed, &["bclusters"], "Cluster1");
    assert!(
        clusters.contains("LOCAL_QUEUE  JOB_FLOW  REMOTE  CLUSTER   STATUS"),
        "{clusters}"
    );
    for n in 1..=4 {
        let name = format!("job{n}");
        let submitted = ask(
            &fed,
            "bsub",
            "Cluster1",
            &["-q", "send", "-J", &name, "--run-time", "10h"],
        );
        assert_eq!(submitted["job_id"], n);
    }
    // Cluster2 has 16 free slots against Cluster3's 5: all four go there.
    eventually(
        Duration::from_secs(20),
        "the four jobs run at Cluster2",
        || {
            let jobs = ask(&fed, "bjobs", "Cluster1", &["-fwd"]);
            let rows = jobs.as_array().expect("array");
            rows.len() == 4
                && rows
                    .iter()
                    .all(|job| job["stat"] == "RUN" && job["forwarded_to"]["cluster"] == "Cluster2")
        },
    );
    assert_eq!(
        jobs_from(&ask(&fed, "bjobs", "Cluster2", &[]), "Cluster1"),
        vec![1, 2, 3, 4],
        "Cluster2 keeps each job's source id"
    );
    // Each forwarded job keeps both ids: Cluster1 knows its id at Cluster2,
    // and Cluster2 knows its id at Cluster1.
    let at_two = ask(&fed, "bjobs", "Cluster2", &[]);
    for job in ask(&fed, "bjobs", "Cluster1", &["-fwd"])
        .as_array()
        .expect("array")
    {
        let dest = job["forwarded_to"]["dest_job"].as_u64().expect("dest id");
        let there = at_two
            .as_array()
            .expect("array")
            .iter()
            .find(|row| row["job_id"] == dest)
            .expect("the job at Cluster2");
        assert_eq!(there["forwarded_from"]["source_job"], job["job_id"]);
    }
    let long = text(&fed, &["bjobs", "-l"], "Cluster1");
    assert!(
        long.contains("Forwarded to queue <high@Cluster2> (job <"),
        "{long}"
    );
    let queues = text(&fed, &["bqueues", "-l"], "Cluster2");
    assert!(queues.contains("RCVJOBS_FROM: Cluster1"), "{queues}");
    // One queue view: `bqueues -o json` (the admin `Queues` answer) and
    // `mcfed run --show queues --report json` show the same fields.
    let admin = ask(&fed, "bqueues", "Cluster2", &[]);
    let run = mcfed(&[
        "run",
        scenario.to_str().expect("utf-8"),
        "--show",
        "queues",
        "--cluster",
        "Cluster2",
        "--report",
        "json",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let shown: Value = serde_json::from_slice(&run.stdout).expect("one JSON object");
    let keys = |queue: &Value| {
        let mut keys: Vec<String> = queue.as_object().expect("object").keys().cloned().collect();
        keys.sort();
        keys
    };
    let (admin, shown) = (&admin[0], &shown["clusters"][0]["queues"][0]);
    assert_eq!(keys(admin), keys(shown), "{admin} and {shown}");
    for queue in [admin, shown] {
        assert_eq!(queue["queue_name"], "high", "{queue}");
        assert_eq!(queue["rcvjobs_from"], serde_json::json!(["Cluster1"]));
        assert_eq!(queue["counters"]["total_slots"], 16, "{queue}");
    }
    let forwarded = text(&fed, &["bjobs", "-fwd"], "Cluster1");
    assert!(
        forwarded.contains("CLUSTER") && forwarded.contains("FORWARD_TIME"),
        "{forwarded}"
    );
    let old_incarnation = ask(&fed, "bclusters", "Cluster1", &[])[0]["incarnation"]
        .as_u64()
        .expect("incarnation");

    // Cluster2 dies holding the four jobs, and comes back.
    let status = two.kill();
    assert!(!status.success());
    two.restart();

    // They come back to Cluster1 and are forwarded again (to the restarted
    // Cluster2 once its counters arrive, or to Cluster3).
    eventually(
        Duration::from_secs(30),
        "the four jobs come back and run again",
        || {
            let jobs = ask(&fed, "bjobs", "Cluster1", &["-fwd"]);
            let rows = jobs.as_array().expect("array");
            rows.len() == 4
                && rows
                    .iter()
                    .all(|job| job["stat"] == "RUN" && job["forwarded_to"]["forwards"] == 2)
        },
    );
    // None lost, none run twice: each runs at exactly one cluster, where
    // Cluster1 says it does.
    let at_two = jobs_from(&ask(&fed, "bjobs", "Cluster2", &[]), "Cluster1");
    let at_three = jobs_from(&ask(&fed, "bjobs", "Cluster3", &[]), "Cluster1");
    let mut everywhere = [at_two.clone(), at_three.clone()].concat();
    everywhere.sort_unstable();
    assert_eq!(
        everywhere,
        vec![1, 2, 3, 4],
        "at Cluster2 {at_two:?}, at Cluster3 {at_three:?}"
    );
    let jobs = ask(&fed, "bjobs", "Cluster1", &["-fwd"]);
    for job in jobs.as_array().expect("array") {
        let id = job["job_id"].as_u64().expect("id");
        let at = if at_two.contains(&id) {
            "Cluster2"
        } else {
            "Cluster3"
        };
        assert_eq!(job["forwarded_to"]["cluster"], at, "{job}");
    }
    // The restarted Cluster2's updates reach Cluster1 again.
    eventually(Duration::from_secs(20), "Cluster2's updates resume", || {
        let links = ask(&fed, "bclusters", "Cluster1", &[]);
        let row = &links[0];
        row["cluster"] == "Cluster2"
            && row["status"] == "ok"
            && row["incarnation"].as_u64() != Some(old_incarnation)
            && !row["last_update_seq"].is_null()
    });
    // The decisions say why each job was decided again.
    let records: Vec<Value> = std::fs::read_to_string(&decisions)
        .expect("decisions")
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    for n in 1..=4 {
        let again = records
            .iter()
            .find(|record| record["job_id"] == n && record["attempt"] == 1)
            .unwrap_or_else(|| panic!("job {n} decided again: {records:?}"));
        assert!(again["target"].is_string(), "{again}");
        assert!(
            again["note"]
                .as_str()
                .is_some_and(|note| note.starts_with("lost by high@Cluster2")),
            "{again}"
        );
        assert_eq!(
            again["forwarded_before"],
            serde_json::json!(["high@Cluster2"])
        );
    }
}

#[test]
fn a_listening_process_survives_garbage_and_oversized_frames() {
    use mcfed_protocol::{ClusterName, Hello, MAX_FRAME_SIZE, Message, encode_frame};
    use mcfed_transport::{FederationTls, Role};

    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation(dir.path());
    let certs = fed.certs.clone();
    let _one = fed.start("Cluster1", None);
    let mut two = fed.start("Cluster2", None);
    let _three = fed.start("Cluster3", None);
    eventually(
        Duration::from_secs(30),
        "the federation is connected",
        || links_up_with_updates(&ask(&fed, "bclusters", "Cluster1", &[])),
    );
    let seq_before = ask(&fed, "bclusters", "Cluster1", &[])[0]["last_update_seq"]
        .as_u64()
        .expect("seq");
    let address: std::net::SocketAddr = fed.address("Cluster2").parse().expect("address");

    // Raw UDP garbage, then QUIC connections with a valid certificate that
    // send a frame that does not decode, and one over the size limit.
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("socket");
    for size in [3usize, 100, 1300] {
        socket.send_to(&vec![0x5A; size], address).expect("garbage");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let reasons: Vec<String> = runtime.block_on(async {
        let identity = FederationTls::load(&certs, Role::Cluster, "Cluster1").expect("tls");
        let endpoint =
            quinn::Endpoint::client("127.0.0.1:0".parse().expect("address")).expect("endpoint");
        let mut reasons = Vec::new();
        let mut bad_frame = 3u32.to_be_bytes().to_vec();
        bad_frame.extend_from_slice(&[0xff, 0xff, 0xff]);
        let oversized = (u32::try_from(MAX_FRAME_SIZE).expect("fits") * 4)
            .to_be_bytes()
            .to_vec();
        for payload in [bad_frame, oversized] {
            let connection = endpoint
                .connect_with(
                    identity.client_config().expect("client config"),
                    address,
                    "127.0.0.1",
                )
                .expect("connect")
                .await
                .expect("TLS handshake");
            let (mut send, _recv) = connection.open_bi().await.expect("stream");
            let mut hello = Vec::new();
            let name = ClusterName::new("Cluster1").expect("name");
            encode_frame(
                &Message::Hello(Hello::with_incarnation(name, 99)),
                &mut hello,
                MAX_FRAME_SIZE,
            )
            .expect("encode");
            send.write_all(&hello).await.expect("hello");
            send.write_all(&payload).await.expect("payload");
            let reason = tokio::time::timeout(Duration::from_secs(10), connection.closed())
                .await
                .expect("closed by the process");
            reasons.push(reason.to_string());
        }
        reasons
    });
    assert!(reasons[0].contains("does not decode"), "{reasons:?}");
    assert!(reasons[1].contains("exceeds the limit"), "{reasons:?}");
    assert!(two.alive(), "the process is still running");

    // It still serves its peers: Cluster1 gets newer counters from it, and
    // a job forwarded to it runs there.
    eventually(
        Duration::from_secs(20),
        "Cluster2's updates keep coming",
        || {
            let links = ask(&fed, "bclusters", "Cluster1", &[]);
            links[0]["status"] == "ok" && links[0]["last_update_seq"].as_u64() > Some(seq_before)
        },
    );
    ask(&fed, "bsub", "Cluster1", &["-q", "send", "-J", "after"]);
    eventually(
        Duration::from_secs(20),
        "a new job runs at Cluster2",
        || jobs_from(&ask(&fed, "bjobs", "Cluster2", &[]), "Cluster1") == vec![1],
    );
    let hosts = text(&fed, &["bhosts"], "Cluster2");
    assert!(
        hosts.starts_with("HOST_NAME  STATUS  JL/U  MAX  NJOBS  RUN  SSUSP  USUSP  RSV"),
        "{hosts}"
    );
    let queues = text(&fed, &["bqueues"], "Cluster2");
    assert!(queues.starts_with("QUEUE_NAME  PRIO  STATUS"), "{queues}");
}

#[test]
fn a_process_refuses_to_run_under_another_clusters_certificate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Federation {
        scenario, certs, ..
    } = federation(dir.path());
    let output = mcfed(&[
        "cluster",
        "--scenario",
        scenario.to_str().expect("utf-8"),
        "--name",
        "Cluster3",
        "--certs",
        certs.to_str().expect("utf-8"),
        "--cert",
        certs.join("cluster-Cluster2.pem").to_str().expect("utf-8"),
        "--key",
        certs.join("cluster-Cluster2.key").to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "this process is cluster `Cluster3` but its certificate names cluster `Cluster2`"
        ),
        "{stderr}"
    );
}

/// Starts `mcfed launch` on example 1 at wall-clock speed (so it would run
/// for minutes) and waits until its three cluster processes are up.
fn long_launch() -> (Process, Vec<u32>) {
    let launcher = Process::start(
        [
            "launch",
            "scenarios/forwarding/example1-count-preemptable.toml",
            "--speed",
            "1",
            "--base-port",
            "0",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect(),
        None,
    );
    let pid = launcher.child.id();
    let mut pids = Vec::new();
    eventually(
        Duration::from_secs(20),
        "the launcher starts three clusters",
        || {
            pids = children(pid);
            pids.len() == 3
        },
    );
    // Let them connect.
    std::thread::sleep(Duration::from_millis(1500));
    (launcher, pids)
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

#[test]
fn launch_stops_every_process_on_ctrl_c_when_one_dies_and_when_it_is_killed() {
    // Ctrl-C (SIGINT): the launcher stops them all and says so.
    let (mut launcher, pids) = long_launch();
    signal(launcher.child.id(), "INT");
    let mut status = None;
    eventually(
        Duration::from_secs(15),
        "the launcher exits on SIGINT",
        || {
            status = launcher.child.try_wait().expect("wait");
            status.is_some()
        },
    );
    assert_eq!(status.and_then(|status| status.code()), Some(2));
    eventually(
        Duration::from_secs(10),
        "no cluster process is left",
        || pids.iter().all(|&pid| !running(pid)),
    );

    // One cluster process dies: the launcher stops the others and fails.
    let (mut launcher, pids) = long_launch();
    signal(pids[1], "KILL");
    eventually(
        Duration::from_secs(15),
        "the launcher exits when a cluster dies",
        || {
            status = launcher.child.try_wait().expect("wait");
            status.is_some()
        },
    );
    assert_eq!(status.and_then(|status| status.code()), Some(2));
    eventually(
        Duration::from_secs(10),
        "no cluster process is left",
        || pids.iter().all(|&pid| !running(pid)),
    );

    // The launcher itself is killed: its processes see their standard input
    // close and stop.
    let (mut launcher, pids) = long_launch();
    signal(launcher.child.id(), "KILL");
    let _ = launcher.child.wait();
    eventually(
        Duration::from_secs(10),
        "no cluster process outlives the launcher",
        || pids.iter().all(|&pid| !running(pid)),
    );
}

/// `mcfed launch --events` gathers every process's job events, so
/// `mcfed report` builds whole timelines of launched runs: submitted,
/// forwarded, started at the execution cluster.
#[test]
fn launched_runs_carry_job_events_for_reports() {
    let launched = mcfed(&[
        "launch",
        "scenarios/forwarding/reconciliation.toml",
        "--report",
        "json",
        "--events",
        "--speed",
        "40",
        "--base-port",
        "0",
        "--connect-timeout",
        "20s",
    ]);
    assert!(
        launched.status.success(),
        "{}",
        String::from_utf8_lossy(&launched.stderr)
    );
    let dir = std::env::temp_dir().join(format!("mcfed-launch-events-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("run.jsonl");
    std::fs::write(&path, &launched.stdout).expect("write records");
    let report = mcfed(&["report", path.to_str().expect("utf-8"), "--format", "json"]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: Value = serde_json::from_slice(&report.stdout).expect("JSON report");
    // The ten jobs of the send queue (jobs of local queues have timelines
    // of their own).
    let timelines: Vec<&Value> = report["timelines"]
        .as_array()
        .expect("timelines")
        .iter()
        .filter(|timeline| timeline["local"] == false)
        .collect();
    assert_eq!(timelines.len(), 10);
    for timeline in timelines {
        let steps: Vec<&str> = timeline["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter_map(|step| step["what"].as_str())
            .collect();
        assert!(steps[0].starts_with("submitted"), "{steps:?}");
        assert!(steps[1].starts_with("forwarded to"), "{steps:?}");
        assert!(
            steps.iter().any(|step| step.starts_with("started at")),
            "{steps:?}"
        );
    }
    let waits = &report["summary"]["wait_per_cluster"];
    let started: u64 = ["Cluster2", "Cluster3"]
        .iter()
        .filter_map(|cluster| waits[cluster]["count"].as_u64())
        .sum();
    assert_eq!(started, 10);
    // Slot-usage samples, as an in-process run takes them: every 30 s from
    // 0 to the scenario's end (165 s), for the two clusters with slots.
    let samples: Vec<Value> = String::from_utf8_lossy(&launched.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["record"] == "usage")
        .collect();
    let clusters: std::collections::BTreeSet<&str> = samples
        .iter()
        .filter_map(|sample| sample["cluster"].as_str())
        .collect();
    assert_eq!(clusters.len(), 2, "{samples:?}");
    assert!(samples.len() >= 8, "{samples:?}");
    assert!(
        samples
            .iter()
            .any(|sample| sample["slots_in_use"].as_u64().is_some_and(|used| used > 0)),
        "{samples:?}"
    );
}
