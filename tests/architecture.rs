//! The crate boundaries of docs/architecture.md, checked on the manifests:
//! the sans-IO cores and the federation core pull in no runtime or
//! transport, and node and report do not depend on the engine.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each workspace crate's normal dependencies, by package name.
fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates = BTreeMap::new();
    let manifests = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|entry| entry.path().join("Cargo.toml"))
        .chain([root.join("Cargo.toml")]);
    for manifest in manifests {
        let text = std::fs::read_to_string(&manifest).expect("manifest");
        let value: toml::Table = text.parse().expect("valid manifest");
        let name = value["package"]["name"]
            .as_str()
            .expect("package name")
            .to_owned();
        let deps = value
            .get("dependencies")
            .and_then(|deps| deps.as_table())
            .map(|deps| deps.keys().cloned().collect())
            .unwrap_or_default();
        crates.insert(name, deps);
    }
    crates
}

/// Everything `name` depends on, through workspace crates.
fn closure(crates: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![name.to_owned()];
    while let Some(next) = stack.pop() {
        for dep in crates.get(&next).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn the_cores_pull_in_no_runtime_or_transport() {
    let crates = normal_dependencies();
    for core in [
        "mcfed-protocol",
        "mcfed-cluster",
        "mcfed-forwarder",
        "mcfed-federation",
        "mcfed-scenario",
    ] {
        assert!(crates.contains_key(core), "{core} is not a workspace crate");
        let deps = closure(&crates, core);
        for forbidden in ["actix", "actix-rt", "tokio", "quinn", "mcfed-engine"] {
            assert!(
                !deps.contains(forbidden),
                "{core} depends on {forbidden}: {deps:?}"
            );
        }
    }
}

#[test]
fn the_journal_knows_nothing_of_mcfed_or_runtimes() {
    let crates = normal_dependencies();
    let deps = closure(&crates, "mcfed-journal");
    assert!(
        deps.iter().all(|dep| !dep.starts_with("mcfed-")
            && !["actix", "tokio", "quinn"].contains(&dep.as_str())),
        "mcfed-journal depends on {deps:?}"
    );
}

#[test]
fn node_and_report_do_not_depend_on_the_engine() {
    let crates = normal_dependencies();
    for shell in ["mcfed-process", "mcfed-report", "mcfed-actors"] {
        let deps = closure(&crates, shell);
        assert!(
            !deps.contains("mcfed-engine"),
            "{shell} depends on the engine: {deps:?}"
        );
    }
    assert!(!closure(&crates, "mcfed-federation").contains("mcfed-scenario"));
}

/// What `cargo tree` says, with every crate on its way: the whole
/// dependency graph, not only the workspace's own manifests.
#[test]
fn cargo_tree_of_the_cores_lists_no_runtime_or_transport() {
    for core in ["mcfed-cluster", "mcfed-forwarder", "mcfed-federation"] {
        let output = std::process::Command::new(env!("CARGO"))
            .args([
                "tree",
                "-e",
                "normal",
                "--prefix",
                "none",
                "--offline",
                "-p",
                core,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "cargo tree -p {core}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let tree = String::from_utf8_lossy(&output.stdout);
        for line in tree.lines() {
            let package = line.split_whitespace().next().unwrap_or_default();
            assert!(
                !matches!(package, "actix" | "actix-rt" | "tokio" | "quinn"),
                "{core} pulls in {line}"
            );
        }
    }
}
