//! lsb.hosts: its host groups (into the [`HostBook`]) and its Host
//! section's MXJ and JL/U, applied `default` first, then groups, then
//! hosts, so the most specific row wins.

use std::collections::HashSet;

use super::super::{Diags, ranges, sections, table};
use super::book::HostBook;
use super::{HostFacts, Mxj, number_cell};
use crate::catalog::LSB_HOSTS;
use crate::grammar::{Cell, CellValue, Document};
use crate::source::{Location, suggestion};

/// One row of lsb.hosts' Host section.
pub(super) struct HostRow {
    name: String,
    at: Location,
    mxj: Option<(Mxj, Location)>,
    jl_u: Option<(u32, Location)>,
}

/// lsb.hosts: host groups into `book`, and the Host section's rows.
pub(super) fn lsb_hosts(
    document: Option<&Document>,
    book: &mut HostBook,
    diags: &mut Diags,
) -> Vec<HostRow> {
    let mut rows = Vec::new();
    let Some(document) = document else {
        return rows;
    };
    for (spec, section) in sections(&LSB_HOSTS, document, diags) {
        let Some(table) = table(spec, section, diags) else {
            continue;
        };
        let column = |name: &str| table.column(name);
        if section.is("HostGroup") {
            let (Some(name), Some(members)) = (column("GROUP_NAME"), column("GROUP_MEMBER")) else {
                diags.error(
                    section.at(),
                    "a HostGroup section needs GROUP_NAME and GROUP_MEMBER columns",
                );
                continue;
            };
            for row in &table.rows {
                let Some(group) = row.cell(name).and_then(|cell| cell.value.text()) else {
                    diags.error(&row.at, "a host group needs its GROUP_NAME");
                    continue;
                };
                let words = row
                    .cell(members)
                    .and_then(|cell| cell.value.text())
                    .map(|text| text.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default();
                if book
                    .groups
                    .insert(group.to_owned(), (row.at.clone(), words))
                    .is_some()
                {
                    diags.error(&row.at, format!("host group `{group}` is defined twice"));
                }
            }
            continue;
        }
        let Some(name) = column("HOST_NAME") else {
            diags.error(section.at(), "the Host section needs a HOST_NAME column");
            continue;
        };
        for row in &table.rows {
            let Some(host) = row.cell(name).and_then(|cell| cell.value.text()) else {
                diags.error(&row.at, "a host row needs its HOST_NAME");
                continue;
            };
            let mxj = column("MXJ")
                .and_then(|index| row.cell(index))
                .map(|cell| (mxj_cell(cell, diags), cell.at.clone()));
            let jl_u = column("JL/U")
                .and_then(|index| row.cell(index))
                .and_then(|cell| number_cell(cell, "JL/U", diags));
            rows.push(HostRow {
                name: host.to_owned(),
                at: row.at.clone(),
                mxj,
                jl_u,
            });
        }
    }
    rows
}

/// An MXJ cell: a number, `!`, `()`; anything else is refused with an
/// error in the catalogue's words.
fn mxj_cell(cell: &Cell, diags: &mut Diags) -> Mxj {
    match &cell.value {
        CellValue::Default => Mxj::Unlimited,
        CellValue::Word(word) if word == "!" => Mxj::PerProcessor,
        value => {
            let text = value.text().unwrap_or_default();
            text.trim().parse::<u32>().map_or_else(
                |_| {
                    diags.error(
                        &cell.at,
                        format!(
                            "MXJ expects a whole number of job slots from 0 to {}, `!` (one slot per processor) or `()` (unlimited), found `{text}`",
                            u32::MAX
                        ),
                    );
                    Mxj::Refused
                },
                Mxj::Slots,
            )
        }
    }
}

/// Without lsf.cluster.NAME: the hosts lsb.hosts names, in its Host
/// section and then in its host groups.
pub(super) fn hosts_named_in_lsb_hosts(rows: &[HostRow], book: &HostBook) -> Vec<HostFacts> {
    let mut hosts: Vec<HostFacts> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut add = |word: &str, at: &Location| {
        let names = match ranges::expand(word) {
            Some(range) => range.unwrap_or_default(),
            None => vec![word.to_owned()],
        };
        for name in names {
            if seen.insert(name.clone()) {
                hosts.push(HostFacts::new(&name, at));
            }
        }
    };
    let plain = |name: &str| {
        name != "default"
            && name != "all"
            && !name.starts_with('~')
            && !name.ends_with('*')
            && !book.is_group(name)
    };
    for row in rows.iter().filter(|row| plain(&row.name)) {
        add(&row.name, &row.at);
    }
    for (at, members) in book.groups.values() {
        for member in members.iter().filter(|member| plain(member)) {
            add(member, at);
        }
    }
    hosts
}

/// Applies lsb.hosts' Host rows: `default` first, then groups, then hosts,
/// so the most specific row wins.
pub(super) fn apply_rows(
    rows: &[HostRow],
    book: &HostBook,
    facts: &mut [HostFacts],
    diags: &mut Diags,
) {
    for row in rows {
        if row.name != "default" && book.expand(&row.name).is_none() {
            diags.warning(
                &row.at,
                format!(
                    "`{}` is not a host or host group of the cluster{}; its row is ignored",
                    row.name,
                    suggestion(&row.name, book.known())
                ),
            );
        }
    }
    let passes: [&dyn Fn(&HostRow) -> bool; 3] = [
        &|row| row.name == "default",
        &|row| book.is_group(&row.name),
        &|row| row.name != "default" && !book.is_group(&row.name),
    ];
    for pass in passes {
        for row in rows.iter().filter(|row| pass(row)) {
            let targets: HashSet<String> = if row.name == "default" {
                book.names.iter().cloned().collect()
            } else {
                book.expand(&row.name)
                    .unwrap_or_default()
                    .into_iter()
                    .collect()
            };
            for host in facts.iter_mut().filter(|host| targets.contains(&host.name)) {
                if row.mxj.is_some() {
                    host.mxj.clone_from(&row.mxj);
                }
                if row.jl_u.is_some() {
                    host.jl_u.clone_from(&row.jl_u);
                }
            }
        }
    }
}
