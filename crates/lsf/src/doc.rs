//! What an import produces: each cluster's configuration as the tables of
//! a scenario's `[[cluster]]` (the scenario's own key names), every value
//! with the place in the LSF files it came from.

use crate::source::{Diagnostic, Location};

/// A scenario value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A whole number.
    Int(u64),
    /// A number.
    Float(f64),
    /// Text (a duration, keywords, space-separated words, …).
    Text(String),
    /// A list of texts (resources).
    List(Vec<String>),
    /// A boolean.
    Bool(bool),
}

/// One key of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The scenario key.
    pub key: String,
    /// Its value.
    pub value: Value,
    /// Where in the LSF files it came from.
    pub from: Option<Location>,
    /// A remark on how it was translated (`60 minutes`).
    pub note: Option<String>,
}

/// An LSF value mcfed does not model but keeps for export: a queue's
/// DESCRIPTION, a host's model and type. The imported TOML holds it as a
/// `# KEY = "value"` comment above its table (scenarios have no such
/// keys), which `mcfed export lsf` reads back ([`crate::notes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// LSF's name for it (`DESCRIPTION`, `model`, `type`).
    pub key: String,
    /// Its value.
    pub value: String,
    /// Where it was read.
    pub from: Option<Location>,
}

/// One scenario table (`[cluster.params]`, one `[[cluster.queue]]`, …).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Its keys, in the order written.
    pub entries: Vec<Entry>,
    /// Comment lines written above the table (those above a queue's
    /// `Begin Queue`).
    pub comment: Option<String>,
    /// LSF values kept for export, written as comments above the table.
    pub kept: Vec<Kept>,
}

impl Table {
    /// Sets `key`, replacing an earlier value.
    pub fn set(&mut self, key: &str, value: Value, from: Option<Location>) -> &mut Entry {
        let entry = Entry {
            key: key.to_owned(),
            value,
            from,
            note: None,
        };
        match self.entries.iter().position(|entry| entry.key == key) {
            Some(index) => {
                self.entries[index] = entry;
                &mut self.entries[index]
            }
            None => {
                self.entries.push(entry);
                let last = self.entries.len() - 1;
                &mut self.entries[last]
            }
        }
    }

    /// The entry of `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.key == key)
    }

    /// The text of `key`, if it is text.
    pub fn text(&self, key: &str) -> Option<&str> {
        match &self.get(key)?.value {
            Value::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The number of `key`, if it is a whole number.
    pub fn int(&self, key: &str) -> Option<u64> {
        match self.get(key)?.value {
            Value::Int(number) => Some(number),
            _ => None,
        }
    }

    /// Keeps LSF's `key` for export.
    pub fn keep(&mut self, key: &str, value: &str, from: Option<Location>) {
        self.kept.retain(|kept| kept.key != key);
        self.kept.push(Kept {
            key: key.to_owned(),
            value: value.to_owned(),
            from,
        });
    }

    /// The value kept for LSF's `key`.
    pub fn kept(&self, key: &str) -> Option<&str> {
        self.kept
            .iter()
            .find(|kept| kept.key == key)
            .map(|kept| kept.value.as_str())
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|entry| entry.key != key);
    }
}

/// One imported cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterDoc {
    /// Its name.
    pub name: String,
    /// The directory it was read from, as given.
    pub dir: String,
    /// `[cluster.params]`: lsb.params.
    pub params: Table,
    /// `[[cluster.host]]`: one per host.
    pub hosts: Vec<Table>,
    /// `[[cluster.queue]]`.
    pub queues: Vec<Table>,
    /// `[[cluster.user]]`: lsb.users' User section.
    pub users: Vec<Table>,
    /// `[[cluster.user_group]]`: lsb.users' UserGroup section.
    pub user_groups: Vec<Table>,
    /// `[[cluster.limit]]`: lsb.resources' Limit sections.
    pub limits: Vec<Table>,
    /// `[[cluster.reservation_policy]]`: lsb.resources'
    /// ResourceReservation sections.
    pub reservation_policies: Vec<Table>,
}

impl ClusterDoc {
    /// The tables of the part `part` (`host`, `queue`, `user`,
    /// `user_group`, `limit`, `reservation_policy`) of the cluster, as a
    /// scenario names them.
    pub fn part(&self, part: &str) -> Option<&[Table]> {
        match part {
            "host" => Some(&self.hosts),
            "queue" => Some(&self.queues),
            "user" => Some(&self.users),
            "user_group" => Some(&self.user_groups),
            "limit" => Some(&self.limits),
            "reservation_policy" => Some(&self.reservation_policies),
            _ => None,
        }
    }

    /// Where the value at `part[index].key` (or `params.key`) came from:
    /// the key's own source, else the table's first.
    pub fn source(&self, part: &str, index: Option<usize>, key: Option<&str>) -> Option<&Location> {
        let table = match (part, index) {
            ("params", _) => &self.params,
            (part, Some(index)) => self.part(part)?.get(index)?,
            _ => return None,
        };
        key.and_then(|key| table.get(key))
            .and_then(|entry| entry.from.as_ref())
            .or_else(|| table.entries.iter().find_map(|entry| entry.from.as_ref()))
    }
}

/// An imported federation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FederationDoc {
    /// Its clusters, in the order given.
    pub clusters: Vec<ClusterDoc>,
    /// The warnings of the import, in order.
    pub warnings: Vec<Diagnostic>,
}
