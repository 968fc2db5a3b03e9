//! Jobs and the messages that forward them between clusters.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::names::QueueName;
use crate::time::SimTime;

/// What a job asks for and how it behaves once it runs: everything about a
/// job that travels with it when it is forwarded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The job's name (as `bsub -J`), used in reports. Shared, so copies
    /// of a job travelling between clusters do not copy it.
    pub name: Arc<str>,
    /// The submitting user.
    pub user: Arc<str>,
    /// Slots the job needs (`bsub -n`).
    pub slots: u32,
    /// How long the job runs once started (emulated).
    pub run_time: Duration,
    /// The run limit (`bsub -W`), if any.
    pub run_limit: Option<Duration>,
    /// The run-time estimate (`bsub -We`), if any: what the scheduler
    /// expects the job to take (NO_PREEMPT_FINISH_TIME reads it before the
    /// run limit); unlike the run limit it is never enforced.
    pub run_estimate: Option<Duration>,
    /// GPUs the job needs on each host it runs on (`bsub -gpu "num=N"`),
    /// used exclusively while it runs.
    pub gpus: u32,
    /// Boolean resources every host of the job must have (`bsub -R`).
    pub resources: Vec<String>,
    /// Fraction of its slots' CPU the job keeps busy while running
    /// (1.0 = fully busy), so CPU time can differ from run time.
    pub cpu_utilisation: f32,
    /// Memory the job uses while running, in MB.
    pub memory_mb: u64,
    /// What few jobs set: `bsub -o`/`-e` files and `-sp` priority (boxed,
    /// so the jobs that set none, as trace replays, carry one word).
    pub options: Option<Box<JobOptions>>,
}

/// The job options few jobs set, recorded with the job and travelling with
/// it when it is forwarded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOptions {
    /// `bsub -o FILE`: where the job's standard output goes (recorded;
    /// mcfed runs nothing, so nothing is written).
    pub output_file: Option<String>,
    /// `bsub -e FILE`: where its standard error goes (recorded likewise).
    pub error_file: Option<String>,
    /// `bsub -sp N` / `bmod -sp N`: the user-assigned job priority
    /// (1 to MAX_USER_PRIORITY; `None`: MAX_USER_PRIORITY / 2).
    pub user_priority: Option<u32>,
    /// `bsub -R "rusage[mem=N]"`: the memory the job asks for, in MB
    /// (absolute priority scheduling's MEM sub-factor).
    pub mem_request_mb: Option<u64>,
    /// `bsub -R "rusage[swp=N]"`: the swap space the job asks for, in MB
    /// (absolute priority scheduling's SWAP sub-factor).
    pub swap_request_mb: Option<u64>,
    /// `bsub -n min,max`: a resizable job's most slots (its
    /// [`JobSpec::slots`] are the least it starts with).
    pub max_slots: Option<u32>,
    /// `bsub -ar`: an autoresizable job; while it runs with fewer than
    /// `max_slots` slots, a resize allocation request for the rest pends.
    pub auto_resize: bool,
    /// The job's JPRIORITY at its submission cluster when it was forwarded
    /// (its user priority, escalated by JOB_PRIORITY_OVER_TIME there): a
    /// forwarded job keeps it at its execution cluster.
    pub job_priority: Option<u32>,
}

impl JobOptions {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == JobOptions::default()
    }
}

impl JobSpec {
    /// Checks the job against mcfed's bounds — the one check every entry
    /// point calls (`bsub`, a scenario's jobs, a trace's, a forwarded
    /// job): its name, user, files and resources
    /// ([`crate::bounds::JOB_NAME`], [`crate::bounds::USER_NAME`],
    /// [`crate::bounds::FILE_NAME`], [`crate::bounds::RESOURCE_NAME`]:
    /// bounded in bytes, no control characters), and every number: slots,
    /// run time, run limit and estimate, memory, and a CPU utilisation
    /// from 0 to 1. A job that passes fits a wire frame and a journal
    /// record. A job that comes over the wire is checked so, and refused
    /// if it fails, before anything sizes, orders or prints it.
    pub fn check_bounds(&self) -> Result<(), String> {
        if self.plainly_within_bounds() {
            return Ok(());
        }
        self.check_every_bound()
    }

