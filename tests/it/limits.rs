//! Numbers from outside are bounded by one rule wherever they enter, with
//! a clear error (file:line and field for a scenario), and never a panic
//! or a runaway allocation: the inputs that used to take the machine down
//! (issue 14) are refused at once. `mcfed validate` says how much memory a
//! scenario needs, and refuses one that cannot fit. `mcfed certs init`
//! keeps an existing CA unless told `--force`.

use crate::common;

use common::{mcfed, succeeded};

/// One cluster with one host and a queue; `extra` is appended.
fn scenario(dir: &std::path::Path, name: &str, host: &str, extra: &str) -> String {
    let text = format!(
        r#"name = "limits"
[[cluster]]
name = "C1"
[[cluster.host]]
name = "h"
{host}
[[cluster.queue]]
name = "normal"
{extra}"#
    );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.to_str().expect("utf-8").to_owned()
}

fn refused(args: &[&str], needle: &str) -> String {
    let output = mcfed(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} was accepted");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    stderr
}

#[test]
fn a_billion_jobs_in_one_entry_is_refused_with_its_line() {
    let dir = tempfile::tempdir().expect("temp");
    let path = scenario(
        dir.path(),
        "jobs.toml",
        "MXJ = 4",
        "[[cluster.job]]\nqueue = \"normal\"\ncount = 1000000000\n",
    );
    let stderr = refused(&["validate", &path], "count = 1000000000 is out of bounds");
    // The line of the field itself (line 11: `count = ...`).
    assert!(stderr.contains("jobs.toml:11:"), "{stderr}");
    assert!(stderr.contains("cluster[0].job[0].count"), "{stderr}");
}

#[test]
fn a_hundred_million_hosts_is_refused() {
    let dir = tempfile::tempdir().expect("temp");
    let path = scenario(dir.path(), "hosts.toml", "count = 100000000\nMXJ = 4", "");
    let stderr = refused(&["validate", &path], "count = 100000000 is out of bounds");
    assert!(stderr.contains("cluster[0].host[0].count"), "{stderr}");
    // The same rule when the scenario is run.
    refused(&["run", &path], "out of bounds");
}

#[test]
fn an_overflowing_mxj_is_refused() {
    let dir = tempfile::tempdir().expect("temp");
    let path = scenario(dir.path(), "mxj.toml", "MXJ = 4294967295", "");
    refused(&["validate", &path], "MXJ = 4294967295 is out of bounds");
    // Within the bound per host, but a cluster's slots must still add up.
    let path = scenario(dir.path(), "sum.toml", "count = 1000000\nMXJ = 1000000", "");
    refused(&["validate", &path], "slots of a cluster");
}

#[test]
fn a_sweep_with_a_zero_interval_is_refused_like_the_scenario_would_be() {
    let dir = tempfile::tempdir().expect("temp");
    let path = scenario(dir.path(), "sweep.toml", "MXJ = 4", "");
    let stderr = refused(
        &["sweep", &path, "--interval", "0s"],
        "MC_PLUGIN_UPDATE_INTERVAL = 0s is out of bounds",
    );
    assert!(stderr.contains("--interval"), "{stderr}");
    let path = scenario(
        dir.path(),
        "zero.toml",
        "MXJ = 4",
        "[params]\nMC_PLUGIN_UPDATE_INTERVAL = \"0s\"\n",
    );
    refused(
        &["validate", &path],
        "MC_PLUGIN_UPDATE_INTERVAL = 0s is out of bounds",
    );
}

#[test]
fn validate_says_how_much_memory_a_scenario_needs_and_refuses_what_cannot_fit() {
    let dir = tempfile::tempdir().expect("temp");
    let path = scenario(
        dir.path(),
        "fits.toml",
        "count = 10\nMXJ = 4",
        "[[cluster.job]]\nqueue = \"normal\"\ncount = 1000\n",
    );
    let output = mcfed(&["validate", &path]);
    let stdout = succeeded(&output);
    assert!(stdout.contains("memory: about"), "{stdout}");
    assert!(stdout.contains("(1000 jobs, 10 hosts"), "{stdout}");
    // A hundred entries of ten million jobs each: every entry is within
    // bounds, the whole is a trillion bytes.
    let entries =
        "[[submit]]\nat = 0\ncluster = \"C1\"\nqueue = \"normal\"\ncount = 10000000\n".repeat(100);
    let path = scenario(dir.path(), "huge.toml", "MXJ = 4", &entries);
    refused(&["validate", &path], "this scenario needs about");
}

#[test]
fn bsub_options_are_bounded_before_anything_is_sent() {
    for (flag, value) in [
        ("-n", "0"),
        ("-n", "99999999999"),
        ("--run-time", "999999d"),
    ] {
        refused(
            &[
                "bsub",
                "--cluster",
                "C1",
                "--address",
                "127.0.0.1:1",
                "-q",
                "normal",
                flag,
                value,
            ],
            "out of bounds",
        );
    }
}

#[test]
fn certs_init_keeps_an_existing_ca_unless_forced() {
    let dir = tempfile::tempdir().expect("temp");
    let certs = dir.path().join("certs");
    let certs = certs.to_str().expect("utf-8");
    let first = mcfed(&["certs", "init", certs, "--clusters", "C1"]);
    succeeded(&first);
    let ca = std::fs::read(dir.path().join("certs/ca.pem")).expect("ca");
    refused(&["certs", "init", certs, "--clusters", "C1"], "--force");
    assert_eq!(
        std::fs::read(dir.path().join("certs/ca.pem")).expect("ca"),
        ca
    );
    let forced = mcfed(&["certs", "init", certs, "--clusters", "C1", "--force"]);
    succeeded(&forced);
    assert_ne!(
        std::fs::read(dir.path().join("certs/ca.pem")).expect("ca"),
        ca
    );
}
