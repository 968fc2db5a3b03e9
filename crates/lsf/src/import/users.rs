//! lsb.users: user groups (UserGroup, nested groups expanded to their
//! users) and per-user or per-group limits (User), onto
//! `[[cluster.user_group]]` and `[[cluster.user]]`.

use std::collections::BTreeMap;

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
            .filter(|member| !member.starts_with('~') && *member != "all")
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
    for (spec, section) in read.iter().filter(|(_, section)| section.is("UserGroup")) {
        let Some(rows) = table(spec, section, diags) else {
            continue;
        };
        let (Some(name), Some(members)) = (rows.column("GROUP_NAME"), rows.column("GROUP_MEMBER"))
        else {
            diags.error(
                section.at(),
                "a UserGroup section needs GROUP_NAME and GROUP_MEMBER columns",
            );
            continue;
        };
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
            if listed.iter().any(|member| member == "all") {
                diags.warning(
                    &at,
                    format!("user group {group}: `all` (every user) as a member is not modelled; the group holds its named members only"),
                );
            }
            if book.groups.insert(group.to_owned(), (at, listed)).is_some() {
                diags.error(&row.at, format!("user group `{group}` is defined twice"));
            } else {
                book.order.push(group.to_owned());
            }
        }
    }
    for group in &book.order {
        let Some((at, _)) = book.groups.get(group) else {
            continue;
        };
        let users = book.users_of(group).unwrap_or_default();
        if users.is_empty() {
            diags.warning(
                at,
                format!("user group {group} has no users mcfed can model; left out"),
            );
            continue;
        }
        let mut table = Table::default();
        table.set("name", Value::Text(group.clone()), Some(at.clone()));
        table.set(
            "GROUP_MEMBER",
            Value::Text(users.join(" ")),
            Some(at.clone()),
        );
        doc.user_groups.push(table);
    }
    for (spec, section) in read.iter().filter(|(_, section)| section.is("User")) {
        if let Some(rows) = table(spec, section, diags) {
            user_rows(rows, &book, doc, diags);
        }
    }
    book
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
                Some(users) => users,
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
