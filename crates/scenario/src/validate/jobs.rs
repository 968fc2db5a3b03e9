//! Jobs: those present at start (`[[cluster.job]]`, with their expected
//! initial state) and those submitted during the run (`[[submit]]`), each
//! entry checked and expanded into named job specs.

use std::time::Duration;

use mcfed_cluster::{MAX_GPUS, QueueConfig};
use mcfed_protocol::{ClusterName, JobSpec, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

use super::{DEFAULT_RUN_TIME, DEFAULT_USER};
use crate::check::Checker;
use crate::expect::Expectation;
use crate::format::{RawCluster, RawJob};
use crate::locate::FieldPath;
use crate::model::{ClusterSpec, InitialJobs, Submission};

/// The clusters each name of a job present at start is used in.
pub(super) type InitialNames = FxHashMap<String, Vec<ClusterName>>;

impl Checker<'_> {
    /// Adds the jobs present at start to `specs`, the cluster of `clusters`
    /// whose name is `names` at the same index. Returns the expectations
    /// their `state` keys make, and the clusters each job name is used in.
    pub(super) fn initial_jobs(
        &mut self,
        clusters: &[RawCluster],
        names: &[Option<ClusterName>],
        specs: &mut [ClusterSpec],
        counter: &mut usize,
    ) -> (Vec<Expectation>, InitialNames) {
        let mut expectations = Vec::new();
        let mut initial_names = InitialNames::default();
        for (cluster_index, cluster) in clusters.iter().enumerate() {
            let Some(spec) = specs
                .iter_mut()
                .find(|spec| names[cluster_index].as_ref() == Some(&spec.config.name))
            else {
                continue;
            };
            for (group_index, job) in cluster.job.iter().enumerate() {
                let path = FieldPath::root()
                    .key("cluster")
                    .index(cluster_index)
                    .key("job")
                    .index(group_index);
                let Some((queue, jobs)) = self.jobs(&path, job, spec, false, counter) else {
                    continue;
                };
                let group = spec.initial_jobs.len();
                for job_spec in &jobs {
                    initial_names
                        .entry(job_spec.name.to_string())
                        .or_default()
                        .push(spec.config.name.clone());
                }
                if let Some(state) = &job.state {
                    let cluster = &spec.config.name;
                    expectations.extend(self.initial_state(&path, state, cluster, group));
                }
                spec.initial_jobs.push(InitialJobs { queue, jobs });
            }
        }
        (expectations, initial_names)
    }

    /// The submissions of every `[[submit]]`, in time order; a job name
    /// used twice is a problem.
    pub(super) fn submissions(
        &mut self,
        raw: &[RawJob],
        specs: &[ClusterSpec],
        counter: &mut usize,
    ) -> Vec<Submission> {
        let mut submissions = Vec::new();
        let mut seen_names: FxHashSet<String> = FxHashSet::default();
        for (index, job) in raw.iter().enumerate() {
            let path = FieldPath::root().key("submit").index(index);
            let Some(submitted) = self.submission(&path, job, specs, counter) else {
                continue;
            };
            for submission in submitted {
                if !seen_names.insert(submission.spec.name.to_string()) {
                    self.problem(
                        path.key("name"),
                        format!("job name `{}` is used twice", submission.spec.name),
                    );
                }
                submissions.push(submission);
            }
        }
        submissions.sort_by_key(|submission| submission.at);
        submissions
    }

    /// Expands a job entry into job specs, checking its fields.
    fn jobs(
        &mut self,
        path: &FieldPath,
        raw: &RawJob,
        cluster: &ClusterSpec,
        submitted: bool,
        counter: &mut usize,
    ) -> Option<(String, Vec<JobSpec>)> {
        let mut ok = self.job_placement(path, raw, submitted);
        let queue = self.job_queue(path, raw, cluster)?;
        if !submitted && !queue.send_to.is_empty() {
            self.problem(
                path.key("queue"),
                format!(
                    "`{}` is a send queue; jobs present at start must be in local queues",
                    raw.queue
                ),
            );
            ok = false;
        }
        ok &= self.job_values(path, raw, submitted);
        ok &= self.job_aps_values(path, raw);
        if let Some(priority) = raw.priority {
            ok &= self.priority_allowed(
                &path.key("priority"),
                priority,
                &cluster.config.name,
                cluster,
            );
        }
        // In a local queue the job must be able to run there some day.
        ok &= self.job_resources(path, raw, cluster, queue.send_to.is_empty());
        if !ok || !self.job_spec_bounds(path, raw) {
            return None;
        }
        Some((raw.queue.clone(), expand(raw, counter)))
    }

    /// Whether the entry's jobs pass [`JobSpec::check_bounds`] (the check
    /// every way a job enters makes: name and user bounded, no control
    /// character, every number in bounds), checked on the longest name the
    /// entry makes before any job is made; a refusal is at the field it
    /// is about.
    fn job_spec_bounds(&mut self, path: &FieldPath, raw: &RawJob) -> bool {
        let mut spec = base_spec(raw);
        spec.name = job_name(raw, raw.count.unwrap_or(1), 0).into();
        let Err(message) = spec.check_bounds() else {
            return true;
        };
        let key = [
            ("job name", "name"),
            ("user name", "user"),
            ("resource", "resources"),
            ("slots", "slots"),
            ("memory", "memory_mb"),
            ("run time", "run_time"),
            ("cpu_utilisation", "cpu_utilisation"),
        ]
        .into_iter()
        .find(|(what, _)| message.starts_with(what))
        .map(|(_, key)| key);
        self.problem(
            key.map_or_else(|| path.clone(), |key| path.key(key)),
            message,
        );
        false
    }

    /// Whether the keys that say where and when a job is (`at`, `cluster`,
    /// `state`) belong in its kind of entry.
    fn job_placement(&mut self, path: &FieldPath, raw: &RawJob, submitted: bool) -> bool {
        let mut ok = true;
        if !submitted {
            if raw.at.is_some() {
                self.problem(
                    path.key("at"),
                    "`at` belongs in [[submit]]; jobs under [[cluster.job]] are present at start",
                );
                ok = false;
            }
            if raw.cluster.is_some() {
                self.problem(
                    path.key("cluster"),
                    "`cluster` belongs in [[submit]]; this job is already inside its cluster",
                );
                ok = false;
            }
        } else if raw.state.is_some() {
            self.problem(
                path.key("state"),
                "`state` is only for jobs present at start ([[cluster.job]])",
            );
            ok = false;
        }
        ok
    }

    /// The queue of `cluster` a job entry names.
    fn job_queue<'c>(
        &mut self,
        path: &FieldPath,
        raw: &RawJob,
        cluster: &'c ClusterSpec,
    ) -> Option<&'c QueueConfig> {
        let found = cluster
            .config
            .queues
            .iter()
            .find(|q| q.name == raw.queue.as_str());
        if found.is_none() {
            self.problem(
                path.key("queue"),
                format!(
                    "cluster `{}` has no queue `{}`",
                    cluster.config.name, raw.queue
                ),
            );
        }
        found
    }

    /// Whether a job entry's `slots`, `count`, `cpu_utilisation`,
    /// `run_estimate`, `gpus` and `every` are valid.
    fn job_values(&mut self, path: &FieldPath, raw: &RawJob, submitted: bool) -> bool {
        let mut ok = true;
        if raw.slots.unwrap_or(1) == 0 {
            self.problem(path.key("slots"), "a job needs at least one slot");
            ok = false;
        }
        if raw.count.unwrap_or(1) == 0 {
            self.problem(path.key("count"), "count must be at least 1");
            ok = false;
        }
        if let Some(cpu) = raw.cpu_utilisation {
            if !(cpu.is_finite() && (0.0..=1.0).contains(&cpu)) {
                self.problem(
                    path.key("cpu_utilisation"),
                    "cpu_utilisation must be between 0 and 1",
                );
                ok = false;
            }
        }
        if raw
            .run_estimate
            .is_some_and(|estimate| estimate.0.is_zero())
        {
            self.problem(
                path.key("run_estimate"),
                "run_estimate must be longer than zero",
            );
            ok = false;
        }
        if raw.gpus.is_some_and(|gpus| gpus > MAX_GPUS) {
            self.problem(
                path.key("gpus"),
                format!("gpus must be at most {MAX_GPUS} (GPUs on each host of the job)"),
            );
            ok = false;
        }
        if raw.every.is_some() && !submitted {
            self.problem(path.key("every"), "`every` belongs in [[submit]]");
            ok = false;
        }
        if let Some(user) = &raw.user {
            if user.trim().is_empty() || user.contains(char::is_whitespace) {
                self.problem(
                    path.key("user"),
                    format!("`{user}` is not a user name (empty, or with spaces)"),
                );
                ok = false;
            }
        }
        if raw.run_limit.is_some_and(|limit| limit.0.is_zero()) {
            self.problem(
                path.key("run_limit"),
                "a run limit must be longer than zero (leave it out for none)",
            );
            ok = false;
        }
        ok
    }

    /// Whether a job entry's `max_slots` (at least its slots) and
    /// `auto_resize` (with `max_slots`) are valid.
    fn job_aps_values(&mut self, path: &FieldPath, raw: &RawJob) -> bool {
        let mut ok = true;
        if let Some(max) = raw.max_slots {
            if max < raw.slots.unwrap_or(1) {
                self.problem(
                    path.key("max_slots"),
                    "max_slots (bsub -n min,max's max) must be at least `slots`",
                );
                ok = false;
            }
        }
        if raw.auto_resize == Some(true) && raw.max_slots.is_none() {
            self.problem(
                path.key("auto_resize"),
                "auto_resize (bsub -ar) needs max_slots (bsub -n min,max)",
            );
            ok = false;
        }
        ok
    }

    /// Whether the job's resources read (a boolean resource, `type==X`,
    /// `model==X`; [`mcfed_cluster::host_types::requirement_word`]) and, in
    /// a local queue (`local`), some host of `cluster` offers each.
    fn job_resources(
        &mut self,
        path: &FieldPath,
        raw: &RawJob,
        cluster: &ClusterSpec,
        local: bool,
    ) -> bool {
        let words = match requirement_words(&raw.resources) {
            Ok(words) => words,
            Err(message) => {
                self.problem(path.key("resources"), message);
                return false;
            }
        };
        if let Some(name) = &raw.reservation {
            let user = raw.user.as_deref().unwrap_or(DEFAULT_USER);
            // A configured reservation, or one a `brsvadd` action makes.
            let added = self
                .added_reservations
                .iter()
                .find(|(at, added, _)| *at == cluster.config.name.as_str() && added == name)
                .map(|(_, _, users)| users);
            let users = cluster
                .config
                .advance_reservations
                .iter()
                .find(|reservation| reservation.name == *name)
                .map(|reservation| &reservation.users)
                .or(added);
            let problem = match users {
                None => Some(format!(
                    "cluster `{}` has no advance reservation named `{name}`",
                    cluster.config.name
                )),
                Some(users) if !users.iter().any(|u| u == "all" || u == user) => {
                    Some(format!("reservation `{name}` is not for user `{user}`"))
                }
                Some(_) => None,
            };
            if let Some(message) = problem {
                self.problem(path.key("reservation"), message);
                return false;
            }
        }
        let offered = |word: &String| cluster.config.hosts.iter().any(|host| host.offers(word));
        let Some(missing) = words.iter().find(|word| local && !offered(word)) else {
            return true;
        };
        let what = if missing.contains("==") {
            "is of"
        } else {
            "offers resource"
        };
        self.problem(
            path.key("resources"),
            format!(
                "no host of cluster `{}` {what} `{missing}`",
                cluster.config.name
            ),
        );
        false
    }

    /// The submissions of one `[[submit]]`, `every` apart from `at`.
    fn submission(
        &mut self,
        path: &FieldPath,
        raw: &RawJob,
        specs: &[ClusterSpec],
        counter: &mut usize,
    ) -> Option<Vec<Submission>> {
        let Some(at) = raw.at else {
            self.problem(
                path.key("at"),
                "a [[submit]] needs `at` (when the job is submitted)",
            );
            return None;
        };
        let Some(cluster_name) = &raw.cluster else {
            self.problem(
                path.key("cluster"),
                "a [[submit]] needs `cluster` (where the job is submitted)",
            );
            return None;
        };
        let Some(cluster) = specs
            .iter()
            .find(|spec| spec.config.name == cluster_name.as_str())
        else {
            self.problem(
                path.key("cluster"),
                format!("unknown cluster `{cluster_name}`"),
            );
            return None;
        };
        let (queue, jobs) = self.jobs(path, raw, cluster, true, counter)?;
        let forwarded = cluster.member_spec().route(&queue) == mcfed_federation::Route::Forward;
        let every = raw.every.map_or(Duration::ZERO, |d| d.0);
        let start = SimTime::from(at.0);
        let queue: std::sync::Arc<str> = queue.into();
        Some(
            jobs.into_iter()
                .enumerate()
                .map(|(n, spec)| Submission {
                    at: start + every * u32::try_from(n).unwrap_or(u32::MAX),
                    cluster: cluster.config.name.clone(),
                    queue: queue.clone(),
                    forwarded,
                    spec,
                })
                .collect(),
        )
    }
}

