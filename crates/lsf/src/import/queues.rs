//! lsb.queues: one `[[cluster.queue]]` per Queue section. Most parameters
//! convert as the catalogue says; host lists, PREEMPTION's queues,
//! FAIRSHARE's groups, the clusters of SNDJOBS_TO and RCVJOBS_FROM and
//! MAX_RSCHED_TIME's cycles need the rest of the configuration.

use std::time::Duration;

use mcfed_protocol::QueueRef;

use super::hosts::HostBook;
use super::shared::Shared;
use super::users::UserBook;
use super::values::{convert, count};
use super::{Diags, assignments, sections};
use crate::catalog::{LSB_QUEUES, Status};
use crate::doc::{ClusterDoc, Table, Value};
use crate::grammar::{Assignment, Document};
use crate::limits::MAX_QUEUES;
use crate::source::{Location, suggestion};

/// What a queue's parameters may refer to.
pub(super) struct Context<'a> {
    pub(super) hosts: &'a HostBook,
    pub(super) users: &'a UserBook,
    pub(super) shared: Option<&'a Shared>,
    pub(super) cluster: &'a str,
    /// MBD_SLEEP_TIME, the unit of MAX_RSCHED_TIME.
    pub(super) sleep: Duration,
}

/// Reads lsb.queues into `doc.queues`.
pub(super) fn read(
    document: Option<&Document>,
    context: &Context<'_>,
    doc: &mut ClusterDoc,
    diags: &mut Diags,
) {
    let Some(document) = document else {
        return;
    };
    let read = sections(&LSB_QUEUES, document, diags);
    let names: Vec<String> = read
        .iter()
        .filter_map(|(_, section)| match &section.body {
            crate::grammar::Body::Assignments(list) => list
                .iter()
                .find(|a| a.key.value.eq_ignore_ascii_case("QUEUE_NAME"))
                .map(|a| a.text().trim().to_owned()),
            _ => None,
        })
        .collect();
    for (spec, section) in read {
        if doc.queues.len() >= MAX_QUEUES {
            diags.error(section.at(), format!("more than {MAX_QUEUES} queues"));
            return;
        }
        let mut queue = Table::default();
        let mut named = false;
        for (param, assignment) in assignments(spec, section, diags) {
            named |= param.name == "QUEUE_NAME";
            queue_param(param, assignment, context, &names, &mut queue, diags);
        }
        let Some(name) = queue.text("name").map(str::to_owned) else {
            if !named {
                diags.error(section.at(), "this Queue section has no QUEUE_NAME");
            }
            continue;
        };
        if doc
            .queues
            .iter()
            .any(|other| other.text("name") == Some(&name))
        {
            diags.error(section.at(), format!("queue `{name}` is defined twice"));
            continue;
        }
        if !section.comments.is_empty() {
            queue.comment = Some(section.comments.join("\n"));
        }
        doc.queues.push(queue);
    }
}

fn queue_param(
    param: &crate::catalog::Param,
    assignment: &Assignment,
    context: &Context<'_>,
    names: &[String],
    queue: &mut Table,
    diags: &mut Diags,
) {
    let text = assignment.text().trim();
    let at = &assignment.value.at;
    let from = Some(assignment.key.at.clone());
    let converted = match param.name {
        "DESCRIPTION" => {
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            queue.keep("DESCRIPTION", &text, from);
            return;
        }
        "QUEUE_NAME" => convert(param_conv(param), "QUEUE_NAME", text, at, diags)
            .map(|(value, note)| ("name", value, note)),
        "HOSTS" => hosts(text, at, context.hosts, diags).map(|value| ("HOSTS", value, None)),
        "PREEMPTION" => preemption(text, at, names, diags).map(|value| ("PREEMPTION", value, None)),
        "FAIRSHARE" => {
            fairshare(text, at, context.users, diags).map(|value| ("FAIRSHARE", value, None))
        }
        "SNDJOBS_TO" | "RCVJOBS_FROM" => {
            clusters(param.name, text, at, context, diags).map(|value| (param.name, value, None))
        }
        "MAX_RSCHED_TIME" => max_rsched_time(text, at, context.sleep, diags),
        "RUNLIMIT" => run_limit(text, at, diags).map(|(value, note)| ("RUNLIMIT", value, note)),
        "RUNTIME" | "ESTIMATED_RUNTIME" => {
            if let Some(earlier) = queue.get("RUNTIME").and_then(|entry| entry.from.as_ref()) {
                diags.error(
                    &assignment.key.at,
                    format!(
                        "{} sets the run-time estimate again (first at line {}): give RUNTIME or ESTIMATED_RUNTIME, not both",
                        param.name, earlier.line
                    ),
                );
                return;
            }
            super::values::run_time(param.name, text, at, diags)
                .map(|(value, note)| ("RUNTIME", value, note))
        }
        name => convert(param_conv(param), name, text, at, diags)
            .map(|(value, note)| (name, value, note)),
    };
    if let Some((key, value, note)) = converted {
        queue.set(key, value, from).note = note;
    }
}

