//! The admin requests a cluster process answers (over the transport's admin
//! channel, with the administrator's certificate), and their answers.
//!
//! `mcfed bsub`, `bjobs`, `bqueues`, `bhosts`, `bclusters`, `bhist`,
//! `bacct`, `lsid`, `bparams` and the job control commands send one or two
//! requests each; `mcfed launch` uses the same requests to wait for the
//! federation, play submissions, gather decision records and stop the
//! processes. Requests and answers are postcard-encoded; the row types are
//! also what `-o json` prints, so their field names are a public contract
//! (add fields, never rename one).

/// What happens to a host (`mcfed host-fail`, `host-recover`).
pub use mcfed_cluster::HostEvent;
use mcfed_federation::{GroupState, JobRef};
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{JobAction, JobSpec};
use serde::{Deserialize, Serialize};

/// One queue, as `bqueues` shows it: the cluster's one queue view, which
/// `mcfed run --show queues` prints too (built by
/// `mcfed_cluster::Cluster::queue_report`, with MAX_RSCHED_TIME filled in by
/// [`crate::rows::queues`]).
pub use mcfed_cluster::QueueReport;

/// What an administrator asks a cluster process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AdminRequest {
    /// Submit a job (`bsub`): to the forwarder if `queue` is a send queue,
    /// else to the cluster.
    Submit {
        /// The queue.
        queue: String,
        /// The job.
        spec: JobSpec,
    },
    /// The jobs (`bjobs`).
    Jobs,
    /// The queues (`bqueues`).
    Queues,
    /// The hosts (`bhosts`).
    Hosts,
    /// The MultiCluster links (`bclusters`).
    Clusters,
    /// Decision records from index `from` on, and the initial job states.
    Records {
        /// The first record wanted (0: all).
        from: usize,
    },
    /// The process's state: its emulated time and its links.
    Status,
    /// Stop the process cleanly.
    Shutdown,
    /// A job control command (`bkill`, `bstop`, `bresume`, `brequeue`,
    /// `bswitch`, `bmod`).
    Control {
        /// The job.
        job: JobRef,
        /// What to do.
        action: JobAction,
    },
    /// The job history (`bjobs -a`, `bhist`, `bacct`).
    History,
    /// The cluster's parameters (`bparams`, `lsid`).
    Params,
    /// Pending jobs with their APS values, in dispatch order (`bjobs -aps`,
    /// `bjobs -prio`).
    Aps,
    /// A host of the cluster fails or recovers (`mcfed host-fail`,
    /// `mcfed host-recover`; a scenario's `host_fail` action).
    Host {
        /// The host.
        host: String,
        /// What happens to it.
        event: HostEvent,
    },
    /// What the live page (`--web`) shows of the cluster: its hosts and
    /// queues, the counters it holds of remote queues, and the decision
    /// records from index `from` on. Reads only.
    Watch {
        /// The first decision record wanted (0: all).
        from: usize,
    },
    /// Submit many jobs at once (a batched `mcfed bsub`): each is answered,
    /// in order, once all are durable.
    SubmitMany {
        /// The jobs: queue and spec.
        jobs: Vec<(String, JobSpec)>,
    },
    /// Whether the cluster has work left (a draining `mcfed launch` asks
    /// once nothing is left to submit).
    Activity,
}

/// A cluster process's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AdminResponse {
    /// The job was submitted.
    Submitted(Submitted),
    /// The jobs.
    Jobs(Vec<JobRow>),
    /// The queues, in configuration order.
    Queues(Vec<QueueReport>),
    /// The hosts.
    Hosts(Vec<HostRow>),
    /// The links.
    Clusters(Vec<LinkRow>),
    /// Decision records and initial states.
    Records(Box<RecordsReply>),
    /// The process's state.
    Status(StatusReply),
    /// The process is stopping.
    ShuttingDown,
    /// The request was refused.
    Error(String),
    /// A job control command was done, or sent to the job's execution
    /// cluster.
    Controlled(Controlled),
    /// The job history.
    History(HistoryReply),
    /// The cluster's parameters.
    Params(ParamsReply),
    /// A host failed or recovered: what happened, in words.
    HostChanged(String),
    /// Pending jobs with their APS values, in dispatch order.
    Aps(Vec<crate::lsf::ApsRow>),
    /// What the live page shows of the cluster.
    Watch(WatchReply),
    /// The answers to [`AdminRequest::SubmitMany`], in order: each job
    /// submitted, or why it was refused.
    SubmittedMany(Vec<Result<Submitted, String>>),
    /// Whether the cluster has work left.
    Activity(ActivityReply),
}

