//! The messages clusters exchange, and the envelope that addresses them.

use serde::{Deserialize, Serialize};

use crate::counters::CounterUpdate;
use crate::job::{JobAccept, JobForward, JobReject, JobReturn, JobStatus};
use crate::names::ClusterName;

/// The wire protocol's version. A connection opens with a [`Hello`]; peers
/// with different versions do not talk.
pub const PROTOCOL_VERSION: u16 = 1;

/// The first message on every connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The sender's [`PROTOCOL_VERSION`].
    pub version: u16,
    /// The cluster the sender claims to be.
    pub cluster: ClusterName,
}

impl Hello {
    /// A hello from `cluster` at this build's protocol version.
    pub fn new(cluster: ClusterName) -> Self {
        Hello {
            version: PROTOCOL_VERSION,
            cluster,
        }
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
        )
    }
}

/// A message with its sender and receiver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "actors", derive(actix::Message))]
#[cfg_attr(feature = "actors", rtype(result = "()"))]
pub struct Envelope {
    /// The sending cluster.
    pub from: ClusterName,
    /// The receiving cluster.
    pub to: ClusterName,
    /// The message.
    pub message: Message,
}
