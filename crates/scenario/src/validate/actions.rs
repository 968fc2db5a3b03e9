//! Job control commands at given times (`[[action]]`): `bkill`, `bstop`,
//! `bresume`, `brequeue`, `bswitch`, `bmod`, `bmig` and `bresize`, each
//! naming a job of the scenario and the cluster the command is given at,
//! and host failures (`host_fail`, `host_recover`), naming a host. The keys
//! a command takes are checked here; whether the job's state allows it is
//! for the run to say (a refused command is reported, as `bkill` would
//! print it).

use mcfed_cluster::HostEvent;
use mcfed_protocol::{ApsChange, ClusterName, JobAction, JobChanges, QueueName, SimTime};

use crate::check::Checker;
use crate::check::job_index::{JobIndex, JobRef};
use crate::format::RawAction;
use crate::locate::FieldPath;
use crate::model::{Action, ActionKind, ClusterSpec};

/// The keys a job's command takes beyond `job` (`bmod`'s, `bswitch`'s
/// queue, `bresize`'s release), `job` first: none of them belongs in a
/// host's or a reservation's action.
pub(super) fn job_keys(raw: &RawAction) -> [(&'static str, bool); 9] {
    [
        ("job", raw.job.is_some()),
        ("queue", raw.queue.is_some()),
        ("run_limit", raw.run_limit.is_some()),
        ("no_run_limit", raw.no_run_limit.is_some()),
        ("slots", raw.slots.is_some()),
        ("priority", raw.priority.is_some()),
        ("aps", raw.aps.is_some()),
        ("apsn", raw.apsn.is_some()),
        ("release", raw.release.is_some()),
    ]
}

impl Checker<'_> {
    /// A problem at each of `keys` that is set: it does not belong in a
    /// `command` action.
    pub(super) fn foreign_keys(
        &mut self,
        path: &FieldPath,
        command: &str,
        keys: impl IntoIterator<Item = (&'static str, bool)>,
    ) {
        for (key, set) in keys {
            if set {
                self.problem(
                    path.key(key),
                    format!("`{key}` does not belong in a `{command}` action"),
                );
            }
        }
    }
}

/// The commands an action may give.
const COMMANDS: [&str; 12] = [
    "bkill",
    "bstop",
    "bresume",
    "brequeue",
    "bswitch",
    "bmod",
    "bmig",
    "bresize",
    "host_fail",
    "host_recover",
    "brsvadd",
    "brsvdel",
];

/// The commands that act on a host rather than a job.
const HOST_COMMANDS: [&str; 2] = ["host_fail", "host_recover"];

impl Checker<'_> {
    /// The actions of every `[[action]]`, in time order.
    pub(super) fn actions(
        &mut self,
        raw: &[RawAction],
        specs: &[ClusterSpec],
        jobs: &JobIndex<'_>,
    ) -> Vec<Action> {
        let mut actions: Vec<Action> = raw
            .iter()
            .enumerate()
            .filter_map(|(index, action)| {
                let path = FieldPath::root().key("action").index(index);
                self.action(&path, action, specs, jobs)
            })
            .collect();
        actions.sort_by_key(|action| action.at);
        actions
    }

    fn action(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        specs: &[ClusterSpec],
        jobs: &JobIndex<'_>,
    ) -> Option<Action> {
        let at = self.needed(path, "at", raw.at.map(|at| SimTime::from(at.0)));
        let cluster = self.action_cluster(path, raw, specs);
        let command = self.needed(path, "command", raw.command.clone());
        if let Some(command) = command.as_deref().filter(|c| HOST_COMMANDS.contains(c)) {
            return self.host_action(path, raw, command, at, cluster);
        }
        if let Some(command) = command
            .as_deref()
            .filter(|c| super::reservation_actions::COMMANDS.contains(c))
        {
            return self.reservation_action(path, raw, command, at, cluster);
        }
        self.no_reservation_keys(path, raw, command.as_deref().unwrap_or("this"));
        if raw.host.is_some() {
            self.problem(
                path.key("host"),
                "`host` belongs in a `host_fail` or `host_recover` action",
            );
        }
        let job = self.needed(path, "job", raw.job.clone());
        let command = command.filter(|command| {
            let known = COMMANDS.contains(&command.as_str());
            if !known {
                self.problem(
                    path.key("command"),
                    format!(
                        "unknown command `{command}` (expected one of {})",
                        COMMANDS.join(", ")
                    ),
                );
            }
            known
        })?;
        if let (Some(job), Some(at)) = (&job, at) {
            self.action_job(path, job, at, jobs);
        }
        let action = self.action_of(path, raw, &command, cluster, specs)?;
        Some(Action {
            at: at?,
            cluster: cluster?.config.name.clone(),
            job: job?,
            action: ActionKind::Job(action),
            origin: path.to_string(),
        })
    }

    /// A `host_fail` or `host_recover` action: a host of its cluster, and
    /// no job keys.
    fn host_action(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        command: &str,
        at: Option<SimTime>,
        cluster: Option<&ClusterSpec>,
    ) -> Option<Action> {
        self.no_reservation_keys(path, raw, command);
        self.foreign_keys(path, command, job_keys(raw));
        let host = self.needed(path, "host", raw.host.clone())?;
        let cluster = cluster?;
        if !cluster.config.hosts.iter().any(|h| h.name == host) {
            self.problem(
                path.key("host"),
                format!("cluster `{}` has no host `{host}`", cluster.config.name),
            );
            return None;
        }
        let event = if command == "host_fail" {
            HostEvent::Fail
        } else {
            HostEvent::Recover
        };
        Some(Action {
            at: at?,
            cluster: cluster.config.name.clone(),
            job: host,
            action: ActionKind::Host(event),
            origin: path.to_string(),
        })
    }

    /// A required key's value, or a problem saying it is missing.
    pub(super) fn needed<T>(&mut self, path: &FieldPath, key: &str, value: Option<T>) -> Option<T> {
        if value.is_none() {
            self.problem(path.key(key), format!("an [[action]] needs `{key}`"));
        }
        value
    }

    pub(super) fn action_cluster<'s>(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        specs: &'s [ClusterSpec],
    ) -> Option<&'s ClusterSpec> {
        let name = self.needed(path, "cluster", raw.cluster.as_ref())?;
        let found = specs.iter().find(|spec| spec.config.name == name.as_str());
        if found.is_none() {
            self.problem(path.key("cluster"), format!("unknown cluster `{name}`"));
        }
        found
    }

    /// The job must exist, and be submitted by the time of the action.
    fn action_job(&mut self, path: &FieldPath, job: &str, at: SimTime, jobs: &JobIndex<'_>) {
        match jobs.find(job) {
            Err(message) => self.problem(path.key("job"), message),
            Ok(JobRef::Submitted(submission)) if submission.at > at => self.problem(
                path.key("job"),
                format!(
                    "job `{job}` is submitted at {}, after this action ({at})",
                    submission.at
                ),
            ),
            Ok(_) => {}
        }
    }

    /// The command's [`JobAction`], with the keys it takes checked.
    fn action_of(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        command: &str,
        cluster: Option<&ClusterSpec>,
        specs: &[ClusterSpec],
    ) -> Option<JobAction> {
        let allowed: &[&str] = match command {
            "bswitch" => &["queue"],
            "bresize" => &["release"],
            "bmod" => &[
                "run_limit",
                "no_run_limit",
                "slots",
                "priority",
                "aps",
                "apsn",
            ],
            _ => &[],
        };
        let keys = job_keys(raw).into_iter().skip(1);
        self.foreign_keys(
            path,
            command,
            keys.filter(|(key, _)| !allowed.contains(key)),
        );
        match command {
            "bkill" => Some(JobAction::Kill),
            "bstop" => Some(JobAction::Stop),
            "bresume" => Some(JobAction::Resume),
            "brequeue" => Some(JobAction::Requeue),
            "bmig" => Some(JobAction::Migrate),
            "bresize" => {
                let text = self.needed(path, "release", raw.release.as_ref())?;
                match text.parse() {
                    Ok(release) => Some(JobAction::Release(release)),
                    Err(error) => {
                        self.problem(path.key("release"), error);
                        None
                    }
                }
            }
            "bswitch" => self.switch_target(path, raw, specs).map(JobAction::Switch),
            _ => self.changes(path, raw, cluster).map(JobAction::Modify),
        }
    }

    /// `bswitch`'s queue: a queue of some cluster of the scenario.
    fn switch_target(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        specs: &[ClusterSpec],
    ) -> Option<QueueName> {
        let queue = self.needed(path, "queue", raw.queue.as_ref())?;
        let known = specs
            .iter()
            .any(|spec| spec.config.queues.iter().any(|q| q.name == queue.as_str()));
        if !known {
            self.problem(
                path.key("queue"),
                format!("no cluster has a queue `{queue}`"),
            );
            return None;
        }
        self.name(path.key("queue"), queue)
    }

    /// `bmod`'s changes: at least one, none of them zero.
    fn changes(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        cluster: Option<&ClusterSpec>,
    ) -> Option<JobChanges> {
        let mut changes = JobChanges {
            run_limit: raw.run_limit.map(|limit| Some(limit.0)),
            slots: raw.slots,
            user_priority: raw.priority,
            aps: None,
        };
        let mut ok = true;
        match (&raw.aps, raw.apsn) {
            (Some(_), Some(true)) => {
                self.problem(path.key("apsn"), "give `aps` or `apsn`, not both");
                ok = false;
            }
            (Some(text), _) => match text.parse::<ApsChange>() {
                Ok(change) => changes.aps = Some(change),
                Err(error) => {
                    self.problem(path.key("aps"), error);
                    ok = false;
                }
            },
            (None, Some(true)) => changes.aps = Some(ApsChange::Clear),
            (None, _) => {}
        }
        if raw.no_run_limit == Some(true) {
            if raw.run_limit.is_some() {
                self.problem(
                    path.key("no_run_limit"),
                    "give `run_limit` or `no_run_limit`, not both",
                );
            }
            changes.run_limit = Some(None);
        }
        if changes.is_empty() && ok {
            self.problem(
                path.key("command"),
                "a `bmod` action changes `run_limit`, `no_run_limit`, `slots`, `priority`, `aps` or `apsn`",
            );
            return None;
        }
        if raw.run_limit.is_some_and(|limit| limit.0.is_zero()) {
            self.problem(
                path.key("run_limit"),
                "a run limit must be longer than zero",
            );
            ok = false;
        }
        if raw.slots == Some(0) {
            self.problem(path.key("slots"), "a job needs at least one slot");
            ok = false;
        }
        if let (Some(priority), Some(cluster)) = (raw.priority, cluster) {
            ok &= self.priority_allowed(
                &path.key("priority"),
                priority,
                &cluster.config.name,
                cluster,
            );
        }
        ok.then_some(changes)
    }

    /// Whether `priority` is a user priority cluster `name` takes.
    pub(super) fn priority_allowed(
        &mut self,
        field: &FieldPath,
        priority: u32,
        name: &ClusterName,
        cluster: &ClusterSpec,
    ) -> bool {
        match cluster.config.params.max_user_priority {
            None => {
                self.problem(
                    field.clone(),
                    format!("cluster `{name}` sets no MAX_USER_PRIORITY: job priorities are off"),
                );
                false
            }
            Some(max) if priority == 0 || priority > max => {
                self.problem(
                    field.clone(),
                    format!(
                        "a job priority is between 1 and MAX_USER_PRIORITY ({max}), not {priority}"
                    ),
                );
                false
            }
            Some(_) => true,
        }
    }
}
