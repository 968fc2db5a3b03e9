//! LSF's command names on PATH against live cluster processes (issue 28
//! item 5): `eval "$(mcfed lsf-env ...)"` in a shell, then the commands a
//! script calls — `bsub < script.sh` with `#BSUB` lines, `bsub -q Q sleep
//! 60`, `bjobs -json -o ...`, `bqueues -json -o ...`, `bhosts -json`,
//! `lsid`, `lsclusters`, `brsvs`, `bkill` — each checked for LSF's messages, exit
//! statuses and the shape of LSF 10.1's `-json` (`COMMAND`, the count under
//! `JOBS`/`QUEUES`/`HOSTS`, `RECORDS` of string values under the fields'
//! names in upper case).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common;
use common::federation::{Cluster, Queue, Scenario};
use common::live::{Federation, federation_of};
use common::{eventually, mcfed, succeeded};

/// Cluster1 (two hosts of 4 slots; queues `normal`, `short` and `send`)
/// sends to `high` on Cluster2 (one host of 4 slots), collecting its
/// counters every 10 s.
fn scenario() -> String {
    Scenario::new("lsf names")
        .param("MC_PLUGIN_UPDATE_INTERVAL", "10s")
        .cluster(
            Cluster::new("Cluster1")
                .param("MC_PLUGIN_SCHEDULE_ENHANCE", "COUNT_PREEMPTABLE")
                .hosts("h", 2, 4)
                .queue(Queue::new("normal"))
                .queue(Queue::new("short"))
                .queue(Queue::sending("send", "high@Cluster2")),
        )
        .cluster(
            Cluster::new("Cluster2")
                .hosts("c2host", 1, 4)
                .queue(Queue::receiving("high", "Cluster1")),
        )
        .text()
}

/// A shell with `exports` evaluated, as a user's login would have them.
struct Shell {
    exports: String,
    dir: std::path::PathBuf,
}

impl Shell {
    /// Runs `script` in `sh` (standard input from `stdin`, if given).
    fn run(&self, script: &str, stdin: Option<&Path>) -> Output {
        let input = match stdin {
            Some(path) => Stdio::from(std::fs::File::open(path).expect("stdin file")),
            None => Stdio::null(),
        };
        let mut child = Command::new("sh")
            .args(["-c", &format!("eval \"$EXPORTS\"\n{script}")])
            .env("EXPORTS", &self.exports)
            .env("USER", "alice")
            .env_remove("MCFED_CLUSTER")
            .env_remove("MCFED_CERTS")
            .env_remove("MCFED_SCENARIO")
            .env_remove("MCFED_ADDRESS")
            .env_remove("MCFED_USER")
            .env_remove("MCFED_RUN_TIME")
            .env_remove("LSB_DEFAULTQUEUE")
            .current_dir(&self.dir)
            .stdin(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sh starts");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            if child.try_wait().expect("waits").is_some() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "`{script}` hangs");
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().expect("output")
    }

    /// Its standard output, which must come with status 0.
    fn ok(&self, script: &str) -> String {
        let output = self.run(script, None);
        assert!(
            output.status.success(),
            "`{script}`: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Its standard error, which must come with LSF's failure status 255.
    fn refused(&self, script: &str) -> String {
        let output = self.run(script, None);
        assert_eq!(
            output.status.code(),
            Some(255),
            "`{script}`: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    fn json(&self, script: &str) -> Value {
        let text = self.ok(script);
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("`{script}`: {error}: {text}"))
    }
}

/// LSF 10.1's `-json` shape: `COMMAND`, the count of records under
/// `counted`, `RECORDS` of objects whose keys are exactly `keys`, every
/// value a string. The records.
fn lsf_json<'v>(value: &'v Value, command: &str, counted: &str, keys: &[&str]) -> &'v [Value] {
    let object = value.as_object().expect("an object");
    let mut top: Vec<&str> = object.keys().map(String::as_str).collect();
    top.sort_unstable();
    let mut expected = vec!["COMMAND", "RECORDS", counted];
    expected.sort_unstable();
    assert_eq!(top, expected, "{value}");
    assert_eq!(value["COMMAND"], command, "{value}");
    let records = value["RECORDS"].as_array().expect("RECORDS is an array");
    assert_eq!(
        value[counted].as_u64(),
        Some(records.len() as u64),
        "{value}"
    );
    for record in records {
        let record = record.as_object().expect("a record is an object");
        let mut found: Vec<&str> = record.keys().map(String::as_str).collect();
        found.sort_unstable();
        let mut wanted = keys.to_vec();
        wanted.sort_unstable();
        assert_eq!(found, wanted, "{value}");
        assert!(record.values().all(Value::is_string), "{value}");
    }
    records
}

fn start(dir: &Path) -> (Federation, Vec<common::live::Process>, Shell) {
    let fed = federation_of(dir, &scenario());
    let processes = vec![fed.start("Cluster2", None), fed.start("Cluster1", None)];
    let hosts = dir.join("hosts");
    std::fs::write(
        &hosts,
        format!(
            "Cluster1 {}\nCluster2 {}\n",
            fed.address("Cluster1"),
            fed.address("Cluster2")
        ),
    )
    .expect("hosts file");
    let output = mcfed(&[
        "lsf-env",
        "--cluster",
        "Cluster1",
        "--certs",
        fed.certs.to_str().expect("UTF-8"),
        "--scenario",
        fed.scenario.to_str().expect("UTF-8"),
        "--hosts",
        hosts.to_str().expect("UTF-8"),
        "--dir",
        dir.join("lsf").to_str().expect("UTF-8"),
    ]);
    let exports = succeeded(&output);
    for variable in [
        "LSF_BINDIR",
        "LSF_ENVDIR",
        "MCFED_CLUSTER",
        "MCFED_CERTS",
        "MCFED_SCENARIO",
        "MCFED_HOSTS",
        "PATH",
    ] {
        assert!(
            exports.contains(&format!("export {variable}=")),
            "{variable} in {exports}"
        );
    }
    let shell = Shell {
        exports,
        dir: dir.to_owned(),
    };
    (fed, processes, shell)
}

#[test]
fn scripts_drive_a_live_cluster_through_lsf_s_command_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (fed, _processes, shell) = start(dir.path());
    // The directory LSF tools look in.
    shell.ok(
        "test -x \"$LSF_BINDIR/bsub\" && test -x \"$LSF_BINDIR/lsclusters\" && test -f \"$LSF_ENVDIR/lsf.conf\" && test \"$(command -v bjobs)\" = \"$LSF_BINDIR/bjobs\"",
    );