/// The job specs of a valid job entry: `count` of them, named `name`,
/// `name-1`, `name-2`, … or `job<n>` by `counter`, which counts every job
/// of the scenario.
fn expand(raw: &RawJob, counter: &mut usize) -> Vec<JobSpec> {
    let count = raw.count.unwrap_or(1);
    let base = base_spec(raw);
    (1..=count)
        .map(|n| {
            *counter += 1;
            JobSpec {
                name: job_name(raw, n, *counter).into(),
                ..base.clone()
            }
        })
        .collect()
}

/// Job `n` (from 1) of an entry's `count`: `name`, `name-N`, or
/// `job<counter>` without a name.
fn job_name(raw: &RawJob, n: u32, counter: usize) -> String {
    match (&raw.name, raw.count.unwrap_or(1)) {
        (Some(name), 1) => name.clone(),
        (Some(name), _) => format!("{name}-{n}"),
        (None, _) => format!("job{counter}"),
    }
}

/// A job's `resources` as requirement words: `type == X` read as
/// `type==X`, `type==any` left out.
fn requirement_words(resources: &[String]) -> Result<Vec<String>, String> {
    let mut words = Vec::with_capacity(resources.len());
    for resource in resources {
        if let Some(word) = mcfed_cluster::host_types::requirement_word(resource)? {
            words.push(word);
        }
    }
    Ok(words)
}

