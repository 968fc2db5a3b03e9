//! A fairshare queue's share tree (seed 002, "for a group, depending on
//! how the shares are assigned"; LSF's hierarchical fairshare): the share
//! accounts of its users and user groups, each with the figures of every
//! job below it, and the pending jobs of each account that holds jobs.
//!
//! The root's children come from the queue's USER_SHARES. A user named
//! there, a member of a `group@` entry, and a user covered by `default`
//! each get an account of their own (a *user* node). A group named
//! collectively gets one account for all its members: if lsb.users gives
//! the group a USER_SHARES of its own, the group is an *interior* node
//! whose children come from that list in the same way (hierarchical
//! fairshare); otherwise its members' jobs queue in it first come, first
//! served (a *collective* leaf), as do the jobs of the users `others`
//! covers. A user resolves to exactly one leaf per queue.
//!
//! When a user matches several entries of one list, the first of these
//! wins: its own name, a `group@` it is a member of, a group it is a
//! member of (collectively), `default`, `others`.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};

use super::account::ShareAccount;
use super::shares::{ShareTarget, UserShares};
use crate::config::{ConfigError, UserGroupConfig};
use crate::job::JobId;

/// Index of a node in a [`ShareTree`].
pub type NodeId = usize;

/// The root of every tree.
pub const ROOT: NodeId = 0;

/// What lsb.users says of one user group, as share trees need it.
#[derive(Clone, Debug, Default)]
pub struct GroupInfo {
    /// Its users, with those of its subgroups, recursively.
    pub members: FxHashSet<String>,
    /// `all`: every user is a member.
    pub everyone: bool,
    /// Its own share tree (lsb.users' USER_SHARES), if it has one.
    pub shares: Option<UserShares>,
}

/// Every user group of a cluster, as share trees need them.
#[derive(Clone, Debug, Default)]
pub struct GroupDirectory {
    /// Groups by name.
    pub groups: FxHashMap<String, GroupInfo>,
}

impl GroupDirectory {
    /// Whether `name` is a user group.
    pub fn is_group(&self, name: &str) -> bool {
        self.groups.contains_key(name)
    }

    /// Whether `user` is a member of `group`, directly or through
    /// subgroups.
    pub fn contains(&self, group: &str, user: &str) -> bool {
        self.groups
            .get(group)
            .is_some_and(|info| info.everyone || info.members.contains(user))
    }

    fn shares(&self, group: &str) -> Option<&UserShares> {
        self.groups.get(group).and_then(|info| info.shares.as_ref())
    }
}

impl GroupDirectory {
    /// The groups of lsb.users as share trees and limits see them: each
    /// group's users, through its subgroups recursively (a loop is an
    /// error), and its own USER_SHARES, whose assignments must name its
    /// members.
    pub fn build(user_groups: &[UserGroupConfig]) -> Result<GroupDirectory, ConfigError> {
        let by_name: FxHashMap<&str, usize> = user_groups
            .iter()
            .enumerate()
            .map(|(index, group)| (group.name.as_str(), index))
            .collect();
        let mut directory = GroupDirectory::default();
        for (index, group) in user_groups.iter().enumerate() {
            let mut info = GroupInfo {
                shares: group.user_shares.clone(),
                ..GroupInfo::default()
            };
            let mut stack: Vec<(&str, usize)> = vec![(group.name.as_str(), 0)];
            let mut visited: FxHashSet<&str> = FxHashSet::default();
            while let Some((name, depth)) = stack.pop() {
                let Some(&at) = by_name.get(name) else {
                    info.members.insert(name.to_owned());
                    continue;
                };
                if depth > 0 && name == group.name {
                    return Err(ConfigError::user_group(
                        index,
                        "GROUP_MEMBER",
                        format!("user group `{}` contains itself", group.name),
                    ));
                }
                if !visited.insert(name) {
                    continue;
                }
                for member in &user_groups[at].members {
                    if member == "all" {
                        info.everyone = true;
                    } else {
                        stack.push((member.as_str(), depth + 1));
                    }
                }
            }
            if let Some(shares) = &group.user_shares {
                check_group_shares(index, group, shares, &by_name)?;
            }
            directory.groups.insert(group.name.clone(), info);
        }
        Ok(directory)
    }
}

