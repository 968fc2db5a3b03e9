//! The messages clusters exchange, and the envelope that addresses them.

use serde::{Deserialize, Serialize};

use crate::control::{JobControl, JobControlReply};
use crate::counters::{CounterUpdate, QueueFacts};
use crate::job::{
    JobAccept, JobForward, JobLost, JobRecall, JobReject, JobReturn, JobStatus, JobSync,
    JobWithdraw,
};
use crate::names::ClusterName;

/// The wire protocol's version. A connection opens with a [`Hello`]; peers
/// with different versions do not talk.
///
/// Version 2 (issue 4) added [`Hello::incarnation`] and the messages
/// [`Message::JobRecall`], [`Message::JobSync`] and [`Message::JobLost`].
/// Version 3 (issue 9) added [`Hello::port`].
/// Version 4 (issue 13) added [`Hello::queues`] (the static facts of the
/// sender's receive queues), the slot group of each queue's counters, and a
/// job's run-time estimate and GPUs. Version 5 (issue 15) added
/// [`crate::JobSpec::options`], the job events of job control and the
/// messages [`Message::JobControl`] and [`Message::JobControlReply`].
/// Version 6 (issue 11, absolute priority scheduling) added to
/// [`crate::JobOptions`] the memory and swap a job asks for, the most slots
/// of a resizable job and whether it resizes itself, and the JPRIORITY a
/// forwarded job carries; to [`crate::JobChanges`] `bmod -aps`; the
/// actions `bmig` and `bresize release`; and the job events `Migrated`,
/// `Rerun`, `Resized`, `Waiting` and `Pended`.
/// Version 7 (issue 14) added the messages [`Message::Resume`] and
/// [`Message::JobWithdraw`]. Version 8 added the GPUs of a queue's hosts
/// to its counters and facts ([`crate::GpuSlots`], issue 27 item 5) and a
/// forward's send queue to [`crate::JobForward`] (so both ends count it).
pub const PROTOCOL_VERSION: u16 = 8;

/// The first message on every connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The sender's [`PROTOCOL_VERSION`].
    pub version: u16,
    /// The cluster the sender claims to be.
    pub cluster: ClusterName,
    /// Identifies one run of the sender's process: a cluster that restarts
    /// says hello with a new incarnation, so its peers know that it lost
    /// whatever it held (0: unknown, as in-process).
    pub incarnation: u64,
    /// The UDP port the sender listens on, so that a peer that did not
    /// know its address learns it (the remote IP and this port; 0:
    /// unknown, as in-process).
    pub port: u16,
    /// The static facts of the sender's receive queues, so a submission
    /// cluster can forward before (or without) counter updates.
    pub queues: Vec<QueueFacts>,
}

impl Hello {
    /// A hello from `cluster` at this build's protocol version, incarnation 0.
    pub fn new(cluster: ClusterName) -> Self {
        Hello::with_incarnation(cluster, 0)
    }

    /// A hello from `cluster`'s run `incarnation`.
    pub fn with_incarnation(cluster: ClusterName, incarnation: u64) -> Self {
        Hello {
            version: PROTOCOL_VERSION,
            cluster,
            incarnation,
            port: 0,
            queues: Vec::new(),
        }
    }

    /// The same hello, announcing that the sender listens on `port`.
    pub fn listening_on(self, port: u16) -> Self {
        Hello { port, ..self }
    }

    /// The same hello, with the static facts of the sender's receive
    /// queues.
    pub fn with_queues(self, queues: Vec<QueueFacts>) -> Self {
        Hello { queues, ..self }
    }
}

/// Everything one cluster can say to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    /// Opens a connection.
    Hello(Hello),
    /// Queue counters from an execution cluster.
    CounterUpdate(CounterUpdate),
    /// A job forwarded to a receive queue.
    JobForward(JobForward),
    /// A forwarded job was accepted.
    JobAccept(JobAccept),
    /// A forwarded job was refused.
    JobReject(JobReject),
    /// An accepted job comes back to its submission cluster.
    JobReturn(JobReturn),
    /// A forwarded job's state changed.
    JobStatus(JobStatus),
    /// The submission cluster asks for a job pending remotely back
    /// (MAX_RSCHED_TIME).
    JobRecall(JobRecall),
    /// The submission cluster lists the jobs it believes the receiver holds
    /// for it (sent whenever a connection between them is made).
    JobSync(JobSync),
    /// The execution cluster does not hold a job the submission cluster
    /// believes it does (it restarted, or the forward was lost).
    JobLost(JobLost),
    /// The submission cluster asks the execution cluster to act on a job
    /// it forwarded there (`bkill`, `bstop`, ... given at the submission
    /// cluster).
    JobControl(JobControl),
    /// The execution cluster's answer to a [`Message::JobControl`].
    JobControlReply(JobControlReply),
    /// What the sender carries over from its earlier runs, and its clock:
    /// the first message after the hello on every connection a process
    /// dials (version 4).
    Resume(Resume),
    /// The submission cluster takes a forwarded job away from the execution
    /// cluster, whatever its state there: another copy of the job won
    /// (version 4).
    JobWithdraw(JobWithdraw),
}

/// What a process carries over from its earlier runs, and its clock, sent
/// right after the hello on every connection it dials, before anything
/// else.
///
/// A process started without earlier state (a first start, or a restart
/// without a journal) has a new *lineage*; one that replayed its journal
/// keeps the lineage of the run that created the journal. A peer that sees
/// a cluster's lineage change knows it lost what it held: an execution
/// cluster withdraws the jobs the earlier lineage forwarded to it, a
/// submission cluster forgets the earlier lineage's counters. The same
/// lineage means the jobs, ids and sequence numbers stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    /// The lineage of the sender's state (0: unknown, as in-process).
    pub lineage: u64,
    /// The sender's emulated time zero, in milliseconds since the Unix
    /// epoch (0: unknown), so that a process started without one agrees
    /// with its peers on emulated time.
    pub epoch_unix_ms: u64,
}

impl Message {
    /// A short name of the message kind, for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Hello(_) => "hello",
            Message::CounterUpdate(_) => "counter-update",
            Message::JobForward(_) => "job-forward",
            Message::JobAccept(_) => "job-accept",
            Message::JobReject(_) => "job-reject",
            Message::JobReturn(_) => "job-return",
            Message::JobStatus(_) => "job-status",
            Message::JobRecall(_) => "job-recall",
            Message::JobSync(_) => "job-sync",
            Message::JobLost(_) => "job-lost",
            Message::JobControl(_) => "job-control",
            Message::JobControlReply(_) => "job-control-reply",
            Message::Resume(_) => "resume",
            Message::JobWithdraw(_) => "job-withdraw",
        }
    }

    /// Whether the message is for the receiver's forwarder (the submission
    /// side) rather than its cluster scheduler (the execution side).
    pub fn is_for_forwarder(&self) -> bool {
        matches!(
            self,
            Message::CounterUpdate(_)
                | Message::JobAccept(_)
                | Message::JobReject(_)
                | Message::JobReturn(_)
                | Message::JobStatus(_)
                | Message::JobLost(_)
        )
    }
}

/// A message with its sender and receiver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The sending cluster.
    pub from: ClusterName,
    /// The receiving cluster.
    pub to: ClusterName,
    /// The message.
    pub message: Message,
}
