//! One cluster as an OS process (`mcfed cluster`): the same actors as the
//! in-process actor engine (`ClusterActor`, and a `ForwarderActor` when the
//! cluster has send queues), with the QUIC transport in place of the
//! router, inside one actix system.
//!
//! The transport's tasks hand this process [`Event`]s: messages from peers
//! go to the forwarder or the cluster actor as the router would send them;
//! a peer's hello goes to both (the cluster learns that a submission
//! cluster restarted; the forwarder that an execution cluster restarted,
//! and sends it the jobs it believes it holds); admin requests are answered
//! here. What the actors send goes to the transport through [`Outbox`].
//!
//! Emulated time runs `speed` times faster than the wall clock from a
//! shared origin (`epoch`), so the processes of one federation agree on
//! it; every timer (update intervals, job run times, MAX_RSCHED_TIME) is
//! scaled by it.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix::prelude::*;
use mcfed_cluster::ClusterActor;
use mcfed_cluster::actor::{Inspect as InspectCluster, SubmitLocal};
use mcfed_forwarder::actor::{DecisionsMade, Inspect as InspectForwarder, SubmitForward};
use mcfed_forwarder::{DecisionRecord, ForwarderActor};
use mcfed_protocol::clock::EmulatedClock;
use mcfed_protocol::{ClusterName, Envelope, MAX_FRAME_SIZE, Message};
use mcfed_scenario::build::{BuildError, GroupState, build_member};
use mcfed_scenario::model::{ClusterSpec, Scenario};
use mcfed_scenario::{ScenarioError, render};
use mcfed_transport::{
    AdminCall, Event, FederationTls, Peer, Role, Timeouts, TlsError, Transport, TransportConfig,
    TransportError,
};
use tokio::sync::mpsc;

use crate::admin::{
    self, AdminRequest, AdminResponse, PeerRow, RecordsReply, StatusReply, Submitted,
};
use crate::rows;

/// The port of the first cluster of a scenario when the scenario gives no
/// addresses; the others follow in scenario order.
pub const DEFAULT_BASE_PORT: u16 = 7100;

/// Why a cluster process could not run.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The scenario is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The scenario has no such cluster.
    #[error("the scenario has no cluster `{name}` (it has {known})")]
    UnknownCluster {
        /// The name asked for.
        name: String,
        /// The clusters it has.
        known: String,
    },
    /// An address is not usable.
    #[error("{what}: `{address}` is not a usable address: {reason}")]
    Address {
        /// Whose address.
        what: String,
        /// The address.
        address: String,
        /// Why.
        reason: String,
    },
    /// TLS material is missing or wrong.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The cluster could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The transport could not start.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The runtime failed.
    #[error("the process runtime failed: {0}")]
    Runtime(#[from] std::io::Error),
}

/// How a cluster process prints the decisions its forwarder makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveReport {
    /// Not at all (they are kept for `mcfed launch`).
    None,
    /// As `mcfed run` prints them.
    Text,
    /// One JSON object per line.
    Json,
}

/// Everything `mcfed cluster` takes.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The cluster to run.
    pub name: String,
    /// The certificate directory (`mcfed certs init`).
    pub certs: PathBuf,
    /// A certificate file to use instead of the directory's.
    pub cert: Option<PathBuf>,
    /// Its key.
    pub key: Option<PathBuf>,
    /// Where to listen, instead of the scenario's address.
    pub listen: Option<String>,
    /// Peer addresses that override the scenario's: (cluster, host:port).
    pub peers: Vec<(String, String)>,
    /// The default port of the scenario's first cluster.
    pub base_port: u16,
    /// Emulated seconds per wall-clock second.
    pub speed: f64,
    /// When emulated time zero is, in milliseconds since the Unix epoch
    /// (default: when the process starts).
    pub epoch_unix_ms: Option<u64>,
    /// Stop when standard input closes (the launcher's way of making sure
    /// no process outlives it).
    pub exit_on_stdin_eof: bool,
    /// How to print decisions as they are made.
    pub report: LiveReport,
    /// The largest frame accepted or sent.
    pub max_frame: usize,
    /// Connection timeouts and backoff.
    pub timeouts: Timeouts,
}