/// What every job of an entry shares: all but its name.
fn base_spec(raw: &RawJob) -> JobSpec {
    let base = JobSpec {
        name: "".into(),
        user: raw.user.as_deref().unwrap_or(DEFAULT_USER).into(),
        slots: raw.slots.unwrap_or(1),
        run_time: raw.run_time.map_or(DEFAULT_RUN_TIME, |d| d.0),
        run_limit: raw.run_limit.map(|d| d.0),
        run_estimate: raw.run_estimate.map(|d| d.0),
        gpus: raw.gpus.unwrap_or(0),
        resources: requirement_words(&raw.resources)
            .unwrap_or_default()
            .into_iter()
            .chain(
                raw.reservation
                    .as_deref()
                    .map(mcfed_cluster::advance::reservation_word),
            )
            .collect(),
        cpu_utilisation: raw.cpu_utilisation.unwrap_or(1.0),
        memory_mb: raw.memory_mb.unwrap_or(0),
        options: None,
    };
    let mut base = base;
    base.set_options(mcfed_protocol::JobOptions {
        user_priority: raw.priority,
        mem_request_mb: raw.mem,
        swap_request_mb: raw.swap,
        max_slots: raw.max_slots,
        auto_resize: raw.auto_resize.unwrap_or(false),
        ..mcfed_protocol::JobOptions::default()
    });
    base
}
