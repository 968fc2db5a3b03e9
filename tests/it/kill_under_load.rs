//! The kill test: three cluster processes with journals — one submission
//! cluster, two execution clusters — under a steady stream of submissions,
//! with datagram loss and duplication on every link, and `kill -9` of a
//! random process at random moments, each restarted from its journal after
//! a random time down (long enough, some of the time, for its peers to
//! count it unreachable and take its jobs back). At the end every
//! acknowledged job finished exactly once across the federation, and each
//! job's history — read from every journal the processes wrote, kept with
//! `--keep-journals` — is consistent. After every restart and at the end,
//! each execution cluster's `bjobs -a` agrees with its slots: each job
//! once, in one state, no more slots running than it has, every slot free
//! at the end.
//!
//! The kill schedule comes from a seed, printed first; a failure is
//! replayed with the same seed. In the normal suite the run is short;
//! the longer version is the same test with more jobs and kills:
//!
//! ```sh
//! MCFED_KILL_SEED=7 MCFED_KILL_JOBS=6000 MCFED_KILL_KILLS=12 \
//!     cargo test --release --test it kill_under_load -- --nocapture
//! ```

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::eventually;
use common::federation::{Host, three_clusters};
use common::journaled::Live;
use mcfed_admin::{AdminRequest, AdminResponse};
use mcfed_federation::{JOURNAL_FORMAT, JournalRecord};
use mcfed_process::client::{Session, admin_tls};
use mcfed_protocol::JobSpec;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cluster1 sends to `high` on Cluster2 and Cluster3 (two hosts of 8
/// slots each); a cluster silent for 5 update intervals is unreachable,
/// and its jobs not started are taken back after 60 s.
fn scenario() -> String {
    three_clusters("kill under load")
        .param("MC_UNREACHABLE_UPDATES", 5)
        .param("MC_RECLAIM_TIME", "60s")
        .edit("Cluster2", |cluster| {
            cluster.hosts = vec![Host::new("c2host", 2, 8)];
        })
        .edit("Cluster3", |cluster| {
            cluster.hosts = vec![Host::new("c3host", 2, 8)];
        })
        .text()
}

const CLUSTERS: [&str; 3] = ["Cluster1", "Cluster2", "Cluster3"];

/// Emulated seconds per wall-clock second.
const SPEED: u64 = 50;

/// The test's directory: removed afterwards unless MCFED_KILL_KEEP is set.
enum Kept {
    Temp(tempfile::TempDir),
    Path(std::path::PathBuf),
}

impl Kept {
    fn path(&self) -> &Path {
        match self {
            Kept::Temp(dir) => dir.path(),
            Kept::Path(path) => path,
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// One kill: when (after the start of submissions), which process, how
/// long it stays down.
#[derive(Clone, Copy, Debug)]
struct Kill {
    at: Duration,
    cluster: usize,
    down: Duration,
}

fn schedule(rng: &mut ChaCha8Rng, kills: u64, window: Duration) -> Vec<Kill> {
    let mut plan: Vec<Kill> = (0..kills)
        .map(|_| Kill {
            at: window.mul_f64(rng.random_range(0.05..0.95)),
            cluster: rng.random_range(0..3),
            down: Duration::from_millis(rng.random_range(200..5000)),
        })
        .collect();
    plan.sort_by_key(|kill| kill.at);
    plan
}

/// Submits `jobs` jobs to Cluster1 at `rate` a second, in batches, through
/// one admin connection (reconnecting while Cluster1 is down); returns the
/// acknowledged job ids.
fn submit_steadily(
    certs: &Path,
    address: &str,
    jobs: u64,
    rate: u64,
    seed: u64,
    done: &AtomicBool,
) -> Vec<u64> {
    let tls = admin_tls(certs).expect("admin certificate");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let batch = 10u64;
    let every = Duration::from_secs_f64(batch as f64 / rate as f64);
    let mut acknowledged = Vec::new();
    runtime.block_on(async {
        let mut session: Option<Session> = None;
        let mut next = 0u64;
        let started = tokio::time::Instant::now();
        let mut tick = 0u32;
        while next < jobs {
            tokio::time::sleep_until(started + every * tick).await;
            tick += 1;
            if session.is_none() {
                session = Session::connect(&tls, "Cluster1", address, Duration::from_millis(500))
                    .await
                    .ok();
            }
            let Some(open) = &session else { continue };
            let count = batch.min(jobs - next);
            let specs: Vec<(String, JobSpec)> = (0..count)
                .map(|index| {
                    let run = Duration::from_secs(rng.random_range(10..40));
                    let name = format!("k{}", next + index);
                    ("send".to_owned(), JobSpec::simple(name, "user1", run))
                })
                .collect();
            let answer = tokio::time::timeout(
                Duration::from_secs(5),
                open.ask(&AdminRequest::SubmitMany { jobs: specs }),
            )
            .await;
            match answer {
                Ok(Ok(AdminResponse::SubmittedMany(results))) => {
                    acknowledged
                        .extend(results.into_iter().filter_map(Result::ok).map(|s| s.job_id));
                    next += count;
                }
                _ => session = None,
            }
        }
    });
    done.store(true, Ordering::Relaxed);
    acknowledged
}

/// Every record `cluster` ever made durable, oldest first.
fn history(live: &Live, cluster: &str) -> Vec<JournalRecord> {
    let dir = live.state(cluster);
    let mut kept: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .expect("state directory")
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let generation = name.strip_prefix("journal.")?.parse().ok()?;
            Some((generation, entry.path()))
        })
        .collect();
    kept.sort();
    kept.push((u64::MAX, dir.join("journal")));
    kept.iter().flat_map(|(_, path)| read(path)).collect()
}

/// The jobs of Cluster1's send queue whose end its journals hold.
fn sources_gone(live: &Live) -> BTreeSet<u64> {
    history(live, "Cluster1")
        .into_iter()
        .filter_map(|record| match record {
            JournalRecord::SourceGone { id } => Some(id),
            _ => None,
        })
        .collect()
}

fn read(path: &Path) -> Vec<JournalRecord> {
    mcfed_journal::read_journal_file(path, JOURNAL_FORMAT).expect("journal reads")
}

#[test]
fn every_acknowledged_job_finishes_exactly_once_through_kill_9() {
    let seed = env_u64("MCFED_KILL_SEED", {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos());
        u64::from(nanos)
    });
    let jobs = env_u64("MCFED_KILL_JOBS", 1500);
    let kills = env_u64("MCFED_KILL_KILLS", 4);
    let rate = env_u64("MCFED_KILL_RATE", 100);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let window = Duration::from_secs_f64(jobs as f64 / rate as f64);
    let plan = schedule(&mut rng, kills, window);
    eprintln!("kill test: seed {seed}, {jobs} jobs at {rate}/s, kills {plan:?}");
    eprintln!("kill test: seed {seed} (MCFED_KILL_SEED={seed} replays the kill schedule)");

    let dir = tempfile::tempdir().expect("temp dir");
    let dir = if std::env::var_os("MCFED_KILL_KEEP").is_some() {
        let path = dir.keep();
        eprintln!("kill test: keeping {}", path.display());
        Kept::Path(path)
    } else {
        Kept::Temp(dir)
    };
    let mut live = Live::new(dir.path(), &scenario(), &CLUSTERS);
    let epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis()
        + 3000;
    live.extra = [
        "--speed".to_owned(),
        SPEED.to_string(),
        "--epoch-ms".to_owned(),
        epoch.to_string(),
        "--loss".to_owned(),
        "0.05".to_owned(),
        "--duplicate".to_owned(),
        "0.05".to_owned(),
        "--chaos-seed".to_owned(),
        seed.to_string(),
    ]
    .to_vec();
    let mut processes: Vec<_> = CLUSTERS.iter().map(|name| live.start(name, &[])).collect();
    eventually(Duration::from_secs(60), "Cluster1 has counters", || {
        live.try_ask("bclusters", "Cluster1", &[])
            .is_ok_and(|links| {
                links.as_array().is_some_and(|rows| {
                    rows.iter()
                        .all(|row| row["status"] == "ok" && !row["last_update_seq"].is_null())
                })
            })
    });

    let done = AtomicBool::new(false);
    let started = Instant::now();
    let (certs, address) = (live.certs.clone(), live.address("Cluster1"));
    let acknowledged = std::thread::scope(|scope| {
        let submitter = scope.spawn(|| submit_steadily(&certs, &address, jobs, rate, seed, &done));
        for kill in &plan {
            if let Some(wait) = kill.at.checked_sub(started.elapsed()) {
                std::thread::sleep(wait);
            }
            processes[kill.cluster].kill();
            std::thread::sleep(kill.down);
            live.restart(&mut processes[kill.cluster]);
            for cluster in &CLUSTERS[1..] {
                // (A process being restarted answers nothing: skipped.)
                if let Ok(rows) = live.try_ask("bjobs", cluster, &["-a"]) {
                    listed_once(&rows, cluster, seed);
                }
            }
        }
        submitter.join().expect("submitter")
    });
    assert!(done.load(Ordering::Relaxed));
    eprintln!(
        "{} of {jobs} submissions acknowledged in {:.1?}",
        acknowledged.len(),
        started.elapsed()
    );

    // Every job ends: nothing left anywhere.
    eventually(Duration::from_secs(300), "every job has finished", || {
        CLUSTERS.iter().all(|cluster| {
            live.try_ask("bjobs", cluster, &[])
                .is_ok_and(|jobs| jobs.as_array().is_some_and(Vec::is_empty))
        })
    });
    // Every execution cluster's `bjobs -a` agrees with its slots: each job
    // once, ended, and every slot free.
    for cluster in &CLUSTERS[1..] {
        let rows = live.ask("bjobs", cluster, &["-a"]);
        listed_once(&rows, cluster, seed);
        let live_rows: Vec<&serde_json::Value> = rows
            .as_array()
            .expect("rows")
            .iter()
            .filter(|row| row["finish_time"].is_null())
            .collect();
        assert!(
            live_rows.is_empty(),
            "seed {seed}: {cluster} lists unfinished jobs once every job ended: {live_rows:?}"
        );
        let hosts = live.ask("bhosts", cluster, &[]);
        let busy: u64 = hosts
            .as_array()
            .expect("hosts")
            .iter()
            .map(|host| host["njobs"].as_u64().expect("njobs"))
            .sum();
        assert_eq!(busy, 0, "seed {seed}: {cluster}'s slots: {hosts}");
    }
    // `bjobs` answers from the member's memory; the journal follows within
    // a sync. Wait until every end is durable before the last kill (a
    // job's end that never reaches a journal fails here, by timeout).
    eventually(
        Duration::from_secs(60),
        "every end is in the journals",
        || {
            let gone = sources_gone(&live);
            let finished: BTreeSet<u64> = CLUSTERS[1..]
                .iter()
                .flat_map(|cluster| history(&live, cluster))
                .filter_map(|record| match record {
                    JournalRecord::JobGone {
                        finished: Some(done),
                        ..
                    } => Some(done.source_job),
                    _ => None,
                })
                .collect();
            acknowledged
                .iter()
                .all(|id| gone.contains(id) && finished.contains(id))
        },
    );
    for process in &mut processes {
        process.kill();
    }

    // The journals' history: where each of Cluster1's jobs finished.
    let mut finished: BTreeMap<u64, Vec<(String, u64)>> = BTreeMap::new();
    for cluster in &CLUSTERS[1..] {
        let mut started_here: BTreeSet<u64> = BTreeSet::new();
        for record in history(&live, cluster) {
            match record {
                JournalRecord::Job { image, .. }
                    if image.state == mcfed_cluster::ImageState::Running =>
                {
                    started_here.insert(image.id);
                }
                JournalRecord::JobGone {
                    id,
                    finished: Some(done),
                } => {
                    assert!(
                        started_here.contains(&id),
                        "seed {seed}: {cluster} job {id} finished without having started"
                    );
                    finished
                        .entry(done.source_job)
                        .or_default()
                        .push(((*cluster).to_owned(), id));
                }
                _ => {}
            }
        }
    }
    let twice: Vec<_> = finished.iter().filter(|(_, at)| at.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "seed {seed}: finished more than once: {twice:?}"
    );
    let lost: Vec<u64> = acknowledged
        .iter()
        .copied()
        .filter(|id| !finished.contains_key(id))
        .collect();
    assert!(
        lost.is_empty(),
        "seed {seed}: acknowledged but never finished: {lost:?}"
    );
    // Cluster1 heard every acknowledged job end.
    let gone = sources_gone(&live);
    let unheard: Vec<u64> = acknowledged
        .iter()
        .copied()
        .filter(|id| !gone.contains(id))
        .collect();
    assert!(
        unheard.is_empty(),
        "seed {seed}: Cluster1 never heard these end: {unheard:?}"
    );
    let taken_back = std::fs::read_to_string(live.log("Cluster1"))
        .map(|log| {
            log.lines()
                .filter(|line| line.contains("its jobs that had not started come back"))
                .filter(|line| !line.contains("jobs=0"))
                .count()
        })
        .unwrap_or(0);
    eprintln!(
        "seed {seed}: {} acknowledged jobs, each finished once ({} at Cluster2, {} at Cluster3); {} kills; {taken_back} take-backs; {:.1?}",
        acknowledged.len(),
        finished.values().filter(|at| at[0].0 == "Cluster2").count(),
        finished.values().filter(|at| at[0].0 == "Cluster3").count(),
        plan.len(),
        started.elapsed()
    );
}

/// The most slots an execution cluster of the scenario has (2 hosts of 8).
const SLOTS: u64 = 16;

/// `rows`, a cluster's `bjobs -a`, list each job once, in one state: an
/// end only for DONE and EXIT, never before the job's start, and no more
/// slots running or suspended than the cluster has. (A job withdrawn, then
/// kept after a crash, was listed twice: RUN with an end before its start,
/// and as it ran.)
fn listed_once(rows: &serde_json::Value, cluster: &str, seed: u64) {
    let rows = rows.as_array().expect("rows");
    let mut seen = BTreeSet::new();
    let mut holding = 0;
    for row in rows {
        let id = row["job_id"].as_u64().expect("id");
        assert!(
            seen.insert(id),
            "seed {seed}: {cluster} lists job {id} twice: {rows:?}"
        );
        let stat = row["stat"].as_str().expect("stat");
        let ended = matches!(stat, "DONE" | "EXIT");
        assert_eq!(
            row["finish_time"].is_null(),
            !ended,
            "seed {seed}: {cluster} job {id} is {stat} with finish time {}",
            row["finish_time"]
        );
        if let (Some(start), Some(finish)) =
            (row["start_time"].as_f64(), row["finish_time"].as_f64())
        {
            assert!(
                finish >= start,
                "seed {seed}: {cluster} job {id} finished at {finish} before its start at {start}"
            );
        }
        if matches!(stat, "RUN" | "SSUSP" | "USUSP") {
            holding += row["slots"].as_u64().expect("slots");
        }
    }
    assert!(
        holding <= SLOTS,
        "seed {seed}: {cluster} lists {holding} slots in use, of {SLOTS}: {rows:?}"
    );
}
