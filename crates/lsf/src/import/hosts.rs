//! Hosts: the host list and its facts (processors, GPUs, memory, …) from
//! lsf.cluster.NAME's Host section (else the hosts lsb.hosts names), host
//! groups and the Host section's MXJ and JL/U from lsb.hosts, onto
//! `[[cluster.host]]`.

use std::collections::BTreeMap;

use super::shared::Shared;
use super::values::count;
use super::{ClusterFiles, Diags, sections, table};
use crate::catalog::{LSB_HOSTS, LSF_CLUSTER};
use crate::doc::{ClusterDoc, Table, Value};
use crate::grammar::{Cell, CellValue, Document, Row};
use crate::limits::{MAX_GROUP_DEPTH, MAX_GROUP_MEMBERS, MAX_HOSTS};
use crate::source::{Location, suggestion};

/// The hosts of a cluster and its host groups, for queues and limits.
#[derive(Debug, Default)]
pub(crate) struct HostBook {
    /// Every host, in order.
    pub(crate) names: Vec<String>,
    /// Each host group's members as written, with where.
    groups: BTreeMap<String, (Location, Vec<String>)>,
}

/// One host's facts as read.
#[derive(Debug)]
struct HostFacts {
    name: String,
    at: Location,
    resources: Option<(Vec<String>, Location)>,
    ncpus: Option<(u32, Location)>,
    ngpus: Option<(u32, Location)>,
    maxmem: Option<(u64, Location)>,
    closed: Option<(bool, Location)>,
    mxj: Option<(Mxj, Location)>,
    jl_u: Option<(u32, Location)>,
    /// Its ncpus cell was refused (an error given already): what needs
    /// the processors gives no second error.
    ncpus_refused: bool,
}

/// An MXJ cell.
#[derive(Clone, Copy, Debug)]
enum Mxj {
    Slots(u32),
    /// `!`: one slot per processor.
    PerProcessor,
    /// `()` or `-`: unlimited.
    Unlimited,
    /// Refused (an error given already): the host is left out without a
    /// second error.
    Refused,
}

impl HostBook {
    /// Whether `name` is a host group.
    pub(crate) fn is_group(&self, name: &str) -> bool {
        self.groups.contains_key(name)
    }

