//! End-to-end: what an LSF administrator reaches for, against live
//! `mcfed cluster` processes — the job filters of `bjobs`, `-o` fields and
//! `-json`, job control at the submission cluster reaching the execution
//! cluster, finished jobs kept for `bjobs -a`, `bhist -l` and `bacct`,
//! `lsid`, `bparams`, `bhosts -l`, `bqueues QUEUE`, `brsvs`.

use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::common;
use common::federation::{Host, Queue, three_clusters};
use common::live::{Federation, ask, federation_of, links_up_with_updates};
use common::{eventually, mcfed, mcfed_at};

/// Cluster1 runs `normal` on one one-slot host and sends `send` to
/// Cluster2 (16 slots) and Cluster3 (5 slots); job priorities are on.
fn scenario() -> String {
    three_clusters("admin commands")
        .param("CLEAN_PERIOD", "2h")
        .param("MAX_USER_PRIORITY", 100)
        .edit("Cluster1", |cluster| {
            cluster.hosts.push(Host::new("a", 1, 1));
            cluster.queues.insert(0, Queue::new("normal"));
        })
        .text()
}

/// Runs `mcfed COMMAND ARGS --cluster CLUSTER ...` against the federation.
fn run(fed: &Federation, cluster: &str, command: &[&str]) -> Output {
    mcfed_at(cluster, &fed.address(cluster), &fed.certs, command)
}

/// Its standard output, which must come with success.
fn ok(output: Output) -> String {
    common::succeeded(&output)
}

/// Its standard error, which must come with exit status `code`.
fn refused(output: Output, code: i32) -> String {
    common::refused(&output, code)
}

fn state_of(fed: &Federation, cluster: &str, job: u64) -> Option<String> {
    let jobs = ask(fed, "bjobs", cluster, &["-a"]);
    jobs.as_array()?
        .iter()
        .find(|row| row["job_id"] == job)
        .and_then(|row| row["stat"].as_str().map(str::to_owned))
}

/// The job forwarded from Cluster1 as `source`, at `cluster`.
fn forwarded_state(fed: &Federation, cluster: &str, source: u64) -> Option<String> {
    let jobs = ask(fed, "bjobs", cluster, &["-a"]);
    jobs.as_array()?
        .iter()
        .find(|row| row["forwarded_from"]["source_job"] == source)
        .and_then(|row| row["stat"].as_str().map(str::to_owned))
}

