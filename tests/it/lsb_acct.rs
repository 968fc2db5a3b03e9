//! A site's lsb.acct replayed and an emulated run's lsb.acct written (issue
//! 28 items 3 and 4): the LSF tree of tests/lsf/envdir is imported, a
//! generated log of a few hundred jobs for `east` plus records written by
//! hand in LSF 10.1's layout (tests/lsf/acct: a `-R` job, a job of a
//! queue east lacks, a job east sent to west and west logged too, a
//! resize record, a record of an older version) replay to drain; every
//! cluster's lsb.acct is written back and read with the project's reader,
//! every field the writer fills checked against the run and the input.

use std::collections::BTreeMap;
use std::path::Path;

use mcfed_trace::lsb_acct::{JobFinish, STATUS_DONE, STATUS_EXIT, open};

use crate::common;
use common::{mcfed, succeeded};

/// The records of the log at `path`, all of which must read.
fn records(path: &Path) -> Vec<JobFinish> {
    open(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .map(|record| record.expect("every record written reads back"))
        .collect()
}

/// A number after `label` in `text` (`jobs submitted: 312`).
fn number_after(text: &str, label: &str) -> u64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no `{label}` in {text}"));
    text[at + label.len()..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("no number after `{label}` in {text}"))
}

#[test]
fn a_site_history_replays_on_the_imported_tree_and_is_written_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("site.toml");
    let path = |name: &str| dir.path().join(name).to_str().expect("UTF-8").to_owned();
    succeeded(&mcfed(&[
        "import",
        "lsf",
        "--envdir",
        "tests/lsf/envdir/conf",
        "-o",
        &path("site.toml"),
    ]));
    succeeded(&mcfed(&[
        "gen",
        "lsb-acct",
        "-o",
        &path("generated.acct"),
        "--jobs",
        "300",
        "--processors",
        "18",
        "--max-width",
        "4",
        "--queues",
        "normal,any,send",
        "--cluster",
        "east",
        "--remote-clusters",
        "west",
        "--forwarded",
        "0.1",
        "--seed",
        "7",
    ]));
    // East's log: the generated records, then the hand-written ones (whose
    // submissions are among the earliest: sorted into place).
    let generated = std::fs::read_to_string(path("generated.acct")).expect("generated");
    let written = std::fs::read_to_string("tests/lsf/acct/east.acct").expect("fixture");
    std::fs::write(path("east.acct"), format!("{generated}{written}")).expect("east.acct");
    std::fs::copy("tests/lsf/acct/west.acct", path("west.acct")).expect("west.acct");
    let mut text = std::fs::read_to_string(&scenario).expect("imported");
    text.push_str(
        "\n[[workload]]\nlsb_acct = \"east.acct\"\ncluster = \"east\"\nqueue = \"normal\"\nqueue_map = { gpuq = \"normal\" }\n\n[[workload]]\nlsb_acct = \"west.acct\"\ncluster = \"west\"\nqueue = \"recv\"\n",
    );
    std::fs::write(&scenario, text).expect("scenario");

    let out = dir.path().join("out");
    let summary = succeeded(&mcfed(&[
        "run",
        scenario.to_str().expect("UTF-8"),
        "--report",
        "summary",
        "-q",
        "--lsb-acct",
        out.to_str().expect("UTF-8"),
    ]));
    // East: 300 generated + 3 hand-written jobs, the resize and 9.1
    // records skipped; west: its local job, the job east sent it skipped
    // (east's log submits it).
    assert!(
        summary.contains("workload east (")
            && summary.contains("303 jobs read and handed to the federation")
            && summary.contains("), 2 skipped ("),
        "{summary}"
    );
    assert!(
        summary.contains("workload west (")
            && summary.contains("1 job read and handed to the federation")
            && summary.contains("), 1 skipped ("),
        "{summary}"
    );
    assert!(
        summary
            .contains("lsb.acct: 0 records not JOB_FINISH of a known version, 1 job forwarded in"),
        "{summary}"
    );
    let accepted = number_after(&summary, "jobs submitted:");
    assert!(accepted >= 300, "{summary}");
    let all = summary
        .lines()
        .find(|line| line.trim_start().starts_with("all "))
        .expect("the totals row");
    let totals: Vec<u64> = all
        .split_whitespace()
        .skip(1)
        .map(|cell| cell.parse().expect("a count"))
        .collect();
    // started, finished, killed, running, suspended, pending: drained.
    assert_eq!(&totals[3..], [0, 0, 0], "{summary}");

    let east = records(&out.join("east/logdir/lsb.acct"));
    let west = records(&out.join("west/logdir/lsb.acct"));
    assert_eq!(
        (east.len() + west.len()) as u64,
        totals[1] + totals[2],
        "one record per finished job"
    );
    let east_hosts = [
        "east-m1",
        "east01",
        "east02",
        "east03",
        "east04",
        "east-gpu1",
        "east-gpu2",
        "east-gpu5",
    ];
    let mut ids = BTreeMap::new();
    for (cluster, log, hosts, queues) in [
        (
            "east",
            &east,
            &east_hosts[..],
            &["normal", "any", "login"][..],
        ),
        ("west", &west, &["west1", "west2"][..], &["recv"][..]),
    ] {
        for record in log {
            let what = format!("{cluster}: {record:?}");
            assert_eq!(record.version, "10.1", "{what}");
            // The fields mcfed has nothing for: LSF's "unavailable" values.
            assert_eq!(
                (record.user_id, record.begin_time, record.term_time),
                (-1, 0, 0),
                "{what}"
            );
            assert_eq!(
                (record.host_factor, record.system_cpu_time, record.max_rmem),
                (1.0, 0.0, 0),
                "{what}"
            );
            assert!(
                record.asked_hosts.is_empty() && record.command.is_empty(),
                "{what}"
            );
            assert!(ids.insert((cluster, record.job_id), ()).is_none(), "{what}");
            assert!(queues.contains(&record.queue.as_str()), "{what}");
            assert!(!record.user_name.is_empty(), "{what}");
            assert!(
                record.job_name.starts_with("east-") || record.job_name.starts_with("west-"),
                "{what}"
            );
            assert_eq!(
                record.options & 0x03,
                0x03,
                "SUB_JOB_NAME | SUB_QUEUE: {what}"
            );
            assert!(record.num_processors >= 1, "{what}");
            assert!(record.max_num_processors >= record.num_processors, "{what}");
            assert!(record.submit_time >= 1_700_000_000, "{what}");
            assert!(record.submit_time <= record.start_time, "{what}");
            assert!(record.start_time <= record.event_time, "{what}");
            assert_eq!(
                record.run_time,
                record.event_time - record.start_time,
                "{what}"
            );
            assert_eq!(
                record.exec_hosts.len() as i64,
                record.num_processors,
                "{what}"
            );
            assert!(
                record
                    .exec_hosts
                    .iter()
                    .all(|host| hosts.contains(&host.as_str())),
                "{what}"
            );
            assert_eq!(record.alloc_slots, record.exec_hosts, "{what}");
            assert_eq!(record.res_req, record.effective_res_req, "{what}");
            assert_eq!(
                record.user_cpu_time,
                (record.run_time * record.num_processors) as f64,
                "{what}"
            );
            match record.status {
                STATUS_DONE => assert_eq!((record.exit_status, record.exit_info), (0, 0), "{what}"),
                STATUS_EXIT => assert_eq!(
                    (record.exit_status, record.exit_info),
                    (140 << 8, 5),
                    "a run limit: {what}"
                ),
                other => panic!("status {other}: {what}"),
            }
            if record.status == STATUS_EXIT {
                assert!((record.run_time - record.run_limit).abs() <= 1, "{what}");
            }
            // Forwarded: west logs the jobs east sent, with both ids.
            if cluster == "west" && record.job_name.starts_with("east-") {
                assert_eq!(record.src_cluster, "east", "{what}");
                assert!(record.src_job_id > 0, "{what}");
                assert_eq!(
                    (record.dst_cluster.as_str(), record.dst_job_id),
                    ("west", record.job_id),
                    "{what}"
                );
                assert!(record.forward_time >= record.submit_time, "{what}");
            } else {
                assert_eq!(
                    (record.src_cluster.as_str(), record.src_job_id),
                    ("", -1),
                    "{what}"
                );
            }
        }
    }
    assert!(
        west.iter().any(|record| record.src_cluster == "east"),
        "east's send queue forwarded some jobs to west"
    );

    // The hand-written jobs, as the run did them.
    let named = |log: &[JobFinish], name: &str| -> JobFinish {
        log.iter()
            .find(|record| record.job_name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    let alice = named(&east, "east-4242");
    assert_eq!(
        (alice.user_name.as_str(), alice.queue.as_str()),
        ("alice", "normal")
    );
    assert_eq!(
        (alice.num_processors, alice.run_time, alice.run_limit),
        (4, 3480, 7200)
    );
    assert_eq!(alice.res_req, "select[bigmem] rusage[mem=1024]");
    assert!(
        alice
            .exec_hosts
            .iter()
            .all(|host| ["east01", "east03", "east04"].contains(&host.as_str()))
    );
    let carol = named(&east, "east-4244");
    assert_eq!(
        (carol.queue.as_str(), carol.res_req.as_str()),
        ("normal", "select[gpu]")
    );
    assert!(carol.exec_hosts[0].starts_with("east-gpu"), "{carol:?}");
    // Bob's job (element 3 of an array) ran 2,100 s in LSF under a 600 s
    // limit: killed at it here, at west, where east's send queue sent it.
    let bob = named(&west, "east-4243[3]");
    assert_eq!(
        (bob.status, bob.run_time, bob.exit_info),
        (STATUS_EXIT, 600, 5)
    );
    assert_eq!(bob.queue, "recv");
    let dave = named(&west, "west-91");
    assert_eq!((dave.user_name.as_str(), dave.num_processors), ("dave", 2));
    // Times keep the site's dates: time zero is the earliest submission
    // of the logs (the generator's epoch), and alice submitted 100 s in.
    assert_eq!(alice.submit_time, 1_700_000_100);
}

#[test]
fn replay_tells_an_lsb_acct_from_swf_and_reads_it_gzipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("lsb.acct.gz");
    let log = log.to_str().expect("UTF-8");
    let made = mcfed(&[
        "gen",
        "lsb-acct",
        "-o",
        log,
        "--jobs",
        "200",
        "--max-width",
        "8",
        "--seed",
        "3",
    ]);
    assert!(
        String::from_utf8_lossy(&made.stderr).contains("200 JOB_FINISH records"),
        "{made:?}"
    );
    let scenario = succeeded(&mcfed(&["replay", log, "--hosts", "8", "--print-scenario"]));
    assert!(scenario.contains("lsb_acct = \""), "{scenario}");
    let out = dir.path().join("out");
    let summary = succeeded(&mcfed(&[
        "replay",
        log,
        "--hosts",
        "8",
        "-q",
        "--lsb-acct",
        out.to_str().expect("UTF-8"),
    ]));
    assert!(
        summary.contains("200 jobs read and handed to the federation")
            && summary.contains("), 0 skipped ("),
        "{summary}"
    );
    let written = records(&out.join("C1/logdir/lsb.acct"));
    assert_eq!(written.len(), 200);
    assert!(
        written
            .iter()
            .all(|record| record.exec_hosts.len() as i64 == record.num_processors)
    );
}

