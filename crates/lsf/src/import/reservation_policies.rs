//! lsb.resources' ResourceReservation sections, each onto one
//! `[[cluster.reservation_policy]]`: NAME, USERS (as written), HOSTS
//! (host groups and `name*` patterns written as their hosts; `all` and
//! `~` exclusions kept) and TIME_WINDOW (checked as the cluster reads
//! it). A policy naming an unknown host, or with a time window mcfed
//! cannot read, is ignored with a warning at its line, as are keys mcfed
//! does not know.

use mcfed_cluster::TimeWindow;

use super::hosts::HostBook;
use super::{Diags, assignments};
use crate::catalog::SectionSpec;
use crate::doc::{Table, Value};
use crate::grammar::Section;
use crate::source::suggestion;

/// The `[[cluster.reservation_policy]]` of one ResourceReservation
/// section; `None` (with a warning) when mcfed cannot model it.
pub(super) fn policy_table(
    spec: &SectionSpec,
    section: &Section,
    hosts: &HostBook,
    diags: &mut Diags,
) -> Option<Table> {
    let values: Vec<_> = assignments(spec, section, diags)
        .into_iter()
        .map(|(param, assignment)| {
            (
                param.name,
                assignment.text().trim().to_owned(),
                assignment.key.at.clone(),
            )
        })
        .collect();
    let mut table = Table::default();
    let name = match values.iter().find(|(key, _, _)| *key == "NAME") {
        Some((_, name, at)) => {
            table.set("NAME", Value::Text(name.clone()), Some(at.clone()));
            name.clone()
        }
        None => {
            let name = section.at().file_name_line();
            diags.warning(
                section.at(),
                format!("a ResourceReservation without NAME (mcfed names every policy) is named `{name}`"),
            );
            table.set(
                "NAME",
                Value::Text(name.clone()),
                Some(section.at().clone()),
            );
            name
        }
    };
    for (key, text, at) in &values {
        let text = text.trim_start_matches('(').trim_end_matches(')').trim();
        let written = match *key {
            "NAME" => continue,
            "USERS" => text.split_whitespace().collect::<Vec<_>>().join(" "),
            "HOSTS" => {
                let mut written: Vec<String> = Vec::new();
                for word in text.split_whitespace() {
                    let (prefix, host) = match word.strip_prefix('~') {
                        Some(host) => ("~", host),
                        None => ("", word),
                    };
                    let expanded = if host == "all" {
                        vec!["all".to_owned()]
                    } else if let Some(found) = hosts.expand(host) {
                        found
                    } else {
                        diags.warning(
                            at,
                            format!(
                                "ResourceReservation {name}: HOSTS names `{host}`, which is not a host or host group of the cluster{}; the policy is ignored",
                                suggestion(host, hosts.known())
                            ),
                        );
                        return None;
                    };
                    for host in expanded {
                        let word = format!("{prefix}{host}");
                        if !written.contains(&word) {
                            written.push(word);
                        }
                    }
                }
                written.join(" ")
            }
            _ => {
                if let Some(error) = text
                    .split_whitespace()
                    .find_map(|window| window.parse::<TimeWindow>().err())
                {
                    diags.warning(
                        at,
                        format!(
                            "ResourceReservation {name}: TIME_WINDOW {error}; the policy is ignored"
                        ),
                    );
                    return None;
                }
                text.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        };
        table.set(key, Value::Text(written), Some(at.clone()));
    }
    Some(table)
}