#[test]
fn an_administrators_commands_on_a_live_federation() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation_of(dir.path(), &scenario());
    let _one = fed.start("Cluster1", None);
    let _two = fed.start("Cluster2", None);
    let _three = fed.start("Cluster3", None);
    eventually(Duration::from_secs(30), "Cluster1 has counters", || {
        links_up_with_updates(&ask(&fed, "bclusters", "Cluster1", &[]))
    });
    // Job 1 goes to Cluster2; jobs 2 and 3 are local, 3 pends behind 2.
    let submitted = ok(run(
        &fed,
        "Cluster1",
        &[
            "bsub",
            "-q",
            "send",
            "-J",
            "away",
            "--run-time",
            "10h",
            "-o",
            "out.%J",
            "-e",
            "err.%J",
            "-sp",
            "10",
        ],
    ));
    assert!(submitted.starts_with("Job <1> is submitted"), "{submitted}");
    for name in ["first", "second"] {
        ok(run(
            &fed,
            "Cluster1",
            &["bsub", "-q", "normal", "-J", name, "--run-time", "10h"],
        ));
    }
    eventually(Duration::from_secs(20), "job 1 runs at Cluster2", || {
        forwarded_state(&fed, "Cluster2", 1).as_deref() == Some("RUN")
            && state_of(&fed, "Cluster1", 2).as_deref() == Some("RUN")
    });

    // The filters.
    let running = ok(run(&fed, "Cluster1", &["bjobs", "-r", "-w"]));
    assert!(
        running.contains("away") && running.contains("first"),
        "{running}"
    );
    assert!(!running.contains("second"), "{running}");
    let pending = ok(run(&fed, "Cluster1", &["bjobs", "-p"]));
    assert!(
        pending.contains("second") && !pending.contains("first"),
        "{pending}"
    );
    assert!(
        pending.contains(" PENDING REASONS:\n Job <3>: "),
        "{pending}"
    );
    let queue = ok(run(
        &fed,
        "Cluster1",
        &["bjobs", "-q", "normal", "-u", "user1"],
    ));
    assert_eq!(queue.lines().count(), 3, "{queue}");
    let one = ok(run(&fed, "Cluster1", &["bjobs", "3"]));
    assert_eq!(one.lines().count(), 2, "{one}");
    let missing = refused(run(&fed, "Cluster1", &["bjobs", "999"]), 1);
    assert!(missing.contains("Job <999> is not found"), "{missing}");
    let nobody = refused(run(&fed, "Cluster1", &["bjobs", "-u", ""]), 2);
    assert!(nobody.contains("is not a user name"), "{nobody}");
    let fields = ok(run(
        &fed,
        "Cluster1",
        &["bjobs", "-o", "jobid stat queue output_file priority", "1"],
    ));
    let lines: Vec<&str> = fields.lines().collect();
    assert!(
        lines[0].starts_with("JOBID  STAT  QUEUE  OUTPUT_FILE  PRIORITY"),
        "{fields}"
    );
    assert!(
        lines[1].contains("out.%J") && lines[1].ends_with("10"),
        "{fields}"
    );
    let json: Value = serde_json::from_str(&ok(run(&fed, "Cluster1", &["bjobs", "-json"])))
        .expect("bjobs -json is JSON");
    assert_eq!(json["COMMAND"], "bjobs");
    assert_eq!(json["JOBS"], 3);
    assert_eq!(json["RECORDS"][0]["JOBID"], "1");
    // -J: by name, with wildcards, at the cluster; -json too.
    let named = ok(run(&fed, "Cluster1", &["bjobs", "-J", "second"]));
    assert_eq!(named.lines().count(), 2, "{named}");
    assert!(
        named.contains("second") && !named.contains("first"),
        "{named}"
    );
    let json: Value = serde_json::from_str(&ok(run(
        &fed,
        "Cluster1",
        &["bjobs", "-J", "*s*", "-json", "-o", "jobid job_name"],
    )))
    .expect("bjobs -J -json is JSON");
    assert_eq!(json["JOBS"], 2, "{json}");
    assert_eq!(json["RECORDS"][0]["JOB_NAME"], "first", "{json}");
    assert_eq!(json["RECORDS"][1]["JOB_NAME"], "second", "{json}");
    let none = ok(run(&fed, "Cluster1", &["bjobs", "-J", "nosuch"]));
    assert!(!none.contains("away"), "{none}");
    let alias = ask(&fed, "bjobs", "Cluster1", &[]);
    assert_eq!(alias[0]["output_file"], "out.%J");
    assert_eq!(alias[0]["error_file"], "err.%J");
    assert_eq!(alias[0]["user_priority"], 10);

    // bstop and bresume at Cluster1 reach Cluster2.
    let stopped = ok(run(&fed, "Cluster1", &["bstop", "1"]));
    assert!(
        stopped.contains(
            "Job <1> is being stopped (the request was sent to its execution cluster <Cluster2>)"
        ),
        "{stopped}"
    );
    eventually(
        Duration::from_secs(10),
        "job 1 is USUSP at both ends",
        || {
            forwarded_state(&fed, "Cluster2", 1).as_deref() == Some("USUSP")
                && state_of(&fed, "Cluster1", 1).as_deref() == Some("USUSP")
        },
    );
    ok(run(&fed, "Cluster1", &["bresume", "-J", "away"]));
    eventually(Duration::from_secs(10), "job 1 runs again", || {
        forwarded_state(&fed, "Cluster2", 1).as_deref() == Some("RUN")
    });
    // A command the execution cluster refuses is refused here too: on
    // standard error, exit status 1 (it once said "is being resumed").
    let again = refused(run(&fed, "Cluster1", &["bresume", "1"]), 1);
    assert!(
        again.contains("Job <1>") && again.contains("Cluster2") && again.contains("refused"),
        "{again}"
    );

    // bmod and bswitch: what they may change, and what they refuse.
    ok(run(&fed, "Cluster1", &["bmod", "-W", "30", "3"]));
    let long = ok(run(&fed, "Cluster1", &["bjobs", "-l", "3"]));
    assert!(long.contains("Run Limit <00:30:00>"), "{long}");
    let wider = refused(run(&fed, "Cluster1", &["bmod", "-n", "2", "2"]), 1);
    assert!(wider.contains("Job <2>: the job is RUN"), "{wider}");
    let to_send = refused(run(&fed, "Cluster1", &["bswitch", "send", "3"]), 1);
    assert!(to_send.contains("is a send queue"), "{to_send}");

    // brequeue restarts a running job; bkill at Cluster1 ends job 1 there
    // and at Cluster2.
    ok(run(&fed, "Cluster1", &["brequeue", "2"]));
    let killed = ok(run(&fed, "Cluster1", &["bkill", "1"]));
    assert!(killed.contains("Job <1> is being terminated"), "{killed}");
    eventually(
        Duration::from_secs(10),
        "job 1 is EXIT at both ends",
        || {
            forwarded_state(&fed, "Cluster2", 1).as_deref() == Some("EXIT")
                && state_of(&fed, "Cluster1", 1).as_deref() == Some("EXIT")
        },
    );
    let unfinished = ok(run(&fed, "Cluster1", &["bjobs"]));
    assert!(!unfinished.contains("away"), "{unfinished}");
    let all = ok(run(&fed, "Cluster1", &["bjobs", "-a"]));
    assert!(
        all.lines()
            .any(|line| line.starts_with("1 ") && line.contains("EXIT")),
        "{all}"
    );

    // bhist: every step with its time, at both ends.
    let history = ok(run(&fed, "Cluster1", &["bhist", "-l", "1"]));
    for step in [
        "Submitted to queue <send>",
        "Forwarded to queue <high@Cluster2>",
        "Accepted by <high@Cluster2> as job <",
        "Started at cluster <Cluster2>",
        "Bstop sent to cluster <Cluster2>",
        "Suspended by bstop at <Cluster2>",
        "Exited: killed by bkill",
        "Summary of time in seconds spent in various states by",
    ] {
        assert!(history.contains(step), "no `{step}` in\n{history}");
    }
    let requeued = ok(run(&fed, "Cluster1", &["bhist", "-l", "2"]));
    assert!(
        requeued.contains("Killed and requeued by brequeue"),
        "{requeued}"
    );
    let there = ok(run(&fed, "Cluster2", &["bhist", "-a"]));
    assert!(there.contains("away"), "{there}");
    let there_long = ok(run(&fed, "Cluster2", &["bhist", "-l", "-a"]));
    assert!(
        there_long.contains("Forwarded from cluster <Cluster1>, where it is job <1>"),
        "{there_long}"
    );

    // bacct: the exited job, forwarded.
    let accounting = ok(run(&fed, "Cluster1", &["bacct"]));
    assert!(
        accounting.contains("Total number of exited jobs:        1"),
        "{accounting}"
    );
    let records: Value =
        serde_json::from_str(&ok(run(&fed, "Cluster1", &["bacct", "-json"]))).expect("JSON");
    assert_eq!(records["RECORDS"][0]["QUEUE"], "send");
    assert_eq!(records["RECORDS"][0]["FORWARDED"], "1");
    assert_eq!(records["RECORDS"][0]["EXIT"], "1");

    // Who answers, with which parameters; hosts and queues by name.
    let id = ok(run(&fed, "Cluster2", &["lsid"]));
    assert!(id.contains("My cluster name is Cluster2"), "{id}");
    let params = ok(run(&fed, "Cluster1", &["bparams", "-l"]));
    assert!(params.contains("CLEAN_PERIOD = 2h"), "{params}");
    assert!(params.contains("MAX_USER_PRIORITY = 100"), "{params}");
    let params: Value =
        serde_json::from_str(&ok(run(&fed, "Cluster1", &["bparams", "-json"]))).expect("JSON");
    assert_eq!(params["COMMAND"], "bparams");
    let hosts = ok(run(&fed, "Cluster2", &["bhosts", "-l", "c2host1"]));
    assert!(hosts.starts_with("HOST  c2host1\n"), "{hosts}");
    assert!(hosts.contains(" QUEUES: high"), "{hosts}");
    let queue = ok(run(&fed, "Cluster2", &["bqueues", "high"]));
    assert_eq!(queue.lines().count(), 2, "{queue}");
    let nosuch = refused(run(&fed, "Cluster2", &["bqueues", "nosuch"]), 2);
    assert!(nosuch.contains("nosuch: No such queue"), "{nosuch}");
    // -o fields on bqueues and bhosts: LSF's names, keys in upper case.
    let fields: Value = serde_json::from_str(&ok(run(
        &fed,
        "Cluster2",
        &["bqueues", "-json", "-o", "queue_name jl_u njobs"],
    )))
    .expect("JSON");
    assert_eq!(fields["QUEUES"], 1, "{fields}");
    assert_eq!(fields["RECORDS"][0]["QUEUE_NAME"], "high", "{fields}");
    assert_eq!(fields["RECORDS"][0]["JL_U"], "-", "{fields}");
    let hosts = ok(run(
        &fed,
        "Cluster2",
        &["bhosts", "-noheader", "-o", "host_name max delimiter=','"],
    ));
    assert_eq!(hosts.lines().next(), Some("c2host1,4"), "{hosts}");
    for command in ["bqueues", "bhosts", "bclusters", "lsid", "bhist"] {
        let json: Value =
            serde_json::from_str(&ok(run(&fed, "Cluster1", &[command, "-json"]))).expect("JSON");
        assert_eq!(json["COMMAND"], command, "{json}");
        assert!(json["RECORDS"].is_array(), "{json}");
    }
    // bsub --from reads each line as shell words: a quoted name is one.
    let jobs_file = dir.path().join("jobs.txt");
    std::fs::write(
        &jobs_file,
        "-J \"with space\" -q normal --run-time 10h\n-J 'it''s' -q normal -sp 5\n",
    )
    .expect("jobs file");
    let from = ok(run(
        &fed,
        "Cluster1",
        &["bsub", "--from", jobs_file.to_str().expect("utf-8")],
    ));
    assert_eq!(from.lines().count(), 2, "{from}");
    let spaced = ok(run(
        &fed,
        "Cluster1",
        &["bjobs", "-J", "with space", "-o", "job_name"],
    ));
    assert_eq!(spaced.lines().nth(1), Some("with space"), "{spaced}");
    let quoted = ok(run(
        &fed,
        "Cluster1",
        &["bjobs", "-J", "its", "-o", "job_name"],
    ));
    assert_eq!(quoted.lines().nth(1), Some("its"), "{quoted}");
    ok(run(&fed, "Cluster1", &["bkill", "-J", "with space"]));
    ok(run(&fed, "Cluster1", &["bkill", "-J", "its"]));
}

