//! The admin requests a cluster process answers (over the transport's admin
//! channel, with the administrator's certificate), and their answers.
//!
//! `mcfed bsub`, `bjobs`, `bqueues`, `bhosts` and `bclusters` send one
//! request each; `mcfed launch` uses the same requests to wait for the
//! federation, play submissions, gather decision records and stop the
//! processes. Requests and answers are postcard-encoded; the row types are
//! also what `-o json` prints, so their field names are a public contract
//! (add fields, never rename one).

use mcfed_federation::GroupState;
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::JobSpec;
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
    /// Submit many jobs at once (a batched `mcfed bsub`): each is answered,
    /// in order, once all are durable.
    SubmitMany {
        /// The jobs: queue and spec.
        jobs: Vec<(String, JobSpec)>,
    },
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
    Records(RecordsReply),
    /// The process's state.
    Status(StatusReply),
    /// The process is stopping.
    ShuttingDown,
    /// The request was refused.
    Error(String),
    /// The answers to [`AdminRequest::SubmitMany`], in order: each job
    /// submitted, or why it was refused.
    SubmittedMany(Vec<Result<Submitted, String>>),
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
    pub events: Vec<mcfed_scenario::records::EventRecord>,
    /// The process's slot-usage samples (every shortest update interval
    /// of the scenario, from emulated time zero).
    #[serde(default)]
    pub usage: Vec<mcfed_scenario::records::UsageRecord>,
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
