//! [`Recorder`]: the one place where what members did becomes a run's
//! statistics, metrics and records — counts, job events, decision and
//! preemption records, slot-usage samples and `jobs.csv` — whichever driver
//! ran them. The event loop, the actor engine and a cluster process all
//! hand it `(member, time, effects)` through
//! [`mcfed_federation::Observer`]; what only a driver knows (events
//! handled, messages delivered, updates lost to faults, snapshots, the
//! `[[action]]`s it played) comes in through the methods named for it.

use std::fs::File;
use std::io::BufWriter;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcfed_federation::{Effects, Member, NoticeKind, Observer, Origin, SubmissionNote};
use mcfed_protocol::JobEvent;
use mcfed_protocol::{ClusterName, SimTime};
use rustc_hash::FxHashMap;

use crate::jobs_csv::JobsCsv;
use crate::lsb_acct::AcctLogs;
use crate::metrics::{EndState, MetricsRecorder};
use crate::output::RunOutput;
use crate::probe::{PreemptionRecord, Snapshot};
use crate::records::{ActionRecord, WorkloadReport};
use crate::records::{EventRecord, RecordRef, UsageRecord};
use crate::stats::RunStats;

/// What a run records besides its counts and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recording {
    /// Job events and slot-usage samples (`--events`).
    pub events: bool,
    /// Count decisions without rendering their records (long replays that
    /// only need the totals).
    pub count_only: bool,
}

/// `jobs.csv` as the run goes, with each cluster's place in the slot
/// numbering.
struct JobsCsvSink {
    csv: JobsCsv<BufWriter<File>>,
    clusters: FxHashMap<ClusterName, usize>,
}

/// A run's statistics, metrics and records, as members' effects arrive.
pub struct Recorder {
    output: RunOutput,
    metrics: MetricsRecorder,
    recording: Recording,
    jobs_csv: Option<JobsCsvSink>,
    lsb_acct: Option<AcctLogs>,
    /// Decision records dropped from the front
    /// ([`Recorder::keep_newest_decisions`]).
    decisions_dropped: usize,
}

impl Recorder {
    /// A recorder that records what `recording` asks for.
    pub fn new(recording: Recording) -> Self {
        Recorder {
            output: RunOutput::default(),
            metrics: MetricsRecorder::default(),
            recording,
            jobs_csv: None,
            lsb_acct: None,
            decisions_dropped: 0,
        }
    }

    /// Drops all but the newest `keep` decision records once more than
    /// twice as many are held: a long-lived cluster process, whose live
    /// page reads only the newest, keeps a bounded number (with job events
    /// off, nothing refers to a record by its place in
    /// [`RunOutput::order`]).
    pub fn keep_newest_decisions(&mut self, keep: usize) {
        let held = self.output.decisions.len();
        if held <= keep.saturating_mul(2) {
            return;
        }
        let dropped = held - keep;
        self.output.decisions.drain(..dropped);
        self.decisions_dropped += dropped;
    }

    /// How many decision records [`Recorder::keep_newest_decisions`]
    /// dropped: the first one held is the record of that index.
    pub fn decisions_dropped(&self) -> usize {
        self.decisions_dropped
    }

    /// Writes each cluster's lsb.acct through `logs` as jobs finish.
    pub fn with_lsb_acct(mut self, logs: AcctLogs) -> Self {
        self.lsb_acct = Some(logs);
        self
    }

    /// Writes `jobs.csv` through `csv`, whose slots are numbered over
    /// `clusters` in this order.
    pub fn with_jobs_csv(
        mut self,
        csv: JobsCsv<BufWriter<File>>,
        clusters: impl IntoIterator<Item = ClusterName>,
    ) -> Self {
        let clusters = clusters
            .into_iter()
            .enumerate()
            .map(|(index, name)| (name, index))
            .collect();
        self.jobs_csv = Some(JobsCsvSink { csv, clusters });
        self
    }

    /// What was recorded so far.
    pub fn output(&self) -> &RunOutput {
        &self.output
    }

    /// The counts so far.
    pub fn stats(&self) -> &RunStats {
        &self.output.stats
    }

    /// The scheduling metrics so far.
    pub fn metrics(&self) -> &MetricsRecorder {
        &self.metrics
    }

    /// The driver handled one more event.
    pub fn event_handled(&mut self) {
        self.output.stats.events += 1;
    }

    /// The driver delivered one more message between clusters.
    pub fn message_delivered(&mut self) {
        self.output.stats.messages += 1;
    }

    /// A counter update was lost on its way (faults).
    pub fn update_lost(&mut self) {
        self.output.stats.updates_lost += 1;
    }

    /// A submission went to a cluster the run does not have.
    pub fn refused_unknown_cluster(&mut self, job: &str, cluster: &ClusterName) {
        self.output.stats.refused += 1;
        tracing::warn!(job, %cluster, "submission to an unknown cluster refused");
    }

    /// What one `[[action]]` did.
    pub fn action(&mut self, record: ActionRecord) {
        self.output.stats.actions += 1;
        if !record.done {
            self.output.stats.actions_refused += 1;
        }
        if let Some(event) = record.refusal_event().filter(|_| self.recording.events) {
            self.push_event(event);
        }
        self.output.actions.push(record);
    }

