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
//!
//! Here the [`History`] table (its records, kept and cleaned); in `record`
//! one job's [`JobRecord`] (its states, times and events); in `wording`
//! what each state change says, in LSF's words.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, JobSpec, SimTime};
use rustc_hash::{FxHashMap, FxHashSet};

mod record;
mod restored;
mod wording;

pub(crate) use record::origin_of;
pub use record::{
    ForwardRecord, GONE, HistoryEvent, JobRecord, MAX_EVENTS, RecordOrigin, StateTimes,
};
pub(crate) use restored::HeldJob;

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
    /// The jobs forwarded here that have not ended, by the cluster that
    /// forwarded them: what a sync or a resume from it can send back
    /// ([`History::live_forwarded_from`]), found without a walk of the
    /// whole history.
    forwarded_in: FxHashMap<ClusterName, FxHashSet<u64>>,
}

impl History {
    /// An empty history that keeps ended jobs for `clean_period`.
    pub fn new(clean_period: Duration) -> Self {
        History {
            clean_period,
            jobs: FxHashMap::default(),
            queues: Vec::new(),
            ended: VecDeque::new(),
            forwarded_in: FxHashMap::default(),
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

    /// The jobs forwarded here by `from` that have not ended, by id.
    pub fn live_forwarded_from(&self, from: &ClusterName) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .forwarded_in
            .get(from)
            .map(|ids| ids.iter().copied().collect())
            .unwrap_or_default();
        ids.sort_unstable();
        ids
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
        let queue = self.queue_name(queue);
        let record = Box::new(JobRecord::new(
            at,
            id,
            queue,
            spec,
            origin,
            first_submitted_at,
        ));
        self.insert(record);
    }

    /// Keeps `record`, in place of any record of its id, and in the
    /// index of the jobs forwarded here.
    fn insert(&mut self, record: Box<JobRecord>) {
        if let Some(before) = self.jobs.get(&record.id) {
            index_forwarded(&mut self.forwarded_in, before, false);
        }
        index_forwarded(&mut self.forwarded_in, &record, true);
        self.jobs.insert(record.id, record);
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
        if changed {
            if matches!(state, "DONE" | "EXIT" | GONE) {
                self.ended.push_back((at, id));
            }
            index_forwarded(&mut self.forwarded_in, record, true);
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

    /// Whether job `id` is known and its spec is kept: `bmod` applied at
    /// the submission cluster changes it.
    pub fn spec_mut(&mut self, id: u64) -> Option<&mut JobSpec> {
        self.jobs.get_mut(&id).map(|record| {
            record.keep_submission();
            &mut record.spec
        })
    }
}

/// Keeps `record` in `forwarded_in` ([`History`]'s) while it is a job
/// forwarded here that has not ended and is kept (`kept`), out of it
/// otherwise.
fn index_forwarded(
    forwarded_in: &mut FxHashMap<ClusterName, FxHashSet<u64>>,
    record: &JobRecord,
    kept: bool,
) {
    let RecordOrigin::ForwardedIn { from, .. } = &record.origin else {
        return;
    };
    if kept && !record.has_ended() {
        forwarded_in
            .entry(from.clone())
            .or_default()
            .insert(record.id);
    } else if let Some(ids) = forwarded_in.get_mut(from) {
        ids.remove(&record.id);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcfed_protocol::{ClusterName, JobEvent, JobSpec, SimTime};

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

    /// The jobs a sync or resume from a cluster can send back are those
    /// it forwarded here that have not ended: not its ended ones, not
    /// another cluster's, not this cluster's own; one that came back is
    /// again, one whose id a local job took is not.
    #[test]
    fn the_live_jobs_forwarded_from_a_cluster_are_indexed() {
        let mut history = History::new(Duration::from_secs(60));
        let spec = JobSpec::simple("j", "u", Duration::from_secs(600));
        let from = |cluster: &str, source_job| RecordOrigin::ForwardedIn {
            from: ClusterName::new(cluster).expect("name"),
            source_job,
        };
        let at = SimTime::ZERO;
        for id in 1..=6 {
            history.submitted(at, id, "q", &spec, from("S", id), at);
        }
        history.submitted(at, 7, "q", &spec, from("T", 1), at);
        history.submitted(at, 8, "q", &spec, RecordOrigin::Submitted, at);
        history.enter(2, SimTime::from_secs(1), "DONE", "Done".to_owned());
        history.enter(3, SimTime::from_secs(1), GONE, "Sent back".to_owned());
        history.enter(4, SimTime::from_secs(1), "RUN", "Started".to_owned());
        history.enter(5, SimTime::from_secs(1), GONE, "Sent back".to_owned());
        history.enter(5, SimTime::from_secs(2), "RUN", "Started".to_owned());
        history.submitted(at, 6, "q", &spec, RecordOrigin::Submitted, at);
        let s = ClusterName::new("S").expect("name");
        assert_eq!(history.live_forwarded_from(&s), vec![1, 4, 5]);
        let t = ClusterName::new("T").expect("name");
        assert_eq!(history.live_forwarded_from(&t), vec![7]);
        history.clean(SimTime::from_secs(1000));
        assert_eq!(history.live_forwarded_from(&s), vec![1, 4, 5]);
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
