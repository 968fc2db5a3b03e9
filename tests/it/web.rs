//! The live page (`--web`) and the HTML report (`mcfed report --html`).
//!
//! In a real browser (headless Chromium, `common::browser`): a launched
//! federation's page loads with no console error, shows every cluster,
//! plots, the counters held beside the truth, and a job submitted with
//! `mcfed bsub` shows up in its decision stream within seconds; the run's
//! HTML report opens and its search finds that job. Without Chromium the
//! test is skipped with a message, except in CI (`CI`, or
//! `MCFED_REQUIRE_BROWSER=1`), where that fails it.
//!
//! Over plain HTTP: a single `mcfed cluster --web` serves its own page,
//! answers GET only, and only requests for its own address.
//!
//! The browser test's screenshot of the live page goes to the test's
//! scratch directory; with `MCFED_UPDATE_SCREENSHOTS=1` it also replaces
//! the README's (`docs/img/live-page.png`).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::browser::{Browser, chromium_or_skip};
use common::live::cluster_args;
use common::{MCFED, mcfed, root, succeeded};

/// The scenario the browser watches: four clusters, local work coming and
/// going, a job forwarded every 5 s, faults on (so the oracle judges every
/// decision). 35 emulated minutes: 35 s of wall time at speed 60.
const CHURN: &str = "scenarios/chaos/churn.toml";
const SPEED: &str = "60";

