//! Hosts: the host list and its facts (processors, GPUs, memory, model,
//! type, …) from lsf.cluster.NAME (else the hosts lsb.hosts names), host
//! groups and the Host section's MXJ and JL/U from lsb.hosts, onto
//! `[[cluster.host]]`.

mod book;
mod cluster_file;
mod lsb_hosts;

pub(crate) use book::HostBook;

use super::shared::Shared;
use super::values::count;
use super::{ClusterFiles, Diags};
use crate::doc::{ClusterDoc, Table, Value};
use crate::grammar::Cell;
use crate::limits::MAX_HOSTS;
use crate::source::Location;

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
    /// lsf.cluster's model and type (`!` is left out): the host's `model`
    /// and `type`, which `select[model==X]` and `select[type==X]` ask for.
    model: Option<(String, Location)>,
    host_type: Option<(String, Location)>,
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

/// Reads the hosts of a cluster into `doc.hosts`.
pub(super) fn read(
    files: &ClusterFiles,
    shared: Option<&Shared>,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) -> HostBook {
    let mut book = HostBook::default();
    let mut facts = cluster_file::cluster_file_hosts(files.cluster.as_ref(), shared, diags);
    let host_rows = lsb_hosts::lsb_hosts(files.hosts.as_ref(), &mut book, diags);
    if facts.is_empty() {
        facts = lsb_hosts::hosts_named_in_lsb_hosts(&host_rows, &book);
    }
    if facts.len() > MAX_HOSTS {
        diags.errors.push(crate::Diagnostic::general(format!(
            "cluster {} has {} hosts, more than {MAX_HOSTS}",
            doc.name,
            facts.len()
        )));
        facts.truncate(MAX_HOSTS);
    }
    book.set_hosts(facts.iter().map(|host| host.name.clone()).collect());
    book::check_groups(&book, diags);
    lsb_hosts::apply_rows(&host_rows, &book, &mut facts, diags);
    doc.hosts = facts
        .iter()
        .filter_map(|host| host_table(host, diags))
        .collect();
    book
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
            model: None,
            host_type: None,
            mxj: None,
            jl_u: None,
            ncpus_refused: false,
        }
    }
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
    for (key, kind) in [("type", &host.host_type), ("model", &host.model)] {
        if let Some((value, at)) = kind {
            table.set(key, Value::Text(value.clone()), Some(at.clone()));
        }
    }
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
