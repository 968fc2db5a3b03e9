//! Answering the administrator's requests (`mcfed bsub`, `bjobs`,
//! `bkill`, ...) of a cluster process: each decoded and applied to the
//! member inside its actor ([`mcfed_admin::apply`]); the few that need
//! what only the process has — its recorder, its transport, its address,
//! stopping — are answered here.

use std::time::Duration;

use actix::prelude::*;
use mcfed_actors::{Apply, NotDurable};
use mcfed_admin::cmd::Applied;
use mcfed_admin::cmd::clusters::PeerLink;
use mcfed_federation::Effects;
use mcfed_transport::AdminCall;

use super::*;

/// Answers one admin call.
pub(super) async fn answer(process: Process, call: AdminCall) {
    let response = match mcfed_admin::decode::<AdminRequest>(&call.request) {
        Ok(request) => {
            tracing::debug!(cluster = %process.name, client = %call.client, ?request, "admin request");
            respond(&process, request).await
        }
        Err(error) => AdminResponse::Error(error.to_string()),
    };
    let bytes = mcfed_admin::encode(&response)
        .or_else(|error| mcfed_admin::encode(&AdminResponse::Error(error.to_string())))
        .unwrap_or_default();
    let _ = call.reply.send(bytes);
}

fn mailbox(error: MailboxError) -> AdminResponse {
    AdminResponse::Error(format!("the cluster's actor stopped: {error}"))
}

/// The answer to `request`: applied to the member in its actor, or, for
/// what only the process knows, here.
async fn respond(process: &Process, request: AdminRequest) -> AdminResponse {
    let changes = request.changes_member();
    let waiters = process.waiters.clone();
    let applied = process
        .local
        .member
        .send(Apply {
            changes,
            apply: move |member: &mut Member, now, effects: &mut Effects| {
                let applied = mcfed_admin::apply(request, member, now, effects);
                // A command sent to the job's execution cluster waits for
                // its answer: registered here, before it can come.
                let answer = match &applied {
                    Applied::Answer(AdminResponse::Controlled(controlled))
                        if controlled.sent_to.is_some() =>
                    {
                        Some(waiters.wait_for(controlled.job_id))
                    }
                    _ => None,
                };
                (applied, answer)
            },
        })
        .await;
    match applied {
        Ok(Ok((Applied::Answer(answer), None))) => answer,
        Ok(Ok((Applied::Answer(answer), Some(reply)))) => {
            answered(answer, reply, process.control_timeout).await
        }
        Ok(Ok((Applied::ForProcess(request), _))) => respond_in_process(process, request).await,
        Ok(Err(NotDurable)) => AdminResponse::Error(NotDurable.to_string()),
        Err(error) => mailbox(error),
    }
}

/// `sent`, the answer to a job control command sent to the job's execution
/// cluster, once that cluster has answered: its refusal, as LSF prints it,
/// or no answer within `limit`.
async fn answered(
    sent: AdminResponse,
    reply: tokio::sync::oneshot::Receiver<(bool, String)>,
    limit: Duration,
) -> AdminResponse {
    let AdminResponse::Controlled(controlled) = &sent else {
        return sent;
    };
    let cluster = controlled.sent_to.clone().unwrap_or_default();
    match tokio::time::timeout(limit, reply).await {
        Ok(Ok((true, _))) => sent,
        Ok(Ok((false, why))) => AdminResponse::Error(format!(
            "Job <{}>: {why} (at cluster <{cluster}>)",
            controlled.job_id
        )),
        Ok(Err(_)) => AdminResponse::Error(format!(
            "Job <{}>: the process stopped before cluster <{cluster}> answered",
            controlled.job_id
        )),
        Err(_) => AdminResponse::Error(format!(
            "Job <{}>: cluster <{cluster}> did not answer within {}; the command may still take effect there",
            controlled.job_id,
            humantime::format_duration(limit)
        )),
    }
}

