//! Scheduling metrics of a run, per cluster and per queue: jobs submitted,
//! started (each job once) and restarted, finished and never started, jobs
//! forwarded in and out, waits (mean, median, 95th percentile, maximum),
//! mean bounded slowdown, utilization over the makespan, and the makespan
//! itself. docs/metrics.md defines each figure and the laws they obey.
//!
//! Waits are kept as one `f32` per started job (4 bytes: 4 MB for a
//! million jobs) and sorted once at the end for the quantiles; the running
//! jobs' intervals are kept while they run ([`busy`]); nothing else grows
//! with the number of jobs. A wait runs from the job's first submission —
//! for a forwarded job, at its submission cluster, so the time it was held
//! there and in flight counts — to its first start where it runs.

mod busy;
mod end;

use mcfed_cluster::Transition;
use mcfed_protocol::{ClusterName, JobEvent, QueueName, SimTime};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub use end::{EndState, add_end_totals, end_state, finish};

/// τ of the bounded slowdown, in seconds: jobs shorter than this count as
/// this long, so very short jobs do not dominate the mean.
pub const SLOWDOWN_BOUND_SECS: f64 = 10.0;

/// How many tallies [`MetricsRecorder`] finds by their names' addresses.
const MAX_NAMED: usize = 64;

/// Collects the metrics as a run goes. A cluster process keeps one for its
/// own jobs and sends it whole (`serde`) to the launcher, which merges
/// them ([`MetricsRecorder::merge`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "RecorderParts", from = "RecorderParts")]
pub struct MetricsRecorder {
    queues: Vec<Tally>,
    /// Cluster → queue → place in `queues` (looked up by reference, so
    /// the three lookups of a job allocate nothing).
    index: FxHashMap<ClusterName, FxHashMap<String, usize>>,
    /// The tally used last: most jobs of a run go to few queues, so it is
    /// checked (two short string comparisons) before the maps.
    last: usize,
    /// Tallies found by shared names (what transitions and forwards
    /// carry), with the names they were found by: a queue's jobs share
    /// its name, so a transition's tally is found by comparing addresses,
    /// without hashing or reading a name (at most [`MAX_NAMED`]).
    named: NamedTallies,
    first_submit: Option<SimTime>,
    last_finish: Option<SimTime>,
    /// The latest end of a running interval.
    last_busy: Option<SimTime>,
    /// The running jobs' open intervals.
    running: busy::Running,
}

/// Tallies by their names' addresses: a cache, not part of what was
/// recorded (two recorders of the same jobs are equal whatever each found
/// by address, and it does not travel).
#[derive(Clone, Debug, Default)]
struct NamedTallies(Vec<(ClusterName, QueueName, usize)>);

