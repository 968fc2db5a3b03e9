//! End-to-end: clusters on separate hosts. Three `mcfed cluster` processes
//! bound to distinct loopback addresses (127.0.0.2, .3, .4) from a hosts
//! file, started with the commands `mcfed launch --print-commands` prints,
//! with certificates naming those addresses: they connect and forward. With
//! a certificate naming the wrong address, the link to that cluster is
//! refused and says why.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common;
use common::{MCFED, Mcfed, eventually, stderr, stdout};

/// Cluster processes, killed when dropped.
struct Processes(Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `mcfed` in `dir`; returns (success, stdout, stderr).
fn mcfed_in(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Mcfed::new(args).in_dir(dir).run();
    (output.status.success(), stdout(&output), stderr(&output))
}

/// A UDP port free on `host` now.
fn free_port(host: &str) -> u16 {
    std::net::UdpSocket::bind((host, 0))
        .and_then(|socket| socket.local_addr())
        .expect("a free port")
        .port()
}

/// Writes the scenario and a hosts file putting Cluster1..3 on
/// 127.0.0.2..4.
fn federation(dir: &Path) {
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/forwarding/example1-count-preemptable.toml"),
        dir.join("scenario.toml"),
    )
    .expect("copy the scenario");
    let hosts: String = ["Cluster1", "Cluster2", "Cluster3"]
        .iter()
        .enumerate()
        .map(|(index, cluster)| {
            let host = format!("127.0.0.{}", index + 2);
            format!("{cluster}  {host}:{}\n", free_port(&host))
        })
        .collect();
    std::fs::write(dir.join("hosts"), format!("# cluster address\n{hosts}")).expect("hosts");
}

/// Starts every `mcfed cluster` command `launch --print-commands` printed,
/// with certificate directory `certs`; their standard errors go to
/// NAME.err.
fn start_printed(dir: &Path, certs: &str) -> Processes {
    let (ok, printed, errors) = mcfed_in(
        dir,
        &[
            "launch",
            "scenario.toml",
            "--hosts",
            "hosts",
            "--print-commands",
            "--certs",
            certs,
            "--start-in",
            "2s",
        ],
    );
    assert!(ok, "{errors}");
    assert!(
        printed.contains(&format!(
            "mcfed certs init {certs} --scenario scenario.toml --hosts hosts"
        )),
        "{printed}"
    );
    assert!(printed.contains("# Cluster2 on 127.0.0.3, listening on 127.0.0.3:"));
    let mut children = Vec::new();
    for line in printed.lines().filter(|l| l.starts_with("mcfed cluster ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let name = words[words.iter().position(|&w| w == "--name").expect("--name") + 1];
        let stderr = std::fs::File::create(dir.join(format!("{name}.err"))).expect("stderr");
        children.push(
            Command::new(MCFED)
                .args(&words[1..])
                .args(["--report", "none", "--exit-on-stdin-eof"])
                .current_dir(dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .expect("start a cluster"),
        );
    }
    assert_eq!(children.len(), 3, "{printed}");
    Processes(children)
}

/// Cluster1's forwarding links as `bclusters` prints them.
fn links(dir: &Path, certs: &str) -> String {
    let (_, out, err) = mcfed_in(
        dir,
        &[
            "bclusters",
            "--cluster",
            "Cluster1",
            "--certs",
            certs,
            "--scenario",
            "scenario.toml",
            "--hosts",
            "hosts",
        ],
    );
    out + &err
}

fn link_is(links: &str, cluster: &str, status: &str) -> bool {
    links.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words.len() >= 5 && words[3] == cluster && words[4] == status
    })
}

#[test]
fn clusters_on_distinct_addresses_connect_with_certificates_naming_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (ok, _, errors) = mcfed_in(
        dir.path(),
        &[
            "certs",
            "init",
            "certs",
            "--scenario",
            "scenario.toml",
            "--hosts",
            "hosts",
        ],
    );
    assert!(ok, "{errors}");
    let _processes = start_printed(dir.path(), "certs");
    eventually(Duration::from_secs(30), "both links are up", || {
        let links = links(dir.path(), "certs");
        link_is(&links, "Cluster2", "ok") && link_is(&links, "Cluster3", "ok")
    });
    let target = [
        "--cluster",
        "Cluster1",
        "--certs",
        "certs",
        "--scenario",
        "scenario.toml",
        "--hosts",
        "hosts",
    ];
    let mut bsub = vec!["bsub", "-q", "send", "-J", "probe"];
    bsub.extend(target);
    let (ok, _, errors) = mcfed_in(dir.path(), &bsub);
    assert!(ok, "{errors}");
    // Example 1: the job goes to HighPriority@Cluster2 and runs there.
    eventually(Duration::from_secs(30), "the job runs on Cluster2", || {
        let (_, out, _) = mcfed_in(
            dir.path(),
            &[
                "bjobs",
                "--cluster",
                "Cluster2",
                "--certs",
                "certs",
                "--scenario",
                "scenario.toml",
                "--hosts",
                "hosts",
            ],
        );
        out.lines().any(|line| {
            line.contains("probe") && line.contains("RUN") && line.contains("@Cluster1")
        })
    });
}

#[test]
fn a_certificate_for_the_wrong_address_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    // Certificates made from a hosts file that puts Cluster2 elsewhere.
    let hosts = std::fs::read_to_string(dir.path().join("hosts")).expect("hosts");
    let wrong: String = hosts
        .lines()
        .map(|line| match line.strip_prefix("Cluster2  127.0.0.3:") {
            Some(port) => format!("Cluster2  127.0.0.9:{port}\n"),
            None => format!("{line}\n"),
        })
        .collect();
    assert_ne!(wrong, hosts);
    std::fs::write(dir.path().join("wrong-hosts"), wrong).expect("wrong hosts");
    let (ok, _, errors) = mcfed_in(
        dir.path(),
        &[
            "certs",
            "init",
            "wrong",
            "--scenario",
            "scenario.toml",
            "--hosts",
            "wrong-hosts",
        ],
    );
    assert!(ok, "{errors}");
    let _processes = start_printed(dir.path(), "wrong");
    eventually(Duration::from_secs(30), "Cluster3's link is up", || {
        link_is(&links(dir.path(), "wrong"), "Cluster3", "ok")
    });
    let refusal =
        "cluster `Cluster2` was reached at 127.0.0.3, but its certificate is for 127.0.0.9";
    eventually(Duration::from_secs(30), "Cluster1 says why", || {
        std::fs::read_to_string(dir.path().join("Cluster1.err"))
            .is_ok_and(|text| text.contains(refusal))
    });
    let links = links(dir.path(), "wrong");
    assert!(!link_is(&links, "Cluster2", "ok"), "{links}");
}