/// Whether a cluster process has work left: the answer to
/// [`AdminRequest::Activity`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActivityReply {
    /// Its emulated time, in seconds.
    pub now: f64,
    /// When its member next needs to wake (a job's end, a timer), in
    /// emulated seconds; none when nothing is due.
    pub next_wake: Option<f64>,
    /// Its forwarder holds jobs waiting for a remote queue (a counter
    /// update may let them go).
    pub holding: bool,
}

/// What a job control command did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Controlled {
    /// The job's id.
    pub job_id: u64,
    /// The execution cluster the command was sent to, if it went there.
    pub sent_to: Option<String>,
    /// What the command prints (`Job <1> is being terminated`).
    pub message: String,
}

/// The jobs a cluster process knows: those it holds and those that ended
/// within CLEAN_PERIOD.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryReply {
    /// The cluster.
    pub cluster: String,
    /// Its emulated time, seconds.
    pub now: f64,
    /// CLEAN_PERIOD, seconds.
    pub clean_period: f64,
    /// The jobs, by id.
    pub jobs: Vec<HistoryRow>,
}

/// One job's history, as `bhist -l` shows it; `bjobs -a` and `bacct` read
/// it too. Its field names are a public contract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryRow {
    /// The job's id in this cluster.
    pub job_id: u64,
    /// The job's name.
    pub job_name: String,
    /// The submitting user.
    pub user: String,
    /// Its queue here (the send queue for a job forwarded from here).
    pub queue: String,
    /// PEND, RUN, SSUSP, USUSP, PSUSP, DONE, EXIT, or GONE (forwarded
    /// here and sent back).
    pub stat: String,
    /// `bundled` (present at start), `submitted`, `sent` (submitted to a
    /// send queue here) or `forwarded_in`.
    pub origin: String,
    /// For a job forwarded here: the submission cluster and its id there.
    pub forwarded_from: Option<ForwardedFrom>,
    /// Slots.
    pub slots: u32,
    /// When it entered this cluster (emulated seconds).
    pub submit_time: f64,
    /// When it was first submitted anywhere.
    pub first_submit_time: f64,
    /// When it first started, if it has.
    pub start_time: Option<f64>,
    /// When it ended (DONE, EXIT), if it has.
    pub end_time: Option<f64>,
    /// Where it ran: hosts here, or the execution cluster.
    pub exec_host: Option<String>,
    /// For a job forwarded from here: `queue@cluster`, the id there, how
    /// many times.
    pub forwarded_to: Option<String>,
    /// Its id at the execution cluster.
    pub dest_job: Option<u64>,
    /// How many times it was forwarded.
    pub forwards: u32,
    /// Run limit, seconds.
    pub run_limit: Option<f64>,
    /// `bsub -o`.
    pub output_file: Option<String>,
    /// `bsub -e`.
    pub error_file: Option<String>,
    /// `bsub -sp`.
    pub user_priority: Option<u32>,
    /// Seconds spent in each state so far: PEND, PSUSP, RUN, USUSP, SSUSP.
    pub times: StateSeconds,
    /// What happened, in order.
    pub events: Vec<HistoryEventRow>,
    /// Events beyond the ones kept.
    pub more_events: u32,
}

/// Seconds a job spent in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateSeconds {
    /// PEND.
    pub pend: f64,
    /// PSUSP.
    pub psusp: f64,
    /// RUN.
    pub run: f64,
    /// USUSP.
    pub ususp: f64,
    /// SSUSP.
    pub ssusp: f64,
    /// All of them.
    pub total: f64,
}

/// One event of a job's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryEventRow {
    /// Emulated seconds.
    pub time: f64,
    /// What happened.
    pub event: String,
}

/// A cluster's parameters, for `bparams` and `lsid`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamsReply {
    /// The cluster.
    pub cluster: String,
    /// Where its process listens.
    pub address: String,
    /// Its emulated time, seconds.
    pub now: f64,
    /// Each parameter: its lsb.params name, its value, and what it does.
    pub params: Vec<ParamRow>,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamRow {
    /// Its name in lsb.params.
    pub name: String,
    /// Its value (`-` when not set).
    pub value: String,
    /// What it does.
    pub meaning: String,
}

/// A submitted job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submitted {
    /// The cluster.
    pub cluster: String,
    /// The job's id there.
    pub job_id: u64,
    /// The queue.
    pub queue: String,
    /// Whether it went to a send queue (it will be forwarded).
    pub forwarded: bool,
}