    // bsub < script.sh, with #BSUB directives.
    let script = dir.path().join("script.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n#BSUB -q normal\n#BSUB -n 2\n#BSUB -W 30\n#BSUB -J scripted\n#BSUB -o out.%J\nsleep 600\n",
    )
    .expect("script");
    let submitted = shell.run("bsub", Some(&script));
    succeeded(&submitted);
    assert_eq!(
        String::from_utf8_lossy(&submitted.stdout),
        "Job <1> is submitted to queue <normal>.\n"
    );
    // bsub [options] command [args].
    assert_eq!(
        shell.ok("bsub -q short sleep 60"),
        "Job <2> is submitted to queue <short>.\n"
    );
    // No -q: the cluster's `normal`.
    assert_eq!(
        shell.ok("bsub -We 60 -P project ./run.sh --flag"),
        "Job <3> is submitted to queue <normal>.\n"
    );
    let refused = shell.refused("bsub -q nosuch sleep 1");
    assert!(refused.contains("Job not submitted."), "{refused}");
    let interactive = shell.refused("bsub -Is bash");
    assert!(interactive.contains("interactive"), "{interactive}");
    let unknown = shell.refused("bsub -Z sleep 1");
    assert!(unknown.contains("Illegal option"), "{unknown}");

    eventually(Duration::from_secs(30), "jobs 1 to 3 run", || {
        shell
            .ok("bjobs -noheader -o \"stat\"")
            .lines()
            .filter(|line| line.trim() == "RUN")
            .count()
            == 3
    });
    let jobs = shell.json("bjobs -json -o \"jobid stat queue exec_host\"");
    let records = lsf_json(
        &jobs,
        "bjobs",
        "JOBS",
        &["JOBID", "STAT", "QUEUE", "EXEC_HOST"],
    );
    assert_eq!(records.len(), 3, "{jobs}");
    assert_eq!(records[0]["JOBID"], "1");
    assert_eq!(records[0]["STAT"], "RUN");
    assert_eq!(records[0]["QUEUE"], "normal");
    assert!(
        records[0]["EXEC_HOST"]
            .as_str()
            .is_some_and(|hosts| hosts.contains('h')),
        "{jobs}"
    );
    assert_eq!(records[1]["QUEUE"], "short");
    // The script's name and output file; the command line's name.
    let named = shell.ok("bjobs -noheader -o \"jobid job_name:10 output_file\"");
    let lines: Vec<&str> = named.lines().collect();
    assert!(lines[0].starts_with("1  scripted  "), "{named}");
    assert!(lines[0].ends_with("out.%J"), "{named}");
    assert!(
        lines[2].starts_with("3  *sh --flag"),
        "a job name cut at the front: {named}"
    );
    let default = shell.ok("bjobs -w");
    assert!(
        default.starts_with("JOBID  USER   STAT  QUEUE   FROM_HOST  EXEC_HOST"),
        "{default}"
    );
    assert!(default.contains("alice"), "{default}");
    let missing = shell.refused("bjobs 99");
    assert!(missing.contains("Job <99> is not found"), "{missing}");

