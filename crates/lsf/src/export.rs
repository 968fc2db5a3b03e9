//! Writing a federation's clusters as LSF configuration: per cluster a
//! directory with lsb.params, lsb.queues, lsb.hosts, lsb.users,
//! lsf.cluster.NAME, (when it has limits) lsb.resources and (when it sets
//! LSB_REQUEUE_TO_BOTTOM or LSB_MIG2PEND) lsf.conf, and one lsf.shared
//! naming every cluster, such that
//! importing them gives the same clusters back (the round-trip tests
//! check it). What LSF cannot say (a 90-second NO_PREEMPT_RUN_TIME: LSF
//! counts minutes) is an error naming the cluster and parameter.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use mcfed_cluster::fairshare::FairshareOverrides;
use mcfed_cluster::{
    AdjustmentPlugin, ClusterConfig, Consumers, DEFAULT_IMPT_JOBBKLG, HostSelection, PreemptGuard,
    PreemptGuards, QueueConfig, ReceiveFrom,
};
use mcfed_forwarder::{DEFAULT_MAX_FORWARDS, ForwarderConfig, ScheduleMode};

/// One cluster to export.
#[derive(Clone, Copy, Debug)]
pub struct ExportCluster<'a> {
    /// Its configuration.
    pub config: &'a ClusterConfig,
    /// Its submission side, if it has send queues.
    pub forwarder: Option<&'a ForwarderConfig>,
}

/// One file written by an export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedFile {
    /// Its path under the export's directory.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// Why a federation cannot be written as LSF configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cluster {cluster}: {message}")]
pub struct ExportError {
    /// The cluster.
    pub cluster: String,
    /// What LSF cannot say.
    pub message: String,
}