/// One cluster with an advance reservation active from the start and one
/// that starts in five hours.
const RESERVATIONS: &str = r#"
name = "brsvs"

[[cluster]]
name = "Cluster1"
[[cluster.host]]
name = "a"
count = 2
MXJ = 4
[[cluster.queue]]
name = "normal"

[[cluster.reservation]]
name = "maint"
hosts = "a1"
slots = 3
start = "0s"
end = "10h"
users = "alice"

[[cluster.reservation]]
name = "later"
hosts = "a2"
start = "5h"
end = "6h"
users = "all"
"#;

/// `brsvs` asks a running cluster for its advance reservations: LSF's
/// columns, `-json` and `-o json`; `bsub -U` runs a job in one.
#[test]
fn brsvs_lists_a_running_clusters_advance_reservations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation_of(dir.path(), RESERVATIONS);
    let _one = fed.start("Cluster1", None);
    let rows = ask(&fed, "brsvs", "Cluster1", &[]);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["rsvid"], "maint");
    assert_eq!(rows[0]["slots"], 3);
    assert_eq!(rows[0]["active"], true);
    assert_eq!(rows[1]["rsvid"], "later");
    assert_eq!(rows[1]["slots"], 4, "all of a2's slots");
    assert_eq!(rows[1]["active"], false);
    let text = ok(run(&fed, "Cluster1", &["brsvs"]));
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0][0], "RSVID", "{text}");
    assert_eq!(
        lines[1],
        [
            "maint",
            "user",
            "alice",
            "0/3",
            "a1",
            "00:00:00-10:00:00",
            "active"
        ],
        "{text}"
    );
    assert_eq!(lines[2][0..4], ["later", "user", "all", "0/4"], "{text}");
    let json: Value =
        serde_json::from_str(&ok(run(&fed, "Cluster1", &["brsvs", "-json"]))).expect("JSON");
    assert_eq!(json["COMMAND"], "brsvs");
    assert_eq!(json["RESERVATIONS"], 2);
    assert_eq!(json["RECORDS"][0]["RSVID"], "maint");
    // A job of alice's in the active reservation uses one of its slots.
    ok(run(
        &fed,
        "Cluster1",
        &["bsub", "-q", "normal", "-U", "maint", "-u", "alice"],
    ));
    eventually(Duration::from_secs(30), "maint's job runs", || {
        ask(&fed, "brsvs", "Cluster1", &[])[0]["used"] == 1
    });
}

