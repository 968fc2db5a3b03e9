//! What the live page shows, kept between polls: each cluster's latest
//! state, the plotted series and the newest decisions; and the frames sent
//! to pages (a full one when a page connects, then what changed at each
//! poll). Plain data: no sockets, no clock.

use std::collections::{BTreeMap, VecDeque};

use mcfed_admin::{CountersRow, HostRow, WatchReply};
use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_protocol::words;
use mcfed_run::render;
use serde::Serialize;

/// The most points a series keeps; past it, every other point is dropped
/// (the older history at half the resolution), so memory stays bounded
/// however long the federation runs.
pub const MAX_POINTS: usize = 2000;

/// The most decisions kept (the newest).
pub const MAX_DECISIONS: usize = 500;

/// The most bytes of a job's name the page shows; a longer one is cut
/// there and its length said (`name… (30000000 bytes)`), so one huge name
/// cannot make every frame and every page huge.
pub const MAX_SHOWN_NAME: usize = 256;

/// How the watched processes ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// A normal end (the run ended, the process was stopped): every panel
    /// says `stopped`, not `down` with the error its last poll met while
    /// the processes shut down.
    Stopped,
    /// A failure (a process died, the launch failed): each panel keeps
    /// what its last poll found.
    Failed,
}

/// What a page is sent: all of it when it connects (`full`), then at every
/// poll the clusters' panels, the new points of each series and the new
/// decisions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Frame {
    /// Whether this frame replaces everything the page had.
    pub full: bool,
    /// One panel per cluster, in the order they were added.
    pub clusters: Vec<Panel>,
    /// Points of the plotted series (all of them in a full frame, the new
    /// ones otherwise).
    pub series: Vec<SeriesPoints>,
    /// Decisions, oldest first (the newest [`MAX_DECISIONS`] in a full
    /// frame, the new ones otherwise).
    pub decisions: Vec<DecisionItem>,
}

/// One cluster's panel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Panel {
    /// The cluster.
    pub cluster: String,
    /// Where its process listens, once known.
    pub address: Option<String>,
    /// `up` (its last poll answered), `down` (it did not), `waiting` (not
    /// asked yet) or `stopped` (the run ended normally).
    pub status: &'static str,
    /// Why its last poll failed.
    pub error: Option<String>,
    /// Its emulated time, seconds, at its last answer.
    pub now: Option<f64>,
    /// Its process's incarnation.
    pub incarnation: Option<u64>,
    /// Its hosts.
    pub hosts: Vec<HostRow>,
    /// Its queues.
    pub queues: Vec<QueueLine>,
    /// The counters submission clusters hold of its queues, with the
    /// truth beside them (and, for a submission cluster whose execution
    /// clusters are not watched, the counters it holds of theirs).
    pub held: Vec<HeldLine>,
}

/// One queue of a panel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueLine {
    /// The queue.
    pub queue: String,
    /// PRIORITY.
    pub priority: u32,
    /// Running slots.
    pub run: u32,
    /// Pending slots.
    pub pend: u32,
    /// Suspended slots.
    pub susp: u32,
    /// Slots of the hosts it dispatches to.
    pub slots: u32,
    /// SNDJOBS_TO, for a send queue.
    pub send_to: Vec<String>,
    /// RCVJOBS_FROM, for a receive queue.
    pub receive_from: Vec<String>,
}

/// The counters one submission cluster holds of one remote queue, beside
/// what the queue publishes now.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeldLine {
    /// The submission cluster holding them.
    pub holder: String,
    /// `queue@cluster`.
    pub queue: String,
    /// What it holds (`None`: no update yet).
    pub seen: Option<CountersRow>,
    /// Their age at the holder's last answer, seconds.
    pub age: Option<f64>,
    /// What the queue publishes now (`None`: its cluster is not watched).
    pub truth: Option<CountersRow>,
    /// The figures where the two differ.
    pub differs: Vec<&'static str>,
}

/// New points of one series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPoints {
    /// The series.
    pub id: String,
    /// The chart it is drawn on: `queues:CLUSTER` or `staleness`.
    pub chart: String,
    /// Its legend.
    pub label: String,
    /// (emulated seconds, value) points, oldest first.
    pub points: Vec<[f64; 2]>,
}

/// One forwarding decision in the stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionItem {
    /// Emulated seconds.
    pub time: f64,
    /// The submission cluster.
    pub cluster: String,
    /// The job's name.
    pub job: String,
    /// Its id at the submission cluster.
    pub job_id: u64,
    /// `forwarded` or `pending`.
    pub outcome: OutcomeKind,
    /// Where it was forwarded.
    pub target: Option<String>,
    /// Age of the view it was made on, seconds.
    pub view_age: Option<f64>,
    /// Whether the oracle judged it stale (`None`: not judged).
    pub stale: Option<bool>,
    /// The decision as `mcfed run` prints it.
    pub text: String,
}

