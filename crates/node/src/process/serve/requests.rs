//! Answering the administrator's requests (`mcfed bsub`, `bjobs`,
//! `bkill`, ...) of a cluster process: each decoded, handed to the member
//! actor, and its answer encoded.

use std::time::Duration;

use actix::prelude::*;
use mcfed_transport::AdminCall;

use super::*;

/// Answers one admin call.
pub(super) async fn answer(process: Process, call: AdminCall) {
    let response = match admin::decode::<AdminRequest>(&call.request) {
        Ok(request) => {
            tracing::debug!(cluster = %process.name, client = %call.client, ?request, "admin request");
            respond(&process, request).await
        }
        Err(error) => AdminResponse::Error(error.to_string()),
    };
    let bytes = admin::encode(&response)
        .or_else(|error| admin::encode(&AdminResponse::Error(error.to_string())))
        .unwrap_or_default();
    let _ = call.reply.send(bytes);
}

async fn respond(process: &Process, request: AdminRequest) -> AdminResponse {
    let mailbox =
        |error: MailboxError| AdminResponse::Error(format!("the cluster's actor stopped: {error}"));
    match request {
        AdminRequest::Submit { queue, spec } => {
            let result = process
                .local
                .member
                .send(Submit {
                    queue: queue.clone(),
                    spec,
                })
                .await;
            match result {
                Ok(Ok(submitted)) => AdminResponse::Submitted(Submitted {
                    cluster: process.name.to_string(),
                    job_id: submitted.job_id,
                    queue,
                    forwarded: submitted.forwarded,
                }),
                Ok(Err(error)) => AdminResponse::Error(format!("job refused: {error}")),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Jobs => match process
            .local
            .member
            .send(Inspect(|member: &Member, now| {
                let mut jobs = rows::cluster_jobs(member.node());
                if let Some(forwarder) = member.forwarder() {
                    jobs.extend(rows::forwarder_jobs(forwarder, member.local_time(now)));
                }
                jobs
            }))
            .await
        {
            Ok(jobs) => AdminResponse::Jobs(jobs),
            Err(error) => mailbox(error),
        },
        AdminRequest::Queues => {
            let spec = process.spec.clone();
            match process
                .local
                .member
                .send(Inspect(move |member: &Member, now| {
                    rows::queues(member.node(), &spec, now)
                }))
                .await
            {
                Ok(queues) => AdminResponse::Queues(queues),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Hosts => match process
            .local
            .member
            .send(Inspect(|member: &Member, _| rows::hosts(member.node())))
            .await
        {
            Ok(hosts) => AdminResponse::Hosts(hosts),
            Err(error) => mailbox(error),
        },
        AdminRequest::Clusters => {
            let facts = match process
                .local
                .member
                .send(Inspect(|member: &Member, _| {
                    member.forwarder().map(rows::view_facts)
                }))
                .await
            {
                Ok(facts) => facts.unwrap_or_default(),
                Err(error) => return mailbox(error),
            };
            AdminResponse::Clusters(rows::links(
                &process.spec,
                &process.transport.status(),
                &facts,
            ))
        }
        AdminRequest::Records { from } => {
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
                total: from + collected.records.len(),
                records: collected.records,
                initial_states: process.initial_states.as_ref().clone(),
                events: collected.events,
                usage: collected.usage,
                metrics: Some(collected.metrics),
                stats: Some(collected.stats),
                end_state,
            }))
        }
        AdminRequest::Activity => match process.local.member.send(AskActivity).await {
            Ok(asked) => AdminResponse::Activity(ActivityReply {
                now: process.clock.now().as_secs_f64(),
                next_wake: asked.next_wake.map(|at| at.as_secs_f64()),
                holding: asked.activity.holding,
            }),
            Err(error) => mailbox(error),
        },
        AdminRequest::SubmitMany { jobs } => {
            if let Err(error) = mcfed_protocol::bounds::SUBMIT_BATCH.check(jobs.len() as u64) {
                return AdminResponse::Error(error.to_string());
            }
            match process
                .local
                .member
                .send(SubmitMany { jobs: jobs.clone() })
                .await
            {
                Ok(results) => AdminResponse::SubmittedMany(
                    results
                        .into_iter()
                        .zip(jobs)
                        .map(|(result, (queue, _))| {
                            result.map(|submitted| Submitted {
                                cluster: process.name.to_string(),
                                job_id: submitted.job_id,
                                queue,
                                forwarded: submitted.forwarded,
                            })
                        })
                        .collect(),
                ),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Status => AdminResponse::Status(StatusReply {
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
        }),
        AdminRequest::Control { job, action } => {
            let result = process
                .local
                .member
                .send(Control {
                    job,
                    action: action.clone(),
                })
                .await;
            match result {
                Ok(Ok(outcome)) => AdminResponse::Controlled(Controlled {
                    job_id: outcome.job(),
                    sent_to: match &outcome {
                        mcfed_federation::ControlOutcome::Sent { cluster, .. } => {
                            Some(cluster.to_string())
                        }
                        mcfed_federation::ControlOutcome::Done { .. } => None,
                    },
                    message: outcome.message(&action),
                }),
                Ok(Err(refused)) => AdminResponse::Error(refused.to_string()),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Aps => match process
            .local
            .member
            .send(Inspect(|member: &Member, now| {
                crate::lsf::aps_rows(member, now)
            }))
            .await
        {
            Ok(rows) => AdminResponse::Aps(rows),
            Err(error) => mailbox(error),
        },
        AdminRequest::Host { host, event } => {
            match process
                .local
                .member
                .send(mcfed_actors::HostControl { host, event })
                .await
            {
                Ok(Ok(what)) => AdminResponse::HostChanged(what),
                Ok(Err(refused)) => AdminResponse::Error(refused),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::History => match process
            .local
            .member
            .send(Inspect(|member: &Member, now| {
                Some((rows::history(member, now), now))
            }))
            .await
        {
            Ok(None) => AdminResponse::Error("no history".into()),
            Ok(Some(((jobs, clean_period), now))) => AdminResponse::History(HistoryReply {
                cluster: process.name.to_string(),
                now: now.as_secs_f64(),
                clean_period,
                jobs,
            }),
            Err(error) => mailbox(error),
        },
        AdminRequest::Params => AdminResponse::Params(ParamsReply {
            cluster: process.name.to_string(),
            address: process.transport.local_addr().to_string(),
            now: process.clock.now().as_secs_f64(),
            params: rows::params(&process.spec),
        }),
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
    }
}