/// A child process killed when dropped, whose standard error is read on a
/// thread: the live page's address is sent back, the rest kept.
struct Running {
    child: Child,
    page: mpsc::Receiver<String>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Running {
    fn start(args: &[&str], stdout: Stdio) -> Running {
        let mut child = Command::new(MCFED)
            .args(args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcfed starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tell, page) = mpsc::channel();
        let kept = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let keep = kept.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // Kept before the URL is told, so that whoever waited for
                // the URL finds its line in what was kept.
                if let Ok(mut kept) = keep.lock() {
                    kept.push_str(&line);
                    kept.push('\n');
                }
                if let Some((_, url)) = line.split_once(mcfed_web::ANNOUNCEMENT) {
                    let url = url.split_whitespace().next().unwrap_or_default();
                    let _ = tell.send(url.trim_end_matches('/').to_owned());
                }
            }
        });
        Running {
            child,
            page,
            stderr: kept,
        }
    }

    /// The live page's URL, without the trailing slash.
    fn page_url(&self) -> String {
        self.page
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no live page announced: {}", self.stderr()))
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .map(|text| text.clone())
            .unwrap_or_default()
    }

    /// Waits for it to exit by itself, at most `limit`.
    fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running after {limit:?}: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("web-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn a_launched_federation_watched_live_and_its_report_in_a_browser() {
    let test = "a_launched_federation_watched_live_and_its_report_in_a_browser";
    let Some(chromium) = chromium_or_skip(test) else {
        return;
    };
    let dir = scratch("browser");
    let certs = dir.join("certs");
    let made = mcfed(&["certs", "init", utf8(&certs), "--scenario", CHURN]);
    succeeded(&made);
    let run = dir.join("run.jsonl");
    let mut launch = Running::start(
        &[
            "launch",
            CHURN,
            "--certs",
            utf8(&certs),
            "--base-port",
            "0",
            "--speed",
            SPEED,
            "--web",
            "127.0.0.1:0",
            "--report",
            "json",
            "--events",
        ],
        Stdio::from(std::fs::File::create(&run).expect("run file")),
    );
    let url = launch.page_url();
    let mut browser = Browser::start(&chromium, 1400, 1000);
    browser.open(&format!("{url}/"));
    browser.wait_for(
        "every cluster's panel, up",
        "document.querySelectorAll('#clusters .cluster.up').length === 4",
        Duration::from_secs(30),
    );
    let names = browser
        .eval("[...document.querySelectorAll('#clusters .cluster h2')].map(h => h.textContent)");
    assert_eq!(
        names,
        serde_json::json!(["Cluster1", "Cluster2", "Cluster3", "Cluster4"])
    );

    // A job submitted by hand shows up in the decision stream.
    let address = browser.eval(
        "fetch('/api/state').then(r => r.json()).then(s => s.clusters.find(c => c.cluster === 'Cluster1').address)",
    );
    let address = address.as_str().expect("Cluster1's address").to_owned();
    let submitted = mcfed(&[
        "bsub",
        "--cluster",
        "Cluster1",
        "--address",
        &address,
        "--certs",
        utf8(&certs),
        "-q",
        "send",
        "-J",
        "webjob",
        "--run-time",
        "1m",
    ]);
    succeeded(&submitted);
    let took = browser.wait_for(
        "the bsub job in the decision stream",
        "[...document.querySelectorAll('#decisions .decision pre')].some(p => p.textContent.includes('webjob (job '))",
        Duration::from_secs(10),
    );
    eprintln!("the submitted job showed in the stream after {took:?}");
    // The decision reads as `mcfed run` prints it: candidates and verdicts.
    let shown = browser.eval(
        "[...document.querySelectorAll('#decisions .decision pre')].find(p => p.textContent.includes('webjob (job ')).textContent",
    );
    let shown = shown.as_str().unwrap_or_default();
    assert!(shown.contains("| candidate"), "{shown}");
    assert!(shown.contains("reason: "), "{shown}");

    // The counters Cluster1 holds of each execution cluster's queue, with
    // their age and the truth beside them, in that cluster's panel; the
    // plots have lines.
    browser.wait_for(
        "held counters with their truth",
        "['Cluster2', 'Cluster3', 'Cluster4'].every(c => [...document.querySelectorAll(`.cluster[data-cluster=${c}] table.held tbody tr`)].some(r => r.cells[0].textContent === 'Cluster1' && /^[0-9]+s$/.test(r.cells[2].textContent) && /^[0-9]+ \\/ [0-9]+$/.test(r.cells[3].textContent)))",
        Duration::from_secs(20),
    );
    let lines = browser.eval(
        "[document.querySelectorAll('#clusters .cluster svg polyline').length, document.querySelectorAll('#staleness svg polyline').length, document.querySelectorAll('#staleness svg circle').length]",
    );
    let lines: Vec<u64> = serde_json::from_value(lines).expect("counts");
    assert!(lines.iter().all(|&count| count > 0), "plots: {lines:?}");
    let problems = browser.problems();
    assert!(problems.is_empty(), "the live page: {problems:#?}");
    // The screenshot once the plots have some history (the launch runs
    // to its end anyway).
    browser.wait_for(
        "12 emulated minutes",
        "live.clusters.every(c => c.now > 720)",
        Duration::from_secs(60),
    );
    let shot = dir.join("live-page.png");
    browser.screenshot(&shot, 1400, 1700);
    if std::env::var("MCFED_UPDATE_SCREENSHOTS").is_ok_and(|value| value == "1") {
        std::fs::copy(&shot, root().join("docs/img/live-page.png")).expect("update screenshot");
    }

    // The run ends: the page says so, and keeps what it showed.
    let status = launch.wait(Duration::from_secs(120));
    assert!(status.success(), "the launch failed: {}", launch.stderr());
    browser.wait_for(
        "the page says the run ended",
        "document.getElementById('status').textContent === 'ended' && document.getElementById('ended').textContent.includes('the run ended') && document.querySelectorAll('#clusters .cluster').length === 4",
        Duration::from_secs(5),
    );
    // A normal end is neutral: every panel stopped, none down with the
    // error its last poll met while the processes shut down.
    browser.wait_for(
        "every panel says stopped",
        "document.querySelectorAll('#clusters .cluster.stopped').length === 4 && document.querySelectorAll('#clusters .cluster .error').length === 0",
        Duration::from_secs(5),
    );
    let problems = browser.problems();
    assert!(
        problems.is_empty(),
        "the live page, at the end: {problems:#?}"
    );

    // The run's report, as one page: its search finds the job.
    let page = dir.join("report.html");
    let report = mcfed(&["report", utf8(&run), "--html", utf8(&page)]);
    succeeded(&report);
    browser.open(&format!("file://{}", utf8(&page)));
    browser.wait_for(
        "the report's jobs",
        "document.readyState === 'complete' && document.querySelectorAll('details.job').length > 100",
        Duration::from_secs(20),
    );
    browser.type_into("#job-search", "webjob");
    // Found alone, unfolded, with its decisions (one, or more if it was
    // refused or sent back and decided again) and their verdicts.
    let found = browser.eval(
        "[...document.querySelectorAll('details.job')].filter(d => !d.hidden).slice(0, 5).map(d => [d.dataset.job, d.open, d.querySelectorAll('pre.decision').length > 0, d.textContent.includes('verdict')])",
    );
    assert_eq!(
        found,
        serde_json::json!([["webjob", true, true, true]]),
        "the search for webjob"
    );
    let plots = browser.eval("document.querySelectorAll('figure.plot svg').length");
    assert!(plots.as_u64() >= Some(2), "inline plots: {plots}");
    let problems = browser.problems();
    assert!(problems.is_empty(), "the report: {problems:#?}");
}

