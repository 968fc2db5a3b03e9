//! lsb.resources: the Limit sections whose shape mcfed has a limit for
//! (slots of a queue, of a queue per user or per host, of a user, of a
//! host), each onto that limit; the lowest of a limit and the one it
//! meets wins, as both apply in LSF. Any other Limit is a warning.

use super::hosts::HostBook;
use super::users::UserBook;
use super::values::count;
use super::{Diags, assignments, sections};
use crate::catalog::{LSB_RESOURCES, SectionSpec};
use crate::doc::{ClusterDoc, Table, Value};
use crate::grammar::{Body, Document, Section};
use crate::source::{Location, suggestion};

/// One Limit: its modelled keys' values, where it is, and whether it set
/// a key mcfed does not model.
struct Limit {
    name: String,
    at: Location,
    slots: Option<(u32, Location)>,
    keys: Vec<(&'static str, Vec<String>)>,
    narrowed: bool,
}

impl Limit {
    fn words(&self, key: &str) -> Option<&[String]> {
        self.keys
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, words)| words.as_slice())
    }

    fn shape(&self) -> Vec<&'static str> {
        self.keys.iter().map(|(key, _)| *key).collect()
    }
}

/// Reads lsb.resources' Limit sections into the limits of `doc`.
pub(super) fn read(
    document: Option<&Document>,
    hosts: &HostBook,
    users: &UserBook,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let Some(document) = document else {
        return;
    };
    for (spec, section) in sections(&LSB_RESOURCES, document, diags) {
        for limit in limits(spec, section, diags) {
            apply(&limit, hosts, users, doc, diags);
        }
    }
}

/// The limits of a Limit section: one in `KEY = value` form, one per row
/// in the column form.
fn limits(spec: &SectionSpec, section: &Section, diags: &mut Diags) -> Vec<Limit> {
    let mut found = Vec::new();
    match &section.body {
        Body::Assignments(_) => {
            let mut limit = Limit::new(section.at());
            for (param, assignment) in assignments(spec, section, diags) {
                limit.add(param.name, assignment.text(), &assignment.value.at, diags);
            }
            limit.narrowed = narrowed(spec, section);
            found.push(limit);
        }
        Body::Table(table) => {
            for row in &table.rows {
                let mut limit = Limit::new(&row.at);
                for (column, cell) in table.columns.iter().zip(&row.cells) {
                    let Some(text) = cell.value.text() else {
                        continue;
                    };
                    match spec.param(&column.value) {
                        Some(param) if param.status == crate::catalog::Status::Ignored => {
                            diags.not_modelled(&cell.at, param.name);
                            limit.narrowed = true;
                        }
                        Some(param) => limit.add(param.name, text, &cell.at, diags),
                        None => diags.warning(
                            &column.at,
                            format!(
                                "unknown column `{}` in a Limit section{}; ignored",
                                column.value,
                                suggestion(&column.value, spec.names())
                            ),
                        ),
                    }
                }
                found.push(limit);
            }
        }
        Body::Empty => {}
    }
    found
}

/// Whether a `KEY = value` Limit sets a key mcfed does not model.
fn narrowed(spec: &SectionSpec, section: &Section) -> bool {
    let Body::Assignments(list) = &section.body else {
        return false;
    };
    list.iter().any(|assignment| {
        !assignment.text().trim().is_empty()
            && spec
                .param(&assignment.key.value)
                .is_some_and(|param| param.status == crate::catalog::Status::Ignored)
    })
}

impl Limit {
    fn new(at: &Location) -> Self {
        Limit {
            name: String::new(),
            at: at.clone(),
            slots: None,
            keys: Vec::new(),
            narrowed: false,
        }
    }

    fn add(&mut self, key: &'static str, text: &str, at: &Location, diags: &mut Diags) {
        match key {
            "NAME" => self.name = text.trim().to_owned(),
            "SLOTS" => match count("SLOTS", text) {
                Ok(slots) => self.slots = Some((slots, at.clone())),
                Err(message) => diags.error(at, message),
            },
            key => self
                .keys
                .push((key, text.split_whitespace().map(str::to_owned).collect())),
        }
    }
}

