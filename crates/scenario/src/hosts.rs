//! Hosts files: where each cluster's process runs (`CLUSTER HOST:PORT`, one
//! per line), given to `mcfed certs init`, `mcfed cluster` and `mcfed
//! launch` instead of (or over) the scenario's `address` keys, so that one
//! scenario serves any set of machines.
//!
//! ```text
//! # cluster   address
//! Cluster1    node1.example.org:7101
//! Cluster2    10.1.0.12:7101
//! ```

use std::path::Path;

pub use mcfed_protocol::address::{HostPort, split_address};

use crate::Scenario;
pub use crate::locate::HostsError;

/// The most lines a hosts file may have.
pub const MAX_LINES: usize = 100_000;

/// Loads a scenario and, with `hosts`, sets its clusters' addresses from
/// that hosts file.
pub fn load_with_hosts(
    scenario: &Path,
    hosts: Option<&Path>,
) -> Result<Scenario, crate::ScenarioError> {
    let mut loaded = crate::load(scenario)?;
    if let Some(hosts) = hosts {
        apply(&mut loaded, hosts)?;
    }
    Ok(loaded)
}

/// Reads a hosts file (a regular file of at most
/// [`mcfed_protocol::bounds::CONFIG_FILE`]'s bytes) and sets the address
/// of every cluster it names in `scenario` (replacing the scenario's own). A cluster the scenario does
/// not have, a cluster named twice, or a line that is not `CLUSTER
/// HOST:PORT` is refused with its line.
pub fn apply(scenario: &mut Scenario, path: &Path) -> Result<(), HostsError> {
    let text = mcfed_protocol::bounds::CONFIG_FILE
        .read_to_string(path)
        .map_err(HostsError::Io)?;
    apply_text(scenario, path, &text)
}

/// [`apply`] on the file's text.
pub fn apply_text(scenario: &mut Scenario, path: &Path, text: &str) -> Result<(), HostsError> {
    let mut named: Vec<(usize, usize)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let problem = |message: String| HostsError::Line {
            path: path.to_owned(),
            line: number + 1,
            message,
        };
        if number >= MAX_LINES {
            return Err(problem(format!("more than {MAX_LINES} lines")));
        }
        let line = line.split_once('#').map_or(line, |(before, _)| before);
        let words: Vec<&str> = line.split_whitespace().collect();
        let [cluster, address] = words[..] else {
            if words.is_empty() {
                continue;
            }
            return Err(problem(format!(
                "expected `CLUSTER HOST:PORT`, found {}",
                mcfed_protocol::words::count(words.len() as u64, "word")
            )));
        };
        let Some(index) = scenario
            .clusters
            .iter()
            .position(|spec| spec.config.name.as_str() == cluster)
        else {
            let known: Vec<&str> = scenario
                .clusters
                .iter()
                .map(|spec| spec.config.name.as_str())
                .collect();
            return Err(problem(format!(
                "the scenario has no cluster `{cluster}` (it has {})",
                known.join(", ")
            )));
        };
        if let Some(&(_, first)) = named.iter().find(|(seen, _)| *seen == index) {
            return Err(problem(format!(
                "cluster `{cluster}` is already given on line {first}"
            )));
        }
        if split_address(address).is_none() {
            return Err(problem(format!(
                "`{address}` is not an address of the form host:port"
            )));
        }
        named.push((index, number + 1));
        scenario.clusters[index].address = Some(address.to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        crate::parse(
            "two.toml",
            r#"
name = "two"
[[cluster]]
name = "Cluster1"
host = [{ name = "h1", MXJ = 1 }]
queue = [{ name = "normal", PRIORITY = 30 }]
[[cluster]]
name = "Cluster2"
host = [{ name = "h2", MXJ = 1 }]
queue = [{ name = "normal", PRIORITY = 30 }]
"#,
        )
        .expect("scenario")
    }

    #[test]
    fn a_hosts_file_sets_the_addresses_it_names() {
        let mut scenario = scenario();
        let text = "# cluster address\nCluster2  node2.example.org:7101  # the second\n\n";
        apply_text(&mut scenario, Path::new("hosts"), text).expect("applied");
        assert_eq!(scenario.clusters[0].address, None);
        assert_eq!(
            scenario.clusters[1].address.as_deref(),
            Some("node2.example.org:7101")
        );
    }

    #[test]
    fn bad_lines_are_refused_with_their_line() {
        for (text, expected) in [
            (
                "Cluster1 a:1\nCluster3 b:2\n",
                "hosts:2: the scenario has no cluster `Cluster3`",
            ),
            (
                "Cluster1 a:1\nCluster1 b:2\n",
                "hosts:2: cluster `Cluster1` is already given on line 1",
            ),
            (
                "Cluster1 a\n",
                "hosts:1: `a` is not an address of the form host:port",
            ),
            ("Cluster1 a:99999\n", "is not an address"),
            (
                "Cluster1\n",
                "hosts:1: expected `CLUSTER HOST:PORT`, found 1 word",
            ),
            ("Cluster1 a:1 b:2\n", "found 3 words"),
        ] {
            let error = apply_text(&mut scenario(), Path::new("hosts"), text)
                .expect_err(text)
                .to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }
}
