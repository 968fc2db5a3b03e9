//! A member's job history, for `bjobs -a`, `bhist` and `bacct`: every job
//! the cluster holds or held — submitted here (to a local queue or a send
//! queue), present at start, or forwarded here — with its state changes
//! and forwarding decisions, timed, and the time spent in each state.
//!
//! Finished jobs (DONE, EXIT) are kept for CLEAN_PERIOD after they end,
//! then dropped, as LSF's mbatchd drops them from memory; each job keeps
//! at most [`MAX_EVENTS`] events. So the history holds the jobs the
//! cluster holds now plus those that ended within the period: bounded by
//! the cluster's own state and its throughput over one period.
//!
//! A member keeps a history only when asked ([`crate::Member::keep_history`]:
//! cluster processes, and in-process runs with job control actions); trace
//! replays keep none and pay one branch per input for it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use mcfed_cluster::{Cluster, JobOrigin, Transition};
use mcfed_protocol::{ClusterName, JobEvent, JobSpec, SimTime};
use rustc_hash::FxHashMap;

/// The most events one job keeps; later ones are counted, not kept.
pub const MAX_EVENTS: usize = 64;

/// The state of a job forwarded here that went back to its submission
/// cluster (recalled, or withdrawn): it left this cluster without ending
/// here. `bhist` shows it; `bjobs -a` and `bacct` leave it out.
pub const GONE: &str = "GONE";

/// Where a job in the history came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordOrigin {
    /// Present at start (the scenario's `[[cluster.job]]`).
    Bundled,
    /// Submitted to one of this cluster's local queues.
    Submitted,
    /// Submitted to one of this cluster's send queues (forwarded from
    /// here).
    Sent,
    /// Forwarded here by a submission cluster.
    ForwardedIn {
        /// The submission cluster.
        from: ClusterName,
        /// The job's id there.
        source_job: u64,
    },
}

/// Time a job spent in each state, as `bhist` sums it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateTimes {
    /// PEND (here, or waiting to be forwarded, or pending remotely).
    pub pend: Duration,
    /// PSUSP.
    pub psusp: Duration,
    /// RUN.
    pub run: Duration,
    /// USUSP.
    pub ususp: Duration,
    /// SSUSP.
    pub ssusp: Duration,
}

impl StateTimes {
    fn add(&mut self, state: &str, time: Duration) {
        let slot = match state {
            "PEND" => &mut self.pend,
            "PSUSP" => &mut self.psusp,
            "RUN" => &mut self.run,
            "USUSP" => &mut self.ususp,
            "SSUSP" => &mut self.ssusp,
            _ => return,
        };
        *slot += time;
    }

    /// All of them.
    pub fn total(&self) -> Duration {
        self.pend + self.psusp + self.run + self.ususp + self.ssusp
    }
}

/// One timed event of a job's life, in LSF's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEvent {
    /// When.
    pub at: SimTime,
    /// What happened.
    pub text: String,
}

/// Where a job submitted here was last forwarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardRecord {
    /// `queue@cluster`.
    pub target: String,
    /// Its id there, once accepted.
    pub dest_job: Option<u64>,
    /// When it was forwarded.
    pub at: SimTime,
    /// How many times it has been forwarded.
    pub forwards: u32,
}