    /// [`JobSpec::check_bounds`] for a job whose caller has already found
    /// its name and user printable ASCII within [`crate::bounds::JOB_NAME`]
    /// and [`crate::bounds::USER_NAME`]
    /// ([`crate::bounds::TextBound::holds_printable_ascii`]): the same
    /// verdict without reading the two texts again. A trace reader finds
    /// so once per distinct user and, for a job's name, from its
    /// workload's name, the job number's digits and the name's length.
    pub fn check_bounds_of_plain_text(&self) -> Result<(), String> {
        debug_assert!(self.text_plainly_within_bounds(), "name or user not plain");
        if self.numbers_plainly_within_bounds() {
            return Ok(());
        }
        self.check_every_bound()
    }

    /// Whether the job is plainly within every bound, as most are (a
    /// trace's jobs): no options and no resources, a printable ASCII name
    /// and user within their lengths, every number within its bound. A
    /// job for which this is false is checked field by field (which also
    /// words the error): this only spares the common job the results.
    #[inline]
    fn plainly_within_bounds(&self) -> bool {
        self.numbers_plainly_within_bounds() && self.text_plainly_within_bounds()
    }

    /// Whether the name and user are printable ASCII within their lengths.
    #[inline]
    fn text_plainly_within_bounds(&self) -> bool {
        use crate::bounds::{JOB_NAME, USER_NAME};
        JOB_NAME.holds_printable_ascii(&self.name) && USER_NAME.holds_printable_ascii(&self.user)
    }

    /// [`JobSpec::plainly_within_bounds`] but for the name and user: no
    /// options and no resources, every number within its bound.
    #[inline]
    fn numbers_plainly_within_bounds(&self) -> bool {
        use crate::bounds::{JOB_DURATION, JOB_MEMORY_MB, JOB_SLOTS};
        let duration =
            |value: Option<Duration>| value.is_none_or(|value| JOB_DURATION.holds_duration(value));
        self.options.is_none()
            && self.resources.is_empty()
            && JOB_SLOTS.holds(u64::from(self.slots))
            && JOB_MEMORY_MB.holds(self.memory_mb)
            && JOB_DURATION.holds_duration(self.run_time)
            && duration(self.run_limit)
            && duration(self.run_estimate)
            && (0.0..=1.0).contains(&self.cpu_utilisation)
    }

    /// Every bound, field by field, with the first one broken in words.
    fn check_every_bound(&self) -> Result<(), String> {
        use crate::bounds::{JOB_DURATION, JOB_MEMORY_MB, JOB_SLOTS};
        self.check_text().map_err(|error| error.to_string())?;
        let problem = |error: crate::BoundError| error.to_string();
        JOB_SLOTS.check(u64::from(self.slots)).map_err(problem)?;
        JOB_MEMORY_MB.check(self.memory_mb).map_err(problem)?;
        for duration in [Some(self.run_time), self.run_limit, self.run_estimate]
            .into_iter()
            .flatten()
        {
            JOB_DURATION.check_duration(duration).map_err(problem)?;
        }
        if !(0.0..=1.0).contains(&self.cpu_utilisation) {
            return Err(format!(
                "cpu_utilisation = {} is out of bounds: mcfed accepts 0 to 1",
                self.cpu_utilisation
            ));
        }
        Ok(())
    }

    /// Checks the job's strings: name, user, resources (and how many),
    /// output and error files.
    fn check_text(&self) -> Result<(), Box<dyn std::error::Error>> {
        use crate::bounds::{FILE_NAME, JOB_NAME, JOB_RESOURCES, RESOURCE_NAME, USER_NAME};
        JOB_NAME.check(&self.name)?;
        USER_NAME.check(&self.user)?;
        JOB_RESOURCES.check(self.resources.len() as u64)?;
        for resource in &self.resources {
            RESOURCE_NAME.check(resource)?;
        }
        if let Some(options) = &self.options {
            for file in [&options.output_file, &options.error_file]
                .into_iter()
                .flatten()
            {
                FILE_NAME.check(file)?;
            }
        }
        Ok(())
    }

