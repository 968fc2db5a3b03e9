//! lsb.resources: each Limit section onto one `[[cluster.limit]]` — its
//! NAME, consumers (USERS, QUEUES, HOSTS and their PER_ forms, `all` and
//! `~` exclusions) and the resources mcfed models (SLOTS, JOBS). Host
//! groups and `name*` patterns are written as their hosts; other
//! resources (MEM, SWP, …) are warnings, and a Limit that names consumers
//! mcfed does not model (projects, applications, license projects,
//! clusters) is ignored whole, with a warning.

use super::hosts::HostBook;
use super::values::count;
use super::{Diags, assignments, sections, table};
use crate::catalog::{LSB_RESOURCES, SectionSpec, Status};
use crate::doc::{ClusterDoc, Table, Value};
use crate::grammar::{Body, Document, Section};
use crate::source::{Location, suggestion};

/// Consumer keys mcfed does not model: a Limit naming one applies only to
/// the projects, applications, license projects or clusters it lists,
/// which mcfed's jobs do not have, so the whole Limit is ignored.
const NARROWING: [&str; 8] = [
    "PROJECTS",
    "PER_PROJECT",
    "LIC_PROJECTS",
    "PER_LIC_PROJECT",
    "APPS",
    "PER_APP",
    "CLUSTERS",
    "PER_CLUSTER",
];

/// The consumer keys of a `[[cluster.limit]]`, in the order written, each
/// with the other form of its kind (LSF: "do not configure PER_USER and
/// USERS limits in the same Limit section").
const CONSUMERS: [(&str, &str); 6] = [
    ("USERS", "PER_USER"),
    ("PER_USER", "USERS"),
    ("QUEUES", "PER_QUEUE"),
    ("PER_QUEUE", "QUEUES"),
    ("HOSTS", "PER_HOST"),
    ("PER_HOST", "HOSTS"),
];

