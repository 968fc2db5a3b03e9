//! lsb.users: user groups (UserGroup: members as written, nested groups
//! and `all` included, and each group's own USER_SHARES for hierarchical
//! fairshare) and per-user or per-group limits (User), onto
//! `[[cluster.user_group]]` and `[[cluster.user]]`.

use std::collections::BTreeMap;

use mcfed_cluster::UserShares;

use super::values::count;
use super::{Diags, sections, table};
use crate::catalog::LSB_USERS;
use crate::doc::{ClusterDoc, Table, Value};
use crate::grammar::Document;
use crate::limits::{MAX_GROUP_DEPTH, MAX_GROUP_MEMBERS};
use crate::source::Location;

/// The user groups of a cluster, for queues' FAIRSHARE and for limits.
#[derive(Debug, Default)]
pub(crate) struct UserBook {
    /// Each group's members as written, with where.
    groups: BTreeMap<String, (Location, Vec<String>)>,
    /// The groups in the order lsb.users defines them.
    order: Vec<String>,
}

impl UserBook {
    /// The users of group `name`, nested groups expanded and `~user`
    /// exclusions applied; `None` if it is not a group.
    pub(crate) fn users_of(&self, name: &str) -> Option<Vec<String>> {
        self.users_depth(name, 0)
    }

    fn users_depth(&self, name: &str, depth: usize) -> Option<Vec<String>> {
        let (_, members) = self.groups.get(name)?;
        let mut users: Vec<String> = Vec::new();
        for member in members
            .iter()
            .filter(|member| !member.starts_with('~') && *member != "all" && *member != "!")
        {
            let found = if depth < MAX_GROUP_DEPTH {
                self.users_depth(member, depth + 1)
            } else {
                None
            };
            for user in found.unwrap_or_else(|| vec![member.clone()]) {
                if !users.contains(&user) && users.len() < MAX_GROUP_MEMBERS {
                    users.push(user);
                }
            }
        }
        for excluded in members.iter().filter_map(|member| member.strip_prefix('~')) {
            let gone = self
                .users_depth(excluded, depth + 1)
                .unwrap_or_else(|| vec![excluded.to_owned()]);
            users.retain(|user| !gone.contains(user));
        }
        Some(users)
    }

    /// Whether `name` is a user group.
    pub(crate) fn is_group(&self, name: &str) -> bool {
        self.groups.contains_key(name)
    }

    /// Whether group `name` has `all` among its members (directly or
    /// through subgroups).
    fn has_everyone(&self, name: &str) -> bool {
        let mut stack = vec![(name, 0)];
        while let Some((group, depth)) = stack.pop() {
            let Some((_, members)) = self.groups.get(group) else {
                continue;
            };
            for member in members {
                if member == "all" {
                    return true;
                }
                if depth < MAX_GROUP_DEPTH {
                    stack.push((member, depth + 1));
                }
            }
        }
        false
    }