/// One job, as `bjobs` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    /// The job's id in this cluster.
    pub job_id: u64,
    /// The submitting user.
    pub user: String,
    /// LSF's state: PEND, RUN, SSUSP, DONE.
    pub stat: String,
    /// The queue it is in here.
    pub queue: String,
    /// Where it was submitted from: this cluster, or `source_job@cluster`
    /// for a job forwarded here.
    pub from_host: String,
    /// Where it runs (`n*host`), or where it was forwarded to
    /// (`host@cluster`, `-` while pending there).
    pub exec_host: Option<String>,
    /// The job's name.
    pub job_name: String,
    /// When it was submitted here (emulated seconds).
    pub submit_time: f64,
    /// Slots.
    pub slots: u32,
    /// For a job submitted here and forwarded: where it went.
    pub forwarded_to: Option<ForwardedTo>,
    /// For a job forwarded here: where it came from.
    pub forwarded_from: Option<ForwardedFrom>,
    /// Why it pends, for a pending job.
    pub pending_reason: Option<String>,
    /// Run time asked for (emulated seconds).
    pub run_time: f64,
    /// Run limit (`bsub -W`), emulated seconds.
    pub run_limit: Option<f64>,
    /// Boolean resources asked for (`bsub -R`).
    pub resources: Vec<String>,
    /// When it started (emulated seconds), if it has.
    pub start_time: Option<f64>,
    /// When it ended (DONE, EXIT; `bjobs -a`), if it has.
    #[serde(default)]
    pub finish_time: Option<f64>,
    /// `bsub -o FILE`.
    #[serde(default)]
    pub output_file: Option<String>,
    /// `bsub -e FILE`.
    #[serde(default)]
    pub error_file: Option<String>,
    /// `bsub -sp`: the user-assigned job priority.
    #[serde(default)]
    pub user_priority: Option<u32>,
}

/// Where a job submitted here was forwarded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardedTo {
    /// The execution cluster.
    pub cluster: String,
    /// Its receive queue.
    pub queue: String,
    /// The job's id there, once accepted.
    pub dest_job: Option<u64>,
    /// When it was forwarded (emulated seconds).
    pub forward_time: f64,
    /// How many times it has been forwarded.
    pub forwards: u32,
}

/// Where a job forwarded here came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardedFrom {
    /// The submission cluster.
    pub cluster: String,
    /// The job's id there.
    pub source_job: u64,
}

/// One host, as `bhosts` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    /// HOST_NAME.
    pub host_name: String,
    /// STATUS: ok, closed (full), closed_Adm.
    pub status: String,
    /// MAX: its MXJ.
    pub max: u32,
    /// NJOBS: slots of jobs on it.
    pub njobs: u32,
    /// RUN slots.
    pub run: u32,
    /// SSUSP slots.
    pub ssusp: u32,
    /// Its boolean resources.
    pub resources: Vec<String>,
    /// USUSP slots (jobs stopped by `bstop`).
    #[serde(default)]
    pub ususp: u32,
    /// Processors (ncpus).
    #[serde(default)]
    pub ncpus: u32,
    /// JL/U: slots each user may hold on it.
    #[serde(default)]
    pub jl_u: Option<u32>,
    /// The queues that dispatch to it.
    #[serde(default)]
    pub queues: Vec<String>,
}

/// One MultiCluster link, as `bclusters` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkRow {
    /// LOCAL_QUEUE.
    pub local_queue: String,
    /// JOB_FLOW: send or recv.
    pub job_flow: String,
    /// REMOTE: the remote receive queue (send queues), else `-`.
    pub remote: String,
    /// CLUSTER: the remote cluster.
    pub cluster: String,
    /// STATUS: ok (connected both ways) or disc.
    pub status: String,
    /// The remote cluster's incarnation, from its last hello.
    pub incarnation: Option<u64>,
    /// For send queues: the sequence number of the last counter update
    /// applied from the remote cluster.
    pub last_update_seq: Option<u64>,
    /// For send queues: when that update was taken (emulated seconds).
    pub last_update_at: Option<f64>,
}

/// Decision records and the initial job states.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordsReply {
    /// The cluster.
    pub cluster: String,
    /// Records from the index asked for.
    pub records: Vec<DecisionRecord>,
    /// How many records the process has written in all.
    pub total: usize,
    /// Per initial job group, states after the first dispatch pass.
    pub initial_states: Vec<GroupState>,
    /// Every job event of the process (jobs started, suspended, finished,
    /// ...), for `mcfed launch --events`.
    #[serde(default)]
    pub events: Vec<mcfed_run::records::EventRecord>,
    /// The process's slot-usage samples (every shortest update interval
    /// of the scenario, from emulated time zero).
    #[serde(default)]
    pub usage: Vec<mcfed_run::records::UsageRecord>,
    /// The scheduling metrics of the process's jobs (merged by the
    /// launcher into the run's `summary`).
    #[serde(default)]
    pub metrics: Option<mcfed_run::metrics::MetricsRecorder>,
    /// What the process holds now: its slots and the jobs that never
    /// started (the end of the run's metrics and totals).
    #[serde(default)]
    pub end_state: Option<mcfed_run::metrics::EndState>,
    /// Counts of what happened in the process (updates, job starts and
    /// ends, decisions).
    #[serde(default)]
    pub stats: Option<mcfed_run::RunStats>,
}