/// The files of `clusters`: `lsf.shared`, and `NAME/…` for each cluster.
pub fn export(clusters: &[ExportCluster<'_>]) -> Result<Vec<ExportedFile>, ExportError> {
    let mut files = vec![ExportedFile {
        path: PathBuf::from("lsf.shared"),
        text: shared(clusters),
    }];
    for cluster in clusters {
        let name = cluster.config.name.as_str();
        let fail = |message: String| ExportError {
            cluster: name.to_owned(),
            message,
        };
        let dir = PathBuf::from(name);
        let sleep = cluster.config.params.sleep_time;
        for (file, text) in [
            ("lsb.params", params(cluster).map_err(fail)?),
            ("lsb.queues", queues(cluster, sleep).map_err(fail)?),
            ("lsb.hosts", hosts(cluster.config)),
            ("lsb.users", users(cluster.config).map_err(fail)?),
            (&format!("lsf.cluster.{name}"), cluster_file(cluster.config)),
        ] {
            files.push(ExportedFile {
                path: dir.join(file),
                text,
            });
        }
        if !cluster.config.limits.is_empty() {
            files.push(ExportedFile {
                path: dir.join("lsb.resources"),
                text: resources(cluster.config),
            });
        }
        if let Some(text) = lsf_conf(cluster.config) {
            files.push(ExportedFile {
                path: dir.join("lsf.conf"),
                text,
            });
        }
    }
    Ok(files)
}

const HEADER: &str = "# Written by `mcfed export lsf`. mcfed's own parameters and columns are\n# marked; docs/lsf-import.md lists what each parameter means to mcfed.\n";

fn shared(clusters: &[ExportCluster<'_>]) -> String {
    let mut text = format!("{HEADER}\nBegin Cluster\nClusterName\n");
    for cluster in clusters {
        let _ = writeln!(text, "{}", cluster.config.name);
    }
    text.push_str("End Cluster\n");
    let mut resources: Vec<&str> = clusters
        .iter()
        .flat_map(|cluster| cluster.config.hosts.iter())
        .flat_map(|host| host.resources.iter().map(String::as_str))
        .collect();
    resources.sort_unstable();
    resources.dedup();
    if !resources.is_empty() {
        text.push_str("\nBegin Resource\nRESOURCENAME  TYPE     DESCRIPTION\n");
        for resource in resources {
            let _ = writeln!(text, "{resource:<13} Boolean  ()");
        }
        text.push_str("End Resource\n");
    }
    text
}

/// `KEY = value` lines of one section.
#[derive(Default)]
struct Assignments(String);

impl Assignments {
    fn set(&mut self, key: &str, value: impl std::fmt::Display) {
        let _ = writeln!(self.0, "{key:<30} = {value}");
    }

    /// The dynamic-priority factors and the switches of its optional
    /// terms that are set.
    fn factors(&mut self, factors: &FairshareOverrides) {
        for (name, value) in factors.named_values() {
            if let Some(value) = value {
                self.set(name, value);
            }
        }
        for (name, value) in factors.named_switches() {
            if let Some(yes) = value {
                self.set(name, yes_no(yes));
            }
        }
    }

    /// A run time LSF writes in minutes (RUNLIMIT, ESTIMATED_RUNTIME).
    fn minutes(&mut self, name: &str, time: Option<Duration>) -> Result<(), String> {
        if let Some(time) = time {
            self.set(name, whole(name, time, 60, "minutes")?);
        }
        Ok(())
    }

    fn guards(&mut self, guards: &PreemptGuards) -> Result<(), String> {
        for (name, guard) in [
            ("NO_PREEMPT_RUN_TIME", guards.run_time),
            ("NO_PREEMPT_FINISH_TIME", guards.finish_time),
        ] {
            match guard {
                None => {}
                Some(PreemptGuard::PercentOfRunLimit(percent)) => {
                    self.set(name, format!("{percent}%"))
                }
                Some(PreemptGuard::Time(time)) => self.set(name, whole(name, time, 60, "minutes")?),
            }
        }
        Ok(())
    }
}

fn yes_no(yes: bool) -> &'static str {
    if yes { "Y" } else { "N" }
}

/// `time` in whole `unit`s of `seconds` seconds.
fn whole(name: &str, time: Duration, seconds: u64, unit: &str) -> Result<u64, String> {
    let millis = time.as_millis();
    let step = u128::from(seconds) * 1000;
    if millis % step == 0 {
        u64::try_from(millis / step).map_err(|_| format!("{name} is too long"))
    } else {
        Err(format!(
            "{name} of {} is not a whole number of {unit}, which is what LSF counts",
            humantime_like(time)
        ))
    }
}

fn humantime_like(time: Duration) -> String {
    format!("{}ms", time.as_millis())
}

fn params(cluster: &ExportCluster<'_>) -> Result<String, String> {
    let config = cluster.config;
    let mut keys = Assignments::default();
    if let Some(interval) = config.update_interval {
        keys.set(
            "MC_PLUGIN_UPDATE_INTERVAL",
            whole("MC_PLUGIN_UPDATE_INTERVAL", interval, 1, "seconds")?,
        );
    }
    if let Some(forwarder) = cluster.forwarder {
        if forwarder.mode != ScheduleMode::Default {
            keys.set("MC_PLUGIN_SCHEDULE_ENHANCE", forwarder.mode);
        }
        if forwarder.max_forwards != DEFAULT_MAX_FORWARDS {
            keys.set(
                "MAX_FORWARDS",
                format!("{}   # mcfed's", forwarder.max_forwards),
            );
        }
    }
    let params = &config.params;
    keys.factors(&params.fairshare_factors);
    let preempt_for = params.preempt_for.to_string();
    if !preempt_for.is_empty() {
        keys.set("PREEMPT_FOR", preempt_for);
    }
    if params.preempt_backfill {
        keys.set("PREEMPT_JOBTYPE", "BACKFILL");
    }
    keys.guards(&params.preempt_guards)?;
    if let Some(sleep) = params.sleep_time {
        keys.set(
            "MBD_SLEEP_TIME",
            whole("MBD_SLEEP_TIME", sleep, 1, "seconds")?,
        );
    }
    if let Some(period) = params.clean_period {
        keys.set("CLEAN_PERIOD", whole("CLEAN_PERIOD", period, 1, "seconds")?);
    }
    if let Some(priority) = params.max_user_priority {
        keys.set("MAX_USER_PRIORITY", priority);
    }
    if let Some(escalation) = params.job_priority_over_time {
        keys.set("JOB_PRIORITY_OVER_TIME", escalation);
    }
    if let AdjustmentPlugin::Memory { threshold } = params.fairshare_adjustment {
        keys.set("FAIRSHARE_ADJUSTMENT_PLUGIN", "memory   # mcfed's");
        keys.set(
            "FAIRSHARE_ADJUSTMENT_THRESHOLD",
            format!("{threshold}   # mcfed's"),
        );
    }
    Ok(format!(
        "{HEADER}\nBegin Parameters\n{}End Parameters\n",
        keys.0
    ))
}

/// lsf.conf, when the cluster sets one of its keys mcfed models
/// (LSB_REQUEUE_TO_BOTTOM, LSB_MIG2PEND: `1` when on; off is LSF's
/// default, left out).
fn lsf_conf(config: &ClusterConfig) -> Option<String> {
    let params = &config.params;
    let keys: Vec<&str> = [
        ("LSB_REQUEUE_TO_BOTTOM", params.requeue_to_bottom),
        ("LSB_MIG2PEND", params.mig2pend),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(key, _)| key)
    .collect();
    if keys.is_empty() {
        return None;
    }
    let mut text = format!("{HEADER}\n");
    for key in keys {
        let _ = writeln!(text, "{key}=1");
    }
    Some(text)
}

fn queues(cluster: &ExportCluster<'_>, sleep: Option<Duration>) -> Result<String, String> {
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
        let _ = write!(text, "\nBegin Queue\n{}End Queue\n", keys.0);
    }
    Ok(text)
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

fn cell<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "()".to_owned(), |value| value.to_string())
}