/// One HTTP/1.1 request to `address` naming `host`; the status and body.
fn http(address: &str, method: &str, path: &str, host: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = Vec::new();
    // An event stream never ends: its first frame is enough.
    let mut buffer = [0u8; 8192];
    while let Ok(read) = stream.read(&mut buffer) {
        if read == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&answer);
        if path == "/events" && text.contains("\n\n") && text.contains("data:") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn a_cluster_process_serves_its_own_page_read_only_and_locally() {
    let dir = scratch("cluster");
    let certs = dir.join("certs");
    let scenario = root().join("scenarios/forwarding/example1-count-preemptable.toml");
    let made = mcfed(&["certs", "init", utf8(&certs), "--scenario", utf8(&scenario)]);
    succeeded(&made);
    let mut args = cluster_args(&scenario, &certs, "Cluster2");
    args.extend(["--listen", "127.0.0.1:0", "--base-port", "0", "--web", "0"].map(str::to_owned));
    // `--web 0`: port 0 on 127.0.0.1, the OS's pick.
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cluster = Running::start(&args, Stdio::null());
    let url = cluster.page_url();
    assert!(
        cluster.stderr().contains("(read-only, this machine only)"),
        "{}",
        cluster.stderr()
    );
    let address = url.trim_start_matches("http://").to_owned();
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    let host = address.clone();
    common::eventually(Duration::from_secs(20), "Cluster2 is up", || {
        let (status, body) = http(&address, "GET", "/api/state", &host);
        status == 200 && body.contains("\"status\":\"up\"")
    });
    let (status, body) = http(&address, "GET", "/api/state", &host);
    assert_eq!(status, 200);
    let state: Value = serde_json::from_str(&body).expect("JSON state");
    assert_eq!(state["clusters"][0]["cluster"], "Cluster2");
    let queues = state["clusters"][0]["queues"].as_array().expect("queues");
    assert!(
        queues.iter().any(|queue| queue["queue"] == "HighPriority"
            && queue["run"] == 70
            && queue["pend"] == 20),
        "{queues:?}"
    );
    // The page and its files.
    let (status, page) = http(&address, "GET", "/", &host);
    assert_eq!(status, 200);
    assert!(page.contains("<script src=\"/app.js\""), "{page}");
    for file in ["/app.js", "/style.css"] {
        assert_eq!(http(&address, "GET", file, &host).0, 200, "{file}");
    }
    // Pushed, not polled: the event stream starts with everything.
    let (status, events) = http(&address, "GET", "/events", &host);
    assert_eq!(status, 200);
    let first = events
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("a first frame");
    let first: Value = serde_json::from_str(first).expect("a JSON frame");
    assert_eq!(first["full"], true);
    // Nothing changes state: any other method is refused.
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        for path in ["/", "/api/state", "/events"] {
            assert_eq!(
                http(&address, method, path, &host).0,
                405,
                "{method} {path}"
            );
        }
    }
    // Only requests for its own address (no DNS rebinding).
    assert_eq!(
        http(&address, "GET", "/api/state", "attacker.example").0,
        403
    );
    let port = address.rsplit_once(':').expect("port").1;
    assert_eq!(
        http(&address, "GET", "/", &format!("localhost:{port}")).0,
        200
    );
    assert_eq!(http(&address, "GET", "/nothing", &host).0, 404);
    // An address in use, or none, is refused before anything starts.
    for (web, says) in [
        (address.as_str(), "cannot serve the live page on "),
        ("nowhere", "--web `nowhere`: "),
    ] {
        let refused = mcfed(&[
            "launch",
            utf8(&scenario),
            "--certs",
            utf8(&certs),
            "--base-port",
            "0",
            "--web",
            web,
        ]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains(mcfed_web::ANNOUNCEMENT), "{stderr}");
    }
    drop(cluster);
}