/// A job killed while it pends has a record too: EXIT, no start and no
/// execution host, killed by its owner (exit code 130, TERM_OWNER), its
/// user and requirements from the cluster's history; the job that ran is
/// DONE with its host.
#[test]
fn a_job_killed_while_pending_is_logged_without_a_host() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    succeeded(&mcfed(&[
        "run",
        "tests/fixtures/pending-kill.toml",
        "-q",
        "--lsb-acct",
        out.to_str().expect("UTF-8"),
    ]));
    let log = records(&out.join("C1/logdir/lsb.acct"));
    assert_eq!(log.len(), 2, "{log:?}");
    let killed = &log[0];
    assert_eq!(killed.job_name, "second");
    assert_eq!(
        (killed.status, killed.exit_status, killed.exit_info),
        (STATUS_EXIT, 130 << 8, 14)
    );
    assert_eq!((killed.start_time, killed.run_time), (0, 0));
    assert!(killed.exec_hosts.is_empty());
    assert_eq!(killed.user_name, "ben");
    assert_eq!(killed.res_req, "select[bigmem] rusage[mem=512]");
    assert_eq!(killed.event_time, 1_700_000_000 + 600);
    assert_eq!(killed.submit_time, 1_700_000_001);
    let done = &log[1];
    assert_eq!(
        (done.job_name.as_str(), done.user_name.as_str()),
        ("first", "ann")
    );
    assert_eq!(
        (done.status, done.exec_hosts.as_slice()),
        (STATUS_DONE, &["a".to_owned()][..])
    );
    assert_eq!(
        (done.start_time, done.event_time),
        (1_700_000_000, 1_700_003_600)
    );
}

