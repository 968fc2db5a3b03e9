//! An LSF tree in the conventional layout (tests/lsf/envdir): imported
//! from its LSF_ENVDIR alone, with host ranges, host model and type,
//! resources, groups of groups, `others`, `~` exclusions, mcfed's
//! EmulatedHost section, lsf.conf's keys for both clusters; the same
//! clusters through `--cluster NAME=DIR`, which finds the files beside.

use std::path::{Path, PathBuf};

use super::{ClusterSource, ImportOptions, import};
use crate::doc::{ClusterDoc, FederationDoc, Table};

fn envdir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lsf/envdir/conf")
}

fn imported(options: &ImportOptions, sources: &[ClusterSource]) -> FederationDoc {
    import(sources, options).unwrap_or_else(|error| panic!("imports:\n{error}"))
}

fn cluster<'d>(doc: &'d FederationDoc, name: &str) -> &'d ClusterDoc {
    doc.clusters
        .iter()
        .find(|cluster| cluster.name == name)
        .unwrap_or_else(|| panic!("no cluster {name}"))
}

fn named<'t>(tables: &'t [Table], name: &str) -> &'t Table {
    tables
        .iter()
        .find(|table| table.text("name") == Some(name))
        .unwrap_or_else(|| panic!("no {name}"))
}

fn messages(doc: &FederationDoc) -> Vec<String> {
    doc.warnings
        .iter()
        .map(|warning| {
            let at = warning.at.as_ref().map(|at| at.file_name_line());
            format!("{}: {}", at.unwrap_or_default(), warning.message)
        })
        .collect()
}

#[test]
fn a_conventional_tree_is_imported_from_its_envdir_alone() {
    let options = ImportOptions {
        envdirs: vec![envdir()],
        ..ImportOptions::default()
    };
    let doc = imported(&options, &[]);
    let names: Vec<&str> = doc.clusters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["east", "west"]);
    assert_eq!(
        messages(&doc),
        ["lsf.shared:15: column ARCHITECTURE is not modelled; ignored"]
    );
    let east = cluster(&doc, "east");
    let hosts: Vec<&str> = east.hosts.iter().filter_map(|h| h.text("name")).collect();
    assert_eq!(
        hosts,
        [
            "east-m1",
            "east01",
            "east02",
            "east03",
            "east04",
            "east-gpu1",
            "east-gpu2",
            "east-gpu5"
        ]
    );
    let east03 = named(&east.hosts, "east03");
    assert_eq!(east03.int("MXJ"), Some(4));
    assert_eq!(east03.text("model"), Some("XeonE5"));
    assert_eq!(east03.text("type"), Some("LINUX86"));
    assert_eq!(east03.kept("type"), None, "a key now, no longer a comment");
    let gpu = named(&east.hosts, "east-gpu5");
    assert_eq!(gpu.int("MXJ"), Some(2));
    assert_eq!(gpu.text("model"), None, "`!` is left out");
    assert_eq!(
        gpu.get("resources").map(|entry| &entry.value),
        Some(&crate::doc::Value::List(vec!["gpu".into()]))
    );
    let queue = |name: &str| named(&east.queues, name);
    assert_eq!(
        queue("normal").text("HOSTS"),
        Some("east01 east03 east04 east-gpu1 east-gpu2 east-gpu5")
    );
    assert_eq!(
        queue("normal").kept("DESCRIPTION"),
        Some("For normal low priority jobs, on the compute hosts but east02.")
    );
    assert_eq!(
        queue("normal").comment.as_deref(),
        Some("The queue every job lands in unless it asks for another.")
    );
    assert_eq!(queue("any").text("HOSTS"), Some("all"));
    assert_eq!(queue("login").text("HOSTS"), Some("east-m1"));
    assert_eq!(queue("send").text("SNDJOBS_TO"), Some("recv@west"));
    for cluster in &doc.clusters {
        assert_eq!(
            cluster.params.text("LSB_REQUEUE_TO_BOTTOM"),
            Some("Y"),
            "{}",
            cluster.name
        );
    }
    let west = cluster(&doc, "west");
    let facts: Vec<(Option<u64>, Option<u64>, bool)> = west
        .hosts
        .iter()
        .map(|host| {
            (
                host.int("MXJ"),
                host.int("memory_mb"),
                host.get("closed").is_some(),
            )
        })
        .collect();
    assert_eq!(
        facts,
        [
            (Some(8), Some(65536), false),
            (Some(8), Some(65536), false),
            (Some(4), None, true)
        ]
    );
}