/// `mcfed cluster` takes its scenario from `MCFED_SCENARIO` and says, in
/// one line, where it listens and whom it dials.
#[test]
fn a_cluster_reads_mcfed_scenario_and_says_where_it_listens_and_whom_it_dials() {
    use std::io::{BufRead as _, BufReader};
    let dir = tempfile::tempdir().expect("temp dir");
    let fed = federation_of(dir.path(), &scenario());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcfed"))
        .args([
            "cluster",
            "--name",
            "Cluster2",
            "--listen",
            "127.0.0.1:0",
            "--base-port",
            "0",
            "--peer",
            "Cluster1=127.0.0.1:9",
            "--certs",
            fed.certs.to_str().expect("utf-8"),
            "--exit-on-stdin-eof",
        ])
        .env("MCFED_SCENARIO", &fed.scenario)
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mcfed cluster starts");
    let stderr = child.stderr.take().expect("stderr");
    let first = BufReader::new(stderr)
        .lines()
        .next()
        .expect("a line")
        .expect("text");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.starts_with("mcfed cluster Cluster2: listening on 127.0.0.1:"),
        "{first}"
    );
    assert!(
        first.ends_with(", dialling Cluster1 at 127.0.0.1:9"),
        "{first}"
    );
}

/// A clean run logs no warning, and no colour into a pipe; a launch that
/// fails prints what was decided before it failed.
#[test]
fn clean_stops_are_quiet_and_a_failed_launch_prints_what_it_gathered() {
    let clean = mcfed(&[
        "launch",
        "scenarios/forwarding/example1-count-preemptable.toml",
        "--speed",
        "40",
        "--base-port",
        "0",
    ]);
    let stdout = ok(clean.clone());
    assert!(
        stdout.contains("forwarded to HighPriority@Cluster2"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&clean.stderr);
    assert!(!stderr.contains("WARN"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes into a pipe: {stderr:?}"
    );

    // Decided at 45 s of emulated time (4.5 s of wall time at speed 10,
    // after a second of start-up); then a cluster process dies.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("launch.out");
    let mut launcher = common::live::Process::start(
        [
            "launch",
            "scenarios/forwarding/example1-count-preemptable.toml",
            "--speed",
            "10",
            "--base-port",
            "0",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect(),
        Some(out.clone()),
    );
    let pid = launcher.child.id();
    let mut children = Vec::new();
    eventually(Duration::from_secs(20), "three clusters run", || {
        children = common::live::children(pid);
        children.len() == 3
    });
    std::thread::sleep(Duration::from_secs(8));
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &children[1].to_string()])
        .status();
    let mut status = None;
    eventually(Duration::from_secs(20), "the launcher fails", || {
        status = launcher.child.try_wait().expect("wait");
        status.is_some()
    });
    assert_eq!(status.and_then(|status| status.code()), Some(2));
    let printed = std::fs::read_to_string(&out).expect("stdout");
    assert!(
        printed.contains("job1 (job 1@Cluster1, 1 slot, queue send)"),
        "what was decided is printed: {printed}"
    );
}