impl DecisionItem {
    /// The item of `record`, its job's name cut at [`MAX_SHOWN_NAME`]
    /// bytes (in the text too).
    fn of(mut record: DecisionRecord) -> Self {
        if record.job.len() > MAX_SHOWN_NAME {
            record.job = words::elide(&record.job, MAX_SHOWN_NAME);
        }
        let text = render::decision_text(&record);
        DecisionItem {
            time: record.time,
            stale: record.oracle.as_ref().map(|oracle| oracle.stale),
            cluster: record.cluster,
            job: record.job,
            job_id: record.job_id,
            outcome: record.outcome,
            target: record.target,
            view_age: record.view_age,
            text,
        }
    }
}

#[derive(Clone, Debug)]
struct Series {
    chart: String,
    label: String,
    points: Vec<[f64; 2]>,
    /// Points not yet sent.
    fresh: usize,
}

impl Series {
    fn push(&mut self, point: [f64; 2]) {
        if self.points.len() >= MAX_POINTS {
            let mut index = 0;
            self.points.retain(|_| {
                index += 1;
                index % 2 == 1
            });
            self.fresh = self.fresh.min(self.points.len());
        }
        self.points.push(point);
        self.fresh += 1;
    }
}

#[derive(Clone, Debug)]
struct Slot {
    name: String,
    address: Option<String>,
    last: Option<WatchReply>,
    error: Option<String>,
    /// The next decision record to ask for.
    next_decision: usize,
}

/// The live page's state.
#[derive(Clone, Debug, Default)]
pub struct LiveState {
    slots: Vec<Slot>,
    series: BTreeMap<String, Series>,
    decisions: VecDeque<DecisionItem>,
    /// Decisions not yet sent.
    fresh_decisions: usize,
    /// Why the watched processes stopped, once they have, and how.
    ended: Option<(String, End)>,
    /// Counts every change, so that what is made of the state (a page's
    /// full frame as JSON) can be made once per change and shared.
    version: u64,
}

impl LiveState {
    /// Adds a cluster to watch; returns its index.
    pub fn add_cluster(&mut self, name: &str, address: Option<String>) -> usize {
        self.version += 1;
        self.slots.push(Slot {
            name: name.to_owned(),
            address,
            last: None,
            error: None,
            next_decision: 0,
        });
        self.slots.len() - 1
    }

    /// Notes that the watched processes stopped, why and how: nothing
    /// more will change.
    pub fn end(&mut self, why: &str, how: End) {
        self.version += 1;
        self.ended = Some((why.to_owned(), how));
    }

    /// Why the watched processes stopped, if they have.
    pub fn ended(&self) -> Option<&str> {
        self.ended.as_ref().map(|(why, _)| why.as_str())
    }

    /// A number that changes whenever anything a frame shows does.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// How many clusters are watched.
    pub fn cluster_count(&self) -> usize {
        self.slots.len()
    }

    /// The first decision record to ask cluster `index` for.
    pub fn next_decision(&self, index: usize) -> usize {
        self.slots.get(index).map_or(0, |slot| slot.next_decision)
    }

    /// Takes in what cluster `index` answered, or why it did not.
    pub fn update(&mut self, index: usize, answer: Result<WatchReply, String>) {
        let Some(slot) = self.slots.get_mut(index) else {
            return;
        };
        self.version += 1;
        let mut reply = match answer {
            Ok(reply) => reply,
            Err(error) => {
                slot.error = Some(error);
                return;
            }
        };
        slot.error = None;
        slot.address = Some(reply.address.clone());
        let restarted = slot
            .last
            .as_ref()
            .is_some_and(|last| last.incarnation != reply.incarnation);
        let decisions = std::mem::take(&mut reply.decisions);
        if restarted {
            // A process started again numbers its records from 0: ask again
            // from there (what came with this answer is from the old count).
            slot.next_decision = 0;
        } else {
            slot.next_decision = reply.decisions_total;
            for record in decisions {
                self.decisions.push_back(DecisionItem::of(record));
                self.fresh_decisions += 1;
            }
            while self.decisions.len() > MAX_DECISIONS {
                self.decisions.pop_front();
            }
            self.fresh_decisions = self.fresh_decisions.min(self.decisions.len());
        }
        self.sample(&reply);
        self.slots[index].last = Some(reply);
    }

    /// Adds the points of one answer: pending and running slots per queue,
    /// and the age of every counter the cluster holds.
    fn sample(&mut self, reply: &WatchReply) {
        let now = reply.now;
        for queue in &reply.queues {
            for (what, value) in [("pending", queue.pend), ("running", queue.run)] {
                self.point(
                    format!("queue:{}:{}:{what}", reply.cluster, queue.queue),
                    format!("queues:{}", reply.cluster),
                    format!("{} {what}", queue.queue),
                    [now, f64::from(value)],
                );
            }
        }
        for view in &reply.views {
            if let Some(age) = view.age {
                self.point(
                    format!("age:{}:{}@{}", reply.cluster, view.queue, view.cluster),
                    "staleness".to_owned(),
                    format!("{} holds {}@{}", reply.cluster, view.queue, view.cluster),
                    [now, age],
                );
            }
        }
    }