#[test]
fn cluster_directories_of_the_tree_find_its_files_beside_them() {
    let sources: Vec<ClusterSource> = ["east", "west"]
        .iter()
        .map(|name| ClusterSource {
            name: (*name).to_owned(),
            dir: envdir().join("lsbatch").join(name).join("configdir"),
        })
        .collect();
    let options = ImportOptions {
        strict: false,
        ..ImportOptions::default()
    };
    let beside = imported(&options, &sources);
    let whole = imported(
        &ImportOptions {
            envdirs: vec![envdir()],
            ..ImportOptions::default()
        },
        &[],
    );
    assert_eq!(messages(&beside), messages(&whole));
    assert_eq!(beside.clusters, whole.clusters);
}

#[test]
fn files_not_found_beside_a_cluster_directory_are_warnings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cluster = dir.path().join("c1");
    std::fs::create_dir(&cluster).expect("dir");
    std::fs::write(
        cluster.join("lsb.hosts"),
        "Begin Host\nHOST_NAME MXJ\nh[1-2] 1\nEnd Host\n",
    )
    .expect("write");
    let source = ClusterSource {
        name: "c1".into(),
        dir: cluster.clone(),
    };
    let doc = imported(&ImportOptions::default(), &[source]);
    let warnings = messages(&doc);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for (warning, file) in warnings
        .iter()
        .zip(["lsf.shared", "lsf.conf", "lsf.cluster.c1"])
    {
        assert!(
            warning.starts_with(&format!(
                ": cluster c1: no {file} beside {}",
                cluster.display()
            )),
            "{warning}"
        );
    }
    let hosts: Vec<&str> = doc.clusters[0]
        .hosts
        .iter()
        .filter_map(|host| host.text("name"))
        .collect();
    assert_eq!(hosts, ["h1", "h2"]);
}

#[test]
fn a_copied_tree_whose_lsf_conf_names_its_sites_paths_falls_back_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let copy = dir.path().join("conf");
    copy_tree(&envdir(), &copy);
    std::fs::write(
        copy.join("lsf.conf"),
        "LSF_CONFDIR=/nonexistent/lsf/conf\nLSB_CONFDIR=/nonexistent/lsf/conf/lsbatch\n",
    )
    .expect("write");
    let doc = imported(
        &ImportOptions {
            envdirs: vec![copy.clone()],
            ..ImportOptions::default()
        },
        &[],
    );
    assert_eq!(doc.clusters.len(), 2);
    let warnings = messages(&doc);
    assert!(
        warnings.iter().any(|w| w.starts_with(
            "lsf.conf:1: LSF_CONFDIR `/nonexistent/lsf/conf` is not a directory here; reading"
        )),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("lsf.conf:2: LSB_CONFDIR `/nonexistent/lsf/conf/lsbatch`")),
        "{warnings:?}"
    );
}

#[test]
fn an_envdir_without_lsf_conf_or_clusters_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let error = import(
        &[],
        &ImportOptions {
            envdirs: vec![dir.path().to_path_buf()],
            ..ImportOptions::default()
        },
    )
    .expect_err("refused");
    assert!(error.to_string().contains("no lsf.conf in it"), "{error}");
    std::fs::write(dir.path().join("lsf.conf"), "").expect("write");
    std::fs::write(
        dir.path().join("lsf.shared"),
        "Begin Cluster\nClusterName\nc1\nEnd Cluster\n",
    )
    .expect("write");
    let error = import(
        &[],
        &ImportOptions {
            envdirs: vec![dir.path().to_path_buf()],
            ..ImportOptions::default()
        },
    )
    .expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("none of the clusters lsf.shared lists (c1) has an lsf.cluster.NAME"),
        "{error}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}