    /// A snapshot of every cluster, taken by the driver at a probe time.
    pub fn snapshot(&mut self, snapshot: Snapshot) {
        self.output.snapshots.push(snapshot);
    }

    /// Samples the slots `member` has in use at `at` (with
    /// [`Recording::events`]).
    fn sample_usage(&mut self, member: &Member, at: SimTime) {
        let (slots_in_use, total_slots) = member.cluster().slot_usage();
        if !self.recording.events || total_slots == 0 {
            return;
        }
        self.output
            .order
            .push(RecordRef::Usage(self.output.usage.len()));
        self.output.usage.push(UsageRecord {
            record: "usage".to_owned(),
            time: at.as_secs_f64(),
            cluster: member.name().to_string(),
            slots_in_use,
            total_slots,
        });
    }

    /// The output, its metrics finished with the members' end `states`,
    /// stopped at `end`, with what each workload read.
    pub fn finish(
        mut self,
        states: Vec<EndState>,
        end: SimTime,
        workloads: Vec<WorkloadReport>,
    ) -> RunOutput {
        if let Some(sink) = &mut self.jobs_csv {
            if let Err(error) = sink.csv.flush() {
                self.output.jobs_csv_error = Some(error.to_string());
            }
        }
        if let Some(logs) = &mut self.lsb_acct {
            let flushed = logs.flush().map_err(|error| format!("lsb.acct: {error}"));
            self.output.lsb_acct_error = logs.error().map(str::to_owned).or(flushed.err());
        }
        let mut output = self.output;
        output.stats.end = end;
        output.workloads = workloads;
        crate::metrics::add_end_totals(&mut output.stats.jobs, &states);
        output.metrics = Some(crate::metrics::finish(self.metrics, states, end));
        output
    }

    /// Counts the fate of the counter updates in `effects` and how long
    /// their messages took: all that most inputs of a federation produce.
    fn count_updates(&mut self, effects: &Effects) {
        let stats = &mut self.output.stats;
        let updates = effects.updates;
        stats.updates += updates.sent;
        stats.updates_ignored += updates.ignored;
        stats.update_regressions += updates.regressions;
        stats.backlog_overflows += updates.backlog_overflows;
        if !effects.delivery_delay.is_zero() {
            let delivery = u64::try_from(effects.delivery_delay.as_millis()).unwrap_or(u64::MAX);
            stats.delivery_max_ms = stats.delivery_max_ms.max(delivery);
        }
    }

    /// Counts what `member`'s effects did to jobs: submissions, job
    /// transitions and forwarding decisions. Every driver's counts come
    /// from here and [`Recorder::count_updates`].
    fn count_jobs(&mut self, member: &Member, effects: &Effects) {
        let stats = &mut self.output.stats;
        for note in &effects.submissions {
            match (&note.outcome, note.bundled) {
                (Ok(_), true) => stats.bundled += 1,
                (Ok(_), false) => stats.submitted += 1,
                (Err(error), _) => {
                    stats.refused += 1;
                    tracing::warn!(job = %note.name, cluster = %member.name(), %error, "submission refused");
                }
            }
        }
        for transition in &effects.transitions {
            stats.count_transition(member.origin_of(transition), transition);
        }
        // A job of a send queue killed where it still was (at its
        // submission cluster) ends there, without a transition.
        for notice in &effects.notices {
            if notice.kind == NoticeKind::Control(JobEvent::Killed) && &notice.from == member.name()
            {
                stats.jobs.killed.add(Origin::Submitted);
            }
        }
        stats.decisions += effects.decisions.len() as u64;
        stats.forwarded += effects.decisions.iter().filter(|e| e.forwarded()).count() as u64;
        stats.stale_decisions += effects.decisions.iter().filter(|e| e.stale()).count() as u64;
    }

    /// The metrics' part of `effects`.
    fn measure(&mut self, cluster: &ClusterName, at: SimTime, effects: &Effects) {
        for note in effects
            .submissions
            .iter()
            .filter(|note| note.outcome.is_ok())
        {
            self.metrics.submitted(cluster, &note.queue, at);
        }
        for transition in &effects.transitions {
            self.metrics.transition(cluster, transition);
        }
        // Both ends of an accepted forward are counted where it is
        // accepted, so forwarded out and in always agree.
        for arrival in &effects.forwarded_in {
            self.metrics.forwarded_in(cluster, &arrival.queue);
            self.metrics.forwarded(&arrival.from, &arrival.send_queue);
        }
    }

    /// Rows of `jobs.csv` for the jobs that finished; the first write error
    /// stops the file and is reported with the run's output.
    fn write_jobs(&mut self, member: &Member, effects: &Effects) {
        let Some(sink) = &mut self.jobs_csv else {
            return;
        };
        let Some(&index) = sink.clusters.get(member.name()) else {
            return;
        };
        for transition in &effects.transitions {
            if let Err(error) = sink.csv.transition(index, member.cluster(), transition) {
                self.output.jobs_csv_error = Some(error.to_string());
                self.jobs_csv = None;
                return;
            }
        }
    }

