//! One file per admin command: its request's fields, how it applies to a
//! member, its rows and their printers; the requests and answers that
//! travel ([`AdminRequest`], [`AdminResponse`]); [`apply`], the one
//! dispatch.
//!
//! The admin requests a cluster process answers (over the transport's admin
//! channel, with the administrator's certificate), and their answers.
//!
//! `mcfed bsub`, `bjobs`, `bqueues`, `bhosts`, `bclusters`, `bhist`,
//! `bacct`, `lsid`, `bparams`, `brsvs`, `brsvadd`, `brsvdel` and the job
//! control commands send one or two
//! requests each; `mcfed launch` uses the same requests to wait for the
//! federation, play submissions, gather decision records and stop the
//! processes. Requests and answers are postcard-encoded; the row types are
//! also what `-o json` prints, so their field names are a public contract
//! (add fields, never rename one).

use mcfed_federation::JobRef;
use mcfed_federation::{Effects, Member};
use mcfed_protocol::SimTime;
use mcfed_protocol::{JobAction, JobSpec};
use serde::{Deserialize, Serialize};

use activity::ActivityReply;
use aps::ApsRow;
use clusters::LinkRow;
use control::Controlled;
use history::HistoryReply;
use host::HostEvent;
use hosts::HostRow;
use jobs::{JobRow, JobsQuery};
use params::ParamsReply;
use queues::QueueReport;
use records::RecordsReply;
use reservations::ReservationRow;
use status::StatusReply;
use submit::Submitted;
use watch::WatchReply;

pub mod activity;
pub mod aps;
pub mod clusters;
pub mod control;
pub mod history;
pub mod host;
pub mod hosts;
pub mod jobs;
pub mod params;
pub mod queues;
pub mod records;
pub mod reservations;
pub mod rsvadd;
pub mod rsvdel;
pub mod status;
pub mod submit;
pub mod watch;

/// What applying a request to a member gave.
#[derive(Debug)]
pub enum Applied {
    /// The answer.
    Answer(AdminResponse),
    /// A request only the member's process can answer: its records, its
    /// links and state, its address, stopping.
    ForProcess(AdminRequest),
}

/// Applies `request` to `member` at `now`: what it changes goes to
/// `effects` (for the driver to journal, record and send), what it answers
/// comes back.
pub fn apply(
    request: AdminRequest,
    member: &mut Member,
    now: SimTime,
    effects: &mut Effects,
) -> Applied {
    let answer = match request {
        AdminRequest::Submit { queue, spec } => submit::apply(member, now, queue, spec, effects),
        AdminRequest::SubmitMany { jobs } => submit::apply_many(member, now, jobs, effects),
        AdminRequest::Jobs(query) => jobs::apply(member, now, &query),
        AdminRequest::JobsPage { query, after } => AdminResponse::JobsPage(jobs::page::page(
            member,
            now,
            &query,
            after,
            jobs::PAGE_BYTES,
        )),
        AdminRequest::Queues => AdminResponse::Queues(queues::rows(member, now)),
        AdminRequest::Hosts => AdminResponse::Hosts(hosts::rows(member.node())),
        AdminRequest::Control { job, action } => {
            control::apply(member, now, &job, &action, effects)
        }
        AdminRequest::Host { host, event } => host::apply(member, now, &host, event, effects),
        AdminRequest::History => history::apply(member, now),
        AdminRequest::HistoryPage { after } => history::page::apply(member, now, after),
        AdminRequest::Aps => AdminResponse::Aps(aps::aps_rows(member, now)),
        AdminRequest::Activity => AdminResponse::Activity(activity::of(member, now)),
        AdminRequest::Reservations => {
            AdminResponse::Reservations(reservations::rows(member.node(), now))
        }
        AdminRequest::ReservationAdd { config, by } => {
            rsvadd::apply(member, now, config, by.as_deref())
        }
        AdminRequest::ReservationDelete { name, by } => {
            rsvdel::apply(member, now, &name, by.as_deref())
        }
        request @ (AdminRequest::Clusters
        | AdminRequest::Records { .. }
        | AdminRequest::Status
        | AdminRequest::Shutdown
        | AdminRequest::Params
        | AdminRequest::Watch { .. }) => return Applied::ForProcess(request),
    };
    Applied::Answer(answer)
}

impl AdminRequest {
    /// Whether the request may change the member (a submission, a job or
    /// host command): its answer waits until what it changed is durable.
    pub fn changes_member(&self) -> bool {
        matches!(
            self,
            AdminRequest::Submit { .. }
                | AdminRequest::SubmitMany { .. }
                | AdminRequest::Control { .. }
                | AdminRequest::Host { .. }
                | AdminRequest::ReservationAdd { .. }
                | AdminRequest::ReservationDelete { .. }
        )
    }
}

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
    /// The cluster's advance reservations (`brsvs`).
    Reservations,
    /// One page of the jobs `bjobs` asks for: those after job `after` (by
    /// id), about [`jobs::PAGE_BYTES`] of them; the answer says where the
    /// next page starts. `bjobs` asks page after page, so a table of any
    /// size is listed ([`AdminRequest::Jobs`] answers in one message, which
    /// the admin channel bounds).
    JobsPage {
        /// The jobs asked for.
        query: JobsQuery,
        /// The last job id of the page before (none: from the first).
        after: Option<u64>,
    },
    /// One page of the job history (`bhist`, `bacct`): the jobs after job
    /// `after` (by id), about [`jobs::PAGE_BYTES`] of them; the answer says
    /// where the next page starts. The clients ask page after page, so a
    /// history of any size is listed ([`AdminRequest::History`] answers in
    /// one message, which the admin channel bounds).
    HistoryPage {
        /// The last job id of the page before (none: from the first).
        after: Option<u64>,
    },
    /// Make an advance reservation (`brsvadd`; a scenario's `brsvadd`
    /// action).
    ReservationAdd {
        /// The reservation.
        config: mcfed_cluster::AdvanceReservationConfig,
        /// The user asking (`brsvadd --user`), whom the reservation
        /// policies bind; `None`: the cluster's administrator.
        by: Option<String>,
    },
    /// Delete an advance reservation (`brsvdel`; a scenario's `brsvdel`
    /// action).
    ReservationDelete {
        /// Its name.
        name: String,
        /// The user asking (`brsvdel --user`), who may delete only the
        /// reservations that user made; `None`: the administrator.
        by: Option<String>,
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
    /// The advance reservations, in configuration order.
    Reservations(Vec<ReservationRow>),
    /// One page of jobs.
    JobsPage(jobs::JobsPage),
    /// One page of the job history.
    HistoryPage(history::HistoryPage),
    /// An advance reservation was made or deleted: what happened, in
    /// words.
    ReservationChanged(String),
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
            AdminResponse::HostChanged(what) | AdminResponse::ReservationChanged(what) => {
                Ok(what.clone())
            }
            AdminResponse::Error(why) => Err(why.clone()),
            _ => Ok(String::new()),
        }
    }
}