/// One Limit as read: its modelled keys with their text and where, and
/// the first key that narrows it to consumers mcfed does not model.
struct Limit {
    at: Location,
    values: Vec<(&'static str, String, Location)>,
    narrowed: Option<&'static str>,
}

impl Limit {
    fn value(&self, key: &str) -> Option<(&str, &Location)> {
        self.values
            .iter()
            .find(|(name, _, _)| *name == key)
            .map(|(_, text, at)| (text.as_str(), at))
    }
}

/// Reads lsb.resources' Limit sections into `doc.limits` (the queues they
/// name must be in `doc.queues`, the hosts in `hosts`) and its
/// ResourceReservation sections into `doc.reservation_policies`.
pub(super) fn read(
    document: Option<&Document>,
    hosts: &HostBook,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let Some(document) = document else {
        return;
    };
    for (spec, section) in sections(&LSB_RESOURCES, document, diags) {
        if spec.name == "ResourceReservation" {
            if let Some(table) =
                super::reservation_policies::policy_table(spec, section, hosts, diags)
            {
                doc.reservation_policies.push(table);
            }
            continue;
        }
        for limit in limits(spec, section, diags) {
            if let Some(table) = limit_table(&limit, hosts, doc, diags) {
                doc.limits.push(table);
            }
        }
    }
}

/// The limits of a Limit section: one in `KEY = value` form, one per row
/// in the column form (where `()` or `-` leaves the key out).
fn limits(spec: &SectionSpec, section: &Section, diags: &mut Diags) -> Vec<Limit> {
    let narrowing = |name: &str| NARROWING.iter().copied().find(|key| *key == name);
    match &section.body {
        Body::Assignments(list) => {
            let mut limit = Limit {
                at: section.at().clone(),
                values: Vec::new(),
                narrowed: None,
            };
            for (param, assignment) in assignments(spec, section, diags) {
                limit.values.push((
                    param.name,
                    assignment.text().trim().to_owned(),
                    assignment.key.at.clone(),
                ));
            }
            limit.narrowed = list
                .iter()
                .filter(|assignment| !assignment.text().trim().is_empty())
                .find_map(|assignment| {
                    spec.param(&assignment.key.value)
                        .and_then(|param| narrowing(param.name))
                });
            vec![limit]
        }
        Body::Table(_) => {
            let Some(rows) = table(spec, section, diags) else {
                return Vec::new();
            };
            rows.rows
                .iter()
                .map(|row| {
                    let mut limit = Limit {
                        at: row.at.clone(),
                        values: Vec::new(),
                        narrowed: None,
                    };
                    for (column, cell) in rows.columns.iter().zip(&row.cells) {
                        let (Some(text), Some(param)) =
                            (cell.value.text(), spec.param(&column.value))
                        else {
                            continue;
                        };
                        if param.status == Status::Ignored {
                            limit.narrowed = limit.narrowed.or(narrowing(param.name));
                        } else {
                            limit
                                .values
                                .push((param.name, text.to_owned(), cell.at.clone()));
                        }
                    }
                    limit
                })
                .collect()
        }
        Body::Empty => Vec::new(),
    }
}

/// The `[[cluster.limit]]` of one Limit; `None` (with a warning or an
/// error) when mcfed cannot model it.
fn limit_table(
    limit: &Limit,
    hosts: &HostBook,
    doc: &ClusterDoc,
    diags: &mut Diags,
) -> Option<Table> {
    let mut table = Table::default();
    let name = match limit.value("NAME") {
        Some((name, at)) => {
            table.set("NAME", Value::Text(name.to_owned()), Some(at.clone()));
            name.to_owned()
        }
        None => {
            let name = limit.at.file_name_line();
            diags.warning(
                &limit.at,
                format!("a Limit without NAME (mcfed names every limit) is named `{name}`"),
            );
            table.set("NAME", Value::Text(name.clone()), Some(limit.at.clone()));
            name
        }
    };
    if let Some(key) = limit.narrowed {
        diags.warning(
            &limit.at,
            format!("Limit {name}: it applies only to the {key} it names, which mcfed does not model; the limit is ignored"),
        );
        return None;
    }
    let mut limited = false;
    for (key, text, at) in &limit.values {
        let value = match *key {
            "NAME" => continue,
            "SLOTS" | "JOBS" => match count(key, text) {
                Ok(number) => {
                    limited = true;
                    Value::Int(number.into())
                }
                Err(message) => {
                    diags.error(at, message);
                    return None;
                }
            },
            _ => {
                if let Some((_, other)) = CONSUMERS
                    .iter()
                    .find(|(consumer, other)| consumer == key && limit.value(other).is_some())
                {
                    diags.error(
                        at,
                        format!("Limit {name}: {key} and {other} cannot both be set (LSF refuses them in one Limit)"),
                    );
                    return None;
                }
                let words = consumers(&name, key, text, at, hosts, doc, diags)?;
                Value::Text(words.join(" "))
            }
        };
        table.set(key, value, Some(at.clone()));
    }
    if !limited {
        diags.warning(
            &limit.at,
            format!("Limit {name}: it limits neither SLOTS nor JOBS, the resources mcfed models; ignored"),
        );
        return None;
    }
    Some(table)
}

/// The consumers of `key` as `[[cluster.limit]]` writes them: users as
/// written (user groups are modelled), queues checked against
/// lsb.queues, host groups and `name*` patterns as their hosts. `None`
/// (with a warning) when a queue or host is unknown, which makes LSF
/// ignore the limit.
fn consumers(
    limit: &str,
    key: &str,
    text: &str,
    at: &Location,
    hosts: &HostBook,
    doc: &ClusterDoc,
    diags: &mut Diags,
) -> Option<Vec<String>> {
    let mut written: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let (prefix, name) = match word.strip_prefix('~') {
            Some(name) => ("~", name),
            None => ("", word),
        };
        let expanded: Vec<String> = match key {
            _ if name == "all" => vec![name.to_owned()],
            "USERS" | "PER_USER" => vec![name.to_owned()],
            "QUEUES" | "PER_QUEUE" => {
                let queues = doc.queues.iter().filter_map(|queue| queue.text("name"));
                if !queues.clone().any(|queue| queue == name) {
                    diags.warning(
                        at,
                        format!(
                            "Limit {limit}: {key} names `{name}`, which is not a queue of lsb.queues{}; the limit is ignored",
                            suggestion(name, queues)
                        ),
                    );
                    return None;
                }
                vec![name.to_owned()]
            }
            _ => match hosts.expand(name) {
                Some(found) => found,
                None => {
                    diags.warning(
                        at,
                        format!(
                            "Limit {limit}: {key} names `{name}`, which is not a host or host group of the cluster{}; the limit is ignored",
                            suggestion(name, hosts.known())
                        ),
                    );
                    return None;
                }
            },
        };
        for name in expanded {
            let word = format!("{prefix}{name}");
            if !written.contains(&word) {
                written.push(word);
            }
        }
    }
    if !written.iter().any(|word| !word.starts_with('~')) {
        diags.warning(
            at,
            format!("Limit {limit}: {key} names nothing to limit (only `~` exclusions, or a pattern no host matches); the limit is ignored"),
        );
        return None;
    }
    Some(written)
}
