//! What a scenario's TOML keeps of LSF files beyond the model: the
//! comment lines `mcfed import lsf` writes above a `[[cluster.queue]]` or
//! `[[cluster.host]]` table — free comments (those above the queue's
//! `Begin Queue`) and `# KEY = "value"` lines for the LSF values mcfed
//! keeps but does not model (a queue's DESCRIPTION, a host's model and
//! type). `mcfed export lsf` reads them back with [`notes`] and writes
//! them into the LSF files again, so LSF → TOML → LSF keeps them.

use std::collections::BTreeMap;

/// The LSF keys kept as `# KEY = "value"` comments.
pub const KEPT_KEYS: [&str; 3] = ["DESCRIPTION", "model", "type"];

/// The notes of one table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableNotes {
    /// Free comment lines, in order, without their `#`.
    pub comments: Vec<String>,
    /// The kept values: (LSF key, value).
    pub kept: Vec<(String, String)>,
}

impl TableNotes {
    /// The kept value of `key`.
    pub fn kept(&self, key: &str) -> Option<&str> {
        self.kept
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    fn is_empty(&self) -> bool {
        self.comments.is_empty() && self.kept.is_empty()
    }
}

/// The notes of one cluster: its queues' and hosts', by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterNotes {
    /// By queue name.
    pub queues: BTreeMap<String, TableNotes>,
    /// By host name.
    pub hosts: BTreeMap<String, TableNotes>,
}

/// The notes of the scenario file at `path` (read as every configuration
/// file is: at most [`crate::limits::MAX_FILE_BYTES`]).
pub fn read(path: &std::path::Path) -> Result<BTreeMap<String, ClusterNotes>, String> {
    let text = crate::grammar::lines::read_bounded(path, &path.display().to_string())?;
    Ok(notes(&text))
}

/// The notes of every `[[cluster]]` of a scenario's TOML, by cluster name.
/// Tables are known by their `name = "…"` line; a comment block counts
/// when it stands right above the table's header (no blank line between).
pub fn notes(toml: &str) -> BTreeMap<String, ClusterNotes> {
    let mut clusters: BTreeMap<String, ClusterNotes> = BTreeMap::new();
    let mut block: Vec<&str> = Vec::new();
    let mut current: Option<Table> = None;
    let mut cluster: Option<String> = None;
    for line in toml.lines() {
        let trimmed = line.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            block.push(comment.strip_prefix(' ').unwrap_or(comment));
            continue;
        }
        let pending = std::mem::take(&mut block);
        if trimmed.starts_with('[') {
            current = match trimmed {
                "[[cluster]]" => {
                    cluster = None;
                    Some(Table::Cluster)
                }
                "[[cluster.queue]]" => Some(Table::Queue(parse_block(&pending))),
                "[[cluster.host]]" => Some(Table::Host(parse_block(&pending))),
                _ => None,
            };
            continue;
        }
        let Some(name) = name_of(trimmed) else {
            continue;
        };
        match current.take() {
            Some(Table::Cluster) => {
                clusters.entry(name.clone()).or_default();
                cluster = Some(name);
            }
            Some(Table::Queue(notes)) | Some(Table::Host(notes)) if notes.is_empty() => {}
            Some(Table::Queue(notes)) => {
                if let Some(cluster) = cluster.as_ref().and_then(|c| clusters.get_mut(c)) {
                    cluster.queues.insert(name, notes);
                }
            }
            Some(Table::Host(notes)) => {
                if let Some(cluster) = cluster.as_ref().and_then(|c| clusters.get_mut(c)) {
                    cluster.hosts.insert(name, notes);
                }
            }
            None => {}
        }
    }
    clusters
}

/// The table whose `name` line is awaited.
enum Table {
    Cluster,
    Queue(TableNotes),
    Host(TableNotes),
}

/// `name = "…"`: the name.
fn name_of(line: &str) -> Option<String> {
    let (key, _) = line.split_once('=')?;
    if key.trim() != "name" {
        return None;
    }
    let value: toml::Table = toml::from_str(line).ok()?;
    value.get("name")?.as_str().map(str::to_owned)
}

/// A comment block: `KEY = "value"` lines of the kept keys, and the
/// other lines as free comments.
fn parse_block(lines: &[&str]) -> TableNotes {
    let mut notes = TableNotes::default();
    for line in lines {
        match kept_line(line) {
            Some(kept) => notes.kept.push(kept),
            None => notes.comments.push((*line).to_owned()),
        }
    }
    notes
}

fn kept_line(line: &str) -> Option<(String, String)> {
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    if !KEPT_KEYS.contains(&key) {
        return None;
    }
    let value: toml::Table = toml::from_str(line).ok()?;
    let text = value.get(key)?.as_str()?;
    Some((key.to_owned(), text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_blocks_above_queues_and_hosts_are_read_back() {
        let toml = r#"# Imported by mcfed
# Cluster C1 from dir
[[cluster]]
name = "C1"

# model = "XeonE5"
# type = "LINUX86"
[[cluster.host]]
name = "h1"  # lsf.cluster.C1:5
MXJ = 4

[[cluster.host]]
name = "h2"

# The queue of "everyone".
#
# DESCRIPTION = "Say \"hi\" # not a comment"
[[cluster.queue]]
name = "normal"

# detached

[[cluster.queue]]
name = "other"
"#;
        let notes = notes(toml);
        let c1 = &notes["C1"];
        assert_eq!(c1.hosts["h1"].kept("model"), Some("XeonE5"));
        assert_eq!(c1.hosts["h1"].kept("type"), Some("LINUX86"));
        assert!(!c1.hosts.contains_key("h2"));
        let normal = &c1.queues["normal"];
        assert_eq!(normal.comments, ["The queue of \"everyone\".", ""]);
        assert_eq!(
            normal.kept("DESCRIPTION"),
            Some("Say \"hi\" # not a comment")
        );
        assert!(!c1.queues.contains_key("other"));
    }
}