    /// Every user group's name, for "did you mean".
    pub(crate) fn groups(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    /// The members of group `name` as `[[cluster.user_group]]` writes
    /// them: as lsb.users lists them (users, groups, `all`), except that a
    /// group with `~name` exclusions is listed as its users (mcfed's groups
    /// have no exclusions), and `all` keeps every user (its exclusions
    /// dropped with a warning). External groups (`!`) are dropped with a
    /// warning.
    fn members_written(&self, name: &str, diags: &mut Diags) -> Vec<String> {
        let Some((at, members)) = self.groups.get(name) else {
            return Vec::new();
        };
        if members.iter().any(|member| member == "!") {
            diags.warning(
                at,
                format!("user group {name}: `!` (members from an external egroup program) is not modelled; ignored"),
            );
        }
        let kept: Vec<&String> = members.iter().filter(|member| *member != "!").collect();
        let excludes = kept.iter().any(|member| member.starts_with('~'));
        if !excludes {
            return kept.into_iter().cloned().collect();
        }
        if kept.iter().any(|member| *member == "all") {
            diags.warning(
                at,
                format!("user group {name}: exclusions from `all` are not modelled; the group holds every user"),
            );
            return kept
                .into_iter()
                .filter(|member| !member.starts_with('~'))
                .cloned()
                .collect();
        }
        self.users_of(name).unwrap_or_default()
    }
}

/// Reads lsb.users into `doc.user_groups` and `doc.users`.
pub(super) fn read(
    document: Option<&Document>,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) -> UserBook {
    let mut book = UserBook::default();
    let Some(document) = document else {
        return book;
    };
    let read = sections(&LSB_USERS, document, diags);
    let mut shares: BTreeMap<String, (String, Location)> = BTreeMap::new();
    for (spec, section) in read.iter().filter(|(_, section)| section.is("UserGroup")) {
        if let Some(rows) = table(spec, section, diags) {
            group_rows(rows, section, &mut book, &mut shares, diags);
        }
    }
    for group in book.order.clone() {
        let Some((at, _)) = book.groups.get(&group).cloned() else {
            continue;
        };
        let members = book.members_written(&group, diags);
        if members.is_empty() {
            diags.warning(
                &at,
                format!("user group {group} has no members mcfed can model; left out"),
            );
            continue;
        }
        let mut table = Table::default();
        table.set("name", Value::Text(group.clone()), Some(at.clone()));
        table.set(
            "GROUP_MEMBER",
            Value::Text(members.join(" ")),
            Some(at.clone()),
        );
        if let Some((list, at)) = shares.remove(&group) {
            table.set("USER_SHARES", Value::Text(list), Some(at));
        }
        doc.user_groups.push(table);
    }
    for (spec, section) in read.iter().filter(|(_, section)| section.is("User")) {
        if let Some(rows) = table(spec, section, diags) {
            user_rows(rows, &book, doc, diags);
        }
    }
    book
}

/// The rows of a UserGroup section: each group's members into `book`, its
/// USER_SHARES (checked, as `[name, shares] ...`) into `shares`.
fn group_rows(
    rows: &crate::grammar::Table,
    section: &crate::grammar::Section,
    book: &mut UserBook,
    shares: &mut BTreeMap<String, (String, Location)>,
    diags: &mut Diags,
) {
    let (Some(name), Some(members)) = (rows.column("GROUP_NAME"), rows.column("GROUP_MEMBER"))
    else {
        diags.error(
            section.at(),
            "a UserGroup section needs GROUP_NAME and GROUP_MEMBER columns",
        );
        return;
    };
    let shares_column = rows.column("USER_SHARES");
    for row in &rows.rows {
        let Some(group) = row.cell(name).and_then(|cell| cell.value.text()) else {
            diags.error(&row.at, "a user group needs its GROUP_NAME");
            continue;
        };
        let cell = row.cell(members);
        let listed: Vec<String> = cell
            .and_then(|cell| cell.value.text())
            .map(|text| text.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let at = cell.map_or(&row.at, |cell| &cell.at).clone();
        if book.groups.insert(group.to_owned(), (at, listed)).is_some() {
            diags.error(&row.at, format!("user group `{group}` is defined twice"));
            continue;
        }
        book.order.push(group.to_owned());
        let Some(cell) = shares_column.and_then(|index| row.cell(index)) else {
            continue;
        };
        let Some(text) = cell.value.text() else {
            continue;
        };
        match UserShares::parse_list(text) {
            Ok(list) if list.entries.is_empty() => {}
            Ok(list) => {
                shares.insert(group.to_owned(), (share_list(&list), cell.at.clone()));
            }
            Err(error) => diags.error(&cell.at, format!("USER_SHARES: {error}")),
        }
    }
}

/// A group's share list as lsb.users and the scenario write it:
/// `[name, shares] ...`.
pub(crate) fn share_list(shares: &UserShares) -> String {
    let text = shares.to_string();
    text.strip_prefix("USER_SHARES[")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(&text)
        .to_owned()
}

/// The User section: limits of users, groups (as a whole), `group@` (each
/// member) and `default`. A user's own row wins over a `group@` row.
fn user_rows(
    rows: &crate::grammar::Table,
    book: &UserBook,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let Some(name_column) = rows.column("USER_NAME") else {
        diags.error(
            &rows.columns[0].at,
            "the User section needs a USER_NAME column",
        );
        return;
    };
    let mut explicit: Vec<&str> = Vec::new();
    let mut ordered: Vec<&crate::grammar::Row> = rows.rows.iter().collect();
    ordered.sort_by_key(|row| {
        !row.cell(name_column)
            .and_then(|cell| cell.value.text())
            .is_some_and(|name| name.ends_with('@'))
    });
    for row in ordered {
        let Some(name) = row.cell(name_column).and_then(|cell| cell.value.text()) else {
            diags.error(&row.at, "a user row needs its USER_NAME");
            continue;
        };
        let names = match name.strip_suffix('@') {
            Some(group) => match book.users_of(group) {
                Some(users) => {
                    if book.has_everyone(group) {
                        diags.warning(
                            &row.at,
                            format!("`{name}`: `{group}` holds every user (`all`), who cannot be listed; the limits apply to its named users only"),
                        );
                    }
                    users
                }
                None => {
                    diags.error(
                        &row.at,
                        format!("`{name}`: `{group}` is not a user group of lsb.users"),
                    );
                    continue;
                }
            },
            None if explicit.contains(&name) => {
                diags.error(
                    &row.at,
                    format!("`{name}` has two rows in the User section"),
                );
                continue;
            }
            None => {
                explicit.push(name);
                vec![name.to_owned()]
            }
        };
        let mut limits = Table::default();
        for (column, key) in [("MAX_JOBS", "MAX_JOBS"), ("JL/P", "JL/P")] {
            let Some(cell) = rows.column(column).and_then(|index| row.cell(index)) else {
                continue;
            };
            let Some(text) = cell.value.text() else {
                continue;
            };
            let value = if key == "MAX_JOBS" {
                count(column, text).map(|n| Value::Int(n.into()))
            } else {
                text.parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .map(Value::Float)
                    .ok_or_else(|| format!("JL/P expects a number, found `{text}`"))
            };
            match value {
                Ok(value) => {
                    limits.set(key, value, Some(cell.at.clone()));
                }
                Err(message) => diags.error(&cell.at, message),
            }
        }
        for user in names {
            let mut table = Table::default();
            table.set("name", Value::Text(user.clone()), Some(row.at.clone()));
            table.entries.extend(limits.entries.iter().cloned());
            match doc
                .users
                .iter()
                .position(|existing| existing.text("name") == Some(&user))
            {
                Some(index) => doc.users[index] = table,
                None => doc.users.push(table),
            }
        }
    }
}