/// One job's history.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    /// Its id in this cluster.
    pub id: u64,
    /// The job as submitted here (name, user, slots, limits, options),
    /// with `bmod`'s changes.
    pub spec: JobSpec,
    /// Its queue here (the send queue for a job forwarded from here): one
    /// name shared by every record of the queue.
    pub queue: Arc<str>,
    /// Where it came from.
    pub origin: RecordOrigin,
    /// When it entered this cluster.
    pub submitted_at: SimTime,
    /// When it was first submitted anywhere.
    pub first_submitted_at: SimTime,
    /// Its state: PEND, RUN, SSUSP, USUSP, PSUSP, DONE or EXIT (or
    /// [`GONE`]).
    pub state: &'static str,
    /// Since when.
    pub since: SimTime,
    /// When it first started (here or where it was forwarded).
    pub started_at: Option<SimTime>,
    /// When it ended (DONE or EXIT).
    pub ended_at: Option<SimTime>,
    /// Where it ran: hosts here (`2*h1`), or the execution cluster.
    pub exec: Option<String>,
    /// For a job forwarded from here: its last forward.
    pub forwarded: Option<Box<ForwardRecord>>,
    /// Time spent in each state before `since`.
    pub times: StateTimes,
    /// What happened to it after its submission, in order (with the
    /// submission, at most [`MAX_EVENTS`]): [`JobRecord::events`] lists
    /// them all.
    events: Vec<HistoryEvent>,
    /// Whether the submission's event is in `events` (written there once
    /// its queue or spec changes); until then it is rendered when read, so
    /// a job that only waits keeps no event of its own.
    submission_kept: bool,
    /// Events beyond [`MAX_EVENTS`], counted.
    pub more_events: u32,
}

impl JobRecord {
    /// What happened to it, in order: its submission first.
    pub fn events(&self) -> Vec<HistoryEvent> {
        let mut events = Vec::with_capacity(self.events.len() + 1);
        if !self.submission_kept {
            events.push(self.submission_event());
        }
        events.extend(self.events.iter().cloned());
        events
    }

    /// How it entered this cluster, in LSF's words.
    fn submission_event(&self) -> HistoryEvent {
        let how = match &self.origin {
            RecordOrigin::Bundled => "Present at start".to_owned(),
            RecordOrigin::Submitted | RecordOrigin::Sent => "Submitted".to_owned(),
            RecordOrigin::ForwardedIn { from, source_job } => {
                format!(
                    "Forwarded from cluster <{from}>, where it is job <{source_job}>; submitted"
                )
            }
        };
        HistoryEvent {
            at: self.submitted_at,
            text: format!(
                "{how} to queue <{}>, {} Task(s), user <{}>",
                self.queue, self.spec.slots, self.spec.user
            ),
        }
    }

    /// Writes the submission's event down before its queue or spec change
    /// (it says them as they were).
    fn keep_submission(&mut self) {
        if !self.submission_kept {
            self.events.insert(0, self.submission_event());
            self.submission_kept = true;
        }
    }

    /// Time spent in each state up to `now` (the current state counted up
    /// to `now`, or to its end).
    pub fn times_at(&self, now: SimTime) -> StateTimes {
        let mut times = self.times;
        let until = self.ended_at.unwrap_or(now).max(self.since);
        times.add(self.state, until.saturating_since(self.since));
        times
    }

    /// Whether it has ended (DONE or EXIT).
    pub fn has_ended(&self) -> bool {
        self.ended_at.is_some()
    }

    fn note(&mut self, at: SimTime, text: String) {
        let submission = usize::from(!self.submission_kept);
        if self.events.len() + submission < MAX_EVENTS {
            self.events.push(HistoryEvent { at, text });
        } else {
            self.more_events += 1;
        }
    }

    fn enter(&mut self, at: SimTime, state: &'static str) {
        let at = at.max(self.since);
        self.times.add(self.state, at.saturating_since(self.since));
        self.state = state;
        self.since = at;
        match state {
            "DONE" | "EXIT" | GONE => self.ended_at = Some(at),
            // A job that left (withdrawn, then kept after a crash) and is
            // live again has not ended: one state, no end before its start.
            _ => self.ended_at = None,
        }
        if state == "RUN" {
            self.started_at.get_or_insert(at);
        }
    }
}

/// A member's job history (see the module documentation).
#[derive(Clone, Debug)]
pub struct History {
    clean_period: Duration,
    /// Each record boxed: a table of a million jobs then grows by 16
    /// bytes a slot, not by a whole record (its slack at a doubling would
    /// be as large as the records themselves).
    jobs: FxHashMap<u64, Box<JobRecord>>,
    /// Ended jobs, by when they end, to clean them CLEAN_PERIOD later.
    ended: VecDeque<(SimTime, u64)>,
    /// The queue names records share.
    queues: Vec<Arc<str>>,
}

