//! The hosts of a cluster and its host groups, and how a host list names
//! them as LSF 10.1 reads one: a host, a group (groups of groups too),
//! `all`, a `name*` pattern, a range (`host[1-3,7]`), `~name` exclusions.

use std::collections::{BTreeMap, HashSet};

use super::super::{Diags, ranges};
use crate::limits::{MAX_GROUP_DEPTH, MAX_GROUP_MEMBERS};
use crate::source::{Location, suggestion};

/// The hosts of a cluster and its host groups, for queues and limits.
#[derive(Debug, Default)]
pub(crate) struct HostBook {
    /// Every host, in order.
    pub(crate) names: Vec<String>,
    /// The same, to look names up.
    known: HashSet<String>,
    /// Each host group's members as written, with where.
    pub(super) groups: BTreeMap<String, (Location, Vec<String>)>,
}

impl HostBook {
    /// Sets the cluster's hosts.
    pub(super) fn set_hosts(&mut self, names: Vec<String>) {
        self.known = names.iter().cloned().collect();
        self.names = names;
    }

    /// Whether `name` is a host group.
    pub(crate) fn is_group(&self, name: &str) -> bool {
        self.groups.contains_key(name)
    }

    /// Whether `name` is a host of the cluster.
    pub(crate) fn is_host(&self, name: &str) -> bool {
        self.known.contains(name)
    }

    /// The hosts `word` stands for, as LSF reads a host list: a host, a
    /// group, `all`, a `name*` pattern or a range (its names that are
    /// hosts of the cluster); `None` if it is none of these.
    pub(crate) fn expand(&self, word: &str) -> Option<Vec<String>> {
        self.expand_depth(word, 0)
    }

    fn expand_depth(&self, word: &str, depth: usize) -> Option<Vec<String>> {
        if word == "all" {
            return Some(self.names.clone());
        }
        if let Some(prefix) = word.strip_suffix('*') {
            let hosts: Vec<String> = self
                .names
                .iter()
                .filter(|host| host.starts_with(prefix))
                .cloned()
                .collect();
            return Some(hosts);
        }
        if let Some((_, members)) = self.groups.get(word) {
            if depth >= MAX_GROUP_DEPTH {
                return Some(Vec::new());
            }
            return Some(self.members(members, depth + 1));
        }
        if let Some(range) = ranges::expand(word) {
            let names = range.ok()?;
            return Some(
                names
                    .into_iter()
                    .filter(|name| self.is_host(name))
                    .collect(),
            );
        }
        self.is_host(word).then(|| vec![word.to_owned()])
    }

    /// The hosts of a member list, `~name` exclusions applied.
    fn members(&self, members: &[String], depth: usize) -> Vec<String> {
        let mut hosts: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for member in members.iter().filter(|member| !member.starts_with('~')) {
            for host in self.expand_depth(member, depth).unwrap_or_default() {
                if hosts.len() < MAX_GROUP_MEMBERS && seen.insert(host.clone()) {
                    hosts.push(host);
                }
            }
        }
        let mut gone: HashSet<String> = HashSet::new();
        for excluded in members.iter().filter_map(|member| member.strip_prefix('~')) {
            gone.extend(self.expand_depth(excluded, depth).unwrap_or_default());
        }
        hosts.retain(|host| !gone.contains(host));
        hosts
    }

    /// Every name a host list may use, for "did you mean".
    pub(crate) fn known(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .map(String::as_str)
            .chain(self.groups.keys().map(String::as_str))
    }
}

/// Members of host groups that name nothing are warnings; a malformed
/// range is an error.
pub(super) fn check_groups(book: &HostBook, diags: &mut Diags) {
    for (group, (at, members)) in &book.groups {
        for member in members {
            let name = member.strip_prefix('~').unwrap_or(member);
            check_member(book, group, name, at, diags);
        }
    }
}

fn check_member(book: &HostBook, group: &str, name: &str, at: &Location, diags: &mut Diags) {
    if let Some(range) = ranges::expand(name) {
        match range {
            Err(message) => diags.error(at, format!("host group `{group}`: {message}")),
            Ok(names) => {
                let missing: Vec<&String> = names.iter().filter(|n| !book.is_host(n)).collect();
                if let Some(first) = missing.first() {
                    let more = match missing.len() {
                        1 => String::new(),
                        n => format!(" and {} more", n - 1),
                    };
                    diags.warning(
                        at,
                        format!(
                            "host group `{group}`: `{first}`{more} of `{name}` are not hosts of the cluster; ignored"
                        ),
                    );
                }
            }
        }
        return;
    }
    if book.expand(name).is_none() {
        diags.warning(
            at,
            format!(
                "host group `{group}`: `{name}` is not a host or group of the cluster{}; ignored",
                suggestion(name, book.known())
            ),
        );
    }
}
