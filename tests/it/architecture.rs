//! The crate boundaries of docs/architecture.md, checked on the manifests
//! and the sources: the sans-IO cores and the federation core pull in no
//! runtime or transport; the scenario's configuration knows nothing of run
//! outputs; the report, the live page and the cluster process know nothing
//! of the scenario format; the shells do not depend on the engine; and the
//! modules of the configuration, run and admin crates import each other
//! without a circle.

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
        "mcfed-run",
        "mcfed-chaos",
        "mcfed-admin",
        "mcfed-trace",
    ] {
        assert!(crates.contains_key(core), "{core} is not a workspace crate");
        let deps = closure(&crates, core);
        for forbidden in [
            "actix",
            "actix-rt",
            "tokio",
            "quinn",
            "mcfed-engine",
            "mcfed-actors",
            "mcfed-transport",
            "mcfed-process",
        ] {
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
fn the_configuration_knows_nothing_of_runs_and_the_shells_nothing_of_the_format() {
    let crates = normal_dependencies();
    let configuration = closure(&crates, "mcfed-scenario");
    for output in [
        "mcfed-run",
        "mcfed-admin",
        "mcfed-engine",
        "mcfed-report",
        "mcfed-process",
        "mcfed-launch",
        "mcfed-web",
    ] {
        assert!(
            !configuration.contains(output),
            "mcfed-scenario depends on {output}: {configuration:?}"
        );
    }
    for shell in ["mcfed-report", "mcfed-web", "mcfed-process", "mcfed-admin"] {
        let direct = crates.get(shell).expect("a workspace crate");
        assert!(
            !direct.contains("mcfed-scenario"),
            "{shell} depends on the scenario format: {direct:?}"
        );
        let deps = closure(&crates, shell);
        assert!(
            !deps.contains("mcfed-launch") && !deps.contains("mcfed-sweep"),
            "{shell} depends on what reads scenarios: {deps:?}"
        );
    }
}

/// Each top-level module of `krate` and the top-level modules its files
/// name through `crate::` (items the crate root re-exports count as the
/// module they come from; comments and test modules do not count).
fn module_imports(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates")
        .join(krate)
        .join("src");
    let lib = std::fs::read_to_string(root.join("lib.rs")).expect("lib.rs");
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for line in lib.lines() {
        let line = line.trim();
        let declared = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "))
            .or_else(|| line.strip_prefix("mod "));
        if let Some(name) = declared.and_then(|rest| rest.strip_suffix(';')) {
            modules.insert(name.to_owned(), BTreeSet::new());
        }
        if let Some((module, items)) = line
            .strip_prefix("pub use ")
            .and_then(|rest| rest.split_once("::"))
        {
            for item in items.split(|c: char| !c.is_alphanumeric() && c != '_') {
                if !item.is_empty() {
                    reexported.insert(item.to_owned(), module.to_owned());
                }
            }
        }
    }
    let names: Vec<String> = modules.keys().cloned().collect();
    for module in &names {
        let mut files = vec![root.join(format!("{module}.rs"))];
        collect_sources(&root.join(module), &mut files);
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
            {
                for (at, _) in line.match_indices("crate::") {
                    let name: String = line[at + 7..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let target = if names.contains(&name) {
                        Some(name)
                    } else {
                        reexported.get(&name).cloned()
                    };
                    if let Some(target) = target.filter(|target| target != module) {
                        modules.get_mut(module).expect("a module").insert(target);
                    }
                }
            }
        }
    }
    modules
}

fn collect_sources(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// A circle of imports among `modules`, if there is one.
fn circle(modules: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        modules: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|seen| seen == module) {
            return Some(path[at..].to_vec());
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in modules.get(module).into_iter().flatten() {
            if let Some(found) = visit(next, modules, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    modules
        .keys()
        .find_map(|module| visit(module, modules, &mut Vec::new(), &mut done))
}

#[test]
fn the_split_crates_have_no_import_circles() {
    for krate in ["scenario", "run", "admin"] {
        let modules = module_imports(krate);
        assert!(modules.len() > 2, "{krate}: {modules:?}");
        assert_eq!(circle(&modules), None, "{krate}: {modules:?}");
    }
    // The check finds a circle where there is one.
    let mut planted = BTreeMap::new();
    planted.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    planted.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(circle(&planted).is_some());
}

#[test]
fn shells_do_not_depend_on_the_engine() {
    let crates = normal_dependencies();
    for shell in [
        "mcfed-process",
        "mcfed-launch",
        "mcfed-report",
        "mcfed-actors",
        "mcfed-admin",
        "mcfed-web",
    ] {
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