/// The requests only the process can answer.
async fn respond_in_process(process: &Process, request: AdminRequest) -> AdminResponse {
    match request {
        AdminRequest::Clusters => match links(process).await {
            Ok(rows) => AdminResponse::Clusters(rows),
            Err(error) => mailbox(error),
        },
        AdminRequest::Records { from } => records(process, from).await,
        AdminRequest::Status => AdminResponse::Status(status(process)),
        AdminRequest::Params => match params(process).await {
            Ok(reply) => AdminResponse::Params(reply),
            Err(error) => mailbox(error),
        },
        AdminRequest::Watch { from } => match watch(process, from).await {
            Ok(reply) => AdminResponse::Watch(reply),
            Err(error) => mailbox(error),
        },
        AdminRequest::Shutdown => {
            let stop = process.stop.clone();
            actix_rt::spawn(async move {
                // Let the answer reach the administrator first.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let _ = stop.send(());
            });
            AdminResponse::ShuttingDown
        }
        other => AdminResponse::Error(format!("not a request for the process: {other:?}")),
    }
}

/// The links (`bclusters`): the member's queues and views, the
/// transport's peers.
async fn links(
    process: &Process,
) -> Result<Vec<mcfed_admin::cmd::clusters::LinkRow>, MailboxError> {
    let peers: Vec<(ClusterName, PeerLink)> = process
        .transport
        .status()
        .into_iter()
        .map(|(cluster, status)| {
            let link = PeerLink {
                up: status.is_up(),
                incarnation: status.incarnation,
            };
            (cluster, link)
        })
        .collect();
    process
        .local
        .member
        .send(Inspect(move |member: &Member, _| {
            let facts = member
                .forwarder()
                .map(mcfed_admin::cmd::clusters::view_facts)
                .unwrap_or_default();
            member
                .config()
                .map(|config| mcfed_admin::cmd::clusters::links(config, &peers, &facts))
                .unwrap_or_default()
        }))
        .await
}

/// What the process recorded, from decision record `from` on.
async fn records(process: &Process, from: usize) -> AdminResponse {
    let end_state = match process
        .local
        .member
        .send(Inspect(|member: &Member, _| {
            Some(mcfed_run::metrics::end_state(member))
        }))
        .await
    {
        Ok(state) => state,
        Err(error) => return mailbox(error),
    };
    let collected = records_from(&process.recorder, from);
    AdminResponse::Records(Box::new(RecordsReply {
        cluster: process.name.to_string(),
        total: collected.total,
        records: collected.records,
        initial_states: process.initial_states.as_ref().clone(),
        events: collected.events,
        usage: collected.usage,
        metrics: Some(collected.metrics),
        stats: Some(collected.stats),
        end_state,
    }))
}

/// The process's state: its emulated time and its links.
fn status(process: &Process) -> StatusReply {
    StatusReply {
        lineage: process.lineage,
        state: process.state.clone(),
        cluster: process.name.to_string(),
        incarnation: process.incarnation,
        now: process.clock.now().as_secs_f64(),
        peers: process
            .transport
            .status()
            .into_iter()
            .map(|(cluster, status)| PeerRow {
                cluster: cluster.to_string(),
                outbound: status.outbound,
                inbound: status.inbound,
                incarnation: status.incarnation,
                last_error: status.last_error,
            })
            .collect(),
    }
}

/// The cluster's parameters (`bparams`, `lsid`), with where it listens.
async fn params(process: &Process) -> Result<ParamsReply, MailboxError> {
    let params = process
        .local
        .member
        .send(Inspect(|member: &Member, _| {
            member
                .config()
                .map(mcfed_admin::cmd::params::rows)
                .unwrap_or_default()
        }))
        .await?;
    Ok(ParamsReply {
        cluster: process.name.to_string(),
        address: process.transport.local_addr().to_string(),
        now: process.clock.now().as_secs_f64(),
        params,
    })
}
