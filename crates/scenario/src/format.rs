//! The scenario file as written: serde structs mirroring the TOML, with
//! LSF's parameter names where LSF has one.
//!
//! Every table refuses unknown keys, so a misspelt parameter is an error,
//! not a silently ignored line. Values that LSF writes in more than one way
//! (durations, lists, IMPT_JOBBKLG's `infinit`) have their own types here.
//! docs/scenarios.md documents the format.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    /// A short title.
    pub name: Option<String>,
    /// What the scenario shows.
    pub description: Option<String>,
    /// Seed for anything random (default 0).
    pub seed: Option<u64>,
    /// When the run stops (default: the last submission plus three of the
    /// longest update intervals).
    pub end: Option<DurationValue>,
    /// Federation-wide defaults of lsb.params.
    #[serde(default)]
    pub params: RawParams,
    /// The clusters.
    #[serde(default)]
    pub cluster: Vec<RawCluster>,
    /// Jobs submitted while the scenario runs.
    #[serde(default)]
    pub submit: Vec<RawJob>,
    /// Outcomes the scenario expects.
    #[serde(default)]
    pub expect: Vec<RawExpect>,
    /// Faults to inject.
    pub chaos: Option<RawChaos>,
}

/// `[chaos]`: seeded faults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawChaos {
    /// Seed of the fault generator (default: the scenario's seed).
    pub seed: Option<u64>,
    /// `[chaos.links]`: faults of every link without its own entry.
    pub links: Option<RawLink>,
    /// `[[chaos.link]]`: faults of the link from one cluster to another.
    #[serde(default)]
    pub link: Vec<RawLink>,
    /// Partitions between two clusters.
    #[serde(default)]
    pub partition: Vec<RawPartition>,
    /// Clusters going down and coming back.
    #[serde(default)]
    pub outage: Vec<RawOutage>,
    /// Clock skew per cluster.
    #[serde(default)]
    pub skew: Vec<RawSkew>,
}

/// Faults of a link: `[chaos.links]` (every link; no `from`/`to`) or one
/// `[[chaos.link]]` (with `from` and `to`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    /// Sender (`[[chaos.link]]` only).
    pub from: Option<String>,
    /// Receiver (`[[chaos.link]]` only).
    pub to: Option<String>,
    /// Fixed one-way delay.
    pub delay: Option<DurationValue>,
    /// Extra delay, uniform between zero and this.
    pub jitter: Option<DurationValue>,
    /// Probability a counter update is lost (job messages are retransmitted
    /// instead).
    pub loss: Option<f64>,
    /// Probability a counter update arrives twice.
    pub duplicate: Option<f64>,
    /// Probability a counter update is held back by `reorder_delay`.
    pub reorder: Option<f64>,
    /// How long a reordered update is held back (default: 2 × delay + 1s).
    pub reorder_delay: Option<DurationValue>,
    /// Retransmission delay of a lost job message (default 1s).
    pub retransmit: Option<DurationValue>,
}

/// `[[chaos.partition]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPartition {
    /// The two clusters that cannot reach each other.
    pub between: Vec<String>,
    /// When it starts.
    pub from: DurationValue,
    /// When it heals.
    pub until: DurationValue,
}

/// `[[chaos.outage]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutage {
    /// The cluster.
    pub cluster: String,
    /// When it goes down.
    pub at: DurationValue,
    /// How long it stays down.
    pub down_for: DurationValue,
}

/// `[[chaos.skew]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSkew {
    /// The cluster.
    pub cluster: String,
    /// Its clock runs this much ahead.
    pub ahead: Option<DurationValue>,
    /// Its clock runs this much behind.
    pub behind: Option<DurationValue>,
}

/// lsb.params: federation-wide in `[params]`, per cluster in
/// `[cluster.params]` (which wins).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawParams {
    /// How often an execution cluster sends counters.
    pub MC_PLUGIN_UPDATE_INTERVAL: Option<DurationValue>,
    /// The forwarding policy of a submission cluster.
    pub MC_PLUGIN_SCHEDULE_ENHANCE: Option<String>,
    /// mcfed's cap on forwards of one job.
    pub MAX_FORWARDS: Option<u32>,
}

/// One cluster.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    /// Its name.
    pub name: String,
    /// Where its process listens (`host:port`) when clusters run as
    /// processes (`mcfed cluster`, `mcfed launch`).
    pub address: Option<String>,
    /// Its lsb.params.
    #[serde(default)]
    pub params: RawParams,
    /// Its hosts.
    #[serde(default)]
    pub host: Vec<RawHost>,
    /// Its queues.
    #[serde(default)]
    pub queue: Vec<RawQueue>,
    /// Jobs present when the scenario starts.
    #[serde(default)]
    pub job: Vec<RawJob>,
}

/// One host, or `count` alike hosts named `name1`..`nameN`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawHost {
    /// The host's name, or the group's prefix when `count` is given.
    pub name: String,
    /// How many alike hosts (default 1: just `name`).
    pub count: Option<u32>,
    /// Job slots per host.
    pub MXJ: u32,
    /// Boolean resources of the host(s).
    #[serde(default)]
    pub resources: Vec<String>,
    /// Closed by the administrator.
    #[serde(default)]
    pub closed: bool,
}

/// One queue.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawQueue {
    /// Its name.
    pub name: String,
    /// PRIORITY (default 1).
    pub PRIORITY: Option<u32>,
    /// HOSTS: `all` (default) or host names / host entry names.
    pub HOSTS: Option<WordList>,
    /// PREEMPTION, as in lsb.queues.
    pub PREEMPTION: Option<String>,
    /// QJOB_LIMIT.
    pub QJOB_LIMIT: Option<u32>,
    /// RCVJOBS_FROM: cluster names or `allclusters`.
    pub RCVJOBS_FROM: Option<WordList>,
    /// IMPT_JOBBKLG: a number or `infinit` (default 50).
    pub IMPT_JOBBKLG: Option<Backlog>,
    /// SNDJOBS_TO: `queue@cluster` entries.
    pub SNDJOBS_TO: Option<WordList>,
    /// MAX_RSCHED_TIME (send queues): how long a forwarded job may pend at
    /// the execution cluster before it is recalled.
    pub MAX_RSCHED_TIME: Option<DurationValue>,
}