impl PartialEq for NamedTallies {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What a [`MetricsRecorder`] is made of, as it travels (its index is
/// rebuilt on arrival).
#[derive(Serialize, Deserialize)]
struct RecorderParts {
    queues: Vec<Tally>,
    first_submit: Option<SimTime>,
    last_finish: Option<SimTime>,
    #[serde(default)]
    last_busy: Option<SimTime>,
    #[serde(default)]
    running: Vec<(ClusterName, u64, busy::Interval)>,
}

impl From<MetricsRecorder> for RecorderParts {
    fn from(recorder: MetricsRecorder) -> Self {
        RecorderParts {
            running: recorder
                .running
                .parts(|tally| recorder.queues[tally].queue.clone()),
            queues: recorder.queues,
            first_submit: recorder.first_submit,
            last_finish: recorder.last_finish,
            last_busy: recorder.last_busy,
        }
    }
}

impl From<RecorderParts> for MetricsRecorder {
    fn from(parts: RecorderParts) -> Self {
        let mut recorder = MetricsRecorder::default();
        recorder.merge_parts(parts);
        recorder
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tally {
    cluster: ClusterName,
    queue: String,
    submitted: u64,
    started: u64,
    #[serde(default)]
    restarts: u64,
    finished: u64,
    forwarded_in: u64,
    forwarded_out: u64,
    waits: Vec<f32>,
    slowdown_sum: f64,
    busy_slot_seconds: f64,
}

impl MetricsRecorder {
    fn tally(&mut self, cluster: &ClusterName, queue: &str) -> &mut Tally {
        let index = self.tally_index(cluster, queue);
        &mut self.queues[index]
    }

    /// [`MetricsRecorder::tally_index`] by shared names (what a
    /// transition or a forward carries).
    fn tally_named(&mut self, cluster: &ClusterName, queue: &QueueName) -> usize {
        // The names held here are alive, so a name at the same address is
        // the same name.
        let same = |a: &str, b: &str| std::ptr::eq(a, b);
        let found = self
            .named
            .0
            .iter()
            .find(|(c, q, _)| {
                same(c.as_str(), cluster.as_str()) && same(q.as_str(), queue.as_str())
            })
            .map(|&(_, _, index)| index);
        found.unwrap_or_else(|| {
            let index = self.tally_index(cluster, queue.as_str());
            if self.named.0.len() < MAX_NAMED {
                self.named.0.push((cluster.clone(), queue.clone(), index));
            }
            index
        })
    }

    fn tally_index(&mut self, cluster: &ClusterName, queue: &str) -> usize {
        let last = self
            .queues
            .get(self.last)
            .filter(|tally| tally.queue == queue && tally.cluster == *cluster)
            .map(|_| self.last);
        let known = last.or_else(|| {
            self.index
                .get(cluster)
                .and_then(|queues| queues.get(queue))
                .copied()
        });
        let index = known.unwrap_or_else(|| {
            let next = self.queues.len();
            self.queues
                .push(Tally::new(cluster.clone(), queue.to_owned()));
            self.index
                .entry(cluster.clone())
                .or_default()
                .insert(queue.to_owned(), next);
            next
        });
        self.last = index;
        index
    }

    /// Adds what `other` recorded (another process's jobs, or the same
    /// cluster's before it restarted).
    pub fn merge(&mut self, other: MetricsRecorder) {
        self.merge_parts(other.into());
    }

    fn merge_parts(&mut self, other: RecorderParts) {
        for mut tally in other.queues {
            let cluster = tally.cluster.clone();
            let queue = std::mem::take(&mut tally.queue);
            self.tally(&cluster, &queue).absorb(&mut tally);
        }
        self.first_submit = match (self.first_submit, other.first_submit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_finish = self.last_finish.max(other.last_finish);
        self.last_busy = self.last_busy.max(other.last_busy);
        let mut running = std::mem::take(&mut self.running);
        running.merge(other.running, |cluster, queue| {
            self.tally_index(cluster, queue)
        });
        self.running = running;
    }

    /// A job was submitted to `queue` of `cluster` at `at`.
    pub fn submitted(&mut self, cluster: &ClusterName, queue: &str, at: SimTime) {
        self.first_submit = Some(self.first_submit.map_or(at, |first| first.min(at)));
        self.tally(cluster, queue).submitted += 1;
    }

    /// A job of send queue `queue` of `cluster` was forwarded and accepted
    /// by an execution cluster.
    pub fn forwarded(&mut self, cluster: &ClusterName, queue: &QueueName) {
        let tally = self.tally_named(cluster, queue);
        self.queues[tally].forwarded_out += 1;
    }

    /// A forwarded job was accepted into receive queue `queue` of
    /// `cluster`.
    pub fn forwarded_in(&mut self, cluster: &ClusterName, queue: &QueueName) {
        let tally = self.tally_named(cluster, queue);
        self.queues[tally].forwarded_in += 1;
    }

    /// A job changed state in `cluster`.
    pub fn transition(&mut self, cluster: &ClusterName, transition: &Transition) {
        let effect = busy::effect_of(transition.event);
        if effect == busy::Effect::Nothing {
            // Neither counted nor running: held, released, pending.
            return;
        }
        let (job, at) = (transition.job.0, transition.at);
        let tally = self.tally_named(cluster, &transition.queue);
        let interval = busy::Open {
            since: at,
            slots: transition.slots,
            tally,
        };
        let closed = match effect {
            busy::Effect::Open => self.running.open(cluster, job, interval),
            busy::Effect::Reopen => self.running.reopen(cluster, job, interval),
            busy::Effect::Close => self.running.close(cluster, job, at),
            busy::Effect::Nothing => None,
        };
        if let Some(closed) = closed {
            self.busy(closed);
        }
        let tally = &mut self.queues[tally];
        match transition.event {
            JobEvent::Started if transition.first_start => {
                let wait = at.saturating_since(transition.first_submitted_at);
                tally.started += 1;
                tally.waits.push(wait.as_secs_f32());
            }
            JobEvent::Started => tally.restarts += 1,
            // A job cut at its run limit ran its allocation too (Batsim's
            // COMPLETED_WALLTIME_REACHED): it counts as finished here.
            JobEvent::Finished | JobEvent::RunLimit => {
                let started = transition.started_at.unwrap_or(at);
                let run = at.saturating_since(started).as_secs_f64();
                let wait = started
                    .saturating_since(transition.first_submitted_at)
                    .as_secs_f64();
                tally.finished += 1;
                tally.slowdown_sum += ((wait + run) / run.max(SLOWDOWN_BOUND_SECS)).max(1.0);
                self.last_finish = Some(self.last_finish.map_or(at, |last| last.max(at)));
            }
            _ => {}
        }
    }

    /// A running interval closed: its slot-seconds are busy time of its
    /// tally.
    fn busy(&mut self, closed: busy::Closed) {
        self.last_busy = Some(
            self.last_busy
                .map_or(closed.until, |last| last.max(closed.until)),
        );
        self.queues[closed.tally].busy_slot_seconds += closed.slot_seconds;
    }

    /// Closes the intervals of the jobs still running at `end`.
    fn close_running(&mut self, end: SimTime) {
        for closed in self.running.close_all(end) {
            self.busy(closed);
        }
    }

    /// The metrics, with each cluster's total slots and the jobs still
    /// pending in each queue at the end.
    pub fn finish(
        mut self,
        total_slots: &[(ClusterName, u64)],
        pending: &[(ClusterName, String, u64)],
        end: SimTime,
    ) -> RunMetrics {
        self.close_running(end);
        // Queues with pending jobs appear even if nothing else happened there.
        for (cluster, queue, count) in pending {
            if *count > 0 {
                let _ = self.tally(cluster, queue);
            }
        }
        // From the first submission to the last finish, or to the end of
        // the last running interval if later (a job killed, or still
        // running when the run stopped): every busy slot-second lies
        // within it, so no utilization passes 100 %.
        let last = self.last_finish.max(self.last_busy);
        let makespan = match (self.first_submit, last) {
            (Some(first), Some(last)) => last.saturating_since(first).as_secs_f64(),
            _ => 0.0,
        };
        let pending_of = |cluster: &ClusterName, queue: &str| {
            pending
                .iter()
                .filter(|(c, q, _)| c == cluster && q == queue)
                .map(|(_, _, count)| count)
                .sum::<u64>()
        };
        let mut queues: Vec<GroupMetrics> = self
            .queues
            .iter_mut()
            .map(|tally| {
                let never = pending_of(&tally.cluster, &tally.queue);
                GroupMetrics::of(tally, Some(tally.queue.clone()), never, None, makespan)
            })
            .collect();
        // Clusters in the scenario's order (E2 before E10), queues by name.
        let place = |cluster: &str| {
            total_slots
                .iter()
                .position(|(name, _)| name.as_str() == cluster)
                .unwrap_or(usize::MAX)
        };
        queues.sort_by(|a, b| {
            (place(&a.cluster), &a.cluster, &a.queue).cmp(&(
                place(&b.cluster),
                &b.cluster,
                &b.queue,
            ))
        });
        let clusters = total_slots
            .iter()
            .map(|(cluster, slots)| {
                let mut merged = Tally::new(cluster.clone(), String::new());
                let mut never = 0;
                for tally in self.queues.iter_mut().filter(|t| &t.cluster == cluster) {
                    merged.absorb(tally);
                    never += pending_of(cluster, &tally.queue);
                }
                GroupMetrics::of(&mut merged, None, never, Some(*slots), makespan)
            })
            .collect();
        RunMetrics {
            makespan,
            slowdown_bound: SLOWDOWN_BOUND_SECS,
            clusters,
            queues,
            never_started: Vec::new(),
        }
    }
}

impl Tally {
    fn new(cluster: ClusterName, queue: String) -> Tally {
        Tally {
            cluster,
            queue,
            submitted: 0,
            started: 0,
            restarts: 0,
            finished: 0,
            forwarded_in: 0,
            forwarded_out: 0,
            waits: Vec::new(),
            slowdown_sum: 0.0,
            busy_slot_seconds: 0.0,
        }
    }

    fn absorb(&mut self, other: &mut Tally) {
        self.submitted += other.submitted;
        self.started += other.started;
        self.restarts += other.restarts;
        self.finished += other.finished;
        self.forwarded_in += other.forwarded_in;
        self.forwarded_out += other.forwarded_out;
        self.waits.extend_from_slice(&other.waits);
        self.slowdown_sum += other.slowdown_sum;
        self.busy_slot_seconds += other.busy_slot_seconds;
    }
}

/// How many never-started jobs a run lists by name (all are counted).
pub const MAX_LISTED_NEVER_STARTED: usize = 100;

/// A job still pending when the run ended, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NeverStarted {
    /// The cluster it pends in.
    pub cluster: String,
    /// The queue.
    pub queue: String,
    /// The job's name.
    pub job: String,
    /// Why it pends (as `bjobs -p` says).
    pub reason: String,
}

/// The metrics of a whole run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    /// From the first submission to the last finish, in seconds.
    pub makespan: f64,
    /// τ of the bounded slowdown, in seconds.
    pub slowdown_bound: f64,
    /// Per cluster (all its queues).
    pub clusters: Vec<GroupMetrics>,
    /// Per queue of each cluster.
    pub queues: Vec<GroupMetrics>,
    /// The first [`MAX_LISTED_NEVER_STARTED`] jobs still pending at the
    /// end, with their pending reasons.
    pub never_started: Vec<NeverStarted>,
}

/// The metrics of one cluster or one queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupMetrics {
    /// The cluster.
    pub cluster: String,
    /// The queue (none for a whole cluster).
    pub queue: Option<String>,
    /// Jobs submitted here.
    pub submitted: u64,
    /// Jobs that started here (each job once, at its first start).
    pub started: u64,
    /// Starts here of jobs that had started before (requeued, migrated,
    /// rerun).
    #[serde(default)]
    pub restarts: u64,
    /// Jobs finished here.
    pub finished: u64,
    /// Jobs still pending here when the run ended (never started).
    pub never_started: u64,
    /// Jobs forwarded here from a submission cluster and accepted,
    /// whatever became of them.
    pub forwarded_in: u64,
    /// Jobs forwarded from here (a send queue) and accepted by an
    /// execution cluster.
    pub forwarded_out: u64,
    /// Waits of the jobs that started, in seconds: from each job's first
    /// submission to its first start.
    pub wait: WaitStats,
    /// Mean bounded slowdown of the finished jobs: (wait + run) / max(run,
    /// τ), at least 1.
    pub mean_bounded_slowdown: Option<f64>,
    /// Slot-seconds of running (not suspended) jobs over (slots ×
    /// makespan), at most 1; clusters only.
    pub utilization: Option<f64>,
}

/// Mean and quantiles of waits, in seconds (none without a started job).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitStats {
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// Maximum.
    pub max: Option<f64>,
}

impl WaitStats {
    fn of(waits: &mut [f32]) -> WaitStats {
        if waits.is_empty() {
            return WaitStats::default();
        }
        waits.sort_unstable_by(f32::total_cmp);
        let quantile = |q: f64| {
            let rank = ((q * waits.len() as f64).ceil() as usize).clamp(1, waits.len());
            f64::from(waits[rank - 1])
        };
        let sum: f64 = waits.iter().map(|&w| f64::from(w)).sum();
        WaitStats {
            mean: Some(sum / waits.len() as f64),
            p50: Some(quantile(0.5)),
            p95: Some(quantile(0.95)),
            max: waits.last().map(|&w| f64::from(w)),
        }
    }
}

impl GroupMetrics {
    fn of(
        tally: &mut Tally,
        queue: Option<String>,
        never_started: u64,
        slots: Option<u64>,
        makespan: f64,
    ) -> GroupMetrics {
        let utilization = slots
            .filter(|&slots| slots > 0 && makespan > 0.0)
            .map(|slots| tally.busy_slot_seconds / (slots as f64 * makespan));
        GroupMetrics {
            cluster: tally.cluster.to_string(),
            queue,
            submitted: tally.submitted,
            started: tally.started,
            restarts: tally.restarts,
            finished: tally.finished,
            never_started,
            forwarded_in: tally.forwarded_in,
            forwarded_out: tally.forwarded_out,
            wait: WaitStats::of(&mut tally.waits),
            mean_bounded_slowdown: (tally.finished > 0)
                .then(|| tally.slowdown_sum / tally.finished as f64),
            utilization,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let mut waits: Vec<f32> = (1..=100).map(|w| w as f32).collect();
        let stats = WaitStats::of(&mut waits);
        assert_eq!(stats.p50, Some(50.0));
        assert_eq!(stats.p95, Some(95.0));
        assert_eq!(stats.max, Some(100.0));
        assert_eq!(stats.mean, Some(50.5));
        assert_eq!(WaitStats::of(&mut []), WaitStats::default());
    }

    fn cluster(name: &str) -> ClusterName {
        ClusterName::new(name).expect("a valid name")
    }

    fn transition(event: JobEvent, job: u64, at: u64, queue: &QueueName) -> Transition {
        let at = SimTime::from_millis(at * 1000);
        Transition {
            job: mcfed_cluster::JobId(job),
            event,
            at,
            origin: mcfed_cluster::JobOrigin::Local,
            preempted_by: None,
            name: std::sync::Arc::from(format!("job{job}")),
            queue: queue.clone(),
            submitted_at: SimTime::ZERO,
            first_submitted_at: SimTime::ZERO,
            started_at: Some(at),
            slots: 2,
            first_start: true,
        }
    }

    /// Tallies found by a name's address and by its bytes are the same
    /// tally: one queue's name made twice (two allocations), a restart
    /// that closes the interval it replaces, and two queues kept apart.
    #[test]
    fn a_queue_named_by_two_allocations_is_one_tally() {
        let c1 = cluster("C1");
        let (normal, again, short) = (
            QueueName::new("normal").expect("a name"),
            QueueName::new("normal").expect("a name"),
            QueueName::new("short").expect("a name"),
        );
        let mut metrics = MetricsRecorder::default();
        metrics.submitted(&c1, "normal", SimTime::ZERO);
        metrics.transition(&c1, &transition(JobEvent::Started, 1, 0, &normal));
        metrics.transition(&c1, &transition(JobEvent::Started, 2, 0, &again));
        metrics.transition(&c1, &transition(JobEvent::Started, 3, 0, &short));
        // Started again without an end (a requeue's restart): its first
        // interval, 10 s on 2 slots, is closed.
        let mut restart = transition(JobEvent::Started, 1, 10, &again);
        restart.first_start = false;
        metrics.transition(&c1, &restart);
        metrics.transition(&c1, &transition(JobEvent::Finished, 1, 20, &normal));
        metrics.transition(&c1, &transition(JobEvent::Finished, 2, 20, &normal));
        let run = metrics.finish(&[(c1, 8)], &[], SimTime::from_millis(20_000));
        let queue = |name: &str| {
            run.queues
                .iter()
                .find(|group| group.queue.as_deref() == Some(name))
                .expect("the queue's metrics")
        };
        assert_eq!((queue("normal").started, queue("normal").restarts), (2, 1));
        assert_eq!(queue("normal").finished, 2);
        assert_eq!((queue("short").started, queue("short").finished), (1, 0));
        // normal: 2 × (10 + 10) + 2 × 20 slot-seconds, short: 2 × 20 (still
        // running at the end), over 8 slots × 20 s.
        let utilization = run.clusters[0].utilization.expect("a utilization");
        assert!((utilization - 120.0 / 160.0).abs() < 1e-9, "{utilization}");
    }

    /// Open intervals travel: a recorder sent while its jobs run (one
    /// switched to another queue, two clusters with a job of the same
    /// number), merged and finished, counts their busy time as the
    /// recorder that stayed does, each job at its own cluster.
    #[test]
    fn running_jobs_sent_and_merged_count_as_if_kept() {
        let (c1, c2) = (cluster("C1"), cluster("C2"));
        let normal = QueueName::new("normal").expect("a name");
        let short = QueueName::new("short").expect("a name");
        let mut sent = MetricsRecorder::default();
        sent.submitted(&c1, "normal", SimTime::ZERO);
        sent.transition(&c1, &transition(JobEvent::Started, 1, 0, &normal));
        sent.transition(&c1, &transition(JobEvent::Started, 2, 0, &normal));
        // The same job number at another cluster is another job.
        sent.transition(&c2, &transition(JobEvent::Started, 1, 0, &short));
        // Job 2 moves to `short` at 5 s: its first 5 s stay with `normal`.
        sent.transition(&c1, &transition(JobEvent::Switched, 2, 5, &short));
        let kept = sent.clone();
        let mut merged = MetricsRecorder::default();
        merged.merge(
            serde_json::from_str(&serde_json::to_string(&sent).expect("serializes"))
                .expect("deserializes"),
        );
        let end = |mut recorder: MetricsRecorder| {
            recorder.transition(&c1, &transition(JobEvent::Finished, 1, 10, &normal));
            recorder.transition(&c1, &transition(JobEvent::Finished, 2, 20, &short));
            let slots = [(c1.clone(), 8), (c2.clone(), 8)];
            recorder.finish(&slots, &[], SimTime::from_millis(20_000))
        };
        let (merged, kept) = (end(merged), end(kept));
        assert_eq!(merged, kept);
        // C1: normal 2 × 10 + 2 × 5, short 2 × 15, over 8 slots × 20 s;
        // C2: 2 × 20 (still running at the end).
        let busy =
            |run: &RunMetrics, at: usize| run.clusters[at].utilization.expect("a utilization");
        assert!(
            (busy(&merged, 0) - 60.0 / 160.0).abs() < 1e-9,
            "{}",
            busy(&merged, 0)
        );
        assert!(
            (busy(&merged, 1) - 40.0 / 160.0).abs() < 1e-9,
            "{}",
            busy(&merged, 1)
        );
    }

    /// What a launcher does: each process's recorder, sent whole and
    /// merged, gives what one recorder of everything gives.
    #[test]
    fn recorders_sent_and_merged_equal_one_recorder() {
        let (c1, c2) = (cluster("C1"), cluster("C2"));
        let mut whole = MetricsRecorder::default();
        let mut first = MetricsRecorder::default();
        let mut second = MetricsRecorder::default();
        for (at, cluster, queue, in_first) in [
            (5, &c1, "normal", true),
            (3, &c2, "short", false),
            (9, &c1, "normal", false),
            (7, &c1, "send", true),
        ] {
            let at = SimTime::from_millis(at * 1000);
            whole.submitted(cluster, queue, at);
            let part = if in_first { &mut first } else { &mut second };
            part.submitted(cluster, queue, at);
        }
        let send = QueueName::new("send").expect("a name");
        whole.forwarded(&c1, &send);
        first.forwarded(&c1, &send);
        let travelled = |recorder: &MetricsRecorder| -> MetricsRecorder {
            serde_json::from_str(&serde_json::to_string(recorder).expect("serializes"))
                .expect("deserializes")
        };
        let mut merged = MetricsRecorder::default();
        merged.merge(travelled(&first));
        merged.merge(travelled(&second));
        let slots = [(c1.clone(), 8), (c2.clone(), 4)];
        let pending = [(c1, "normal".to_owned(), 1)];
        assert_eq!(
            merged.finish(&slots, &pending, SimTime::ZERO),
            whole.finish(&slots, &pending, SimTime::ZERO)
        );
    }
}
