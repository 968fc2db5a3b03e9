//! One cluster as an OS process (`mcfed cluster`): the same
//! [`MemberActor`] as the in-process actor engine, with the QUIC transport
//! in place of the router, inside one actix system.
//!
//! The transport's tasks hand this process [`Event`]s: messages and hellos
//! from peers go to the member actor (the member decides which half each
//! concerns); admin requests are answered here. What the actor sends goes
//! to the transport through [`Outbox`].
//!
//! Emulated time runs `speed` times faster than the wall clock from a
//! shared origin (`epoch`), so the processes of one federation agree on
//! it; every timer (update intervals, job run times, MAX_RSCHED_TIME) is
//! scaled by it.
//!
//! With faults (the scenario's `[chaos]`, or the fault flags) the datagrams
//! this process sends to its peers pass through [`crate::faults`], and its
//! clock runs ahead or behind by its skew. With the oracle on (faults,
//! `--oracle`, or a scenario that wants it) the forwarder asks every
//! execution cluster for its true counters before each session, over
//! oracle queries the faults do not touch (`mcfed_transport::truth`), and
//! this process answers its peers' queries.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustc_hash::FxHashMap;

use actix::prelude::*;
use mcfed_actors::{
    Deliver, EmulatedClock, FetchTruth, Happened, Inspect, MemberActor, Submit, TruthFetched,
};
use mcfed_federation::{BuildError, GroupState, Member};
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{ClusterName, Envelope, MAX_FRAME_SIZE, Message};
use mcfed_scenario::chaos::{ChaosConfig, ChaosOverrides};
use mcfed_scenario::model::{ClusterSpec, Scenario};
use mcfed_scenario::records::EventRecord;
use mcfed_scenario::{ScenarioError, render};
use mcfed_transport::{
    AdminCall, Event, FederationTls, Peer, Role, Timeouts, TlsError, Transport, TransportConfig,
    TransportError, TruthCall, TruthClient, TruthError,
};
use tokio::sync::mpsc;

use crate::admin::{
    self, AdminRequest, AdminResponse, PeerRow, RecordsReply, StatusReply, Submitted,
};
use crate::faults::{ChaosFaults, skewed_origin, stretched_timeouts};
use crate::rows;

/// How long a forwarding session waits for the true counters of the
/// execution clusters (wall time) before it runs without judging its
/// decisions.
pub const DEFAULT_ORACLE_TIMEOUT: Duration = Duration::from_millis(500);

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
    /// Oracle queries could not be set up.
    #[error(transparent)]
    Truth(#[from] TruthError),
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
    /// Connection timeouts and backoff (stretched for the faults'
    /// delays, if any).
    pub timeouts: Timeouts,
    /// Faults on every link from the command line, on top of the
    /// scenario's `[chaos]`.
    pub chaos: ChaosOverrides,
    /// Judge every decision by the oracle (on anyway with faults or when
    /// the scenario wants it).
    pub oracle: bool,
    /// How long a session waits for the true counters.
    pub oracle_timeout: Duration,
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
            chaos: ChaosOverrides::default(),
            oracle: false,
            oracle_timeout: DEFAULT_ORACLE_TIMEOUT,
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
    let (mut member, initial_states) = Member::build(spec.member_spec())?;
    let chaos = options
        .chaos
        .apply(&scenario)
        .filter(ChaosConfig::is_active);
    let oracle = options.oracle || chaos.is_some() || scenario.wants_oracle();
    if oracle {
        member.enable_oracle();
    }
    let timeouts = match &chaos {
        Some(chaos) => {
            if chaos.outages.iter().any(|outage| outage.cluster == name) {
                tracing::info!(cluster = %name, "the scenario's outages of this cluster are played by `mcfed launch` (it kills and restarts the process); a process started by hand ignores them");
            }
            stretched_timeouts(options.timeouts, chaos, options.speed)
        }
        None => options.timeouts,
    };
    let config = TransportConfig {
        cluster: name.clone(),
        incarnation: mcfed_transport::new_incarnation(),
        listen,
        peers,
        tls,
        max_frame: options.max_frame,
        timeouts,
        faults: None,
    };
    let system = actix_rt::System::new();
    system.block_on(serve(options, spec, member, initial_states, config, chaos))
}

/// Answers the forwarder's [`FetchTruth`] with oracle queries to the
/// execution clusters, numbered in one increasing sequence.
struct Oracle {
    client: Arc<TruthClient>,
    next_seq: u64,
    timeout: Duration,
    /// Clusters whose last query failed: not asked again before the
    /// instant, and the wait after the next failure (doubling up to
    /// [`ORACLE_BACKOFF_MAX`]), so a killed cluster does not hold up every
    /// session.
    backoff: FxHashMap<ClusterName, (tokio::time::Instant, Duration)>,
    /// The incarnation of each peer, from its hellos.
    incarnations: FxHashMap<ClusterName, u64>,
}

/// The longest a cluster whose oracle queries fail goes unasked.
const ORACLE_BACKOFF_MAX: Duration = Duration::from_secs(5);

impl Actor for Oracle {
    type Context = Context<Self>;
}

/// A peer said hello: if it restarted, ask it again at once, on a new
/// connection.
#[derive(Message)]
#[rtype(result = "()")]
struct PeerHello {
    peer: ClusterName,
    incarnation: u64,
}

impl Handler<PeerHello> for Oracle {
    type Result = ();

    fn handle(&mut self, hello: PeerHello, ctx: &mut Self::Context) {
        let previous = self
            .incarnations
            .insert(hello.peer.clone(), hello.incarnation);
        if previous.is_some_and(|previous| previous != hello.incarnation) {
            self.backoff.remove(&hello.peer);
            let client = self.client.clone();
            ctx.wait(
                async move { client.forget(&hello.peer).await }
                    .into_actor(self)
                    .map(|(), _, _| ()),
            );
        }
    }
}