impl History {
    /// An empty history that keeps ended jobs for `clean_period`.
    pub fn new(clean_period: Duration) -> Self {
        History {
            clean_period,
            jobs: FxHashMap::default(),
            queues: Vec::new(),
            ended: VecDeque::new(),
        }
    }

    /// CLEAN_PERIOD.
    pub fn clean_period(&self) -> Duration {
        self.clean_period
    }

    /// `queue`'s name, shared by every record of the queue.
    fn queue_name(&mut self, queue: &str) -> Arc<str> {
        if let Some(name) = self.queues.iter().find(|name| &***name == queue) {
            return Arc::clone(name);
        }
        let name: Arc<str> = Arc::from(queue);
        self.queues.push(Arc::clone(&name));
        name
    }

    /// Job `id`, if it is known (live, or ended within CLEAN_PERIOD).
    pub fn job(&self, id: u64) -> Option<&JobRecord> {
        self.jobs.get(&id).map(|record| &**record)
    }

    /// Every job known, by id.
    pub fn jobs(&self) -> Vec<&JobRecord> {
        let mut jobs: Vec<&JobRecord> = self.jobs.values().map(|record| &**record).collect();
        jobs.sort_by_key(|job| job.id);
        jobs
    }

    /// How many jobs are kept.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether no job is kept.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Drops the jobs that ended CLEAN_PERIOD or more before `now`.
    pub fn clean(&mut self, now: SimTime) {
        while let Some(&(ended, id)) = self.ended.front() {
            if ended + self.clean_period > now {
                break;
            }
            self.ended.pop_front();
            if self
                .jobs
                .get(&id)
                .is_some_and(|job| job.ended_at == Some(ended))
            {
                self.jobs.remove(&id);
            }
        }
    }

    /// Job `id` entered this cluster at `at` (queue `queue`).
    pub fn submitted(
        &mut self,
        at: SimTime,
        id: u64,
        queue: &str,
        spec: &JobSpec,
        origin: RecordOrigin,
        first_submitted_at: SimTime,
    ) {
        let record = JobRecord {
            id,
            spec: spec.clone(),
            queue: self.queue_name(queue),
            origin,
            submitted_at: at,
            first_submitted_at: first_submitted_at.min(at),
            state: "PEND",
            since: at,
            started_at: None,
            ended_at: None,
            exec: None,
            forwarded: None,
            times: StateTimes::default(),
            events: Vec::new(),
            submission_kept: false,
            more_events: 0,
        };
        self.jobs.insert(id, Box::new(record));
    }