    /// The hosts `word` stands for, as LSF reads a host list: a host, a
    /// group, `all`, or a `name*` pattern; `None` if it is none of these.
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
        self.names
            .iter()
            .any(|host| host == word)
            .then(|| vec![word.to_owned()])
    }

    /// The hosts of a member list, `~name` exclusions applied.
    fn members(&self, members: &[String], depth: usize) -> Vec<String> {
        let mut hosts: Vec<String> = Vec::new();
        for member in members.iter().filter(|member| !member.starts_with('~')) {
            for host in self.expand_depth(member, depth).unwrap_or_default() {
                if !hosts.contains(&host) && hosts.len() < MAX_GROUP_MEMBERS {
                    hosts.push(host);
                }
            }
        }
        for excluded in members.iter().filter_map(|member| member.strip_prefix('~')) {
            let gone = self.expand_depth(excluded, depth).unwrap_or_default();
            hosts.retain(|host| !gone.contains(host));
        }
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

/// Reads the hosts of a cluster into `doc.hosts`.
pub(super) fn read(
    files: &ClusterFiles,
    shared: Option<&Shared>,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) -> HostBook {
    let mut book = HostBook::default();
    let mut facts = cluster_file_hosts(files.cluster.as_ref(), shared, diags);
    let host_rows = lsb_hosts(files.hosts.as_ref(), &mut book, diags);
    if facts.is_empty() {
        facts = hosts_named_in_lsb_hosts(&host_rows, &book);
    }
    if facts.len() > MAX_HOSTS {
        diags.errors.push(crate::Diagnostic::general(format!(
            "cluster {} has {} hosts, more than {MAX_HOSTS}",
            doc.name,
            facts.len()
        )));
        facts.truncate(MAX_HOSTS);
    }
    book.names = facts.iter().map(|host| host.name.clone()).collect();
    check_groups(&book, diags);
    apply_rows(&host_rows, &book, &mut facts, diags);
    doc.hosts = facts
        .iter()
        .filter_map(|host| host_table(host, diags))
        .collect();
    book
}

/// lsf.cluster.NAME's Host section: the hosts and their facts.
fn cluster_file_hosts(
    document: Option<&Document>,
    shared: Option<&Shared>,
    diags: &mut Diags,
) -> Vec<HostFacts> {
    let mut hosts: Vec<HostFacts> = Vec::new();
    let Some(document) = document else {
        return hosts;
    };
    for (spec, section) in sections(&LSF_CLUSTER, document, diags) {
        let Some(rows) = table(spec, section, diags) else {
            continue;
        };
        let Some(name_column) = rows.column("HOSTNAME") else {
            diags.error(section.at(), "the Host section needs a HOSTNAME column");
            continue;
        };
        let cell = |row: &Row, column: &str| -> Option<Cell> {
            let cell = row.cell(rows.column(column)?)?;
            cell.value.text().map(|_| cell.clone())
        };
        for row in &rows.rows {
            let Some(name) = row.cell(name_column).and_then(|cell| cell.value.text()) else {
                diags.error(&row.at, "a host row needs its HOSTNAME");
                continue;
            };
            if hosts.iter().any(|host| host.name == name) {
                diags.error(&row.at, format!("host `{name}` is listed twice"));
                continue;
            }
            if cell(row, "server").is_some_and(|server| server.value.text() == Some("0")) {
                continue;
            }
            let mut host = HostFacts::new(name, &row.at);
            if let Some(resources) = cell(row, "RESOURCES") {
                host.resources = resource_list(&resources, shared, diags);
            }
            if let Some(ncpus) = cell(row, "ncpus") {
                host.ncpus = number_cell(&ncpus, "ncpus", diags);
                host.ncpus_refused = host.ncpus.is_none();
            }
            if let Some(ngpus) = cell(row, "ngpus") {
                host.ngpus = number_cell(&ngpus, "ngpus", diags);
            }
            if let Some(maxmem) = cell(row, "maxmem") {
                host.maxmem = megabytes(&maxmem, diags).map(|mb| (mb, maxmem.at.clone()));
            }
            if let Some(closed) = cell(row, "closed") {
                host.closed = yes_no(&closed, diags);
            }
            hosts.push(host);
        }
    }
    hosts
}

impl HostFacts {
    fn new(name: &str, at: &Location) -> Self {
        HostFacts {
            name: name.to_owned(),
            at: at.clone(),
            resources: None,
            ncpus: None,
            ngpus: None,
            maxmem: None,
            closed: None,
            mxj: None,
            jl_u: None,
            ncpus_refused: false,
        }
    }
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

fn number_cell(cell: &Cell, name: &str, diags: &mut Diags) -> Option<(u32, Location)> {
    match count(name, cell.value.text()?) {
        Ok(number) => Some((number, cell.at.clone())),
        Err(message) => {
            diags.error(&cell.at, message);
            None
        }
    }
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

/// One row of lsb.hosts' Host section.
struct HostRow {
    name: String,
    at: Location,
    mxj: Option<(Mxj, Location)>,
    jl_u: Option<(u32, Location)>,
}

/// lsb.hosts: host groups into `book`, and the Host section's rows.
fn lsb_hosts(document: Option<&Document>, book: &mut HostBook, diags: &mut Diags) -> Vec<HostRow> {
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
fn hosts_named_in_lsb_hosts(rows: &[HostRow], book: &HostBook) -> Vec<HostFacts> {
    let mut hosts: Vec<HostFacts> = Vec::new();
    let plain = |name: &str| {
        name != "default"
            && name != "all"
            && !name.starts_with('~')
            && !name.ends_with('*')
            && !book.is_group(name)
    };
    for row in rows.iter().filter(|row| plain(&row.name)) {
        if !hosts.iter().any(|host| host.name == row.name) {
            hosts.push(HostFacts::new(&row.name, &row.at));
        }
    }
    for (at, members) in book.groups.values() {
        for member in members.iter().filter(|member| plain(member)) {
            if !hosts.iter().any(|host| &host.name == member) {
                hosts.push(HostFacts::new(member, at));
            }
        }
    }
    hosts
}

/// Members of host groups that name nothing are warnings.
fn check_groups(book: &HostBook, diags: &mut Diags) {
    for (group, (at, members)) in &book.groups {
        for member in members {
            let name = member.strip_prefix('~').unwrap_or(member);
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
    }
}

/// Applies lsb.hosts' Host rows: `default` first, then groups, then hosts,
/// so the most specific row wins.
fn apply_rows(rows: &[HostRow], book: &HostBook, facts: &mut [HostFacts], diags: &mut Diags) {
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
            let targets = if row.name == "default" {
                book.names.clone()
            } else {
                book.expand(&row.name).unwrap_or_default()
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

/// A host's `[[cluster.host]]` table; `None` when its MXJ cannot be known.
fn host_table(host: &HostFacts, diags: &mut Diags) -> Option<Table> {
    let mut table = Table::default();
    table.set(
        "name",
        Value::Text(host.name.clone()),
        Some(host.at.clone()),
    );
    let ncpus = host.ncpus.as_ref();
    let (mxj, mxj_at, note) = match (&host.mxj, ncpus) {
        (Some((Mxj::Refused, _)), _) => return None,
        (_, None) if host.ncpus_refused => return None,
        (Some((Mxj::Slots(0), at)), _) => {
            (1, at.clone(), Some("MXJ 0: no job slots, a closed host"))
        }
        (Some((Mxj::Slots(slots), at)), _) => (*slots, at.clone(), None),
        (Some((Mxj::PerProcessor, at)), Some((cpus, _))) => {
            (*cpus, at.clone(), Some("`!`: one slot per processor"))
        }
        (Some((Mxj::Unlimited, at)), Some((cpus, _))) => {
            diags.warning(
                at,
                format!(
                    "host `{}`: unlimited MXJ is not modelled; taking its ncpus ({cpus})",
                    host.name
                ),
            );
            (*cpus, at.clone(), Some("unlimited: taken as ncpus"))
        }
        (None, Some((cpus, at))) => {
            diags.warning(
                &host.at,
                format!(
                    "host `{}`: no MXJ (unlimited) is not modelled; taking its ncpus ({cpus})",
                    host.name
                ),
            );
            (*cpus, at.clone(), Some("no MXJ: taken as ncpus"))
        }
        (mxj, None) => {
            let at = mxj.as_ref().map_or(&host.at, |(_, at)| at);
            diags.error(
                at,
                format!(
                    "host `{}`: MXJ is {}, which needs the host's processors: give lsb.hosts a number of slots, or lsf.cluster.NAME an ncpus column",
                    host.name,
                    if matches!(mxj, Some((Mxj::PerProcessor, _))) { "`!`" } else { "unlimited" }
                ),
            );
            return None;
        }
    };
    table.set("MXJ", Value::Int(mxj.into()), Some(mxj_at)).note = note.map(str::to_owned);
    if let Some((resources, at)) = &host.resources {
        table.set(
            "resources",
            Value::List(resources.clone()),
            Some(at.clone()),
        );
    }
    if let Some((cpus, at)) = ncpus {
        table.set("ncpus", Value::Int((*cpus).into()), Some(at.clone()));
    }
    if let Some((gpus, at)) = &host.ngpus {
        table.set("ngpus", Value::Int((*gpus).into()), Some(at.clone()));
    }
    if let Some((limit, at)) = &host.jl_u {
        table.set("JL/U", Value::Int((*limit).into()), Some(at.clone()));
    }
    if let Some((mb, at)) = &host.maxmem {
        table.set("memory_mb", Value::Int(*mb), Some(at.clone()));
    }
    let closed_by_mxj = matches!(host.mxj, Some((Mxj::Slots(0), _)));
    match (&host.closed, closed_by_mxj) {
        (Some((closed, at)), false) => {
            table.set("closed", Value::Bool(*closed), Some(at.clone()));
        }
        (_, true) => {
            let at = host.mxj.as_ref().map(|(_, at)| at.clone());
            table.set("closed", Value::Bool(true), at);
        }
        (None, false) => {}
    }
    Some(table)
}
