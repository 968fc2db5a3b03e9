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

use mcfed_federation::JobRef;
use mcfed_protocol::{JobAction, JobSpec};
use serde::{Deserialize, Serialize};

use crate::cmd::activity::ActivityReply;
use crate::cmd::aps::ApsRow;
use crate::cmd::clusters::LinkRow;
use crate::cmd::control::Controlled;
use crate::cmd::history::HistoryReply;
use crate::cmd::host::HostEvent;
use crate::cmd::hosts::HostRow;
use crate::cmd::jobs::{JobRow, JobsQuery};
use crate::cmd::params::ParamsReply;
use crate::cmd::queues::QueueReport;
use crate::cmd::records::RecordsReply;
use crate::cmd::status::StatusReply;
use crate::cmd::submit::Submitted;
use crate::cmd::watch::WatchReply;

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
    /// The jobs `bjobs` asks for.
    Jobs(JobsQuery),
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
    Aps(Vec<ApsRow>),
    /// What the live page shows of the cluster.
    Watch(WatchReply),
    /// The answers to [`AdminRequest::SubmitMany`], in order: each job
    /// submitted, or why it was refused.
    SubmittedMany(Vec<Result<Submitted, String>>),
    /// Whether the cluster has work left.
    Activity(ActivityReply),
}

impl AdminRequest {
    /// Job control command `action` for the job named `job` (a scenario's
    /// job `[[action]]`).
    pub fn control(job: &str, action: JobAction) -> Self {
        AdminRequest::Control {
            job: JobRef::Name(job.to_owned()),
            action,
        }
    }

    /// Host `host` fails or recovers (a scenario's host `[[action]]`).
    pub fn host(host: &str, event: HostEvent) -> Self {
        AdminRequest::Host {
            host: host.to_owned(),
            event,
        }
    }
}

impl AdminResponse {
    /// What a command that acts (job control, a host event) did, as it
    /// prints it, or why it was refused.
    pub fn outcome(&self) -> Result<String, String> {
        match self {
            AdminResponse::Controlled(controlled) => Ok(controlled.message.clone()),
            AdminResponse::HostChanged(what) => Ok(what.clone()),
            AdminResponse::Error(why) => Err(why.clone()),
            _ => Ok(String::new()),
        }
    }
}
