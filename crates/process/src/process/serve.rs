//! A running cluster process: starts the member actor (with its recorder),
//! the outbox and the oracle beside the transport, hands the member what
//! arrives (and when a link goes down or comes up), and answers admin
//! requests and peers' oracle queries. A process whose emulated time zero
//! is not settled takes the first peer's that answers in
//! [`EPOCH_WAIT`](super::EPOCH_WAIT), before its member starts.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcfed_actors::{Apply, EmulatedClock, Inspect, Link, MemberActor};
use mcfed_chaos::ChaosConfig;
use mcfed_federation::{Effects, GroupState, Member};
use mcfed_protocol::{ClusterName, Envelope, Message, Resume};
use mcfed_run::recorder::{Recorder, Recording, SharedRecorder};
use mcfed_transport::{Event, Peer, Transport, TransportConfig, TruthCall, TruthClient};
use rustc_hash::FxHashMap;
use tokio::sync::mpsc;

mod requests;

use requests::answer;

use super::oracle::{Oracle, PeerHello};
use super::shell::{
    ControlWaiters, LiveObserver, Local, Outbox, SetLocal, decisions_from, records_from,
};
use super::state::Prepared;
use super::{ClusterOptions, EPOCH_WAIT, NodeError, origin};
use crate::faults::{ChaosFaults, skewed_origin};
use mcfed_admin::cmd::{hosts, queues, watch as views};
use mcfed_admin::{
    AdminRequest, AdminResponse, ParamsReply, PeerRow, RecordsReply, StatusReply, WatchReply,
};

/// What the admin handlers need.
#[derive(Clone)]
struct Process {
    name: ClusterName,
    incarnation: u64,
    clock: EmulatedClock,
    transport: Arc<Transport>,
    local: Local,
    /// What the member did: counts, metrics and records.
    recorder: SharedRecorder,
    /// Admin calls waiting for answers to job control commands.
    waiters: ControlWaiters,
    /// How long such a call waits.
    control_timeout: Duration,
    initial_states: Arc<Vec<GroupState>>,
    stop: mpsc::UnboundedSender<()>,
    oracle: Option<Addr<Oracle>>,
    truth: Option<Arc<TruthClient>>,
    /// Whether each peer's link was last seen up (connected both ways).
    links: Arc<std::sync::Mutex<FxHashMap<ClusterName, bool>>>,
    /// The lineage of this process's state.
    lineage: u64,
    /// The state directory, if any.
    state: Option<String>,
}

