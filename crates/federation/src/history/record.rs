//! One job's record in the history ([`JobRecord`]): where it came from,
//! its state and the time spent in each, its last forward, and its events
//! (at most [`MAX_EVENTS`]).

use std::sync::Arc;
use std::time::Duration;

use mcfed_cluster::JobOrigin;
use mcfed_protocol::{ClusterName, JobSpec, SimTime};

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
    /// UNKWN: time whose states are not known (before a restart from the
    /// state directory, which keeps no events).
    pub unknown: Duration,
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
        self.pend + self.psusp + self.run + self.ususp + self.ssusp + self.unknown
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
    /// For a job held when its member was restored from its state
    /// directory: what the restart knew of it, rendered as the event
    /// after its submission when read (so a million restored jobs keep
    /// no text of their own).
    pub(super) restored: Option<Box<Restored>>,
    /// Events beyond [`MAX_EVENTS`], counted.
    pub more_events: u32,
}

/// What a restart from the state directory knew of a job's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Restored {
    /// When it was restored.
    pub at: SimTime,
    /// Its state then.
    pub state: &'static str,
    /// Since when it was in that state, if the state directory says.
    pub since: Option<SimTime>,
}

impl Restored {
    /// The event that says so.
    fn event(&self) -> HistoryEvent {
        let known = match self.since {
            Some(since) => format!("{} since {since}", self.state),
            None => format!("{}, since when is not known", self.state),
        };
        HistoryEvent {
            at: self.at,
            text: format!(
                "Restored from the state directory at {}: {known}; its events before the restart are not kept",
                self.at
            ),
        }
    }
}

impl JobRecord {
    /// Job `id`, entered at `at` into `queue`: pending, no event of its
    /// own yet.
    pub(super) fn new(
        at: SimTime,
        id: u64,
        queue: Arc<str>,
        spec: &JobSpec,
        origin: RecordOrigin,
        first_submitted_at: SimTime,
    ) -> JobRecord {
        JobRecord {
            id,
            spec: spec.clone(),
            queue,
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
            restored: None,
            more_events: 0,
        }
    }

    /// What happened to it, in order: its submission first (then, for a
    /// job restored from the state directory, that it was).
    pub fn events(&self) -> Vec<HistoryEvent> {
        let mut events = Vec::with_capacity(self.events.len() + 2);
        let kept = match self.submission_kept {
            true => self.events.split_at(1.min(self.events.len())),
            false => {
                events.push(self.submission_event());
                (&[][..], &self.events[..])
            }
        };
        events.extend(kept.0.iter().cloned());
        events.extend(self.restored.as_ref().map(|restored| restored.event()));
        events.extend(kept.1.iter().cloned());
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
    pub(super) fn keep_submission(&mut self) {
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

    pub(super) fn note(&mut self, at: SimTime, text: String) {
        let rendered = usize::from(!self.submission_kept) + usize::from(self.restored.is_some());
        if self.events.len() + rendered < MAX_EVENTS {
            self.events.push(HistoryEvent { at, text });
        } else {
            self.more_events += 1;
        }
    }

    pub(super) fn enter(&mut self, at: SimTime, state: &'static str) {
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