fn param_conv(param: &crate::catalog::Param) -> crate::catalog::Conv {
    match param.status {
        Status::Modelled(conv) | Status::Partial(conv, _) => conv,
        Status::Kept(_) | Status::Ignored => crate::catalog::Conv::Words,
    }
}

/// HOSTS: `all`, hosts, groups (expanded), ranges, `~` exclusions,
/// `others` (every host the list does not name otherwise); `+N`
/// preferences are dropped with a warning.
fn hosts(text: &str, at: &Location, book: &HostBook, diags: &mut Diags) -> Option<Value> {
    let mut chosen: Vec<String> = Vec::new();
    let mut excluded: Vec<String> = Vec::new();
    let mut all = false;
    let mut others = false;
    for word in text.split_whitespace() {
        let (word, preference) = match word.rsplit_once('+') {
            Some((name, level))
                if !name.is_empty() && level.chars().all(|c| c.is_ascii_digit()) =>
            {
                (name, true)
            }
            _ => (word, false),
        };
        if preference {
            diags.warning(
                at,
                format!("HOSTS: host preference `{word}+…` is not modelled; ignored"),
            );
        }
        if word == "others" {
            others = true;
            continue;
        }
        let (target, exclude) = match word.strip_prefix('~') {
            Some(name) => (name, true),
            None => (word, false),
        };
        if let Some(Err(message)) = super::ranges::expand(target) {
            diags.error(at, format!("HOSTS: {message}"));
            return None;
        }
        all |= target == "all" && !exclude;
        match book.expand(target) {
            Some(hosts) if exclude => excluded.extend(hosts),
            Some(hosts) => chosen.extend(hosts),
            None => diags.warning(
                at,
                format!(
                    "HOSTS: `{target}` is not a host or host group of the cluster{}; ignored",
                    suggestion(target, book.known())
                ),
            ),
        }
    }
    if others {
        let listed: std::collections::HashSet<&String> = chosen.iter().collect();
        let rest: Vec<String> = book
            .names
            .iter()
            .filter(|host| !listed.contains(host))
            .cloned()
            .collect();
        chosen.extend(rest);
    }
    let mut hosts: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = excluded.into_iter().collect();
    let nothing_excluded = seen.is_empty();
    for host in chosen {
        if seen.insert(host.clone()) {
            hosts.push(host);
        }
    }
    if nothing_excluded && (all || (others && hosts.len() == book.names.len())) {
        return Some(Value::Text("all".to_owned()));
    }
    if hosts.is_empty() {
        diags.error(at, "HOSTS names no host of the cluster");
        return None;
    }
    Some(Value::Text(hosts.join(" ")))
}

/// PREEMPTION, whose listed queues must be queues of this lsb.queues.
fn preemption(text: &str, at: &Location, names: &[String], diags: &mut Diags) -> Option<Value> {
    let (Value::Text(normal), _) = convert(
        crate::catalog::Conv::Keywords,
        "PREEMPTION",
        text,
        at,
        diags,
    )?
    else {
        return None;
    };
    let parsed: mcfed_cluster::Preemption = normal.parse().ok()?;
    let mut listed: Vec<String> = Vec::new();
    if let Some(mcfed_cluster::preemption::Scope::Listed(targets)) = &parsed.preemptive {
        listed.extend(targets.iter().map(|target| target.queue.to_string()));
    }
    if let Some(mcfed_cluster::preemption::Scope::Listed(queues)) = &parsed.preemptable {
        listed.extend(queues.iter().map(ToString::to_string));
    }
    let mut good = true;
    for queue in listed {
        if !names.contains(&queue) {
            diags.error(
                at,
                format!(
                    "PREEMPTION names queue `{queue}`, which lsb.queues does not define{}",
                    suggestion(&queue, names.iter().map(String::as_str))
                ),
            );
            good = false;
        }
    }
    good.then_some(Value::Text(normal))
}

/// FAIRSHARE: `USER_SHARES[[name, shares] ...]` as mcfed models it —
/// users, groups collectively, `group@` (each member), `default` and
/// `others` — whose `group@` entries must name groups of lsb.users.
fn fairshare(text: &str, at: &Location, users: &UserBook, diags: &mut Diags) -> Option<Value> {
    let (value, _) = convert(crate::catalog::Conv::Keywords, "FAIRSHARE", text, at, diags)?;
    let shares: mcfed_cluster::UserShares = text.parse().ok()?;
    let mut good = true;
    for entry in &shares.entries {
        if let mcfed_cluster::fairshare::ShareTarget::Members(group) = &entry.target {
            if !users.is_group(group) {
                diags.error(
                    at,
                    format!(
                        "FAIRSHARE: `{group}@` names no user group of lsb.users{}",
                        suggestion(group, users.groups())
                    ),
                );
                good = false;
            }
        }
    }
    good.then_some(value)
}