    /// A job of this cluster's scheduler changed state.
    pub fn transition(&mut self, transition: &Transition, cluster: &Cluster) {
        let Some(record) = self.jobs.get_mut(&transition.job.0) else {
            return;
        };
        let at = transition.at;
        let by = transition
            .preempted_by
            .map(|by| format!(" by job <{by}>"))
            .unwrap_or_default();
        let (state, text) = match transition.event {
            JobEvent::Started => {
                let hosts = cluster.job(transition.job).map(|job| {
                    job.placement
                        .iter()
                        .map(|place| format!("{}*{}", place.slots, cluster.host_name(place.host)))
                        .collect::<Vec<_>>()
                        .join(" ")
                });
                record.exec = hosts.clone();
                ("RUN", format!("Started on <{}>", hosts.unwrap_or_default()))
            }
            JobEvent::Suspended => (
                "SSUSP",
                match cluster
                    .job(transition.job)
                    .and_then(|job| cluster.suspend_reason(job))
                {
                    Some(reason) if transition.preempted_by.is_none() => {
                        format!("Suspended: {}", reason.describe())
                    }
                    _ => format!("Suspended: preempted{by}"),
                },
            ),
            JobEvent::Resumed => ("RUN", "Resumed".to_owned()),
            JobEvent::Requeued if transition.preempted_by.is_some() => (
                "PEND",
                format!("Terminated and requeued: preempted{by} (TERMINATE_WHEN=PREEMPT)"),
            ),
            JobEvent::Requeued => ("PEND", "Killed and requeued by brequeue".to_owned()),
            JobEvent::Finished => ("DONE", "Done successfully".to_owned()),
            JobEvent::Killed => ("EXIT", "Exited: killed by bkill".to_owned()),
            JobEvent::RunLimit => (
                "EXIT",
                "Exited: the job reached its run limit (TERM_RUNLIMIT)".to_owned(),
            ),
            JobEvent::ReservationEnded => ("EXIT", reservation_ended_text(&record.spec)),
            JobEvent::Stopped => ("USUSP", "Suspended by bstop (USUSP)".to_owned()),
            JobEvent::Held => ("PSUSP", "Held by bstop (PSUSP)".to_owned()),
            JobEvent::Released => ("PEND", "Released by bresume".to_owned()),
            JobEvent::Switched => {
                record.keep_submission();
                record.queue = Arc::from(transition.queue.as_str());
                (
                    record.state,
                    format!("Switched to queue <{}>", transition.queue),
                )
            }
            JobEvent::Modified => {
                if let Some(job) = cluster.job(transition.job) {
                    record.keep_submission();
                    record.spec = job.spec.clone();
                }
                (record.state, modified_text(&record.spec))
            }
            JobEvent::Migrated => (
                "PEND",
                "Migrated by bmig: pending again, keeping its priority".to_owned(),
            ),
            JobEvent::Rerun => (
                "PEND",
                "Rerun: its host failed; pending again, keeping its priority".to_owned(),
            ),
            JobEvent::Resized => {
                if let Some(job) = cluster.job(transition.job) {
                    record.keep_submission();
                    record.spec = job.spec.clone();
                    record.exec = Some(
                        job.placement
                            .iter()
                            .map(|place| {
                                format!("{}*{}", place.slots, cluster.host_name(place.host))
                            })
                            .collect::<Vec<_>>()
                            .join(" "),
                    );
                }
                (
                    record.state,
                    format!("Resized to {} slots", transition.slots),
                )
            }
            JobEvent::Waiting => (
                "WAIT",
                "Dispatched into a chunk: waiting to run on its slot".to_owned(),
            ),
            JobEvent::Pended => ("PEND", "Its chunk was broken up: pending again".to_owned()),
        };
        self.enter(transition.job.0, at, state, text);
    }

    /// What happened to job `id`, at `at`, moving it to `state`.
    pub fn enter(&mut self, id: u64, at: SimTime, state: &'static str, text: String) {
        let Some(record) = self.jobs.get_mut(&id) else {
            return;
        };
        let changed = record.state != state;
        if changed {
            record.enter(at, state);
        }
        record.note(at, text);
        if changed && matches!(state, "DONE" | "EXIT" | GONE) {
            self.ended.push_back((at, id));
        }
    }

    /// Notes `text` on job `id` at `at`, its state unchanged.
    pub fn note(&mut self, id: u64, at: SimTime, text: String) {
        if let Some(record) = self.jobs.get_mut(&id) {
            record.note(at, text);
        }
    }

    /// Job `id` (of a send queue) was forwarded to `target` at `at`.
    pub fn forwarded(&mut self, id: u64, at: SimTime, target: &str, forwards: u32, reason: &str) {
        if let Some(record) = self.jobs.get_mut(&id) {
            record.forwarded = Some(Box::new(ForwardRecord {
                target: target.to_owned(),
                dest_job: None,
                at,
                forwards,
            }));
            record.note(at, format!("Forwarded to queue <{target}>: {reason}"));
        }
    }