/// A job entry: in `[[cluster.job]]` (present at start) or `[[submit]]`
/// (submitted during the run). One struct serves both; validation checks
/// which keys each place allows (`at` and `cluster` only in `[[submit]]`,
/// `state` only in `[[cluster.job]]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJob {
    /// When it is submitted (`[[submit]]` only).
    pub at: Option<DurationValue>,
    /// The cluster it is submitted to (`[[submit]]` only).
    pub cluster: Option<String>,
    /// The queue.
    pub queue: String,
    /// The job's name (numbered `name-1`, `name-2`, ... when `count` > 1).
    pub name: Option<String>,
    /// How many alike jobs (default 1).
    pub count: Option<u32>,
    /// Spacing between the submissions of a `count` group (default 0).
    pub every: Option<DurationValue>,
    /// The submitting user (default `user1`).
    pub user: Option<String>,
    /// Slots (`bsub -n`, default 1).
    pub slots: Option<u32>,
    /// How long it runs once started (default 1h).
    pub run_time: Option<DurationValue>,
    /// Run limit (`bsub -W`).
    pub run_limit: Option<DurationValue>,
    /// Boolean resources every host of the job must have.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Fraction of its slots' CPU it keeps busy (default 1.0).
    pub cpu_utilisation: Option<f32>,
    /// Memory it uses, in MB (default 0).
    pub memory_mb: Option<u64>,
    /// For jobs present at start: `running` or `pending`, checked once the
    /// first dispatch pass has run.
    pub state: Option<String>,
}

/// An expected outcome.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    /// The job (by name) the expectation is about.
    pub job: Option<String>,
    /// The job's first forward goes to this `queue@cluster`.
    pub forwarded_to: Option<String>,
    /// The job's first decision leaves it pending (`true`).
    pub pends: Option<bool>,
    /// The job's last decision leaves it pending (`true`).
    pub ends_pending: Option<bool>,
    /// The decision's reason contains this text.
    pub reason_contains: Option<String>,
    /// A figure of the whole run (see `Metric`), bounded by `at_least` /
    /// `at_most`.
    pub metric: Option<String>,
    /// The metric is at least this.
    pub at_least: Option<f64>,
    /// The metric is at most this.
    pub at_most: Option<f64>,
}

/// A duration: `"30s"`, `"1h 30m"`, or a number of seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationValue(pub Duration);

impl<'de> Deserialize<'de> for DurationValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurationVisitor;
        impl Visitor<'_> for DurationVisitor {
            type Value = DurationValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration such as \"30s\", \"5m\", \"1h 30m\", or a number of seconds",
                )
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<DurationValue, E> {
                u64::try_from(value)
                    .map(|secs| DurationValue(Duration::from_secs(secs)))
                    .map_err(|_| E::custom(format!("a duration cannot be negative ({value})")))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<DurationValue, E> {
                Ok(DurationValue(Duration::from_secs(value)))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<DurationValue, E> {
                if value.is_finite() && value >= 0.0 {
                    Ok(DurationValue(Duration::from_secs_f64(value)))
                } else {
                    Err(E::custom(format!(
                        "a duration must be a non-negative number of seconds ({value})"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<DurationValue, E> {
                humantime::parse_duration(value)
                    .map(DurationValue)
                    .map_err(|error| E::custom(format!("`{value}` is not a duration: {error}")))
            }
        }
        deserializer.deserialize_any(DurationVisitor)
    }
}

/// A list written either as a TOML array of strings or, as in LSF's files,
/// as one string of space-separated words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordList(pub Vec<String>);

impl<'de> Deserialize<'de> for WordList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WordsVisitor;
        impl<'de> Visitor<'de> for WordsVisitor {
            type Value = WordList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of strings or a string of space-separated words")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<WordList, E> {
                Ok(WordList(
                    value.split_whitespace().map(str::to_owned).collect(),
                ))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WordList, A::Error> {
                let mut words = Vec::new();
                while let Some(word) = seq.next_element::<String>()? {
                    words.push(word);
                }
                Ok(WordList(words))
            }
        }
        deserializer.deserialize_any(WordsVisitor)
    }
}

/// IMPT_JOBBKLG: a number of jobs, or `infinit` for no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backlog(pub Option<u32>);

impl<'de> Deserialize<'de> for Backlog {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BacklogVisitor;
        impl Visitor<'_> for BacklogVisitor {
            type Value = Backlog;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative number of jobs or \"infinit\"")
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Backlog, E> {
                u32::try_from(value)
                    .map(|limit| Backlog(Some(limit)))
                    .map_err(|_| E::custom(format!("IMPT_JOBBKLG must be a non-negative number of jobs or \"infinit\" (got {value})")))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Backlog, E> {
                u32::try_from(value)
                    .map(|limit| Backlog(Some(limit)))
                    .map_err(|_| E::custom(format!("IMPT_JOBBKLG {value} is too large")))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<Backlog, E> {
                if value.eq_ignore_ascii_case("infinit") {
                    Ok(Backlog(None))
                } else {
                    Err(E::custom(format!(
                        "IMPT_JOBBKLG must be a number or \"infinit\" (got \"{value}\")"
                    )))
                }
            }
        }
        deserializer.deserialize_any(BacklogVisitor)
    }
}
