//! Job control: what an administrator's `bkill`, `bstop`, `bresume`,
//! `brequeue`, `bswitch`, `bmod`, `bmig` and `bresize release` ask of a
//! job ([`JobAction`]), and the
//! messages that carry such a request from a job's submission cluster to
//! the execution cluster it was forwarded to ([`JobControl`]) and its
//! answer ([`JobControlReply`]): as in LSF, a command given at the
//! submission cluster reaches the cluster where the job is.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::names::QueueName;

/// What a job control command asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobAction {
    /// `bkill`: the job ends with status EXIT (a running job is killed, a
    /// pending one removed).
    Kill,
    /// `bstop`: a running job is suspended (USUSP, keeping its slots), a
    /// pending one held (PSUSP).
    Stop,
    /// `bresume`: a USUSP job runs again, a PSUSP one pends again.
    Resume,
    /// `brequeue`: a running or suspended job is killed and requeued, to
    /// pend again from the start with the same id, behind the jobs already
    /// pending (it is dispatched by its requeue time).
    Requeue,
    /// `bswitch QUEUE`: a pending job moves to another queue.
    Switch(QueueName),
    /// `bmod`: change the run limit, the slots or the priority.
    Modify(JobChanges),
    /// `bmig`: a running job of a RERUNNABLE queue is killed on its hosts
    /// and pends again, keeping its priority (absolute priority
    /// scheduling's values).
    Migrate,
    /// `bresize release`: a running resizable job gives back slots.
    Release(SlotRelease),
}

/// What `bresize release` gives back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SlotRelease {
    /// `all`: every slot but one on the job's first host.
    All,
    /// `"N*host ..."`: these slots on these hosts.
    Hosts(Vec<(String, u32)>),
}

impl fmt::Display for SlotRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotRelease::All => f.write_str("all"),
            SlotRelease::Hosts(hosts) => {
                let parts: Vec<String> = hosts
                    .iter()
                    .map(|(host, slots)| format!("{slots}*{host}"))
                    .collect();
                write!(f, "\"{}\"", parts.join(" "))
            }
        }
    }
}

impl std::str::FromStr for SlotRelease {
    type Err = String;

    /// `all`, or LSF's `"N*host ..."` (`host` alone is one slot).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text == "all" {
            return Ok(SlotRelease::All);
        }
        let mut hosts = Vec::new();
        for word in text.split_whitespace() {
            let (slots, host) = match word.split_once('*') {
                Some((slots, host)) => (
                    slots
                        .parse::<u32>()
                        .ok()
                        .filter(|&slots| slots > 0)
                        .ok_or_else(|| format!("`{word}`: expected N*host with N at least 1"))?,
                    host,
                ),
                None => (1, word),
            };
            if host.is_empty() {
                return Err(format!("`{word}`: a host name is missing"));
            }
            hosts.push((host.to_owned(), slots));
        }
        if hosts.is_empty() {
            return Err("expected `all` or \"N*host ...\"".to_owned());
        }
        Ok(SlotRelease::Hosts(hosts))
    }
}

/// A value given with `bmod -aps`: a floating-point number that compares
/// by its bits, so the messages carrying it stay `Eq`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ApsNumber(pub f64);

impl PartialEq for ApsNumber {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for ApsNumber {}

/// `bmod -aps "system=V"`, `-aps "admin=V"` or `-apsn`: absolute priority
/// scheduling's per-job values. The last `-aps` replaces the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApsChange {
    /// `system=V`: a static value that puts the job ahead of every
    /// calculated value.
    System(ApsNumber),
    /// `admin=V`: added to the job's calculated value.
    Admin(ApsNumber),
    /// `-apsn`: the system or admin value is removed.
    Clear,
}

impl fmt::Display for ApsChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApsChange::System(value) => write!(f, "-aps \"system={}\"", value.0),
            ApsChange::Admin(value) => write!(f, "-aps \"admin={}\"", value.0),
            ApsChange::Clear => f.write_str("-apsn"),
        }
    }
}

impl std::str::FromStr for ApsChange {
    type Err = String;

    /// `system=V` or `admin=V` (what `bmod -aps` takes).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (key, value) = text
            .trim()
            .split_once('=')
            .ok_or_else(|| format!("expected \"system=V\" or \"admin=V\", not `{text}`"))?;
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|value: &f64| value.is_finite())
            .ok_or_else(|| format!("`{}` is not a number", value.trim()))?;
        match key.trim().to_ascii_lowercase().as_str() {
            "system" => Ok(ApsChange::System(ApsNumber(value))),
            "admin" => Ok(ApsChange::Admin(ApsNumber(value))),
            other => Err(format!(
                "`{other}`: bmod -aps sets `system` or `admin` values"
            )),
        }
    }
}

impl JobAction {
    /// The LSF command that asks it.
    pub fn command(&self) -> &'static str {
        match self {
            JobAction::Kill => "bkill",
            JobAction::Stop => "bstop",
            JobAction::Resume => "bresume",
            JobAction::Requeue => "brequeue",
            JobAction::Switch(_) => "bswitch",
            JobAction::Modify(_) => "bmod",
            JobAction::Migrate => "bmig",
            JobAction::Release(_) => "bresize release",
        }
    }
}

impl fmt::Display for JobAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobAction::Switch(queue) => write!(f, "bswitch {queue}"),
            JobAction::Modify(changes) => write!(f, "bmod {changes}"),
            JobAction::Release(release) => write!(f, "bresize release {release}"),
            other => f.write_str(other.command()),
        }
    }
}

/// What `bmod` changes; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobChanges {
    /// `-W LIMIT` (`Some(Some(limit))`) or `-Wn` (`Some(None)`: no limit).
    pub run_limit: Option<Option<Duration>>,
    /// `-n SLOTS` (pending jobs only).
    pub slots: Option<u32>,
    /// `-sp PRIORITY`: the user-assigned job priority.
    pub user_priority: Option<u32>,
    /// `-aps "system=V"`, `-aps "admin=V"` or `-apsn`.
    pub aps: Option<ApsChange>,
}

impl JobChanges {
    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        *self == JobChanges::default()
    }

    /// `spec` with these changes made (whether they are allowed is the
    /// caller's to check).
    pub fn apply_to(&self, spec: &mut crate::job::JobSpec) {
        if let Some(slots) = self.slots {
            spec.slots = slots;
        }
        if let Some(limit) = self.run_limit {
            spec.run_limit = limit;
        }
        if let Some(priority) = self.user_priority {
            let mut options = spec.options();
            options.user_priority = Some(priority);
            spec.set_options(options);
        }
    }
}

impl fmt::Display for JobChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match self.run_limit {
            Some(Some(limit)) => parts.push(format!("-W {}m", limit.as_secs().div_ceil(60))),
            Some(None) => parts.push("-Wn".to_owned()),
            None => {}
        }
        if let Some(slots) = self.slots {
            parts.push(format!("-n {slots}"));
        }
        if let Some(priority) = self.user_priority {
            parts.push(format!("-sp {priority}"));
        }
        if let Some(aps) = self.aps {
            parts.push(aps.to_string());
        }
        f.write_str(&parts.join(" "))
    }
}

/// A submission cluster asks the execution cluster holding one of its
/// forwarded jobs to act on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobControl {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// What to do.
    pub action: JobAction,
}

/// The execution cluster's answer to a [`JobControl`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobControlReply {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// Its id at the execution cluster, if it holds it.
    pub dest_job: Option<u64>,
    /// What was asked.
    pub action: JobAction,
    /// `Ok` with what was done, or why it was refused.
    pub outcome: Result<String, String>,
}
