//! One file per admin command: its request's fields, how it applies to a
//! member, its rows and their printers. [`apply`] is the one dispatch.

use mcfed_federation::{Effects, Member};
use mcfed_protocol::SimTime;

use crate::{AdminRequest, AdminResponse};

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
        AdminRequest::Queues => AdminResponse::Queues(queues::rows(member, now)),
        AdminRequest::Hosts => AdminResponse::Hosts(hosts::rows(member.node())),
        AdminRequest::Control { job, action } => {
            control::apply(member, now, &job, &action, effects)
        }
        AdminRequest::Host { host, event } => host::apply(member, now, &host, event, effects),
        AdminRequest::History => history::apply(member, now),
        AdminRequest::Aps => AdminResponse::Aps(aps::aps_rows(member, now)),
        AdminRequest::Activity => AdminResponse::Activity(activity::of(member, now)),
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
        )
    }
}