/// A group's USER_SHARES may assign shares only to its direct members
/// (users or subgroups), `default` and `others` (LSF: "shares can only be
/// assigned to user groups in the GROUP_MEMBER column").
fn check_group_shares(
    index: usize,
    group: &UserGroupConfig,
    shares: &UserShares,
    by_name: &FxHashMap<&str, usize>,
) -> Result<(), ConfigError> {
    let everyone = group.members.iter().any(|member| member == "all");
    for entry in &shares.entries {
        let named = match &entry.target {
            ShareTarget::Name(name) => name,
            ShareTarget::Members(name) if by_name.contains_key(name.as_str()) => name,
            ShareTarget::Members(name) => {
                return Err(ConfigError::user_group(
                    index,
                    "USER_SHARES",
                    format!("`{name}@` names no user group"),
                ));
            }
            ShareTarget::Default | ShareTarget::Others => continue,
        };
        if !everyone && !group.members.contains(named) {
            return Err(ConfigError::user_group(
                index,
                "USER_SHARES",
                format!(
                    "`{named}` is not a member of user group `{}` (GROUP_MEMBER)",
                    group.name
                ),
            ));
        }
    }
    Ok(())
}

/// What a node of a share tree is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// The queue's USER_SHARES: not an account itself.
    Root,
    /// One user's account.
    User,
    /// A user group whose own USER_SHARES divide its shares further.
    Interior,
    /// A user group, or `others`: one account whose users' jobs queue
    /// first come, first served.
    Collective,
}

/// Where a child hangs under its parent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ChildKey {
    /// The assignment at this index of the parent's list.
    Entry(usize),
    /// One user of the assignment at this index (`group@`, `default`).
    Member(usize, String),
}

/// One share account (or the root).
#[derive(Clone, Debug)]
pub struct ShareNode {
    /// The user's or group's name (`others` for others).
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// Its parent (`None` for the root).
    pub parent: Option<NodeId>,
    /// Its figures: those of every job of the users below it. Its shares
    /// are `account.shares`.
    pub account: ShareAccount,
    /// Pending jobs by arrival (leaves).
    pub pending: BTreeMap<u64, JobId>,
    /// Pending jobs at or below it.
    pub pending_below: u32,
    /// Its children, in the order they were made.
    pub children: Vec<NodeId>,
    child_index: FxHashMap<ChildKey, NodeId>,
}

impl ShareNode {
    fn new(name: String, kind: NodeKind, parent: Option<NodeId>, shares: u32) -> Self {
        ShareNode {
            name,
            kind,
            parent,
            account: ShareAccount::new(shares),
            pending: BTreeMap::new(),
            pending_below: 0,
            children: Vec::new(),
            child_index: FxHashMap::default(),
        }
    }

    /// Whether jobs wait in it (a user or collective account).
    pub fn is_leaf(&self) -> bool {
        matches!(self.kind, NodeKind::User | NodeKind::Collective)
    }
}

/// A fairshare queue's share tree.
#[derive(Clone, Debug)]
pub struct ShareTree {
    /// The queue's USER_SHARES.
    shares: UserShares,
    nodes: Vec<ShareNode>,
}

/// The child a user resolves to under one interior node.
struct Choice {
    key: ChildKey,
    name: String,
    kind: NodeKind,
    shares: u32,
}

impl ShareTree {
    /// The tree of a queue with `shares`, its named users and groups made
    /// at once (so reports list them before they run anything).
    pub fn new(shares: UserShares, groups: &GroupDirectory) -> Self {
        let mut tree = ShareTree {
            shares,
            nodes: vec![ShareNode::new(String::new(), NodeKind::Root, None, 0)],
        };
        tree.make_named(ROOT, groups, 0);
        tree
    }

