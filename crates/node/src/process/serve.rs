//! A running cluster process: starts the member actor, the outbox, the
//! collector and the oracle beside the transport, hands the member what
//! arrives, and answers admin requests and peers' oracle queries.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcfed_actors::{Control, EmulatedClock, Inspect, MemberActor, Submit};
use mcfed_federation::{GroupState, Member};
use mcfed_protocol::{ClusterName, Envelope, Message};
use mcfed_scenario::chaos::ChaosConfig;
use mcfed_scenario::model::ClusterSpec;
use mcfed_transport::{AdminCall, Event, Peer, Transport, TransportConfig, TruthCall, TruthClient};
use rustc_hash::FxHashMap;
use tokio::sync::mpsc;

use super::oracle::{Oracle, PeerHello};
use super::shell::{Collector, DecisionsFrom, Local, Outbox, RecordsFrom, SetLocal};
use super::{ClusterOptions, NodeError, origin};
use crate::admin::{
    self, AdminRequest, AdminResponse, Controlled, HistoryReply, ParamsReply, PeerRow,
    RecordsReply, StatusReply, Submitted, WatchReply,
};
use crate::faults::{ChaosFaults, skewed_origin};
use crate::rows;

/// What the admin handlers need.
#[derive(Clone)]
struct Process {
    name: ClusterName,
    incarnation: u64,
    clock: EmulatedClock,
    spec: Arc<ClusterSpec>,
    transport: Arc<Transport>,
    local: Local,
    collector: Addr<Collector>,
    initial_states: Arc<Vec<GroupState>>,
    stop: mpsc::UnboundedSender<()>,
    oracle: Option<Addr<Oracle>>,
    truth: Option<Arc<TruthClient>>,
}

pub(super) async fn serve(
    options: ClusterOptions,
    spec: ClusterSpec,
    member: Member,
    initial_states: Vec<GroupState>,
    mut config: TransportConfig,
    chaos: Option<ChaosConfig>,
    sample_every: Option<Duration>,
) -> Result<(), NodeError> {
    let shared_origin = origin(options.epoch_unix_ms);
    let name = config.cluster.clone();
    let mut clock_origin = shared_origin;
    if let Some(chaos) = &chaos {
        config.faults = Some(Arc::new(ChaosFaults::new(
            name.clone(),
            chaos,
            shared_origin,
            options.speed,
        )));
        clock_origin = skewed_origin(shared_origin, chaos, &name, options.speed);
    }
    let clock = EmulatedClock::with_origin(clock_origin, options.speed);
    let incarnation = config.incarnation;
    let dialled = config.peers.clone();
    let truth_client = match member.wants_truth() {
        true => {
            let remotes = member.remote_clusters();
            let peers: Vec<Peer> = config
                .peers
                .iter()
                .filter(|peer| remotes.contains(&peer.name))
                .cloned()
                .collect();
            let local: SocketAddr = if config.listen.is_ipv6() {
                (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
            } else {
                (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
            };
            Some(Arc::new(TruthClient::new(
                &config.tls,
                &peers,
                local,
                options.max_frame,
            )?))
        }
        false => None,
    };
    let (transport, mut events) = Transport::start(config)?;
    // One plain line on standard error (standard output carries decision
    // records) that the launcher and tests read for an OS-assigned port.
    {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}",
            listening_line(&name, transport.local_addr(), &dialled)
        );
    }
    let transport = Arc::new(transport);
    let outbox = Outbox {
        transport: transport.clone(),
        local: None,
    }
    .start();
    let collector = Collector {
        records: Vec::new(),
        events: Vec::new(),
        usage: Vec::new(),
        report: options.report,
    }
    .start();
    let oracle = truth_client.clone().map(|client| {
        Oracle {
            client,
            next_seq: 1,
            timeout: options.oracle_timeout,
            backoff: FxHashMap::default(),
            incarnations: FxHashMap::default(),
        }
        .start()
    });
    let mut actor = MemberActor::new(member, clock, outbox.clone().recipient())
        .with_observer(collector.clone().recipient());
    if let Some(every) = sample_every {
        actor = actor.with_usage_samples(every);
    }
    let actor = match &oracle {
        Some(oracle) => actor.with_truth(oracle.clone().recipient()),
        None => actor,
    };
    let local = Local {
        name: name.clone(),
        member: actor.start(),
    };
    outbox.do_send(SetLocal(local.clone()));
    let (stop, mut stopped) = mpsc::unbounded_channel();
    let process = Process {
        name: name.clone(),
        incarnation,
        clock,
        spec: Arc::new(spec),
        transport: transport.clone(),
        local: local.clone(),
        collector,
        initial_states: Arc::new(initial_states),
        stop: stop.clone(),
        oracle,
        truth: truth_client.clone(),
    };
    if let Some(watch) = &options.watch {
        let _ = watch.send(LocalWatch {
            process: process.clone(),
        });
    }
    if options.exit_on_stdin_eof {
        let stop = stop.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt as _;
            let mut stdin = tokio::io::stdin();
            let mut buffer = [0u8; 256];
            while let Ok(read) = stdin.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
            }
            let _ = stop.send(());
        });
    }
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tracing::info!(cluster = %name, incarnation, address = %transport.local_addr(), speed = options.speed, "cluster process running");
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => handle_event(&process, event),
                None => break,
            },
            _ = stopped.recv() => break,
            _ = &mut ctrl_c => {
                tracing::info!(cluster = %name, "interrupted");
                break;
            }
            _ = terminate.recv() => {
                tracing::info!(cluster = %name, "terminated");
                break;
            }
        }
    }
    transport.close();
    if let Some(client) = &truth_client {
        client.close().await;
    }
    transport.wait_closed(Duration::from_millis(300)).await;
    System::current().stop();
    Ok(())
}