/// What the live page (`mcfed launch --web`, `mcfed cluster --web`)
/// shows of one cluster process, read in one pass over its member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchReply {
    /// The cluster.
    pub cluster: String,
    /// Where its process listens.
    pub address: String,
    /// Its incarnation (a process started again has a new one, and
    /// numbers its decision records from 0 again).
    pub incarnation: u64,
    /// Its emulated time, seconds.
    pub now: f64,
    /// Its hosts, as `bhosts` shows them.
    pub hosts: Vec<HostRow>,
    /// Its queues, as `bqueues` shows them (a receive queue with the
    /// counters it publishes now: the truth).
    pub queues: Vec<QueueReport>,
    /// The counters it holds of each remote queue its send queues send
    /// to (empty for a cluster without send queues).
    pub views: Vec<ViewRow>,
    /// Decision records from the index asked for.
    pub decisions: Vec<DecisionRecord>,
    /// How many decision records the process has written in all.
    pub decisions_total: usize,
}

/// The counters a submission cluster holds of one remote queue: the
/// figures of the last update applied, plus the jobs forwarded since that
/// the update does not reflect (what its next decision will read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewRow {
    /// The remote queue.
    pub queue: String,
    /// Its execution cluster.
    pub cluster: String,
    /// The figures, or `None` before the first update from the cluster.
    pub figures: Option<CountersRow>,
    /// When the execution cluster took the snapshot behind them
    /// (emulated seconds).
    pub taken_at: Option<f64>,
    /// Their age now (emulated seconds).
    pub age: Option<f64>,
    /// The sequence number of the last update applied from the cluster.
    pub last_update_seq: Option<u64>,
}

/// A queue's counter figures, as published (the truth) or as held by a
/// submission cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountersRow {
    /// PRIORITY.
    pub priority: u32,
    /// Total slots.
    pub total: u32,
    /// Free slots.
    pub available: u32,
    /// Running slots.
    pub running: u32,
    /// Pending slots.
    pub pending: u32,
    /// Slots reachable through preemption (free ones included).
    pub preemptable_available: u32,
    /// Imported jobs pending.
    pub imported_pending: u32,
    /// IMPT_JOBBKLG (`None`: infinit).
    pub impt_jobbklg: Option<u32>,
}

impl From<&mcfed_protocol::QueueCounters> for CountersRow {
    fn from(counters: &mcfed_protocol::QueueCounters) -> Self {
        CountersRow {
            priority: counters.priority,
            total: counters.total_slots,
            available: counters.available_slots,
            running: counters.running_slots,
            pending: counters.pending_slots,
            preemptable_available: counters.preemptable_available_slots,
            imported_pending: counters.imported_pending_jobs,
            impt_jobbklg: counters.impt_jobbklg,
        }
    }
}

/// A process's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusReply {
    /// The cluster.
    pub cluster: String,
    /// Its incarnation.
    pub incarnation: u64,
    /// Its emulated time, seconds.
    pub now: f64,
    /// Its peers: name, whether connected both ways, incarnation.
    pub peers: Vec<PeerRow>,
    /// The lineage of its state (it stays the same across restarts from
    /// its journal).
    #[serde(default)]
    pub lineage: u64,
    /// Its state directory, if it keeps a journal.
    #[serde(default)]
    pub state: Option<String>,
}

/// One peer in a [`StatusReply`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerRow {
    /// The peer.
    pub cluster: String,
    /// This process's connection to it is up.
    pub outbound: bool,
    /// Its connections to this process that are up.
    pub inbound: u32,
    /// Its incarnation.
    pub incarnation: Option<u64>,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
}

impl StatusReply {
    /// Whether every peer is connected both ways.
    pub fn all_connected(&self) -> bool {
        self.peers
            .iter()
            .all(|peer| peer.outbound && peer.inbound > 0)
    }
}

/// Why an admin message could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
#[error("admin message does not {what}: {source}")]
pub struct CodecError {
    what: &'static str,
    #[source]
    source: postcard::Error,
}

/// Encodes a request or response.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    postcard::to_allocvec(value).map_err(|source| CodecError {
        what: "encode",
        source,
    })
}

/// Decodes a request or response.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, CodecError> {
    postcard::from_bytes(bytes).map_err(|source| CodecError {
        what: "decode",
        source,
    })
}