    /// A one-slot job of `user` named `name` running for `run_time`, with no
    /// resource needs.
    pub fn simple(
        name: impl Into<Arc<str>>,
        user: impl Into<Arc<str>>,
        run_time: Duration,
    ) -> Self {
        JobSpec {
            name: name.into(),
            user: user.into(),
            slots: 1,
            run_time,
            run_limit: None,
            run_estimate: None,
            gpus: 0,
            resources: Vec::new(),
            cpu_utilisation: 1.0,
            memory_mb: 0,
            options: None,
        }
    }

    /// The options set (all unset when none is).
    pub fn options(&self) -> JobOptions {
        self.options.as_deref().cloned().unwrap_or_default()
    }

    /// Sets the options, keeping none when all are unset.
    pub fn set_options(&mut self, options: JobOptions) {
        self.options = (!options.is_empty()).then(|| Box::new(options));
    }

    /// The user-assigned priority (`bsub -sp`), if set.
    pub fn user_priority(&self) -> Option<u32> {
        self.options
            .as_ref()
            .and_then(|options| options.user_priority)
    }

    /// The JPRIORITY the job was forwarded with, if it was.
    pub fn carried_job_priority(&self) -> Option<u32> {
        self.options
            .as_ref()
            .and_then(|options| options.job_priority)
    }

    /// The most slots the job may hold: `-n min,max`'s max, else its slots.
    pub fn max_slots(&self) -> u32 {
        self.options
            .as_ref()
            .and_then(|options| options.max_slots)
            .map_or(self.slots, |max| max.max(self.slots))
    }

    /// Whether the job is autoresizable (`bsub -ar` with `-n min,max`).
    pub fn auto_resizes(&self) -> bool {
        self.options
            .as_ref()
            .is_some_and(|options| options.auto_resize && options.max_slots.is_some())
    }

    /// Memory asked for (`rusage[mem=N]`), MB; 0 when none.
    pub fn mem_request_mb(&self) -> u64 {
        self.options
            .as_ref()
            .and_then(|options| options.mem_request_mb)
            .unwrap_or(0)
    }

    /// Swap asked for (`rusage[swp=N]`), MB; 0 when none.
    pub fn swap_request_mb(&self) -> u64 {
        self.options
            .as_ref()
            .and_then(|options| options.swap_request_mb)
            .unwrap_or(0)
    }
}

/// A job sent from a submission cluster's send queue to a receive queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobForward {
    /// Numbers the forwards from one submission cluster to one execution
    /// cluster: 1, 2, 3, ... Counter updates report the last one received.
    pub forward_seq: u64,
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The receive queue it is sent to.
    pub queue: QueueName,
    /// The send queue it leaves (so that both ends count the forward
    /// against the queues it joins).
    pub send_queue: QueueName,
    /// The job itself.
    pub spec: JobSpec,
    /// When it was submitted at the submission cluster.
    pub submitted_at: SimTime,
    /// How many times this job has been forwarded before (0 on the first).
    pub attempt: u32,
}

