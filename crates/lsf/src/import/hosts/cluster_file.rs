//! lsf.cluster.NAME: its Host section (LSF's columns: the hosts, their
//! RESOURCES, model and type; a HOSTNAME may be a range, `host[1-4]`) and
//! the EmulatedHost section `mcfed export lsf` writes on `#mcfed` lines,
//! which LSF reads as comments: each host's ncpus, ngpus, maxmem and
//! closed (read in the Host section too, where earlier exports put them).

use std::collections::HashMap;

use super::super::shared::Shared;
use super::super::{Diags, ranges, sections, table};
use super::{HostFacts, number_cell};
use crate::catalog::LSF_CLUSTER;
use crate::grammar::{Cell, Document, Row, Table};
use crate::source::{Location, suggestion};

/// lsf.cluster.NAME's hosts and their facts.
pub(super) fn cluster_file_hosts(
    document: Option<&Document>,
    shared: Option<&Shared>,
    diags: &mut Diags,
) -> Vec<HostFacts> {
    let mut hosts: Vec<HostFacts> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let Some(document) = document else {
        return hosts;
    };
    for (spec, section) in sections(&LSF_CLUSTER, document, diags) {
        let Some(rows) = table(spec, section, diags) else {
            continue;
        };
        let Some(name_column) = rows.column("HOSTNAME") else {
            diags.error(
                section.at(),
                format!("the {} section needs a HOSTNAME column", spec.name),
            );
            continue;
        };
        let emulated = section.is("EmulatedHost");
        for row in &rows.rows {
            let Some(word) = row.cell(name_column).and_then(|cell| cell.value.text()) else {
                diags.error(&row.at, "a host row needs its HOSTNAME");
                continue;
            };
            let names = match ranges::expand(word) {
                None => vec![word.to_owned()],
                Some(Ok(names)) => names,
                Some(Err(message)) => {
                    diags.error(&row.at, message);
                    continue;
                }
            };
            for name in names {
                if emulated {
                    match index.get(&name) {
                        Some(&at) => facts(rows, row, &mut hosts[at], diags),
                        None => diags.error(
                            &row.at,
                            format!(
                                "host `{name}` of the EmulatedHost section is not in the Host section{}",
                                suggestion(&name, hosts.iter().map(|host| host.name.as_str()))
                            ),
                        ),
                    }
                    continue;
                }
                if index.contains_key(&name) {
                    diags.error(&row.at, format!("host `{name}` is listed twice"));
                    continue;
                }
                if cell(rows, row, "server").is_some_and(|server| server.value.text() == Some("0"))
                {
                    continue;
                }
                let mut host = HostFacts::new(&name, &row.at);
                if let Some(resources) = cell(rows, row, "RESOURCES") {
                    host.resources = resource_list(&resources, shared, diags);
                }
                host.model = kind(rows, row, "model", shared, diags);
                host.host_type = kind(rows, row, "type", shared, diags);
                facts(rows, row, &mut host, diags);
                index.insert(name, hosts.len());
                hosts.push(host);
            }
        }
    }
    hosts
}

/// The cell of `column` in `row`, when it holds a value.
fn cell(rows: &Table, row: &Row, column: &str) -> Option<Cell> {
    let cell = row.cell(rows.column(column)?)?;
    cell.value.text().map(|_| cell.clone())
}

/// mcfed's columns: ncpus, ngpus, maxmem, closed.
fn facts(rows: &Table, row: &Row, host: &mut HostFacts, diags: &mut Diags) {
    if let Some(ncpus) = cell(rows, row, "ncpus") {
        host.ncpus = number_cell(&ncpus, "ncpus", diags);
        host.ncpus_refused = host.ncpus.is_none();
    }
    if let Some(ngpus) = cell(rows, row, "ngpus") {
        host.ngpus = number_cell(&ngpus, "ngpus", diags);
    }
    if let Some(maxmem) = cell(rows, row, "maxmem") {
        host.maxmem = megabytes(&maxmem, diags).map(|mb| (mb, maxmem.at.clone()));
    }
    if let Some(closed) = cell(rows, row, "closed") {
        host.closed = yes_no(&closed, diags);
    }
}

/// A host's model or type, unless `!` (LSF detects it); one lsf.shared
/// does not define (in its HostModel or HostType section) is a warning,
/// one that is not a name (`select[type==X]` could not ask for it) an
/// error.
fn kind(
    rows: &Table,
    row: &Row,
    column: &'static str,
    shared: Option<&Shared>,
    diags: &mut Diags,
) -> Option<(String, Location)> {
    let cell = cell(rows, row, column)?;
    let text = cell.value.text()?.trim();
    if text == "!" {
        return None;
    }
    if !text.chars().all(mcfed_cluster::host_types::is_name_char) {
        diags.error(
            &cell.at,
            format!("{column} `{text}` is not a name (letters, digits, `_`, `-`, `.`)"),
        );
        return None;
    }
    let known = shared.and_then(|shared| {
        if column == "model" {
            shared.host_models()
        } else {
            shared.host_types()
        }
    });
    if let Some(known) = known {
        if !known.iter().any(|name| name == text) {
            let section = if column == "model" {
                "HostModel"
            } else {
                "HostType"
            };
            diags.warning(
                &cell.at,
                format!(
                    "{column} `{text}` is not in lsf.shared's {section} section{}",
                    suggestion(text, known.iter().map(String::as_str))
                ),
            );
        }
    }
    Some((text.to_owned(), cell.at.clone()))
}

fn resource_list(
    cell: &Cell,
    shared: Option<&Shared>,
    diags: &mut Diags,
) -> Option<(Vec<String>, Location)> {
    let words: Vec<String> = cell
        .value
        .text()?
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if let Some(known) = shared.and_then(Shared::resources_known) {
        for word in &words {
            if !known.contains(word) {
                diags.error(
                    &cell.at,
                    format!(
                        "resource `{word}` is not a Boolean resource of lsf.shared{}",
                        suggestion(word, known.iter().map(String::as_str))
                    ),
                );
            }
        }
    }
    Some((words, cell.at.clone()))
}

/// maxmem: megabytes, or a number with a K, M, G or T suffix.
fn megabytes(cell: &Cell, diags: &mut Diags) -> Option<u64> {
    let text = cell.value.text()?;
    let (number, scale) = match text.char_indices().last() {
        Some((at, 'K' | 'k')) => (&text[..at], 1.0 / 1024.0),
        Some((at, 'M' | 'm')) => (&text[..at], 1.0),
        Some((at, 'G' | 'g')) => (&text[..at], 1024.0),
        Some((at, 'T' | 't')) => (&text[..at], 1024.0 * 1024.0),
        _ => (text, 1.0),
    };
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 && value * scale < 1e15 => {
            Some((value * scale).round() as u64)
        }
        _ => {
            diags.error(
                &cell.at,
                format!(
                    "maxmem expects megabytes (`4096`) or a size such as `16G`, found `{text}`"
                ),
            );
            None
        }
    }
}

fn yes_no(cell: &Cell, diags: &mut Diags) -> Option<(bool, Location)> {
    match cell.value.text()? {
        "Y" | "y" => Some((true, cell.at.clone())),
        "N" | "n" => Some((false, cell.at.clone())),
        other => {
            diags.error(&cell.at, format!("closed expects Y or N, found `{other}`"));
            None
        }
    }
}