/// What a cluster process says on standard error once it listens, in one
/// line: where it listens and who it dials —
/// `mcfed cluster NAME: listening on ADDRESS, dialling Cluster1 at
/// 127.0.0.1:7100, Cluster3 (address learned from its hello)`.
pub fn listening_line(name: &ClusterName, address: SocketAddr, peers: &[Peer]) -> String {
    let dials: Vec<String> = peers
        .iter()
        .map(|peer| match &peer.address {
            Some(address) => format!("{} at {address}", peer.name),
            None => format!("{} (address learned from its hello)", peer.name),
        })
        .collect();
    let dials = if dials.is_empty() {
        "dialling no one".to_owned()
    } else {
        format!("dialling {}", dials.join(", "))
    };
    format!("{LISTENING_PREFIX}{name}: listening on {address}, {dials}")
}

/// The start of [`listening_line`].
const LISTENING_PREFIX: &str = "mcfed cluster ";

/// The cluster and address of a [`listening_line`], if `line` is one.
pub fn parse_listening_line(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line
        .strip_prefix(LISTENING_PREFIX)?
        .split_once(": listening on ")?;
    let address = rest.split_once(", ").map_or(rest, |(address, _)| address);
    Some((name, address))
}

fn handle_event(process: &Process, event: Event) {
    match event {
        Event::Message(envelope) => process.local.deliver(envelope),
        Event::PeerUp { peer, hello, .. } => {
            // A peer whose address was not given is learned from its hello;
            // oracle queries go there too.
            if let (Some(truth), Some(address)) =
                (&process.truth, process.transport.peer_address(&peer))
            {
                truth.learn_address(&peer, address);
            }
            if let Some(oracle) = &process.oracle {
                oracle.do_send(PeerHello {
                    peer: peer.clone(),
                    incarnation: hello.incarnation,
                });
            }
            process.local.deliver(Envelope {
                from: peer,
                to: process.name.clone(),
                message: Message::Hello(hello),
            });
        }
        Event::PeerDown {
            peer,
            direction,
            reason,
        } => {
            tracing::debug!(cluster = %process.name, %peer, ?direction, %reason, "link down");
        }
        Event::Admin(call) => {
            let process = process.clone();
            actix_rt::spawn(async move { answer(process, call).await });
        }
        Event::Truth(call) => {
            let member = process.local.member.clone();
            actix_rt::spawn(async move { answer_truth(member, call).await });
        }
    }
}

/// Answers a peer's oracle query with the counters this cluster would
/// publish to it now.
async fn answer_truth(member: Addr<MemberActor>, call: TruthCall) {
    let TruthCall { peer, seq, reply } = call;
    let truth = member
        .send(Inspect(move |member: &Member, now| {
            member.true_counters(&peer, seq, now)
        }))
        .await
        .ok()
        .flatten();
    let _ = reply.send(truth);
}

async fn answer(process: Process, call: AdminCall) {
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
            .send(Inspect(|member: &Member, _| {
                let mut jobs = rows::cluster_jobs(member.node());
                if let Some(forwarder) = member.forwarder() {
                    jobs.extend(rows::forwarder_jobs(forwarder));
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
            let total_and_records = process.collector.send(RecordsFrom(from)).await;
            match total_and_records {
                Ok((records, events, usage)) => AdminResponse::Records(RecordsReply {
                    cluster: process.name.to_string(),
                    total: from + records.len(),
                    records,
                    initial_states: process.initial_states.as_ref().clone(),
                    events,
                    usage,
                }),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Status => AdminResponse::Status(StatusReply {
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
                crate::lsf::aps_rows(member.node().cluster(), now)
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

/// The most decision records one [`WatchReply`] carries: the newest ones,
/// so a watcher that fell behind skips to the present.
pub const WATCH_DECISIONS: usize = 256;

/// A running cluster process, as the live page in the same process
/// (`mcfed cluster --web`) sees it: it can only read, as the admin `Watch`
/// request does.
#[derive(Clone)]
pub struct LocalWatch {
    process: Process,
}

impl LocalWatch {
    /// The cluster.
    pub fn cluster(&self) -> &str {
        self.process.name.as_str()
    }

    /// What the live page shows of the cluster, with the decision records
    /// from index `from` on (at most [`WATCH_DECISIONS`]).
    pub async fn watch(&self, from: usize) -> Result<WatchReply, String> {
        watch(&self.process, from)
            .await
            .map_err(|error| format!("the cluster's actor stopped: {error}"))
    }
}

/// The answer to a `Watch` request: one pass over the member, then the
/// new decision records.
async fn watch(process: &Process, from: usize) -> Result<WatchReply, MailboxError> {
    let spec = process.spec.clone();
    // (In an `Option`: the actor answers an `Inspect` with any type that
    // is a message response, which a bare tuple is not.)
    let inspected = process
        .local
        .member
        .send(Inspect(move |member: &Member, now| {
            Some((
                rows::hosts(member.node()),
                rows::queues(member.node(), &spec, now),
                member
                    .forwarder()
                    .map(|forwarder| rows::views(forwarder, now))
                    .unwrap_or_default(),
                now,
            ))
        }))
        .await?;
    let Some((hosts, queues, views, now)) = inspected else {
        return Err(MailboxError::Closed);
    };
    let (decisions, decisions_total) = process
        .collector
        .send(DecisionsFrom {
            from,
            limit: WATCH_DECISIONS,
        })
        .await?;
    Ok(WatchReply {
        cluster: process.name.to_string(),
        address: process.transport.local_addr().to_string(),
        incarnation: process.incarnation,
        now: now.as_secs_f64(),
        hosts,
        queues,
        views,
        decisions,
        decisions_total,
    })
}