/// Why an execution cluster refused a forwarded job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RejectReason {
    /// The queue does not exist in the receiving cluster.
    UnknownQueue,
    /// The queue does not receive jobs from the sending cluster (RCVJOBS_FROM).
    NotAllowed,
    /// The queue already holds IMPT_JOBBKLG imported pending jobs.
    BacklogFull {
        /// The queue's IMPT_JOBBKLG.
        limit: u32,
    },
    /// No host of the queue offers a resource the job needs.
    MissingResource(String),
    /// The job needs more slots than the queue's hosts have in all.
    TooManySlots {
        /// Slots the job asked for.
        asked: u32,
        /// Slots the queue has on all its hosts.
        total: u32,
    },
    /// Some hosts of the queue have the job's resources, but too few slots
    /// among them (seed 004's pitfall: a host group whose hosts do not all
    /// have the boolean resource).
    NotEnoughQualifiedSlots {
        /// Slots the job asked for.
        asked: u32,
        /// Slots on the queue's hosts that have every resource it needs.
        qualified: u32,
    },
    /// The queue is a fairshare queue and the job's user has no shares in it
    /// (no `[user, n]` and no `[default, n]` in USER_SHARES).
    NoShares {
        /// The job's user.
        user: String,
    },
    /// The job asks for GPUs on each host, and the queue's hosts with that
    /// many have too few slots for it.
    NotEnoughGpus {
        /// GPUs asked for per host.
        asked: u32,
        /// Slots on the queue's hosts with that many GPUs.
        qualified: u32,
    },
    /// A number of the job is outside mcfed's bounds (a peer that sends
    /// one is broken or hostile): what and why ([`JobSpec::check_bounds`]).
    OutOfBounds(String),
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::UnknownQueue => f.write_str("no such queue"),
            RejectReason::NotAllowed => {
                f.write_str("the queue does not receive jobs from this cluster (RCVJOBS_FROM)")
            }
            RejectReason::BacklogFull { limit } => {
                write!(
                    f,
                    "imported pending job threshold reached (IMPT_JOBBKLG={limit})"
                )
            }
            RejectReason::MissingResource(resource) => {
                write!(f, "no host of the queue offers resource `{resource}`")
            }
            RejectReason::TooManySlots { asked, total } => {
                write!(f, "the job asks for {asked} slots; the queue has {total}")
            }
            RejectReason::NotEnoughQualifiedSlots { asked, qualified } => write!(
                f,
                "the job asks for {asked} slots on hosts with its resources; the queue's hosts with them have {qualified}"
            ),
            RejectReason::NoShares { user } => {
                write!(f, "user `{user}` has no shares in the queue's FAIRSHARE")
            }
            RejectReason::NotEnoughGpus { asked, qualified } => write!(
                f,
                "the job asks for {asked} GPUs on each host; the queue's hosts with that many have {qualified} slots"
            ),
            RejectReason::OutOfBounds(why) => write!(f, "the job is out of bounds: {why}"),
        }
    }
}

/// The receiving cluster took a forwarded job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobAccept {
    /// The forward being answered.
    pub forward_seq: u64,
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The job's id at the receiving cluster.
    pub dest_job: u64,
}

/// The receiving cluster refused a forwarded job; it goes back to the
/// submission cluster to be decided again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReject {
    /// The forward being answered.
    pub forward_seq: u64,
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// Why it was refused.
    pub reason: RejectReason,
}

/// A job the execution cluster had accepted is sent back to its submission
/// cluster (it cannot run there, or it was recalled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReturn {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The job's id at the execution cluster.
    pub dest_job: u64,
    /// Why it comes back.
    pub reason: String,
}

/// Something that happened to a forwarded job at its execution cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobEvent {
    /// The job started running.
    Started,
    /// The job was suspended by preemption.
    Suspended,
    /// The job resumed after a suspension.
    Resumed,
    /// The job was terminated by preemption and requeued.
    Requeued,
    /// The job finished.
    Finished,
    /// The job was killed (`bkill`): it ends with status EXIT.
    Killed,
    /// A running job was stopped (`bstop`): USUSP, keeping its slots.
    Stopped,
    /// A pending job was stopped (`bstop`): PSUSP, not dispatched.
    Held,
    /// A PSUSP job was resumed (`bresume`): pending again.
    Released,
    /// The job was moved to another queue (`bswitch`).
    Switched,
    /// The job's run limit, slots or priority were changed (`bmod`).
    Modified,
    /// A running job was migrated (`bmig`): killed on its hosts, it pends
    /// again keeping its priority.
    Migrated,
    /// A running job's host failed and its queue is RERUNNABLE: it pends
    /// again to run from the start, keeping its priority.
    Rerun,
    /// A running resizable job grew (its resize allocation request was
    /// met) or released slots (`bresize release`).
    Resized,
    /// A pending job was dispatched into a chunk (CHUNK_JOB_SIZE): WAIT,
    /// to run on its chunk's slot after the jobs ahead of it.
    Waiting,
    /// A job waiting in a chunk pends again (its chunk was broken up).
    Pended,
    /// The job reached its run limit (`bsub -W`, the queue's RUNLIMIT, or a
    /// trace's requested time) before its run time and was killed: status
    /// EXIT, LSF's TERM_RUNLIMIT.
    RunLimit,
    /// The closed advance reservation the job ran in (`bsub -U`) ended and
    /// the job was killed: status EXIT. LSF lists no termination reason of
    /// its own for it; the reservation's end acts as the job's termination
    /// time (`bmod -t` moves it), so lsb.acct logs TERM_DEADLINE. Added
    /// last: older records read the same.
    ReservationEnded,
}