    fn point(&mut self, id: String, chart: String, label: String, point: [f64; 2]) {
        self.series
            .entry(id)
            .or_insert_with(|| Series {
                chart,
                label,
                points: Vec::new(),
                fresh: 0,
            })
            .push(point);
    }

    /// Everything, for a page that connects; marks nothing as sent.
    pub fn full_frame(&self) -> Frame {
        Frame {
            full: true,
            clusters: self.panels(),
            series: self
                .series
                .iter()
                .map(|(id, series)| points(id, series, series.points.len()))
                .collect(),
            decisions: self.decisions.iter().cloned().collect(),
        }
    }

    /// What changed since the last call: the panels, the new points and
    /// the new decisions.
    pub fn take_changes(&mut self) -> Frame {
        let series = self
            .series
            .iter()
            .filter(|(_, series)| series.fresh > 0)
            .map(|(id, series)| points(id, series, series.fresh))
            .collect();
        for series in self.series.values_mut() {
            series.fresh = 0;
        }
        let skip = self.decisions.len() - self.fresh_decisions;
        let decisions = self.decisions.iter().skip(skip).cloned().collect();
        self.fresh_decisions = 0;
        Frame {
            full: false,
            clusters: self.panels(),
            series,
            decisions,
        }
    }

    /// One panel per cluster. The counters a submission cluster holds of
    /// a queue go in the panel of the queue's cluster, beside its truth,
    /// when that cluster is watched; else in the holder's panel.
    fn panels(&self) -> Vec<Panel> {
        let stopped = matches!(self.ended, Some((_, End::Stopped)));
        let mut panels: Vec<Panel> = self.slots.iter().map(|slot| panel(slot, stopped)).collect();
        for (index, slot) in self.slots.iter().enumerate() {
            let Some(reply) = &slot.last else { continue };
            for view in &reply.views {
                let home = self
                    .slots
                    .iter()
                    .position(|other| other.name == view.cluster && other.last.is_some());
                let truth = home
                    .and_then(|home| self.slots[home].last.as_ref())
                    .and_then(|there| there.queues.iter().find(|q| q.queue == view.queue))
                    .and_then(|queue| queue.counters.as_ref())
                    .map(CountersRow::from);
                let line = HeldLine {
                    holder: reply.cluster.clone(),
                    queue: format!("{}@{}", view.queue, view.cluster),
                    seen: view.figures,
                    age: view.age,
                    differs: differences(view.figures.as_ref(), truth.as_ref()),
                    truth,
                };
                panels[home.unwrap_or(index)].held.push(line);
            }
        }
        panels
    }
}

fn points(id: &str, series: &Series, newest: usize) -> SeriesPoints {
    let from = series.points.len().saturating_sub(newest);
    SeriesPoints {
        id: id.to_owned(),
        chart: series.chart.clone(),
        label: series.label.clone(),
        points: series.points[from..].to_vec(),
    }
}

/// The panel of `slot`; after a normal end (`stopped`) it says so, with
/// no error: what its last poll met was the processes shutting down.
fn panel(slot: &Slot, stopped: bool) -> Panel {
    let status = match (&slot.error, &slot.last) {
        _ if stopped => "stopped",
        (Some(_), _) => "down",
        (None, Some(_)) => "up",
        (None, None) => "waiting",
    };
    let mut panel = Panel {
        cluster: slot.name.clone(),
        address: slot.address.clone(),
        status,
        error: slot.error.clone().filter(|_| !stopped),
        now: None,
        incarnation: None,
        hosts: Vec::new(),
        queues: Vec::new(),
        held: Vec::new(),
    };
    if let Some(reply) = &slot.last {
        panel.now = Some(reply.now);
        panel.incarnation = Some(reply.incarnation);
        panel.hosts = reply.hosts.clone();
        panel.queues = reply
            .queues
            .iter()
            .map(|queue| QueueLine {
                queue: queue.queue.clone(),
                priority: queue.priority,
                run: queue.run,
                pend: queue.pend,
                susp: queue.susp,
                slots: reply
                    .hosts
                    .iter()
                    .filter(|host| host.queues.contains(&queue.queue))
                    .map(|host| host.max)
                    .sum(),
                send_to: queue.sndjobs_to.clone(),
                receive_from: queue.rcvjobs_from.clone(),
            })
            .collect();
    }
    panel
}

/// The figures where what is held and the truth differ (nothing when
/// either is unknown).
fn differences(seen: Option<&CountersRow>, truth: Option<&CountersRow>) -> Vec<&'static str> {
    let (Some(seen), Some(truth)) = (seen, truth) else {
        return Vec::new();
    };
    [
        ("total", seen.total, truth.total),
        ("available", seen.available, truth.available),
        ("running", seen.running, truth.running),
        ("pending", seen.pending, truth.pending),
        (
            "preemptable",
            seen.preemptable_available,
            truth.preemptable_available,
        ),
        ("imported", seen.imported_pending, truth.imported_pending),
    ]
    .into_iter()
    .filter(|(_, seen, truth)| seen != truth)
    .map(|(name, _, _)| name)
    .collect()
}