/// RUNLIMIT: `[default_limit] maximum_limit`, each `[hour:]minute`. mcfed's
/// RUNLIMIT is the run limit of jobs that give none: the default limit
/// when there are two, else the only one; a maximum after a default is
/// not modelled (a warning).
fn run_limit(text: &str, at: &Location, diags: &mut Diags) -> Option<(Value, Option<String>)> {
    let limits: Vec<&str> = text.split_whitespace().collect();
    match limits.as_slice() {
        [only] => super::values::run_time("RUNLIMIT", only, at, diags),
        [default, maximum] => {
            let converted = super::values::run_time("RUNLIMIT", default, at, diags)?;
            super::values::run_time("RUNLIMIT", maximum, at, diags)?;
            diags.warning(
                at,
                format!("RUNLIMIT: the maximum run limit `{maximum}` (jobs asking for more are refused) is not modelled; ignored, the default `{default}` is the run limit of jobs that give none"),
            );
            Some(converted)
        }
        _ => {
            diags.error(
                at,
                format!("RUNLIMIT expects [default_limit] maximum_limit, found `{text}`"),
            );
            None
        }
    }
}

/// SNDJOBS_TO (`queue@cluster` entries) or RCVJOBS_FROM (clusters or
/// `allclusters`): every cluster must be in lsf.shared, if it lists any.
fn clusters(
    name: &str,
    text: &str,
    at: &Location,
    context: &Context<'_>,
    diags: &mut Diags,
) -> Option<Value> {
    let words = super::values::words(name, text)
        .map_err(|message| diags.error(at, message))
        .ok()?;
    let mut good = true;
    for word in &words {
        let cluster = if name == "SNDJOBS_TO" {
            match word.parse::<QueueRef>() {
                Ok(target) => target.cluster.to_string(),
                Err(error) => {
                    diags.error(at, format!("SNDJOBS_TO: {error}"));
                    good = false;
                    continue;
                }
            }
        } else if word == "allclusters" {
            continue;
        } else {
            word.clone()
        };
        if cluster == context.cluster && name == "SNDJOBS_TO" {
            diags.error(
                at,
                format!("SNDJOBS_TO: `{word}` is a queue of this cluster"),
            );
            good = false;
        }
        if let Some(shared) = context.shared {
            if shared.knows_cluster(&cluster) == Some(false) {
                diags.error(
                    at,
                    format!(
                        "{name}: cluster `{cluster}` is not in lsf.shared's Cluster section{}",
                        suggestion(&cluster, shared.clusters())
                    ),
                );
                good = false;
            }
        }
    }
    good.then(|| Value::Text(words.join(" ")))
}

/// MAX_RSCHED_TIME: a number of MBD_SLEEP_TIME cycles, or `infinit`.
fn max_rsched_time(
    text: &str,
    at: &Location,
    sleep: Duration,
    diags: &mut Diags,
) -> Option<(&'static str, Value, Option<String>)> {
    if text.eq_ignore_ascii_case("infinit") {
        return None;
    }
    match count("MAX_RSCHED_TIME", text) {
        Ok(cycles) => {
            let seconds = sleep.as_secs().saturating_mul(cycles.into());
            Some((
                "MAX_RSCHED_TIME",
                Value::Text(format!("{seconds}s")),
                Some(format!("{cycles} × MBD_SLEEP_TIME {}s", sleep.as_secs())),
            ))
        }
        Err(message) => {
            diags.error(at, format!("{message} or `infinit`"));
            None
        }
    }
}

/// Every SNDJOBS_TO entry must name a queue of an imported cluster.
pub(super) fn check_send_targets(clusters: &[ClusterDoc], diags: &mut Diags) {
    for cluster in clusters {
        for queue in &cluster.queues {
            let Some(entry) = queue.get("SNDJOBS_TO") else {
                continue;
            };
            let (Value::Text(text), Some(at)) = (&entry.value, &entry.from) else {
                continue;
            };
            for word in text.split_whitespace() {
                let Ok(target) = word.parse::<QueueRef>() else {
                    continue;
                };
                let Some(other) = clusters
                    .iter()
                    .find(|other| other.name == target.cluster.as_str())
                else {
                    diags.error(
                        at,
                        format!(
                            "SNDJOBS_TO: cluster `{}` is not imported (add --cluster {}=DIR){}",
                            target.cluster,
                            target.cluster,
                            suggestion(
                                target.cluster.as_str(),
                                clusters.iter().map(|c| c.name.as_str())
                            )
                        ),
                    );
                    continue;
                };
                let queues: Vec<&str> =
                    other.queues.iter().filter_map(|q| q.text("name")).collect();
                if !queues.contains(&target.queue.as_str()) {
                    diags.error(
                        at,
                        format!(
                            "SNDJOBS_TO: cluster `{}` has no queue `{}`{}",
                            target.cluster,
                            target.queue,
                            suggestion(target.queue.as_str(), queues.iter().copied())
                        ),
                    );
                }
            }
        }
    }
}