pub(super) async fn serve(
    options: ClusterOptions,
    prepared: Prepared,
    mut journal_failure: mpsc::UnboundedReceiver<String>,
    mut config: TransportConfig,
    chaos: Option<ChaosConfig>,
    sample_every: Option<Duration>,
) -> Result<(), NodeError> {
    let Prepared {
        member,
        initial_states,
        mut facts,
        epoch_pinned,
        durability,
    } = prepared;
    let name = config.cluster.clone();
    // Faults and the process's clock need emulated time zero; a process
    // that has none settled learns it first.
    let may_learn_epoch = !epoch_pinned && config.peers.iter().any(|peer| peer.address.is_some());
    let transport_faults = chaos.is_some();
    if transport_faults && may_learn_epoch {
        tracing::info!(cluster = %name, "with faults, give --epoch-ms: the process does not wait for its peers' clock");
    }
    let learn_epoch = may_learn_epoch && !transport_faults;
    if let Some(chaos) = &chaos {
        config.faults = Some(Arc::new(ChaosFaults::new(
            name.clone(),
            chaos,
            origin(Some(facts.epoch_unix_ms)),
            options.speed,
        )));
    }
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
    let mut early_events = Vec::new();
    if learn_epoch {
        if let Some(epoch) = learn_peers_epoch(&mut events, &mut early_events).await {
            tracing::info!(cluster = %name, epoch, own = facts.epoch_unix_ms, "emulated time zero taken from a peer");
            facts.epoch_unix_ms = epoch;
            if let Some(durability) = &durability {
                durability.adopt_epoch(epoch);
            }
            transport.set_resume(Resume {
                lineage: facts.lineage,
                epoch_unix_ms: epoch,
            });
        }
    }
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
    let shared_origin = origin(Some(facts.epoch_unix_ms));
    let clock_origin = match &chaos {
        Some(chaos) => skewed_origin(shared_origin, chaos, &name, options.speed),
        None => shared_origin,
    };
    let clock = EmulatedClock::with_origin(clock_origin, options.speed);
    let transport = Arc::new(transport);
    let outbox = Outbox {
        transport: transport.clone(),
        local: None,
    }
    .start();
    let waiters = ControlWaiters::default();
    let mut recorder = Recorder::new(Recording {
        events: options.record_events,
        count_only: false,
    });
    if let Some(dir) = &options.lsb_acct {
        // LSF appends to lsb.acct: a restarted process goes on with its
        // log, and the jobs its member already runs are taken as started.
        let epoch = i64::try_from(facts.epoch_unix_ms / 1000).unwrap_or(i64::MAX);
        let mut logs = mcfed_run::lsb_acct::AcctLogs::append(dir, [member.name()], epoch)
            .map_err(NodeError::LsbAcct)?;
        logs.adopt_running(&member);
        recorder = recorder.with_lsb_acct(logs);
    }
    let recorder = SharedRecorder::new(recorder);
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
    let mut actor =
        MemberActor::new(member, clock, outbox.clone().recipient()).with_observer(LiveObserver {
            recorder: recorder.clone(),
            report: options.report,
            waiters: waiters.clone(),
            // The live page reads the newest; only a launched run's
            // record keeps them all.
            keep_decisions: (!options.record_events).then_some(WATCH_DECISIONS),
        });
    if let Some(every) = sample_every {
        actor = actor.with_usage_samples(every);
    }
    let actor = match &oracle {
        Some(oracle) => actor.with_truth(oracle.clone().recipient()),
        None => actor,
    };
    let actor = match &durability {
        Some(durability) => actor.with_durability(durability.clone()),
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
        transport: transport.clone(),
        local: local.clone(),
        recorder,
        waiters,
        control_timeout: options.control_timeout,
        initial_states: Arc::new(initial_states),
        stop: stop.clone(),
        oracle,
        truth: truth_client.clone(),
        links: Arc::default(),
        lineage: facts.lineage,
        state: options.state.as_ref().map(|dir| dir.display().to_string()),
    };
    if let Some(watch) = &options.watch {
        let _ = watch.send(LocalWatch {
            process: process.clone(),
        });
    }
    for event in early_events {
        handle_event(&process, event);
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
            Some(why) = journal_failure.recv() => {
                tracing::error!(cluster = %name, %why, "the journal cannot be written: stopping, so that nothing more is acknowledged");
                break;
            }
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
    if let Some(durability) = &durability {
        let stats = durability.stats();
        tracing::info!(cluster = %name, records = stats.records, syncs = stats.syncs, snapshots = stats.snapshots, "journal");
    }
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

/// Waits up to [`EPOCH_WAIT`] for a peer's resume that says when emulated
/// time zero is, keeping every event meanwhile for the member.
async fn learn_peers_epoch(
    events: &mut mpsc::UnboundedReceiver<Event>,
    kept: &mut Vec<Event>,
) -> Option<u64> {
    let deadline = tokio::time::Instant::now() + EPOCH_WAIT;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .ok()??;
        let epoch = match &event {
            Event::Message(Envelope {
                message: Message::Resume(resume),
                ..
            }) => Some(resume.epoch_unix_ms).filter(|&epoch| epoch != 0),
            _ => None,
        };
        kept.push(event);
        if epoch.is_some() {
            return epoch;
        }
    }
}

/// Tells the member when a peer's link (both connections) goes down or
/// comes up; a link is only reported down once it has been up.
fn note_link(process: &Process, peer: &ClusterName) {
    let up = process
        .transport
        .status()
        .into_iter()
        .find(|(cluster, _)| cluster == peer)
        .is_some_and(|(_, status)| status.is_up());
    let Ok(mut links) = process.links.lock() else {
        return;
    };
    let before = links.get(peer).copied();
    if before == Some(up) || (before.is_none() && !up) {
        return;
    }
    links.insert(peer.clone(), up);
    process.local.member.do_send(Link {
        peer: peer.clone(),
        up,
    });
}

fn handle_event(process: &Process, event: Event) {
    match event {
        Event::Message(envelope) => process.local.deliver(envelope),
        Event::PeerUp { peer, hello, .. } => {
            note_link(process, &peer);
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
            note_link(process, &peer);
        }
        Event::Admin(call) => {
            let process = process.clone();
            actix_rt::spawn(async move { answer(process, call).await });
        }
        Event::Truth(call) => {
            let member = process.local.member.clone();
            actix_rt::spawn(async move { answer_truth(member, call).await });
        }
        Event::Unsendable { envelope, error } => refuse_unsendable(process, envelope, &error),
    }
}

/// A message the transport could not send: a job's forward ends the job
/// here, a refusal its owner sees (`Member::unsendable`); any other is
/// said in the log.
fn refuse_unsendable(process: &Process, envelope: Envelope, error: &impl std::fmt::Display) {
    let why = error.to_string();
    let name = process.name.clone();
    let member = process.local.member.clone();
    actix_rt::spawn(async move {
        let (to, kind) = (envelope.to.clone(), envelope.message.kind());
        let ended = member
            .send(Apply {
                changes: true,
                apply: move |member: &mut Member, now, effects: &mut Effects| {
                    member
                        .unsendable(now, &envelope, &why, effects)
                        .map(|job| (job, why))
                },
            })
            .await;
        match ended {
            Ok(Ok(Some((job, why)))) => {
                tracing::error!(cluster = %name, %to, job, %why, "a job's forward cannot be sent: the job is refused (EXIT), as its bjobs -a and bhist say");
            }
            _ => tracing::error!(cluster = %name, %to, kind, "a message could not be sent"),
        }
    });
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
    // (In an `Option`: the actor answers an `Inspect` with any type that
    // is a message response, which a bare tuple is not.)
    let inspected = process
        .local
        .member
        .send(Inspect(move |member: &Member, now| {
            Some((
                hosts::rows(member.node()),
                queues::rows(member, now),
                member
                    .forwarder()
                    .map(|forwarder| views::views(forwarder, now))
                    .unwrap_or_default(),
                now,
            ))
        }))
        .await?;
    let Some((hosts, queues, views, now)) = inspected else {
        return Err(MailboxError::Closed);
    };
    let (decisions, decisions_total) = decisions_from(&process.recorder, from, WATCH_DECISIONS);
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