    /// Event records for the submissions, what the forwarder heard and
    /// what the scheduler did.
    fn record_events(&mut self, cluster: &ClusterName, at: SimTime, effects: &Effects) {
        let time = at.as_secs_f64();
        for note in &effects.submissions {
            if let Some(event) = submitted_event(time, cluster, note) {
                self.push_event(event);
            }
        }
        for notice in &effects.notices {
            self.push_event(EventRecord::of_notice(time, cluster.as_str(), notice));
        }
        for transition in &effects.transitions {
            self.push_event(EventRecord::of_transition(
                cluster.as_str(),
                transition,
                &effects.preemptions,
            ));
        }
    }

    fn push_event(&mut self, record: EventRecord) {
        self.output
            .order
            .push(RecordRef::Event(self.output.events.len()));
        self.output.events.push(record);
    }
}

/// Whether `effects` say nothing about a job (most inputs of a federation
/// are counter updates): nothing to measure or record.
fn about_no_job(effects: &Effects) -> bool {
    effects.submissions.is_empty()
        && effects.transitions.is_empty()
        && effects.forwarded_in.is_empty()
        && effects.preemptions.is_empty()
        && effects.decisions.is_empty()
        && effects.notices.is_empty()
}

/// The `submitted` event of a job submitted during the run (the jobs
/// present at start and refused submissions have none).
fn submitted_event(time: f64, cluster: &ClusterName, note: &SubmissionNote) -> Option<EventRecord> {
    let submitted = note.outcome.as_ref().ok().filter(|_| !note.bundled)?;
    let mut event = EventRecord::new(
        time,
        cluster.as_str(),
        &note.name,
        submitted.job_id,
        "submitted",
    );
    event.queue = Some(note.queue.to_string());
    if submitted.forwarded {
        // A job of a send queue is its own source.
        event.source_cluster = Some(event.cluster.clone());
        event.source_job_id = Some(submitted.job_id);
    }
    Some(event)
}

impl Recorder {
    /// Counts, measures and records what `effects` did to jobs. Kept out
    /// of line: most calls of [`Recorder::observe`] (counter updates) end
    /// before it, and do not pay for setting up its work.
    #[inline(never)]
    fn observe_jobs(&mut self, member: &Member, at: SimTime, effects: &Effects) {
        let cluster = member.name();
        self.count_jobs(member, effects);
        if let Some(logs) = &mut self.lsb_acct {
            logs.transitions(member, &effects.transitions);
        }
        self.measure(cluster, at, effects);
        self.write_jobs(member, effects);
        self.output.preemptions.extend(
            effects
                .preemptions
                .iter()
                .map(|note| PreemptionRecord::new(cluster, note)),
        );
        if self.recording.events {
            self.record_events(cluster, at, effects);
        }
        if !self.recording.count_only && !effects.decisions.is_empty() {
            let records = member.render(&effects.decisions);
            if self.recording.events {
                let start = self.output.decisions.len();
                self.output
                    .order
                    .extend((start..start + records.len()).map(RecordRef::Decision));
            }
            self.output.decisions.extend(records);
        }
    }
}

impl Observer for Recorder {
    fn observe(&mut self, member: &Member, at: SimTime, effects: &Effects) {
        self.count_updates(effects);
        if about_no_job(effects) {
            // Counter updates and messages sent: counted above.
            return;
        }
        self.observe_jobs(member, at, effects);
    }

    fn sample(&mut self, member: &Member, at: SimTime) {
        self.sample_usage(member, at);
    }

    fn late(&mut self, _: &Member, by: std::time::Duration) {
        let millis = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.output.stats.lag_max_ms = self.output.stats.lag_max_ms.max(millis);
    }
}

/// One recorder shared by several drivers' observers (the member actors
/// of an actor engine, a cluster process's actor and its admin answers).
#[derive(Clone)]
pub struct SharedRecorder(Arc<Mutex<Recorder>>);

impl SharedRecorder {
    /// Shares `recorder`.
    pub fn new(recorder: Recorder) -> Self {
        SharedRecorder(Arc::new(Mutex::new(recorder)))
    }

    /// The recorder, for a moment (a panic while it was held leaves what
    /// it recorded readable).
    pub fn lock(&self) -> MutexGuard<'_, Recorder> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes what was recorded, leaving an empty recorder that records
    /// the same (the end of a run).
    pub fn take(&self) -> Recorder {
        let mut recorder = self.lock();
        let empty = Recorder::new(recorder.recording);
        std::mem::replace(&mut *recorder, empty)
    }
}

impl Observer for SharedRecorder {
    fn observe(&mut self, member: &Member, at: SimTime, effects: &Effects) {
        self.lock().observe(member, at, effects);
    }

    fn sample(&mut self, member: &Member, at: SimTime) {
        self.lock().sample_usage(member, at);
    }

    fn late(&mut self, member: &Member, by: std::time::Duration) {
        self.lock().late(member, by);
    }
}
