//! lsf.shared (the clusters, the hosts' types, models and Boolean
//! resources), lsf.cluster.NAME (LSF's Host columns; mcfed's own in an
//! EmulatedHost section on `#mcfed` lines) and lsb.hosts (MXJ, JL/U).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use mcfed_cluster::ClusterConfig;

use super::{ExportCluster, HEADER, cell};
use crate::grammar::MCFED_PREFIX;

/// A host's model or type as its notes keep it, else `!` (LSF detects it).
fn kind<'a>(cluster: &ExportCluster<'a>, host: &str, key: &str) -> Option<&'a str> {
    cluster
        .notes?
        .hosts
        .get(host)?
        .kept(key)
        .filter(|value| !value.is_empty() && !value.contains(char::is_whitespace))
}

/// The kinds (`model`, `type`) the hosts of `clusters` name.
fn kinds<'a>(clusters: &[ExportCluster<'a>], key: &str) -> BTreeSet<&'a str> {
    clusters
        .iter()
        .flat_map(|cluster| {
            cluster
                .config
                .hosts
                .iter()
                .filter_map(move |host| kind(cluster, &host.name, key))
        })
        .collect()
}

pub(super) fn shared(clusters: &[ExportCluster<'_>]) -> String {
    let mut text = format!("{HEADER}\nBegin Cluster\nClusterName\n");
    for cluster in clusters {
        let _ = writeln!(text, "{}", cluster.config.name);
    }
    text.push_str("End Cluster\n");
    let types = kinds(clusters, "type");
    if !types.is_empty() {
        text.push_str("\nBegin HostType\nTYPENAME\n");
        for name in types {
            let _ = writeln!(text, "{name}");
        }
        text.push_str("End HostType\n");
    }
    let models = kinds(clusters, "model");
    if !models.is_empty() {
        text.push_str("\n# CPU factors are not modelled by mcfed: 1.0 for every model.\nBegin HostModel\nMODELNAME            CPUFACTOR\n");
        for name in models {
            let _ = writeln!(text, "{name:<20} 1.0");
        }
        text.push_str("End HostModel\n");
    }
    let resources: BTreeSet<&str> = clusters
        .iter()
        .flat_map(|cluster| cluster.config.hosts.iter())
        .flat_map(|host| host.resources.iter().map(String::as_str))
        .collect();
    if !resources.is_empty() {
        text.push_str("\nBegin Resource\nRESOURCENAME  TYPE     DESCRIPTION\n");
        for resource in resources {
            let _ = writeln!(text, "{resource:<13} Boolean  ()");
        }
        text.push_str("End Resource\n");
    }
    text
}

pub(super) fn hosts(config: &ClusterConfig) -> String {
    let mut text = format!("{HEADER}\nBegin Host\nHOST_NAME            MXJ     JL/U\n");
    for host in &config.hosts {
        let _ = writeln!(
            text,
            "{:<20} {:<7} {}",
            host.name,
            host.max_slots,
            cell(host.user_slot_limit)
        );
    }
    text.push_str("End Host\n");
    text
}

pub(super) fn cluster_file(cluster: &ExportCluster<'_>) -> String {
    let config = cluster.config;
    let mut text = format!(
        "{HEADER}\nBegin Host\nHOSTNAME             model    type     server  r1m  mem  swp  RESOURCES\n"
    );
    for host in &config.hosts {
        let resources = if host.resources.is_empty() {
            "()".to_owned()
        } else {
            format!("({})", host.resources.join(" "))
        };
        let _ = writeln!(
            text,
            "{:<20} {:<8} {:<8} 1       ()   ()   ()   {resources}",
            host.name,
            kind(cluster, &host.name, "model").unwrap_or("!"),
            kind(cluster, &host.name, "type").unwrap_or("!"),
        );
    }
    text.push_str("End Host\n");
    let emulated: Vec<String> = config
        .hosts
        .iter()
        .filter(|host| {
            host.processors.is_some() || host.gpus > 0 || host.memory_mb > 0 || host.closed
        })
        .map(|host| {
            let memory = (host.memory_mb > 0).then_some(host.memory_mb);
            let gpus = (host.gpus > 0).then_some(host.gpus);
            format!(
                "{MCFED_PREFIX} {:<20} {:<6} {:<6} {:<7} {}",
                host.name,
                cell(host.processors),
                cell(gpus),
                cell(memory),
                if host.closed { "Y" } else { "()" }
            )
        })
        .collect();
    if !emulated.is_empty() {
        let _ = write!(
            text,
            "\n# mcfed's own host columns (docs/lsf-import.md): what lshosts and\n# badmin hclose would say of each emulated host. LSF reads these lines\n# as comments.\n{MCFED_PREFIX} Begin EmulatedHost\n{MCFED_PREFIX} HOSTNAME             ncpus  ngpus  maxmem  closed\n"
        );
        for line in emulated {
            let _ = writeln!(text, "{}", line.trim_end());
        }
        let _ = writeln!(text, "{MCFED_PREFIX} End EmulatedHost");
    }
    text
}