    /// Makes the children `node`'s list names (users and groups),
    /// recursively through interior groups (at most `depth` 16 deep: a
    /// deeper tree is a loop lsb.users should have refused).
    fn make_named(&mut self, node: NodeId, groups: &GroupDirectory, depth: usize) {
        if depth > 16 {
            return;
        }
        let Some(list) = self.list_of(node, groups).cloned() else {
            return;
        };
        for (index, entry) in list.entries.iter().enumerate() {
            if let ShareTarget::Name(name) = &entry.target {
                let kind = Self::named_kind(name, groups);
                let child = self.child(node, ChildKey::Entry(index), name, kind, entry.shares);
                if self.nodes[child].kind == NodeKind::Interior {
                    self.make_named(child, groups, depth + 1);
                }
            }
        }
    }

    fn named_kind(name: &str, groups: &GroupDirectory) -> NodeKind {
        if !groups.is_group(name) {
            NodeKind::User
        } else if groups.shares(name).is_some() {
            NodeKind::Interior
        } else {
            NodeKind::Collective
        }
    }

    /// The list of assignments below `node`: the queue's, or an interior
    /// group's own.
    fn list_of<'a>(&'a self, node: NodeId, groups: &'a GroupDirectory) -> Option<&'a UserShares> {
        match self.nodes[node].kind {
            NodeKind::Root => Some(&self.shares),
            NodeKind::Interior => groups.shares(&self.nodes[node].name),
            _ => None,
        }
    }

    /// The queue's USER_SHARES.
    pub fn shares(&self) -> &UserShares {
        &self.shares
    }

    /// Every node; the root first.
    pub fn nodes(&self) -> &[ShareNode] {
        &self.nodes
    }

    /// The node `id`.
    pub fn node(&self, id: NodeId) -> &ShareNode {
        &self.nodes[id]
    }

    /// The node `id`, to change.
    pub fn node_mut(&mut self, id: NodeId) -> &mut ShareNode {
        &mut self.nodes[id]
    }

    fn child(
        &mut self,
        parent: NodeId,
        key: ChildKey,
        name: &str,
        kind: NodeKind,
        shares: u32,
    ) -> NodeId {
        if let Some(&child) = self.nodes[parent].child_index.get(&key) {
            return child;
        }
        let id = self.nodes.len();
        self.nodes
            .push(ShareNode::new(name.to_owned(), kind, Some(parent), shares));
        self.nodes[parent].child_index.insert(key, id);
        self.nodes[parent].children.push(id);
        id
    }

    /// The child `user` resolves to under the list `list`, if any.
    fn choose(list: &UserShares, user: &str, groups: &GroupDirectory) -> Option<Choice> {
        let entries = || list.entries.iter().enumerate();
        let pick = |index: usize, name: &str, kind, shares| Choice {
            key: ChildKey::Entry(index),
            name: name.to_owned(),
            kind,
            shares,
        };
        if let Some((index, entry)) = entries().find(|(_, entry)| {
            matches!(&entry.target, ShareTarget::Name(name) if name == user && !groups.is_group(name))
        }) {
            return Some(pick(index, user, NodeKind::User, entry.shares));
        }
        if let Some((index, entry)) = entries().find(|(_, entry)| {
            matches!(&entry.target, ShareTarget::Members(group) if groups.contains(group, user))
        }) {
            return Some(Choice {
                key: ChildKey::Member(index, user.to_owned()),
                name: user.to_owned(),
                kind: NodeKind::User,
                shares: entry.shares,
            });
        }
        if let Some((index, entry, group)) =
            entries().find_map(|(index, entry)| match &entry.target {
                ShareTarget::Name(group) if groups.contains(group, user) => {
                    Some((index, entry, group))
                }
                _ => None,
            })
        {
            let kind = Self::named_kind(group, groups);
            return Some(pick(index, group, kind, entry.shares));
        }
        if let Some((index, entry)) = list.find(&ShareTarget::Default) {
            return Some(Choice {
                key: ChildKey::Member(index, user.to_owned()),
                name: user.to_owned(),
                kind: NodeKind::User,
                shares: entry.shares,
            });
        }
        list.find(&ShareTarget::Others)
            .map(|(index, entry)| pick(index, "others", NodeKind::Collective, entry.shares))
    }