impl JobEvent {
    /// The word records and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            JobEvent::Started => "started",
            JobEvent::Suspended => "suspended",
            JobEvent::Resumed => "resumed",
            JobEvent::Requeued => "requeued",
            JobEvent::Finished => "finished",
            JobEvent::Killed => "killed",
            JobEvent::Stopped => "stopped",
            JobEvent::Held => "held",
            JobEvent::Released => "released",
            JobEvent::Switched => "switched",
            JobEvent::Modified => "modified",
            JobEvent::Migrated => "migrated",
            JobEvent::Rerun => "rerun",
            JobEvent::Resized => "resized",
            JobEvent::Waiting => "waiting",
            JobEvent::Pended => "pended",
            JobEvent::RunLimit => "run limit",
            JobEvent::ReservationEnded => "reservation ended",
        }
    }

    /// Whether the job leaves its cluster with it (DONE or EXIT).
    pub fn ends_job(self) -> bool {
        matches!(
            self,
            JobEvent::Finished | JobEvent::Killed | JobEvent::RunLimit | JobEvent::ReservationEnded
        )
    }
}

/// A forwarded job's state change, reported to its submission cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStatus {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The job's id at the execution cluster.
    pub dest_job: u64,
    /// What happened.
    pub event: JobEvent,
    /// When, in the execution cluster's emulated time.
    pub at: SimTime,
}

/// The submission cluster asks for a forwarded job back: it has pended at
/// the execution cluster longer than the send queue's MAX_RSCHED_TIME. The
/// execution cluster returns it ([`JobReturn`]) if it is still pending, and
/// otherwise keeps it (it has started; its [`JobStatus`] says so).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecall {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The job's id at the execution cluster.
    pub dest_job: u64,
    /// Why it is recalled.
    pub reason: String,
}

/// One job a submission cluster believes an execution cluster holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldJob {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The forward that sent it there.
    pub forward_seq: u64,
}

/// Every job the sender (a submission cluster) believes the receiver holds
/// for it, sent whenever a connection between them is made. The receiver
/// answers [`JobLost`] for each listed job it does not hold, the current
/// [`JobStatus`] of each one it does, and withdraws jobs from the sender
/// that are not listed (the sender took them back while they were apart).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSync {
    /// The jobs.
    pub jobs: Vec<HeldJob>,
}

/// The execution cluster does not hold a job that the submission cluster
/// believes it does; the submission cluster decides the job again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLost {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The forward the submission cluster listed.
    pub forward_seq: u64,
    /// Why, in words.
    pub reason: String,
}

