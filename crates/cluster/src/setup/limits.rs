//! lsb.resources' Limit sections: checked (a NAME, SLOTS or JOBS, not both
//! a kind and its PER_ form, known queues and hosts), a pure per-host slot
//! limit folded into its hosts' MXJ (seed 000: the pool's slots run "to
//! the maximum job slot limit configured either in lsb.hosts (MXJ) or in
//! lsb.resources for a host or host group"), and the rest resolved into the
//! limit book.

use rustc_hash::FxHashSet;

use crate::config::{ConfigError, Consumers, HostConfig, LimitConfig, QueueConfig};
use crate::scheduler::{Limit, LimitBook};

/// The limit book of `configs`; pure per-host SLOTS limits lower the MXJ
/// of `hosts` instead.
pub(super) fn limit_book(
    configs: &[LimitConfig],
    queues: &[QueueConfig],
    hosts: &mut [HostConfig],
) -> Result<LimitBook, ConfigError> {
    let queue_names: Vec<&str> = queues.iter().map(|queue| queue.name.as_str()).collect();
    let host_names: Vec<String> = hosts.iter().map(|host| host.name.clone()).collect();
    let host_refs: Vec<&str> = host_names.iter().map(String::as_str).collect();
    let mut names = FxHashSet::default();
    let mut limits = Vec::new();
    for (index, config) in configs.iter().enumerate() {
        check(index, config, &queue_names, &host_refs, &mut names)?;
        let mut limit = Limit::new(config, &queue_names, &host_refs);
        if limit.per_host && limit.covers_everyone() {
            if let Some(slots) = limit.slots.take() {
                for (host, config) in hosts.iter_mut().enumerate() {
                    if limit.covers_host(host) {
                        config.max_slots = config.max_slots.min(slots).max(1);
                    }
                }
            }
        }
        if limit.slots.is_some() || limit.jobs.is_some() {
            limits.push(limit);
        }
    }
    Ok(LimitBook::new(limits))
}

fn check<'a>(
    index: usize,
    config: &'a LimitConfig,
    queues: &[&str],
    hosts: &[&str],
    names: &mut FxHashSet<&'a str>,
) -> Result<(), ConfigError> {
    if config.name.is_empty() || config.name.contains(char::is_whitespace) {
        return Err(ConfigError::limit(
            index,
            "NAME",
            "a Limit needs a NAME (one word)",
        ));
    }
    if !names.insert(config.name.as_str()) {
        return Err(ConfigError::limit(
            index,
            "NAME",
            format!("Limit `{}` is defined twice", config.name),
        ));
    }
    if config.slots.is_none() && config.jobs.is_none() {
        return Err(ConfigError::limit(
            index,
            "SLOTS",
            format!("Limit `{}` sets neither SLOTS nor JOBS", config.name),
        ));
    }
    for (together, apart, field) in [
        (&config.users, &config.per_user, "PER_USER"),
        (&config.queues, &config.per_queue, "PER_QUEUE"),
        (&config.hosts, &config.per_host, "PER_HOST"),
    ] {
        if together.is_some() && apart.is_some() {
            return Err(ConfigError::limit(
                index,
                field,
                format!("{field} and {} cannot both be set", &field[4..]),
            ));
        }
    }
    let known = |consumers: &Option<Consumers>, names: &[&str], field: &'static str| {
        let Some(consumers) = consumers else {
            return Ok(());
        };
        match consumers
            .names
            .iter()
            .chain(&consumers.excluded)
            .find(|name| !names.contains(&name.as_str()))
        {
            Some(unknown) => Err(ConfigError::limit(
                index,
                field,
                format!("Limit `{}` names unknown `{unknown}`", config.name),
            )),
            None => Ok(()),
        }
    };
    known(&config.queues, queues, "QUEUES")?;
    known(&config.per_queue, queues, "PER_QUEUE")?;
    known(&config.hosts, hosts, "HOSTS")?;
    known(&config.per_host, hosts, "PER_HOST")
}
