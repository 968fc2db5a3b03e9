//! lsb.queues: one Queue section per queue, with its comment lines above
//! `Begin Queue` and its DESCRIPTION as the TOML kept them.

use std::fmt::Write as _;
use std::time::Duration;

use mcfed_cluster::{DEFAULT_IMPT_JOBBKLG, HostSelection, QueueConfig, ReceiveFrom};

use super::{Assignments, ExportCluster, HEADER, whole, yes_no};

pub(super) fn queues(
    cluster: &ExportCluster<'_>,
    sleep: Option<Duration>,
) -> Result<String, String> {
    let mut text = HEADER.to_owned();
    for queue in &cluster.config.queues {
        let mut keys = queue_keys(queue)?;
        let send = cluster.forwarder.and_then(|forwarder| {
            forwarder
                .send_queues
                .iter()
                .find(|send| send.name == queue.name)
        });
        if let Some(limit) = send.and_then(|send| send.max_rsched_time) {
            let cycle = sleep.unwrap_or(mcfed_cluster::DEFAULT_SLEEP_TIME);
            let seconds = cycle.as_secs().max(1);
            keys.set(
                "MAX_RSCHED_TIME",
                whole("MAX_RSCHED_TIME", limit, seconds, "MBD_SLEEP_TIME cycles")?,
            );
        }
        let notes = cluster
            .notes
            .and_then(|notes| notes.queues.get(queue.name.as_str()));
        text.push('\n');
        if let Some(notes) = notes {
            for line in &notes.comments {
                let _ = writeln!(text, "{}", format!("# {line}").trim_end());
            }
        }
        let (name_line, rest) = keys.0.split_once('\n').unwrap_or((&keys.0, ""));
        let _ = writeln!(text, "Begin Queue\n{name_line}");
        if let Some(description) = notes.and_then(|notes| notes.kept("DESCRIPTION")) {
            text.push_str(&description_lines(description));
        }
        let _ = writeln!(text, "{rest}End Queue");
    }
    Ok(text)
}

/// DESCRIPTION as LSF writes a long one: words wrapped at about 72
/// columns with `\\` continuations. Quoted when it holds a `#` (a comment
/// otherwise), ends in `\\` (a continuation otherwise) or is itself in
/// quotes (the import takes one pair away); in a quoted one that holds a
/// `#`, a `"` would end the quotes before it, so it is written as `'`.
fn description_lines(description: &str) -> String {
    let words: Vec<&str> = description.split_whitespace().collect();
    if words.is_empty() {
        return String::new();
    }
    let joined = words.join(" ");
    let quoted = joined.contains('#')
        || joined.ends_with('\\')
        || (joined.len() >= 2 && joined.starts_with('"') && joined.ends_with('"'));
    let text = match (quoted, joined.contains('#')) {
        (false, _) => joined,
        (true, false) => format!("\"{joined}\""),
        (true, true) => format!("\"{}\"", joined.replace('"', "'")),
    };
    let indent = " ".repeat(33);
    let mut out = format!("{:<30} = ", "DESCRIPTION");
    let mut width = out.len();
    for (index, word) in text.split(' ').enumerate() {
        let breakable = index > 0 && !quoted;
        if breakable && width + 1 + word.len() > 72 {
            out.push_str(" \\\n");
            out.push_str(&indent);
            width = indent.len();
        } else if index > 0 {
            out.push(' ');
            width += 1;
        }
        out.push_str(word);
        width += word.len();
    }
    out.push('\n');
    out
}

fn queue_keys(queue: &QueueConfig) -> Result<Assignments, String> {
    let mut keys = Assignments::default();
    keys.set("QUEUE_NAME", &queue.name);
    keys.set("PRIORITY", queue.priority);
    if let HostSelection::Listed(hosts) = &queue.hosts {
        keys.set("HOSTS", hosts.join(" "));
    }
    if queue.preemption.is_enabled() {
        keys.set("PREEMPTION", &queue.preemption);
    }
    for (name, limit) in [
        ("QJOB_LIMIT", queue.job_limit),
        ("UJOB_LIMIT", queue.user_job_limit),
        ("HJOB_LIMIT", queue.host_job_limit),
    ] {
        if let Some(limit) = limit {
            keys.set(name, limit);
        }
    }
    if let Some(pool) = &queue.slot_pool {
        keys.set("SLOT_POOL", &pool.pool);
        keys.set("SLOT_SHARE", pool.share);
        if let Some(max) = pool.max_slots {
            keys.set("MAX_SLOTS_IN_POOL", max);
        }
        if let Some(yes) = pool.use_priority {
            keys.set("USE_PRIORITY_IN_POOL", yes_no(yes));
        }
    }
    if let Some(shares) = &queue.fairshare {
        keys.set("FAIRSHARE", shares);
    }
    keys.factors(&queue.fairshare_factors);
    if let Some(cycles) = queue.slot_reserve {
        keys.set("SLOT_RESERVE", format!("MAX_RESERVE_TIME[{cycles}]"));
    }
    if queue.backfill {
        keys.set("BACKFILL", "Y");
    }
    if queue.terminate_when_preempt {
        keys.set("TERMINATE_WHEN", "PREEMPT");
    }
    keys.guards(&queue.preempt_guards)?;
    keys.minutes("RUNLIMIT", queue.run_limit)?;
    keys.minutes("ESTIMATED_RUNTIME", queue.run_estimate)?;
    match &queue.receive_from {
        Some(ReceiveFrom::All) => keys.set("RCVJOBS_FROM", "allclusters"),
        Some(ReceiveFrom::Listed(clusters)) => {
            let names: Vec<&str> = clusters.iter().map(|cluster| cluster.as_str()).collect();
            keys.set("RCVJOBS_FROM", names.join(" "));
        }
        None => {}
    }
    match queue.impt_jobbklg {
        Some(DEFAULT_IMPT_JOBBKLG) => {}
        Some(limit) => keys.set("IMPT_JOBBKLG", limit),
        None => keys.set("IMPT_JOBBKLG", "infinit"),
    }
    if !queue.send_to.is_empty() {
        let targets: Vec<String> = queue.send_to.iter().map(ToString::to_string).collect();
        keys.set("SNDJOBS_TO", targets.join(" "));
    }
    aps_keys(queue, &mut keys);
    Ok(keys)
}

/// Absolute priority scheduling's keys and those it interacts with.
fn aps_keys(queue: &QueueConfig, keys: &mut Assignments) {
    let words = |names: &[mcfed_protocol::QueueName]| {
        names
            .iter()
            .map(|name| name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if let Some(aps) = &queue.aps_priority {
        keys.set("APS_PRIORITY", aps);
    }
    if !queue.queue_group.is_empty() {
        keys.set("QUEUE_GROUP", words(&queue.queue_group));
    }
    if let Some(size) = queue.chunk_job_size {
        keys.set("CHUNK_JOB_SIZE", size);
    }
    if queue.rerunnable {
        keys.set("RERUNNABLE", "Y");
    }
    if queue.dispatch_order_queue {
        keys.set("DISPATCH_ORDER", "QUEUE");
    }
    if !queue.fairshare_queues.is_empty() {
        keys.set("FAIRSHARE_QUEUES", words(&queue.fairshare_queues));
    }
}
