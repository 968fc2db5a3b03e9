//! lsf.shared (the clusters, the hosts' types, models and Boolean
//! resources), lsf.cluster.NAME (LSF's Host columns; mcfed's own in an
//! EmulatedHost section on `#mcfed` lines) and lsb.hosts (MXJ, JL/U).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use mcfed_cluster::ClusterConfig;

use super::{ExportCluster, HEADER, cell};
use crate::grammar::MCFED_PREFIX;

/// A host's model or type: its `model` or `type` key, else as the notes
/// of a TOML imported before hosts had them keep it (`# type = "…"`);
/// `None` is written `!` (LSF detects it).
fn kind<'a>(cluster: &ExportCluster<'a>, host: &str, key: &str) -> Option<&'a str> {
    let config = cluster.config.hosts.iter().find(|h| h.name == host);
    let own = config.and_then(|config| match key {
        "type" => config.host_type.as_deref(),
        _ => config.model.as_deref(),
    });
    own.or_else(|| cluster.notes?.hosts.get(host)?.kept(key))
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

#[cfg(test)]
mod tests {
    use mcfed_cluster::{ClusterConfig, HostConfig};
    use mcfed_protocol::ClusterName;

    use super::*;

    /// A host's `type` and `model` keys are written in lsf.cluster's
    /// columns and named in lsf.shared's HostType and HostModel sections
    /// (issue 27 item 9); a host without them gets `!`.
    #[test]
    fn host_types_and_models_are_exported() {
        let mut config = ClusterConfig::new(ClusterName::new("c").expect("valid"));
        let mut typed = HostConfig::new("x86", 4);
        typed.host_type = Some("LINUX86".into());
        typed.model = Some("XeonE5".into());
        config.hosts = vec![typed, HostConfig::new("plain", 2)];
        let cluster = ExportCluster {
            config: &config,
            forwarder: None,
            notes: None,
        };
        let lines = cluster_file(&cluster);
        assert!(
            lines.contains("x86                  XeonE5   LINUX86  1"),
            "{lines}"
        );
        assert!(
            lines.contains("plain                !        !        1"),
            "{lines}"
        );
        let shared = shared(&[cluster]);
        assert!(
            shared.contains("Begin HostType\nTYPENAME\nLINUX86\nEnd HostType"),
            "{shared}"
        );
        assert!(shared.contains("XeonE5               1.0"), "{shared}");
    }
}