fn apply(
    limit: &Limit,
    hosts: &HostBook,
    users: &UserBook,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let label = if limit.name.is_empty() {
        "Limit".to_owned()
    } else {
        format!("Limit {}", limit.name)
    };
    let Some((slots, at)) = &limit.slots else {
        diags.warning(
            &limit.at,
            format!("{label}: it limits no slots, and nothing else of it is modelled; ignored"),
        );
        return;
    };
    if limit.narrowed {
        diags.warning(&limit.at, format!("{label}: its SLOTS apply only where keys mcfed does not model say; the limit is not modelled; ignored"));
        return;
    }
    let note = Some(label.clone());
    let mut shape = limit.shape();
    shape.sort_unstable();
    let all = |key: &str| limit.words(key) == Some(&["all".to_owned()][..]);
    let queues = limit
        .words("QUEUES")
        .or(limit.words("PER_QUEUE"))
        .unwrap_or_default();
    let target = match shape.as_slice() {
        ["QUEUES"] if queues.len() == 1 => Some("QJOB_LIMIT"),
        ["PER_QUEUE"] => Some("QJOB_LIMIT"),
        ["PER_USER", "QUEUES"] | ["PER_QUEUE", "PER_USER"] if all("PER_USER") => Some("UJOB_LIMIT"),
        ["PER_HOST", "QUEUES"] | ["PER_HOST", "PER_QUEUE"] if all("PER_HOST") => Some("HJOB_LIMIT"),
        _ => None,
    };
    if let Some(key) = target {
        if limit
            .words("QUEUES")
            .is_some_and(|queues| queues.len() != 1)
        {
            diags.warning(
                &limit.at,
                format!("{label}: one limit over several queues together is not modelled; ignored"),
            );
            return;
        }
        for queue in queues {
            match doc
                .queues
                .iter_mut()
                .find(|table| table.text("name") == Some(queue.as_str()))
            {
                Some(table) => tighten(table, key, *slots, at, note.clone()),
                None => diags.warning(
                    &limit.at,
                    format!("{label}: `{queue}` is not a queue of lsb.queues; ignored"),
                ),
            }
        }
        return;
    }
    match shape.as_slice() {
        ["USERS"] | ["PER_USER"] => user_limit(limit, &label, *slots, at, users, doc, diags),
        ["PER_HOST"] => host_limit(
            limit, "PER_HOST", "MXJ", &label, *slots, at, hosts, doc, diags,
        ),
        ["PER_HOST", "PER_USER"] if all("PER_USER") => {
            host_limit(
                limit, "PER_HOST", "JL/U", &label, *slots, at, hosts, doc, diags,
            );
        }
        _ => diags.warning(
            &limit.at,
            format!("{label}: this combination of keys is not modelled; ignored"),
        ),
    }
}

/// USERS (one user or group, as a whole) or PER_USER (each named, `all`:
/// every user): MAX_JOBS.
fn user_limit(
    limit: &Limit,
    label: &str,
    slots: u32,
    at: &Location,
    users: &UserBook,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let names: Vec<String> = match (limit.words("USERS"), limit.words("PER_USER")) {
        (Some([one]), None) if one != "all" => vec![one.clone()],
        (None, Some(list)) => list
            .iter()
            .flat_map(|name| match name.as_str() {
                "all" => vec!["default".to_owned()],
                group if users.is_group(group) => users.users_of(group).unwrap_or_default(),
                user => vec![user.to_owned()],
            })
            .collect(),
        _ => {
            diags.warning(
                &limit.at,
                format!("{label}: a limit over several users together is not modelled; ignored"),
            );
            return;
        }
    };
    for name in names {
        let index = match doc
            .users
            .iter()
            .position(|table| table.text("name") == Some(name.as_str()))
        {
            Some(index) => index,
            None => {
                let mut table = Table::default();
                table.set("name", Value::Text(name.clone()), Some(at.clone()));
                doc.users.push(table);
                doc.users.len() - 1
            }
        };
        tighten(
            &mut doc.users[index],
            "MAX_JOBS",
            slots,
            at,
            Some(label.to_owned()),
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn host_limit(
    limit: &Limit,
    key: &str,
    target: &str,
    label: &str,
    slots: u32,
    at: &Location,
    hosts: &HostBook,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let mut named: Vec<String> = Vec::new();
    for word in limit.words(key).unwrap_or_default() {
        match hosts.expand(word) {
            Some(found) => named.extend(found),
            None => diags.warning(
                &limit.at,
                format!(
                    "{label}: `{word}` is not a host or host group{}; ignored",
                    suggestion(word, hosts.known())
                ),
            ),
        }
    }
    for table in doc.hosts.iter_mut().filter(|table| {
        table
            .text("name")
            .is_some_and(|name| named.iter().any(|n| n == name))
    }) {
        tighten(table, target, slots, at, Some(label.to_owned()));
    }
}

/// Sets `key` to `slots` unless it already holds a lower limit.
fn tighten(table: &mut Table, key: &str, slots: u32, at: &Location, note: Option<String>) {
    if table
        .int(key)
        .is_some_and(|current| current <= slots.into())
    {
        return;
    }
    table
        .set(key, Value::Int(slots.into()), Some(at.clone()))
        .note = note;
}