/// The replay names a job's advance reservation (lsb.acct's rsvId) with
/// the word the cluster reads: mcfed-trace may not depend on
/// mcfed-cluster, so both spell it, and this keeps them the same.
#[test]
fn a_replayed_reservation_is_named_as_the_cluster_reads_it() {
    for name in ["maint", "alice#3"] {
        assert_eq!(
            mcfed_trace::lsb_acct::reservation_word(name),
            mcfed_cluster::advance::reservation_word(name)
        );
    }
}

/// A job that ran in an advance reservation is logged with it as rsvId
/// (`bsub -U`), which a replay reads back, and not as a `select[]` word;
/// the closed reservation's job killed at its end is EXIT, TERM_DEADLINE.
#[test]
fn a_reservations_jobs_are_logged_with_their_rsv_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    succeeded(&mcfed(&[
        "run",
        "scenarios/control/advance-reservation-closed.toml",
        "-q",
        "--lsb-acct",
        out.to_str().expect("UTF-8"),
    ]));
    let log = records(&out.join("C/logdir/lsb.acct"));
    let by_name = |name: &str| {
        log.iter()
            .find(|record| record.job_name == name)
            .unwrap_or_else(|| panic!("{name} in {log:?}"))
    };
    let killed = by_name("inmaint");
    // Killed at the reservation's end, its termination time: TERM_DEADLINE
    // (6), not a bkill's TERM_OWNER (14).
    assert_eq!(
        (killed.rsv_id.as_str(), killed.status, killed.exit_info),
        ("maint", STATUS_EXIT, 6)
    );
    assert_eq!(killed.reservation(), Some("maint"));
    assert!(!killed.res_req.contains("rsv"), "{}", killed.res_req);
    let open = by_name("inlab");
    assert_eq!((open.rsv_id.as_str(), open.status), ("lab", STATUS_DONE));
    assert_eq!(by_name("outside").rsv_id, "");
}