    /// Job `id` (of a send queue) was accepted at its execution cluster as
    /// `dest_job`.
    pub fn accepted(&mut self, id: u64, at: SimTime, dest_job: Option<u64>) {
        if let Some(record) = self.jobs.get_mut(&id) {
            let target = record.forwarded.as_mut().map(|forward| {
                forward.dest_job = dest_job;
                forward.target.clone()
            });
            let dest = dest_job
                .map(|dest| format!(" as job <{dest}>"))
                .unwrap_or_default();
            record.note(
                at,
                format!("Accepted by <{}>{dest}", target.unwrap_or_default()),
            );
        }
    }

    /// Job `id` (of a send queue) changed state at its execution cluster
    /// `cluster`.
    pub fn remote(&mut self, id: u64, at: SimTime, cluster: &ClusterName, event: JobEvent) {
        let Some(record) = self.jobs.get(&id) else {
            return;
        };
        let (state, text) = match event {
            JobEvent::Started => ("RUN", format!("Started at cluster <{cluster}>")),
            // A stopped job (USUSP) is never preempted: suspended after
            // USUSP, `bresume` found its slots taken (SSUSP until they
            // are free, as in LSF).
            JobEvent::Suspended if record.state == "USUSP" => (
                "SSUSP",
                format!("Resumed by bresume at <{cluster}>: suspended until its slots are free"),
            ),
            JobEvent::Suspended => ("SSUSP", format!("Suspended at <{cluster}>: preempted")),
            JobEvent::Resumed => ("RUN", format!("Resumed at <{cluster}>")),
            JobEvent::Requeued => ("PEND", format!("Requeued at <{cluster}>")),
            JobEvent::Finished => ("DONE", format!("Done successfully at <{cluster}>")),
            JobEvent::Killed => ("EXIT", format!("Exited at <{cluster}>: killed")),
            JobEvent::RunLimit => (
                "EXIT",
                format!("Exited at <{cluster}>: run limit reached (TERM_RUNLIMIT)"),
            ),
            JobEvent::ReservationEnded => (
                "EXIT",
                format!(
                    "Exited at <{cluster}>: {}",
                    reservation_ended_text(&record.spec)
                ),
            ),
            JobEvent::Stopped => ("USUSP", format!("Suspended by bstop at <{cluster}>")),
            JobEvent::Held => ("PSUSP", format!("Held by bstop at <{cluster}>")),
            JobEvent::Released => ("PEND", format!("Released at <{cluster}>")),
            JobEvent::Switched => (
                record.state,
                format!("Switched to another queue at <{cluster}>"),
            ),
            JobEvent::Modified => (record.state, format!("Parameters changed at <{cluster}>")),
            JobEvent::Migrated => ("PEND", format!("Migrated at <{cluster}>")),
            JobEvent::Rerun => ("PEND", format!("Rerun at <{cluster}>: its host failed")),
            JobEvent::Resized => (record.state, format!("Resized at <{cluster}>")),
            JobEvent::Waiting => ("PEND", format!("Waiting in a chunk at <{cluster}>")),
            JobEvent::Pended => ("PEND", format!("Pending again at <{cluster}>")),
        };
        if event == JobEvent::Started {
            if let Some(record) = self.jobs.get_mut(&id) {
                record.exec = Some(cluster.to_string());
            }
        }
        self.enter(id, at, state, text);
    }

    /// Whether job `id` is known and its spec is kept: `bmod` applied at
    /// the submission cluster changes it.
    pub fn spec_mut(&mut self, id: u64) -> Option<&mut JobSpec> {
        self.jobs.get_mut(&id).map(|record| {
            record.keep_submission();
            &mut record.spec
        })
    }
}

/// How `bhist` says a `bmod` changed a job.
fn modified_text(spec: &JobSpec) -> String {
    let limit = spec
        .run_limit
        .map(|limit| format!("{} min", limit.as_secs().div_ceil(60)))
        .unwrap_or_else(|| "none".to_owned());
    let priority = spec
        .user_priority()
        .map(|priority| format!(", priority {priority}"))
        .unwrap_or_default();
    format!(
        "Parameters changed by bmod: {} Task(s), run limit {limit}{priority}",
        spec.slots
    )
}