    let queues = shell.json("bqueues -json -o \"queue_name njobs pend run status\"");
    let records = lsf_json(
        &queues,
        "bqueues",
        "QUEUES",
        &["QUEUE_NAME", "NJOBS", "PEND", "RUN", "STATUS"],
    );
    let names: Vec<&str> = records
        .iter()
        .filter_map(|record| record["QUEUE_NAME"].as_str())
        .collect();
    assert_eq!(names, ["normal", "short", "send"], "{queues}");
    assert_eq!(records[0]["STATUS"], "Open:Active");
    assert_eq!(records[0]["RUN"], "3", "slots of jobs 1 and 3: {queues}");
    let hosts = shell.json("bhosts -json");
    let records = lsf_json(
        &hosts,
        "bhosts",
        "HOSTS",
        &[
            "HOST_NAME",
            "STATUS",
            "JL_U",
            "MAX",
            "NJOBS",
            "RUN",
            "SSUSP",
            "USUSP",
            "RSV",
        ],
    );
    assert_eq!(records.len(), 2, "{hosts}");
    assert_eq!(records[0]["HOST_NAME"], "h1");
    let all = shell.json("bhosts -json -o all");
    let every: Vec<&str> = mcfed_admin::cmd::hosts::HOST_FIELDS
        .iter()
        .map(|field| field.header)
        .collect();
    assert_eq!(
        every.len(),
        all["RECORDS"][0].as_object().expect("a record").len()
    );
    let plain = shell.ok("bqueues -noheader -o \"queue_name:6 njobs delimiter=';'\"");
    assert_eq!(plain.lines().next(), Some("normal;3"), "{plain}");
    // bjobs shows the caller's jobs; -u all everyone's.
    let other = mcfed(&[
        "bsub",
        "--cluster",
        "Cluster1",
        "--address",
        &fed.address("Cluster1"),
        "--certs",
        fed.certs.to_str().expect("UTF-8"),
        "-q",
        "normal",
        "-u",
        "bob",
        "-J",
        "bobs",
    ]);
    succeeded(&other);
    assert!(!shell.ok("bjobs -w").contains("bobs"));
    assert!(shell.ok("bjobs -u all -w").contains("bobs"));

    let id = shell.ok("lsid");
    let lines: Vec<&str> = id.lines().collect();
    assert_eq!(lines.len(), 6, "{id}");
    assert!(lines[0].contains("LSF"), "{id}");
    assert_eq!(lines[4], "My cluster name is Cluster1");
    assert_eq!(lines[5], "My master name is 127.0.0.1");
    let clusters = shell.ok("lsclusters");
    assert!(
        clusters.starts_with("CLUSTER_NAME  STATUS  MASTER_HOST"),
        "{clusters}"
    );
    assert!(
        clusters.contains("Cluster1      ok      127.0.0.1"),
        "{clusters}"
    );

    // brsvs under its own name: none here, said on standard error.
    let reservations = shell.run("brsvs", None);
    assert!(reservations.status.success(), "{reservations:?}");
    assert!(reservations.stdout.is_empty(), "{reservations:?}");
    assert_eq!(
        String::from_utf8_lossy(&reservations.stderr),
        "No reservation found\n"
    );
    assert_eq!(shell.json("brsvs -json")["RESERVATIONS"], 0);

    // bkill as LSF says it; a job it cannot find fails with 255.
    assert!(shell.ok("bkill 2").contains("Job <2> is being terminated"));
    let nothing = shell.refused("bkill 99");
    assert!(!nothing.is_empty());
    eventually(Duration::from_secs(20), "job 2 is EXIT", || {
        shell
            .ok("bjobs -a -noheader -o \"jobid stat\"")
            .contains("2  EXIT")
    });
    let version = shell.run("bjobs -V", None);
    assert!(String::from_utf8_lossy(&version.stderr).contains("LSF"));
}