/// The submission cluster takes a forwarded job away from the execution
/// cluster: it decided the job again while the execution cluster was
/// unreachable (`pending_only`: take it away only if it has not started),
/// or another copy of it won (a running copy is killed). The execution
/// cluster removes the job if it holds it under `forward_seq`, and drops
/// that forward if it arrives later; it answers nothing (a copy it keeps
/// because it started reports as usual).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobWithdraw {
    /// The job's id at the submission cluster.
    pub source_job: u64,
    /// The forward that sent this copy there.
    pub forward_seq: u64,
    /// Whether to take the job away only if it has not started.
    pub pending_only: bool,
    /// Why, in words.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{FILE_NAME, JOB_NAME, JOB_RESOURCES, RESOURCE_NAME, USER_NAME};

    fn job() -> JobSpec {
        JobSpec::simple("j", "u", Duration::from_secs(60))
    }

    #[test]
    fn names_users_files_and_resources_are_bounded_where_a_job_is_checked() {
        assert_eq!(job().check_bounds(), Ok(()));
        let mut long = job();
        long.name = "n".repeat(17_000_000).into();
        let error = long.check_bounds().expect_err("a 17 MB name");
        assert!(error.starts_with("job name of 17000000 bytes"), "{error}");
        let mut forged = job();
        forged.name = "ok\n1 alice RUN".into();
        assert!(forged.check_bounds().is_err());
        let mut user = job();
        user.user = "\u{1b}]0;owned\u{7}".into();
        assert!(
            user.check_bounds()
                .expect_err("escape")
                .contains("user name")
        );
        let mut files = job();
        files.set_options(JobOptions {
            error_file: Some("f".repeat(5000)),
            ..JobOptions::default()
        });
        assert!(
            files
                .check_bounds()
                .expect_err("long")
                .contains("file name")
        );
        let mut resources = job();
        resources.resources = vec!["bigmem".to_owned(); 257];
        assert!(resources.check_bounds().is_err());
    }

    #[test]
    fn every_number_of_a_job_is_bounded_where_it_is_checked() {
        use crate::bounds::{JOB_DURATION, JOB_MEMORY_MB, JOB_SLOTS};
        let too_long = Duration::from_millis(JOB_DURATION.max + 1);
        let longest = Duration::from_millis(JOB_DURATION.max);
        /// What the error names, and how to set the field at its bound
        /// (`false`) or one past it (`true`).
        type Case = (&'static str, fn(&mut JobSpec, bool));
        let cases: [Case; 6] = [
            ("slots", |spec, over| {
                spec.slots = if over { 0 } else { JOB_SLOTS.max as u32 }
            }),
            ("memory_mb", |spec, over| {
                spec.memory_mb = JOB_MEMORY_MB.max + u64::from(over)
            }),
            ("run time", |spec, over| {
                spec.run_time = Duration::from_millis(JOB_DURATION.max + u64::from(over))
            }),
            ("run time", |spec, over| {
                spec.run_limit = Some(Duration::from_millis(JOB_DURATION.max + u64::from(over)))
            }),
            ("run time", |spec, over| {
                spec.run_estimate = Some(Duration::from_millis(JOB_DURATION.max + u64::from(over)))
            }),
            ("cpu_utilisation", |spec, over| {
                spec.cpu_utilisation = if over { 1.01 } else { 1.0 }
            }),
        ];
        for (what, set) in cases {
            let mut spec = job();
            set(&mut spec, false);
            assert_eq!(spec.check_bounds(), Ok(()), "{what} at its bound");
            set(&mut spec, true);
            let error = spec.check_bounds().expect_err(what);
            assert!(error.starts_with(what), "{error}");
        }
        let mut spec = job();
        spec.slots = JOB_SLOTS.max as u32 + 1;
        assert!(spec.check_bounds().is_err());
        spec = job();
        spec.cpu_utilisation = f32::NAN;
        assert!(spec.check_bounds().is_err());
        spec.cpu_utilisation = -0.1;
        assert!(spec.check_bounds().is_err());
        spec = job();
        spec.run_limit = Some(Duration::MAX);
        assert!(spec.check_bounds().is_err());
        spec.run_limit = Some(longest);
        spec.run_time = too_long;
        assert!(spec.check_bounds().is_err());
        // Printable beyond ASCII passes, checked in full.
        spec = job();
        spec.name = "résumé-1".into();
        assert_eq!(spec.check_bounds(), Ok(()));
        spec.name = "r\u{85}".into();
        assert!(spec.check_bounds().is_err());
    }

    #[test]
    fn a_job_at_every_bound_fits_one_wire_frame() {
        let mut spec = job();
        spec.name = "n".repeat(JOB_NAME.max_bytes).into();
        spec.user = "u".repeat(USER_NAME.max_bytes).into();
        spec.resources = vec!["r".repeat(RESOURCE_NAME.max_bytes); JOB_RESOURCES.max as usize];
        spec.set_options(JobOptions {
            output_file: Some("o".repeat(FILE_NAME.max_bytes)),
            error_file: Some("e".repeat(FILE_NAME.max_bytes)),
            ..JobOptions::default()
        });
        assert_eq!(spec.check_bounds(), Ok(()));
        let forward = crate::Message::JobForward(JobForward {
            forward_seq: u64::MAX,
            source_job: u64::MAX,
            queue: QueueName::new(&"q".repeat(crate::MAX_NAME_LEN)).expect("valid"),
            send_queue: QueueName::new("send").expect("a queue name"),
            spec,
            submitted_at: SimTime::from_millis(u64::MAX),
            attempt: u32::MAX,
        });
        let mut frame = Vec::new();
        crate::encode_frame(&forward, &mut frame, crate::MAX_FRAME_SIZE)
            .expect("a job within bounds fits a frame");
        assert!(frame.len() < crate::MAX_FRAME_SIZE / 8, "{}", frame.len());
    }
}