/// The origin a history gives a job of the scheduler, from how it came
/// and whether it was present at start.
pub(crate) fn origin_of(origin: &JobOrigin, bundled: bool) -> RecordOrigin {
    match origin {
        JobOrigin::Forwarded { from, source_job } => RecordOrigin::ForwardedIn {
            from: from.clone(),
            source_job: *source_job,
        },
        JobOrigin::Local if bundled => RecordOrigin::Bundled,
        JobOrigin::Local => RecordOrigin::Submitted,
    }
}

/// The history line of a job killed when the closed advance reservation it
/// ran in (`bsub -U`, the word `rsv==NAME` among its resources) ended.
fn reservation_ended_text(spec: &JobSpec) -> String {
    let name = spec
        .resources
        .iter()
        .find_map(|word| mcfed_cluster::advance::reservation_named(word))
        .unwrap_or("?");
    format!("Exited: killed when advance reservation <{name}> ended (TERM_DEADLINE)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job forwarded here that the history saw leave (withdrawn) and
    /// that then started here (kept, after a crash): one live state, no
    /// end before its start, and not cleaned as ended.
    #[test]
    fn a_job_that_left_and_came_back_is_live_again() {
        let mut history = History::new(Duration::from_secs(60));
        let spec = JobSpec::simple("j", "u", Duration::from_secs(600));
        let origin = RecordOrigin::ForwardedIn {
            from: ClusterName::new("S").expect("name"),
            source_job: 7,
        };
        history.submitted(SimTime::ZERO, 1, "q", &spec, origin, SimTime::ZERO);
        history.enter(1, SimTime::from_secs(5), GONE, "Sent back".to_owned());
        assert_eq!(history.job(1).map(JobRecord::has_ended), Some(true));
        history.enter(1, SimTime::from_secs(9), "RUN", "Started".to_owned());
        let record = history.job(1).expect("kept");
        assert_eq!((record.state, record.ended_at), ("RUN", None));
        assert_eq!(record.started_at, Some(SimTime::from_secs(9)));
        history.clean(SimTime::from_secs(1000));
        assert!(history.job(1).is_some(), "a live job is not cleaned");
    }

    /// A forwarded job that `bresume` sends to SSUSP at its execution
    /// cluster (its slots taken meanwhile) is not said to be preempted at
    /// its submission cluster; one suspended while running is.
    #[test]
    fn a_remote_ssusp_after_bstop_is_not_a_preemption() {
        let mut history = History::new(Duration::from_secs(60));
        let spec = JobSpec::simple("j", "u", Duration::from_secs(600));
        let remote = ClusterName::new("E").expect("name");
        for id in [1, 2] {
            history.submitted(
                SimTime::ZERO,
                id,
                "send",
                &spec,
                RecordOrigin::Sent,
                SimTime::ZERO,
            );
            history.remote(id, SimTime::from_secs(1), &remote, JobEvent::Started);
        }
        history.remote(1, SimTime::from_secs(2), &remote, JobEvent::Stopped);
        history.remote(1, SimTime::from_secs(3), &remote, JobEvent::Suspended);
        history.remote(2, SimTime::from_secs(3), &remote, JobEvent::Suspended);
        let last = |id: u64| {
            let record = history.job(id).expect("kept");
            (
                record.state,
                record.events().last().map(|event| event.text.clone()),
            )
        };
        let (state, text) = last(1);
        assert_eq!(state, "SSUSP");
        let text = text.expect("an event");
        assert!(!text.contains("preempted"), "{text}");
        assert!(text.contains("bresume"), "{text}");
        assert_eq!(
            last(2),
            ("SSUSP", Some("Suspended at <E>: preempted".to_owned()))
        );
    }
}