    /// The leaf `user`'s jobs queue in, made if needed; `None` when the
    /// user has no shares in the queue.
    pub fn leaf_for(&mut self, user: &str, groups: &GroupDirectory) -> Option<NodeId> {
        let mut node = ROOT;
        for _ in 0..=16 {
            let list = self.list_of(node, groups)?;
            let choice = Self::choose(list, user, groups)?;
            node = self.child(node, choice.key, &choice.name, choice.kind, choice.shares);
            if self.nodes[node].is_leaf() {
                return Some(node);
            }
        }
        None
    }

    /// The shares of the leaf `user` would resolve to, without making it:
    /// `None` when the user has no shares in the queue.
    pub fn leaf_shares(&self, user: &str, groups: &GroupDirectory) -> Option<u32> {
        let mut node = ROOT;
        for _ in 0..=16 {
            let list = self.list_of(node, groups)?;
            let choice = Self::choose(list, user, groups)?;
            match self.nodes[node].child_index.get(&choice.key) {
                Some(&child) if self.nodes[child].is_leaf() => {
                    return Some(self.nodes[child].account.shares);
                }
                Some(&child) => node = child,
                None if choice.kind == NodeKind::Interior => return Some(choice.shares),
                None => return Some(choice.shares),
            }
        }
        None
    }

    /// Whether `name` has a share account here, or would get one: a
    /// user with shares, or a group named in the tree.
    pub fn has_account(&self, name: &str, groups: &GroupDirectory) -> bool {
        self.leaf_shares(name, groups).is_some()
            || self.nodes.iter().any(|node| {
                node.name == name && matches!(node.kind, NodeKind::Interior | NodeKind::Collective)
            })
    }

    /// `leaf` and its ancestors below the root, nearest first.
    pub fn path(&self, leaf: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(Some(leaf), |&node| self.nodes[node].parent)
            .take_while(|&node| node != ROOT)
    }

    /// Whether `node` is `leaf` or one of its ancestors.
    pub fn covers(&self, node: NodeId, leaf: NodeId) -> bool {
        node == ROOT || self.path(leaf).any(|on_path| on_path == node)
    }

    /// A pending job joins `leaf`.
    pub fn add_pending(&mut self, leaf: NodeId, arrival: u64, job: JobId) {
        if self.nodes[leaf].pending.insert(arrival, job).is_none() {
            let mut node = Some(leaf);
            while let Some(id) = node {
                self.nodes[id].pending_below += 1;
                node = self.nodes[id].parent;
            }
        }
    }

    /// A pending job leaves `leaf`.
    pub fn remove_pending(&mut self, leaf: NodeId, arrival: u64) {
        if self.nodes[leaf].pending.remove(&arrival).is_some() {
            let mut node = Some(leaf);
            while let Some(id) = node {
                self.nodes[id].pending_below -= 1;
                node = self.nodes[id].parent;
            }
        }
    }

    /// Applies `change` to the account of `leaf` and of each of its
    /// ancestors below the root.
    pub fn each_account(&mut self, leaf: NodeId, mut change: impl FnMut(&mut ShareAccount)) {
        let mut node = leaf;
        while node != ROOT {
            change(&mut self.nodes[node].account);
            match self.nodes[node].parent {
                Some(parent) => node = parent,
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests;