/// The jobs of a log as (name, slots, status, run time), sorted.
fn finished(path: &Path) -> Vec<(String, i64, i32, i64)> {
    let mut jobs: Vec<_> = records(path)
        .into_iter()
        .map(|record| {
            (
                record.job_name,
                record.num_processors,
                record.status,
                record.run_time,
            )
        })
        .collect();
    jobs.sort();
    jobs
}

/// `mcfed launch --lsb-acct DIR`: each cluster process writes its log as
/// `mcfed run --lsb-acct` does, the same jobs with the same slots, status
/// and run time (a trace replayed to drain).
#[test]
fn a_launched_run_writes_each_clusters_lsb_acct() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = "scenarios/traces/small-trace.toml";
    let emulated = dir.path().join("run");
    let launched = dir.path().join("launch");
    let arg = |path: &Path| path.to_str().expect("UTF-8").to_owned();
    succeeded(&mcfed(&[
        "run",
        scenario,
        "-q",
        "--lsb-acct",
        &arg(&emulated),
    ]));
    succeeded(&mcfed(&[
        "launch",
        scenario,
        "--base-port",
        "0",
        "--speed",
        "100",
        "--lsb-acct",
        &arg(&launched),
    ]));
    let expected = finished(&emulated.join("C1/logdir/lsb.acct"));
    assert_eq!(expected.len(), 10, "{expected:?}");
    assert_eq!(finished(&launched.join("C1/logdir/lsb.acct")), expected);
}