impl ClusterOptions {
    /// Options for cluster `name` of `scenario` with the defaults.
    pub fn new(scenario: PathBuf, name: String, certs: PathBuf) -> Self {
        ClusterOptions {
            scenario,
            name,
            certs,
            cert: None,
            key: None,
            listen: None,
            peers: Vec::new(),
            base_port: DEFAULT_BASE_PORT,
            speed: 1.0,
            epoch_unix_ms: None,
            exit_on_stdin_eof: false,
            report: LiveReport::Text,
            max_frame: MAX_FRAME_SIZE,
            timeouts: Timeouts::default(),
        }
    }
}

/// The address of cluster `index` of `scenario`: its `address` key, or
/// `127.0.0.1:(base_port + index)`.
pub fn default_address(scenario: &Scenario, index: usize, base_port: u16) -> String {
    scenario.clusters[index].address.clone().unwrap_or_else(|| {
        let port = u16::try_from(index)
            .ok()
            .and_then(|offset| base_port.checked_add(offset))
            .unwrap_or(base_port);
        format!("127.0.0.1:{port}")
    })
}

/// The position of cluster `name` in `scenario`.
pub fn cluster_index(scenario: &Scenario, name: &str) -> Result<usize, NodeError> {
    scenario
        .clusters
        .iter()
        .position(|spec| spec.config.name == name)
        .ok_or_else(|| NodeError::UnknownCluster {
            name: name.to_owned(),
            known: scenario
                .clusters
                .iter()
                .map(|spec| format!("`{}`", spec.config.name))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The clusters `spec` exchanges messages with: those it sends to and
/// those that send to it.
pub fn peers_of(spec: &ClusterSpec) -> Vec<ClusterName> {
    let mut peers: Vec<ClusterName> = spec.subscribers.clone();
    if let Some(forwarder) = &spec.forwarder {
        for queue in &forwarder.send_queues {
            for target in &queue.send_to {
                if !peers.contains(&target.cluster) {
                    peers.push(target.cluster.clone());
                }
            }
        }
    }
    peers
}

fn resolve(what: &str, address: &str) -> Result<SocketAddr, NodeError> {
    let fail = |reason: String| NodeError::Address {
        what: what.to_owned(),
        address: address.to_owned(),
        reason,
    };
    address
        .to_socket_addrs()
        .map_err(|error| fail(error.to_string()))?
        .next()
        .ok_or_else(|| fail("it resolves to no address".to_owned()))
}

/// The tokio instant of emulated time zero for `epoch_unix_ms`.
fn origin(epoch_unix_ms: Option<u64>) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    let Some(epoch) = epoch_unix_ms else {
        return now;
    };
    let epoch = UNIX_EPOCH + Duration::from_millis(epoch);
    match epoch.duration_since(SystemTime::now()) {
        Ok(ahead) => now + ahead,
        Err(behind) => now.checked_sub(behind.duration()).unwrap_or(now),
    }
}

/// Runs cluster `options.name` until it is told to stop (an admin
/// shutdown, Ctrl-C, SIGTERM, or standard input closing with
/// `exit_on_stdin_eof`).
pub fn run_cluster(options: ClusterOptions) -> Result<(), NodeError> {
    let scenario = mcfed_scenario::load(&options.scenario)?;
    let index = cluster_index(&scenario, &options.name)?;
    let spec = scenario.clusters[index].clone();
    let name = spec.config.name.clone();
    let tls = match (&options.cert, &options.key) {
        (Some(cert), Some(key)) => FederationTls::load_files(
            &mcfed_transport::certs::ca_cert_path(&options.certs),
            cert,
            key,
            None,
        )?,
        _ => FederationTls::load(&options.certs, Role::Cluster, name.as_str())?,
    };
    let listen_text = options
        .listen
        .clone()
        .unwrap_or_else(|| default_address(&scenario, index, options.base_port));
    let listen = resolve(&format!("cluster `{name}`"), &listen_text)?;
    let mut peers = Vec::new();
    for peer in peers_of(&spec) {
        let address = match options
            .peers
            .iter()
            .find(|(cluster, _)| cluster == peer.as_str())
        {
            Some((_, address)) => address.clone(),
            None => default_address(
                &scenario,
                cluster_index(&scenario, peer.as_str())?,
                options.base_port,
            ),
        };
        peers.push(Peer {
            name: peer,
            address,
        });
    }
    let (member, initial_states) = build_member(&spec)?;
    let config = TransportConfig {
        cluster: name.clone(),
        incarnation: mcfed_transport::new_incarnation(),
        listen,
        peers,
        tls,
        max_frame: options.max_frame,
        timeouts: options.timeouts,
    };
    let system = actix_rt::System::new();
    system.block_on(serve(options, spec, member, initial_states, config))
}

/// Sends what the actors send through the transport.
struct Outbox {
    transport: Arc<Transport>,
    local: Option<Local>,
}

#[derive(Clone)]
struct Local {
    name: ClusterName,
    cluster: Addr<ClusterActor>,
    forwarder: Option<Addr<ForwarderActor>>,
}

impl Local {
    fn deliver(&self, envelope: Envelope) {
        if let Message::Hello(_) = envelope.message {
            // A hello concerns both sides of the cluster.
            if let Some(forwarder) = &self.forwarder {
                forwarder.do_send(envelope.clone());
            }
            self.cluster.do_send(envelope);
        } else if envelope.message.is_for_forwarder() {
            match &self.forwarder {
                Some(forwarder) => forwarder.do_send(envelope),
                None => {
                    tracing::debug!(cluster = %self.name, kind = envelope.message.kind(), "no forwarder for the message")
                }
            }
        } else {
            self.cluster.do_send(envelope);
        }
    }
}

impl Actor for Outbox {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
struct SetLocal(Local);

impl Handler<SetLocal> for Outbox {
    type Result = ();
    fn handle(&mut self, SetLocal(local): SetLocal, _: &mut Self::Context) {
        self.local = Some(local);
    }
}

impl Handler<Envelope> for Outbox {
    type Result = ();
    fn handle(&mut self, envelope: Envelope, _: &mut Self::Context) {
        if let Some(local) = self
            .local
            .as_ref()
            .filter(|local| local.name == envelope.to)
        {
            local.deliver(envelope);
            return;
        }
        if let Err(error) = self.transport.send(envelope) {
            tracing::warn!(%error, "message dropped");
        }
    }
}

/// Keeps the forwarder's decision records (and prints them if asked).
struct Collector {
    records: Vec<DecisionRecord>,
    report: LiveReport,
}

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Handler<DecisionsMade> for Collector {
    type Result = ();
    fn handle(&mut self, DecisionsMade(records): DecisionsMade, _: &mut Self::Context) {
        use std::io::Write as _;
        if self.report != LiveReport::None {
            let mut out = std::io::stdout().lock();
            for record in &records {
                let line = match self.report {
                    LiveReport::Json => render::decision_json(record).unwrap_or_default(),
                    _ => render::decision_text(record),
                };
                let _ = writeln!(out, "{line}");
            }
            let _ = out.flush();
        }
        self.records.extend(records);
    }
}

#[derive(Message)]
#[rtype(result = "Vec<DecisionRecord>")]
struct RecordsFrom(usize);

impl Handler<RecordsFrom> for Collector {
    type Result = MessageResult<RecordsFrom>;
    fn handle(&mut self, RecordsFrom(from): RecordsFrom, _: &mut Self::Context) -> Self::Result {
        MessageResult(
            self.records
                .get(from..)
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
        )
    }
}

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
}

async fn serve(
    options: ClusterOptions,
    spec: ClusterSpec,
    member: mcfed_scenario::build::Member,
    initial_states: Vec<GroupState>,
    config: TransportConfig,
) -> Result<(), NodeError> {
    let clock = EmulatedClock::with_origin(origin(options.epoch_unix_ms), options.speed);
    let name = config.cluster.clone();
    let incarnation = config.incarnation;
    let (transport, mut events) = Transport::start(config)?;
    let transport = Arc::new(transport);
    let outbox = Outbox {
        transport: transport.clone(),
        local: None,
    }
    .start();
    let collector = Collector {
        records: Vec::new(),
        report: options.report,
    }
    .start();
    let cluster = ClusterActor::new(member.node, clock, outbox.clone().recipient()).start();
    let forwarder = member.forwarder.map(|node| {
        ForwarderActor::new(
            node,
            clock,
            outbox.clone().recipient(),
            collector.clone().recipient(),
        )
        .start()
    });
    let local = Local {
        name: name.clone(),
        cluster,
        forwarder,
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
    };
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
    transport.wait_closed(Duration::from_millis(300)).await;
    System::current().stop();
    Ok(())
}

fn handle_event(process: &Process, event: Event) {
    match event {
        Event::Message(envelope) => process.local.deliver(envelope),
        Event::PeerUp { peer, hello, .. } => process.local.deliver(Envelope {
            from: peer,
            to: process.name.clone(),
            message: Message::Hello(hello),
        }),
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
    }
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
            let is_send_queue = process.spec.forwarder.as_ref().is_some_and(|forwarder| {
                forwarder
                    .send_queues
                    .iter()
                    .any(|send| send.name == queue.as_str())
            });
            let result = match (&process.local.forwarder, is_send_queue) {
                (Some(forwarder), true) => forwarder
                    .send(SubmitForward {
                        queue: queue.clone(),
                        spec,
                    })
                    .await
                    .map(|result| result.map_err(|error| error.to_string())),
                _ => process
                    .local
                    .cluster
                    .send(SubmitLocal {
                        queue: queue.clone(),
                        spec,
                    })
                    .await
                    .map(|result| result.map(|id| id.0).map_err(|error| error.to_string())),
            };
            match result {
                Ok(Ok(job_id)) => AdminResponse::Submitted(Submitted {
                    cluster: process.name.to_string(),
                    job_id,
                    queue,
                    forwarded: is_send_queue,
                }),
                Ok(Err(error)) => AdminResponse::Error(format!("job refused: {error}")),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Jobs => {
            let mut jobs = match process
                .local
                .cluster
                .send(InspectCluster(|node, _| rows::cluster_jobs(node)))
                .await
            {
                Ok(jobs) => jobs,
                Err(error) => return mailbox(error),
            };
            if let Some(forwarder) = &process.local.forwarder {
                match forwarder
                    .send(InspectForwarder(|node, _| rows::forwarder_jobs(node)))
                    .await
                {
                    Ok(forwarded) => jobs.extend(forwarded),
                    Err(error) => return mailbox(error),
                }
            }
            AdminResponse::Jobs(jobs)
        }
        AdminRequest::Queues => {
            let spec = process.spec.clone();
            match process
                .local
                .cluster
                .send(InspectCluster(move |node, _| rows::queues(node, &spec)))
                .await
            {
                Ok(queues) => AdminResponse::Queues(queues),
                Err(error) => mailbox(error),
            }
        }
        AdminRequest::Hosts => match process
            .local
            .cluster
            .send(InspectCluster(|node, _| rows::hosts(node)))
            .await
        {
            Ok(hosts) => AdminResponse::Hosts(hosts),
            Err(error) => mailbox(error),
        },
        AdminRequest::Clusters => {
            let facts = match &process.local.forwarder {
                Some(forwarder) => match forwarder
                    .send(InspectForwarder(|node, _| Some(rows::view_facts(node))))
                    .await
                {
                    Ok(facts) => facts.unwrap_or_default(),
                    Err(error) => return mailbox(error),
                },
                None => rows::ViewFacts::default(),
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
                Ok(records) => AdminResponse::Records(RecordsReply {
                    cluster: process.name.to_string(),
                    total: from + records.len(),
                    records,
                    initial_states: process.initial_states.as_ref().clone(),
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