fn hosts(config: &ClusterConfig) -> String {
    let mut text = format!("{HEADER}\nBegin Host\nHOST_NAME            MXJ     JL/U\n");
    for host in &config.hosts {
        let _ = writeln!(
            text,
            "{:<20} {:<7} {}",
            host.name,
            host.max_slots,
            cell(host.user_slot_limit)
        );
    }
    text.push_str("End Host\n");
    text
}

fn users(config: &ClusterConfig) -> Result<String, String> {
    let mut text = HEADER.to_owned();
    if !config.user_groups.is_empty() {
        text.push_str(
            "\nBegin UserGroup\nGROUP_NAME           GROUP_MEMBER                   USER_SHARES\n",
        );
        for group in &config.user_groups {
            let shares = match &group.user_shares {
                None => "()".to_owned(),
                Some(shares) if shares.entries.is_empty() => {
                    return Err(format!(
                        "user group {}: an empty USER_SHARES has no LSF spelling (`()` is no USER_SHARES at all)",
                        group.name
                    ));
                }
                Some(shares) => format!("({})", crate::import::share_list(shares)),
            };
            let members = format!("({})", group.members.join(" "));
            let _ = writeln!(text, "{:<20} {members:<30} {shares}", group.name);
        }
        text.push_str("End UserGroup\n");
    }
    if !config.users.is_empty() {
        text.push_str("\nBegin User\nUSER_NAME            MAX_JOBS  JL/P\n");
        for user in &config.users {
            let _ = writeln!(
                text,
                "{:<20} {:<9} {}",
                user.name,
                cell(user.max_jobs),
                cell(user.slots_per_processor)
            );
        }
        text.push_str("End User\n");
    }
    Ok(text)
}

/// lsb.resources: one Limit section per limit.
fn resources(config: &ClusterConfig) -> String {
    let mut text = HEADER.to_owned();
    for limit in &config.limits {
        let mut keys = Assignments::default();
        keys.set("NAME", &limit.name);
        for (key, consumers) in [
            ("USERS", &limit.users),
            ("PER_USER", &limit.per_user),
            ("QUEUES", &limit.queues),
            ("PER_QUEUE", &limit.per_queue),
            ("HOSTS", &limit.hosts),
            ("PER_HOST", &limit.per_host),
        ] {
            if let Some(consumers) = consumers {
                keys.set(key, consumer_words(consumers));
            }
        }
        for (key, value) in [("SLOTS", limit.slots), ("JOBS", limit.jobs)] {
            if let Some(value) = value {
                keys.set(key, value);
            }
        }
        let _ = write!(text, "\nBegin Limit\n{}End Limit\n", keys.0);
    }
    text
}

/// `all name ~excluded` as a Limit lists its consumers.
fn consumer_words(consumers: &Consumers) -> String {
    let all = consumers.all.then(|| "all".to_owned());
    let excluded = consumers.excluded.iter().map(|name| format!("~{name}"));
    all.into_iter()
        .chain(consumers.names.iter().cloned())
        .chain(excluded)
        .collect::<Vec<_>>()
        .join(" ")
}

fn cluster_file(config: &ClusterConfig) -> String {
    let mut text = format!(
        "{HEADER}# ncpus, ngpus, maxmem (MB) and closed are mcfed's columns: what lshosts\n# and badmin hclose would say of an emulated host.\n\nBegin Host\nHOSTNAME             server  RESOURCES            ncpus  ngpus  maxmem  closed\n"
    );
    for host in &config.hosts {
        let resources = if host.resources.is_empty() {
            "()".to_owned()
        } else {
            format!("({})", host.resources.join(" "))
        };
        let memory = (host.memory_mb > 0).then_some(host.memory_mb);
        let gpus = (host.gpus > 0).then_some(host.gpus);
        let _ = writeln!(
            text,
            "{:<20} 1       {:<20} {:<6} {:<6} {:<7} {}",
            host.name,
            resources,
            cell(host.processors),
            cell(gpus),
            cell(memory),
            if host.closed { "Y" } else { "()" }
        );
    }
    text.push_str("End Host\n");
    text
}
