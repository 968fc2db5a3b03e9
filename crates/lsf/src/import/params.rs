//! lsb.params: its Parameters section, onto `[cluster.params]`.

use std::time::Duration;

use mcfed_cluster::DEFAULT_SLEEP_TIME;

use super::values::convert;
use super::{Diags, assignments, sections};
use crate::catalog::{LSB_PARAMS, Status};
use crate::doc::ClusterDoc;
use crate::grammar::Document;

/// Reads lsb.params into `doc.params`; returns MBD_SLEEP_TIME (the unit of
/// MAX_RSCHED_TIME).
pub(super) fn read(
    document: Option<&Document>,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) -> Duration {
    let mut sleep = DEFAULT_SLEEP_TIME;
    let Some(document) = document else {
        return sleep;
    };
    for (spec, section) in sections(&LSB_PARAMS, document, diags) {
        for (param, assignment) in assignments(spec, section, diags) {
            let (Status::Modelled(conv) | Status::Partial(conv, _)) = param.status else {
                continue;
            };
            let at = &assignment.value.at;
            let Some((value, note)) = convert(conv, param.name, assignment.text(), at, diags)
            else {
                continue;
            };
            if param.name == "MBD_SLEEP_TIME" {
                if let Ok(seconds) = super::values::count(param.name, assignment.text()) {
                    sleep = Duration::from_secs(seconds.into());
                }
            }
            doc.params
                .set(param.name, value, Some(assignment.key.at.clone()))
                .note = note;
        }
    }
    sleep
}