impl Handler<FetchTruth> for Oracle {
    type Result = ResponseActFuture<Self, TruthFetched>;

    fn handle(
        &mut self,
        FetchTruth { clusters }: FetchTruth,
        _: &mut Self::Context,
    ) -> Self::Result {
        let now = tokio::time::Instant::now();
        let mut complete = true;
        let mut asks = tokio::task::JoinSet::new();
        for cluster in clusters {
            if self
                .backoff
                .get(&cluster)
                .is_some_and(|(until, _)| *until > now)
            {
                complete = false;
                continue;
            }
            let seq = self.next_seq;
            self.next_seq += 1;
            let client = self.client.clone();
            let timeout = self.timeout;
            asks.spawn(async move {
                let answer = client.ask(&cluster, seq, timeout).await;
                (cluster, answer)
            });
        }
        // A safety net: each query gives up after the timeout itself.
        let deadline = now + self.timeout + Duration::from_millis(100);
        let fetch = async move {
            let mut updates = Vec::new();
            let mut answered = Vec::new();
            let mut failed = Vec::new();
            while !asks.is_empty() {
                match tokio::time::timeout_at(deadline, asks.join_next()).await {
                    Ok(Some(Ok((cluster, Ok(update))))) => {
                        updates.push(update);
                        answered.push(cluster);
                    }
                    Ok(Some(Ok((cluster, Err(error))))) => {
                        tracing::warn!(%cluster, %error, "no true counters for the oracle");
                        failed.push(cluster);
                    }
                    Ok(Some(Err(_))) | Ok(None) | Err(_) => {
                        complete = false;
                        break;
                    }
                }
            }
            complete &= failed.is_empty();
            (TruthFetched { updates, complete }, answered, failed)
        };
        Box::pin(
            fetch
                .into_actor(self)
                .map(|(fetched, answered, failed), actor, _| {
                    for cluster in answered {
                        actor.backoff.remove(&cluster);
                    }
                    let now = tokio::time::Instant::now();
                    for cluster in failed {
                        let wait = actor
                            .backoff
                            .get(&cluster)
                            .map_or(Duration::from_secs(1), |(_, wait)| {
                                (*wait * 2).min(ORACLE_BACKOFF_MAX)
                            });
                        actor.backoff.insert(cluster, (now + wait, wait));
                    }
                    fetched
                }),
        )
    }
}

/// Sends what the actor sends through the transport (or back to the
/// actor, for a message to this cluster itself).
struct Outbox {
    transport: Arc<Transport>,
    local: Option<Local>,
}

/// This process's member actor.
#[derive(Clone)]
struct Local {
    name: ClusterName,
    member: Addr<MemberActor>,
}

impl Local {
    fn deliver(&self, envelope: Envelope) {
        self.member.do_send(Deliver(envelope));
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

impl Handler<Deliver> for Outbox {
    type Result = ();
    fn handle(&mut self, Deliver(envelope): Deliver, _: &mut Self::Context) {
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

/// Keeps the forwarder's decision records (and prints them if asked) and
/// the job events: the scheduler's transitions and what the forwarder
/// heard about its jobs.
struct Collector {
    records: Vec<DecisionRecord>,
    events: Vec<EventRecord>,
    report: LiveReport,
}

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Handler<Happened> for Collector {
    type Result = ();
    fn handle(&mut self, made: Happened, _: &mut Self::Context) {
        use std::io::Write as _;
        let cluster = made.cluster.as_str();
        let time = made.at.as_secs_f64();
        self.events.extend(
            made.notices
                .iter()
                .map(|notice| EventRecord::of_notice(time, cluster, notice)),
        );
        self.events.extend(
            made.transitions
                .iter()
                .map(|transition| EventRecord::of_transition(cluster, transition)),
        );
        let records = made.decisions;
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
#[rtype(result = "(Vec<DecisionRecord>, Vec<EventRecord>)")]
struct RecordsFrom(usize);

impl Handler<RecordsFrom> for Collector {
    type Result = MessageResult<RecordsFrom>;
    fn handle(&mut self, RecordsFrom(from): RecordsFrom, _: &mut Self::Context) -> Self::Result {
        let records = self
            .records
            .get(from..)
            .map(<[_]>::to_vec)
            .unwrap_or_default();
        MessageResult((records, self.events.clone()))
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
    oracle: Option<Addr<Oracle>>,
}

async fn serve(
    options: ClusterOptions,
    spec: ClusterSpec,
    member: Member,
    initial_states: Vec<GroupState>,
    mut config: TransportConfig,
    chaos: Option<ChaosConfig>,
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
    let transport = Arc::new(transport);
    let outbox = Outbox {
        transport: transport.clone(),
        local: None,
    }
    .start();
    let collector = Collector {
        records: Vec::new(),
        events: Vec::new(),
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
    let actor = MemberActor::new(member, clock, outbox.clone().recipient())
        .with_observer(collector.clone().recipient());
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
    if let Some(client) = &truth_client {
        client.close().await;
    }
    transport.wait_closed(Duration::from_millis(300)).await;
    System::current().stop();
    Ok(())
}

fn handle_event(process: &Process, event: Event) {
    match event {
        Event::Message(envelope) => process.local.deliver(envelope),
        Event::PeerUp { peer, hello, .. } => {
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
                .send(Inspect(move |member: &Member, _| {
                    rows::queues(member.node(), &spec)
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
                Ok((records, events)) => AdminResponse::Records(RecordsReply {
                    cluster: process.name.to_string(),
                    total: from + records.len(),
                    records,
                    initial_states: process.initial_states.as_ref().clone(),
                    events,
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
