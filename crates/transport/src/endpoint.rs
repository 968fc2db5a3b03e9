//! One cluster process's QUIC endpoint: the accept loop, one dialling
//! writer task per peer, one reader task per accepted connection, and the
//! admin channel. The tasks run on tokio beside the actors and hand them
//! what arrives as [`Event`]s, in order; the actors' outbox calls
//! [`Transport::send`].
//!
//! Each process dials every peer and sends on its own connection; it
//! receives on the connections its peers dialled. So a pair of clusters
//! has two connections, one per direction, and there is never a question
//! of which of two crossing connections to keep.
//!
//! A connection opens with a version handshake: the dialler opens a stream
//! and sends a [`Hello`]; the listener checks that the hello's version is
//! its own, that the hello names the cluster its certificate names, and
//! that this cluster is a peer, and answers with its own hello. After that
//! the dialler writes length-prefixed postcard frames
//! ([`mcfed_protocol::frame`]) on that stream: counter updates every
//! MC_PLUGIN_UPDATE_INTERVAL, job forwards, replies and returns, all on one
//! reliable ordered stream. A frame over the size limit, one that does not
//! decode, a second hello, or a message under another cluster's name closes
//! that connection with a logged reason and a QUIC close reason; the
//! process and its other connections go on.
//!
//! A dialler that loses its connection (the peer restarted) reconnects with
//! exponential backoff; messages sent meanwhile wait, counter updates
//! coalesced to the newest.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, FrameDecoder, FrameError, Hello, Message,
    PROTOCOL_VERSION, encode_frame,
};
use rustc_hash::FxHashMap;
use tokio::sync::{Notify, mpsc, oneshot};

use crate::certs::Role;
use crate::faults::{DatagramFaults, FaultySocket};
use crate::tls::{self, FederationTls, TlsError};
use crate::truth::{QUERY_SIZE, TRUTH_ALPN};

/// QUIC close codes mcfed uses (application error codes).
pub mod close {
    /// A clean shutdown.
    pub const SHUTDOWN: u32 = 0;
    /// The peers speak different protocol versions.
    pub const VERSION: u32 = 1;
    /// The peer claimed a name its certificate does not carry.
    pub const IDENTITY: u32 = 2;
    /// The peer is not part of this cluster's federation links.
    pub const UNKNOWN_PEER: u32 = 3;
    /// A frame over the size limit or one that does not decode.
    pub const BAD_FRAME: u32 = 4;
    /// A message out of place (a second hello, an admin request from a
    /// cluster, ...).
    pub const PROTOCOL: u32 = 5;
}

/// How long to wait for things, and how to back off.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// A connection with no traffic for this long is closed.
    pub idle: Duration,
    /// Keep-alive pings, so an idle link stays open and a dead one is seen.
    pub keep_alive: Duration,
    /// The hello exchange must finish within this.
    pub handshake: Duration,
    /// The first reconnection delay.
    pub backoff_min: Duration,
    /// The longest reconnection delay.
    pub backoff_max: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            idle: Duration::from_secs(3),
            keep_alive: Duration::from_millis(500),
            handshake: Duration::from_secs(5),
            backoff_min: Duration::from_millis(50),
            backoff_max: Duration::from_secs(2),
        }
    }
}

/// A peer cluster and where to reach it.
#[derive(Clone, Debug)]
pub struct Peer {
    /// Its name.
    pub name: ClusterName,
    /// `host:port`, resolved at every connection attempt.
    pub address: String,
}

/// What a cluster process's endpoint needs.
#[derive(Clone, Debug)]
pub struct TransportConfig {
    /// This cluster.
    pub cluster: ClusterName,
    /// This run of the process (sent in every hello).
    pub incarnation: u64,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The clusters this one exchanges messages with.
    pub peers: Vec<Peer>,
    /// Certificates.
    pub tls: FederationTls,
    /// The largest frame accepted or sent.
    pub max_frame: usize,
    /// Timeouts and backoff.
    pub timeouts: Timeouts,
    /// Faults on the datagrams sent to peers ([`crate::faults`]); `None`:
    /// a plain socket.
    pub faults: Option<Arc<dyn DatagramFaults>>,
}

/// Which way a connection goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// This process dialled the peer (it sends on it).
    Outbound,
    /// The peer dialled this process (it receives on it).
    Inbound,
}

/// A request from an administrator's connection, to be answered through
/// `reply`.
#[derive(Debug)]
pub struct AdminCall {
    /// The administrator's name (from its certificate).
    pub client: String,
    /// The request's bytes.
    pub request: Vec<u8>,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Vec<u8>>,
}

/// An oracle query from a peer ([`crate::truth`]): answer with the
/// counters this cluster would publish to `peer` now, numbered `seq`, or
/// `None` if it publishes none to it.
#[derive(Debug)]
pub struct TruthCall {
    /// The asking cluster (from its certificate).
    pub peer: ClusterName,
    /// The number the answer carries.
    pub seq: u64,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Option<CounterUpdate>>,
}

/// What the endpoint hands the process.
#[derive(Debug)]
pub enum Event {
    /// A message from a peer; `from` is the name in its certificate.
    Message(Envelope),
    /// A connection with a peer completed its hello exchange.
    PeerUp {
        /// The peer.
        peer: ClusterName,
        /// Its hello (its incarnation tells a restart).
        hello: Hello,
        /// Which connection.
        direction: Direction,
    },
    /// A connection with a peer ended.
    PeerDown {
        /// The peer.
        peer: ClusterName,
        /// Which connection.
        direction: Direction,
        /// Why, in words.
        reason: String,
    },
    /// An administrator's request.
    Admin(AdminCall),
    /// An oracle query from a peer.
    Truth(TruthCall),
}

/// Why the endpoint could not start or a message could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The UDP socket could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The certificate is not a cluster's certificate for this cluster.
    #[error("this process is cluster `{cluster}` but its certificate names {identity}")]
    NotThisCluster {
        /// The cluster the process runs.
        cluster: ClusterName,
        /// Who the certificate names.
        identity: crate::certs::Identity,
    },
    /// A message is addressed to a cluster that is not a peer.
    #[error("no connection to cluster `{0}`: it is not a peer of this cluster")]
    UnknownPeer(ClusterName),
    /// The endpoint has shut down.
    #[error("the transport has shut down")]
    Closed,
}

/// The state of the links with one peer, as [`Transport::status`] reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStatus {
    /// Whether this process's connection to the peer is up.
    pub outbound: bool,
    /// How many of the peer's connections to this process are up.
    pub inbound: u32,
    /// The peer's incarnation, from its last hello.
    pub incarnation: Option<u64>,
    /// How many times the outbound connection was made.
    pub connects: u64,
    /// Why the last connection attempt or connection failed, if one did.
    pub last_error: Option<String>,
}

impl PeerStatus {
    /// Whether messages flow both ways.
    pub fn is_up(&self) -> bool {
        self.outbound && self.inbound > 0
    }
}

struct Shared {
    cluster: ClusterName,
    hello: Hello,
    endpoint: quinn::Endpoint,
    client_config: quinn::ClientConfig,
    peers: FxHashMap<ClusterName, Peer>,
    events: mpsc::UnboundedSender<Event>,
    status: Mutex<FxHashMap<ClusterName, PeerStatus>>,
    /// Per peer: the incarnation this process's connection to it reached,
    /// and how to tell its writer to reconnect (the peer restarted).
    outbound: FxHashMap<ClusterName, (Mutex<Option<u64>>, Notify)>,
    max_frame: usize,
    timeouts: Timeouts,
}

impl Shared {
    fn update_status(&self, peer: &ClusterName, f: impl FnOnce(&mut PeerStatus)) {
        if let Ok(mut status) = self.status.lock() {
            f(status.entry(peer.clone()).or_default());
        }
    }

    fn emit(&self, event: Event) {
        // The receiver is gone only when the process is shutting down.
        let _ = self.events.send(event);
    }
}

/// A running endpoint.
pub struct Transport {
    shared: Arc<Shared>,
    senders: FxHashMap<ClusterName, mpsc::UnboundedSender<Envelope>>,
    local_addr: SocketAddr,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("cluster", &self.shared.cluster)
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

/// The transport's QUIC settings.
pub(crate) fn transport_settings(timeouts: &Timeouts) -> Arc<quinn::TransportConfig> {
    let mut settings = quinn::TransportConfig::default();
    if let Ok(idle) = quinn::IdleTimeout::try_from(timeouts.idle) {
        settings.max_idle_timeout(Some(idle));
    }
    settings.keep_alive_interval(Some(timeouts.keep_alive));
    Arc::new(settings)
}

impl Transport {
    /// Binds the endpoint and starts the accept loop and a writer per peer.
    /// Must be called inside a tokio runtime. Returns the transport and the
    /// stream of events for the process.
    pub fn start(
        config: TransportConfig,
    ) -> Result<(Transport, mpsc::UnboundedReceiver<Event>), TransportError> {
        let identity = config.tls.identity();
        if identity.role != Role::Cluster || identity.name != config.cluster.as_str() {
            return Err(TransportError::NotThisCluster {
                cluster: config.cluster.clone(),
                identity: identity.clone(),
            });
        }
        let mut server_config = config.tls.server_config()?;
        server_config.transport_config(transport_settings(&config.timeouts));
        let mut client_config = config.tls.client_config()?;
        client_config.transport_config(transport_settings(&config.timeouts));
        let bind_error = |source| TransportError::Bind {
            address: config.listen,
            source,
        };
        let endpoint = match &config.faults {
            None => quinn::Endpoint::server(server_config, config.listen).map_err(bind_error)?,
            Some(faults) => {
                let runtime = Arc::new(quinn::TokioRuntime);
                let socket = std::net::UdpSocket::bind(config.listen).map_err(bind_error)?;
                let socket = quinn::Runtime::wrap_udp_socket(runtime.as_ref(), socket)
                    .map_err(bind_error)?;
                let socket =
                    FaultySocket::new(socket, peer_addresses(&config.peers), faults.clone());
                quinn::Endpoint::new_with_abstract_socket(
                    quinn::EndpointConfig::default(),
                    Some(server_config),
                    socket,
                    runtime,
                )
                .map_err(bind_error)?
            }
        };
        let local_addr = endpoint
            .local_addr()
            .map_err(|source| TransportError::Bind {
                address: config.listen,
                source,
            })?;
        let (events, receiver) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            hello: Hello::with_incarnation(config.cluster.clone(), config.incarnation),
            cluster: config.cluster.clone(),
            endpoint,
            client_config,
            peers: config
                .peers
                .iter()
                .map(|peer| (peer.name.clone(), peer.clone()))
                .collect(),
            events,
            status: Mutex::new(
                config
                    .peers
                    .iter()
                    .map(|peer| (peer.name.clone(), PeerStatus::default()))
                    .collect(),
            ),
            outbound: config
                .peers
                .iter()
                .map(|peer| (peer.name.clone(), (Mutex::new(None), Notify::new())))
                .collect(),
            max_frame: config.max_frame,
            timeouts: config.timeouts,
        });
        let mut senders = FxHashMap::default();
        for peer in &config.peers {
            let (sender, outgoing) = mpsc::unbounded_channel();
            senders.insert(peer.name.clone(), sender);
            tokio::spawn(writer(shared.clone(), peer.clone(), outgoing));
        }
        tokio::spawn(accept_loop(shared.clone()));
        tracing::info!(cluster = %config.cluster, address = %local_addr, peers = config.peers.len(), "listening");
        Ok((
            Transport {
                shared,
                senders,
                local_addr,
            },
            receiver,
        ))
    }

    /// Where the endpoint listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Queues `envelope` for its peer. Returns at once; the peer's writer
    /// sends it when connected.
    pub fn send(&self, envelope: Envelope) -> Result<(), TransportError> {
        let sender = self
            .senders
            .get(&envelope.to)
            .ok_or_else(|| TransportError::UnknownPeer(envelope.to.clone()))?;
        sender.send(envelope).map_err(|_| TransportError::Closed)
    }

    /// The links with every peer.
    pub fn status(&self) -> Vec<(ClusterName, PeerStatus)> {
        let mut peers: Vec<(ClusterName, PeerStatus)> = self
            .shared
            .status
            .lock()
            .map(|status| {
                status
                    .iter()
                    .map(|(name, state)| (name.clone(), state.clone()))
                    .collect()
            })
            .unwrap_or_default();
        peers.sort_by(|a, b| a.0.cmp(&b.0));
        peers
    }

    /// Closes every connection (peers see a clean shutdown) and stops the
    /// tasks.
    pub fn close(&self) {
        self.shared
            .endpoint
            .close(quinn::VarInt::from_u32(close::SHUTDOWN), b"shutting down");
    }

    /// Waits until every connection has closed (after [`Transport::close`]),
    /// at most `limit`.
    pub async fn wait_closed(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.shared.endpoint.wait_idle()).await;
    }
}

/// Every address of every peer, for the faults to know whom a datagram
/// goes to. A peer whose address does not resolve now gets no faults (and
/// a warning).
fn peer_addresses(peers: &[Peer]) -> FxHashMap<SocketAddr, ClusterName> {
    use std::net::ToSocketAddrs as _;
    let mut addresses = FxHashMap::default();
    for peer in peers {
        match peer.address.to_socket_addrs() {
            Ok(resolved) => {
                for address in resolved {
                    addresses.insert(address, peer.name.clone());
                }
            }
            Err(error) => {
                tracing::warn!(peer = %peer.name, address = %peer.address, %error, "cannot resolve the peer's address: no faults on the link to it");
            }
        }
    }
    addresses
}

/// Reads one message (the hello) from a stream, within the decoder's limit.
pub(crate) async fn read_message(
    recv: &mut quinn::RecvStream,
    decoder: &mut FrameDecoder,
) -> Result<Message, String> {
    let mut buffer = [0u8; 4096];
    loop {
        match decoder.next_message() {
            Ok(Some(message)) => return Ok(message),
            Ok(None) => {}
            Err(error) => return Err(error.to_string()),
        }
        match recv.read(&mut buffer).await {
            Ok(Some(read)) => decoder.extend(&buffer[..read]),
            Ok(None) => return Err("the stream ended before a whole message".to_owned()),
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// Encodes one message as a frame.
pub(crate) fn frame(message: &Message, max: usize) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_frame(message, &mut out, max)?;
    Ok(out)
}

fn close_connection(connection: &quinn::Connection, code: u32, reason: &str) {
    connection.close(quinn::VarInt::from_u32(code), reason.as_bytes());
}

// ---------------------------------------------------------------- dialling

/// What ended an outbound connection.
enum WriterEnd {
    /// The connection failed; reconnect.
    Lost(String),
    /// The process is shutting down.
    Shutdown,
}

async fn writer(shared: Arc<Shared>, peer: Peer, mut outgoing: mpsc::UnboundedReceiver<Envelope>) {
    let mut pending: VecDeque<Envelope> = VecDeque::new();
    let mut backoff = shared.timeouts.backoff_min;
    loop {
        match dial(&shared, &peer).await {
            Ok((connection, send, hello)) => {
                backoff = shared.timeouts.backoff_min;
                shared.update_status(&peer.name, |status| {
                    status.outbound = true;
                    status.incarnation = Some(hello.incarnation);
                    status.connects += 1;
                    status.last_error = None;
                });
                if let Some((incarnation, _)) = shared.outbound.get(&peer.name) {
                    if let Ok(mut incarnation) = incarnation.lock() {
                        *incarnation = Some(hello.incarnation);
                    }
                }
                tracing::info!(cluster = %shared.cluster, peer = %peer.name, address = %connection.remote_address(), "connected");
                shared.emit(Event::PeerUp {
                    peer: peer.name.clone(),
                    hello,
                    direction: Direction::Outbound,
                });
                let end = write_loop(
                    &shared,
                    &peer.name,
                    &connection,
                    send,
                    &mut outgoing,
                    &mut pending,
                )
                .await;
                shared.update_status(&peer.name, |status| status.outbound = false);
                match end {
                    WriterEnd::Shutdown => {
                        close_connection(&connection, close::SHUTDOWN, "shutting down");
                        return;
                    }
                    WriterEnd::Lost(reason) => {
                        tracing::warn!(cluster = %shared.cluster, peer = %peer.name, %reason, "connection lost; reconnecting");
                        shared.update_status(&peer.name, |status| {
                            status.last_error = Some(reason.clone());
                        });
                        shared.emit(Event::PeerDown {
                            peer: peer.name.clone(),
                            direction: Direction::Outbound,
                            reason,
                        });
                    }
                }
            }
            Err(DialError::Shutdown) => return,
            Err(DialError::Failed(reason)) => {
                tracing::debug!(cluster = %shared.cluster, peer = %peer.name, %reason, "cannot connect");
                shared.update_status(&peer.name, |status| status.last_error = Some(reason));
            }
            Err(DialError::Refused(reason)) => {
                tracing::warn!(cluster = %shared.cluster, peer = %peer.name, %reason, "connection refused");
                shared.update_status(&peer.name, |status| status.last_error = Some(reason));
            }
        }
        // Wait before the next attempt, keeping what is sent meanwhile.
        let sleep = tokio::time::sleep(backoff);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => break,
                envelope = outgoing.recv() => match envelope {
                    Some(envelope) => keep_pending(&mut pending, envelope),
                    None => return,
                },
            }
        }
        backoff = (backoff * 2).min(shared.timeouts.backoff_max);
    }
}

/// Queues a message while disconnected; a counter update replaces older
/// ones (only the newest snapshot matters).
fn keep_pending(pending: &mut VecDeque<Envelope>, envelope: Envelope) {
    if matches!(envelope.message, Message::CounterUpdate(_)) {
        pending.retain(|queued| !matches!(queued.message, Message::CounterUpdate(_)));
    }
    pending.push_back(envelope);
}

enum DialError {
    /// Could not reach the peer (it may not be up yet).
    Failed(String),
    /// The peer was reached but the connection was refused.
    Refused(String),
    /// The endpoint is closing.
    Shutdown,
}

async fn dial(
    shared: &Shared,
    peer: &Peer,
) -> Result<(quinn::Connection, quinn::SendStream, Hello), DialError> {
    let address = tokio::net::lookup_host(peer.address.as_str())
        .await
        .map_err(|error| DialError::Failed(format!("cannot resolve {}: {error}", peer.address)))?
        .next()
        .ok_or_else(|| DialError::Failed(format!("{} resolves to no address", peer.address)))?;
    let connecting = shared
        .endpoint
        .connect_with(shared.client_config.clone(), address, tls::SERVER_NAME)
        .map_err(|error| match error {
            quinn::ConnectError::EndpointStopping => DialError::Shutdown,
            other => DialError::Failed(other.to_string()),
        })?;
    let connection = connecting.await.map_err(|error| match error {
        quinn::ConnectionError::TransportError(ref transport)
            if transport.code.to_string().contains("TLS") || transport.reason.contains("cert") =>
        {
            DialError::Refused(format!("TLS handshake with {address} failed: {error}"))
        }
        quinn::ConnectionError::LocallyClosed => DialError::Shutdown,
        other => DialError::Failed(format!("cannot connect to {address}: {other}")),
    })?;
    let identity = tls::peer_identity(&connection).map_err(|error| {
        close_connection(&connection, close::IDENTITY, &error.to_string());
        DialError::Refused(error.to_string())
    })?;
    if identity.name != peer.name.as_str() {
        let reason = format!(
            "{address} should be cluster `{}` but its certificate names {identity}",
            peer.name
        );
        close_connection(&connection, close::IDENTITY, &reason);
        return Err(DialError::Refused(reason));
    }
    let handshake = async {
        let (mut send, mut recv) = connection
            .open_bi()
            .await
            .map_err(|error| DialError::Failed(error.to_string()))?;
        let hello = frame(&Message::Hello(shared.hello.clone()), shared.max_frame)
            .map_err(|error| DialError::Failed(error.to_string()))?;
        send.write_all(&hello)
            .await
            .map_err(|error| DialError::Failed(error.to_string()))?;
        let mut decoder = FrameDecoder::new(shared.max_frame);
        let reply =
            read_message(&mut recv, &mut decoder)
                .await
                .map_err(|error| match connection.close_reason() {
                    Some(quinn::ConnectionError::ApplicationClosed(close)) => DialError::Refused(
                        format!("refused: {}", String::from_utf8_lossy(&close.reason)),
                    ),
                    _ => DialError::Failed(format!("no hello from the peer: {error}")),
                })?;
        Ok::<_, DialError>((send, reply))
    };
    let (send, reply) = tokio::time::timeout(shared.timeouts.handshake, handshake)
        .await
        .map_err(|_| DialError::Failed("the hello exchange timed out".to_owned()))??;
    let Message::Hello(hello) = reply else {
        close_connection(&connection, close::PROTOCOL, "expected a hello");
        return Err(DialError::Refused(format!(
            "the peer answered the hello with a {}",
            reply.kind()
        )));
    };
    if hello.version != PROTOCOL_VERSION || hello.cluster != peer.name {
        let reason = format!(
            "the peer says hello as `{}` at protocol version {} (expected `{}` at {PROTOCOL_VERSION})",
            hello.cluster, hello.version, peer.name
        );
        close_connection(&connection, close::VERSION, &reason);
        return Err(DialError::Refused(reason));
    }
    Ok((connection, send, hello))
}

async fn write_loop(
    shared: &Shared,
    peer: &ClusterName,
    connection: &quinn::Connection,
    mut send: quinn::SendStream,
    outgoing: &mut mpsc::UnboundedReceiver<Envelope>,
    pending: &mut VecDeque<Envelope>,
) -> WriterEnd {
    const BATCH: usize = 1024;
    let mut buffer = Vec::with_capacity(64 * 1024);
    let restarted = shared.outbound.get(peer).map(|(_, notify)| notify);
    loop {
        if pending.is_empty() {
            tokio::select! {
                () = async {
                    match restarted {
                        Some(notify) => notify.notified().await,
                        None => std::future::pending().await,
                    }
                } => {
                    close_connection(connection, close::SHUTDOWN, "you restarted");
                    return WriterEnd::Lost("the peer restarted".to_owned());
                }
                envelope = outgoing.recv() => match envelope {
                    Some(envelope) => pending.push_back(envelope),
                    None => {
                        let _ = send.finish();
                        return WriterEnd::Shutdown;
                    }
                },
                error = connection.closed() => return WriterEnd::Lost(describe_close(&error)),
            }
        }
        while pending.len() < BATCH {
            match outgoing.try_recv() {
                Ok(envelope) => pending.push_back(envelope),
                Err(_) => break,
            }
        }
        buffer.clear();
        let mut count = 0usize;
        while let Some(envelope) = pending.pop_front() {
            if let Err(error) = encode_frame(&envelope.message, &mut buffer, shared.max_frame) {
                tracing::error!(cluster = %shared.cluster, to = %envelope.to, kind = envelope.message.kind(), %error, "message not sent");
                continue;
            }
            count += 1;
            if count >= BATCH {
                break;
            }
        }
        if let Err(error) = send.write_all(&buffer).await {
            tracing::warn!(cluster = %shared.cluster, messages = count, %error, "messages lost with the connection");
            return WriterEnd::Lost(error.to_string());
        }
    }
}

fn describe_close(error: &quinn::ConnectionError) -> String {
    match error {
        quinn::ConnectionError::ApplicationClosed(close) => format!(
            "closed by the peer (code {}): {}",
            close.error_code,
            String::from_utf8_lossy(&close.reason)
        ),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------- accepting

async fn accept_loop(shared: Arc<Shared>) {
    while let Some(incoming) = shared.endpoint.accept().await {
        tokio::spawn(accept_one(shared.clone(), incoming));
    }
}

async fn accept_one(shared: Arc<Shared>, incoming: quinn::Incoming) {
    let remote = incoming.remote_address();
    let connection = match incoming.await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::warn!(cluster = %shared.cluster, %remote, %error, "connection refused in the TLS handshake");
            return;
        }
    };
    let identity = match tls::peer_identity(&connection) {
        Ok(identity) => identity,
        Err(error) => {
            tracing::warn!(cluster = %shared.cluster, %remote, %error, "connection refused");
            close_connection(&connection, close::IDENTITY, &error.to_string());
            return;
        }
    };
    let truth = connection
        .handshake_data()
        .and_then(|data| data.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|data| data.protocol)
        .is_some_and(|protocol| protocol == TRUTH_ALPN);
    match (identity.role, truth) {
        (Role::Admin, false) => {
            crate::admin::serve(shared_admin(&shared), connection, identity.name).await
        }
        (Role::Cluster, false) => serve_peer(&shared, connection, identity.name).await,
        (Role::Cluster, true) => serve_truth(&shared, connection, identity.name).await,
        (Role::Admin, true) => {
            tracing::warn!(cluster = %shared.cluster, %remote, "oracle query from an administrator refused");
            close_connection(
                &connection,
                close::IDENTITY,
                "only clusters ask for true counters",
            );
        }
    }
}

/// Answers a peer's oracle queries ([`crate::truth`]) until it closes the
/// connection: one stream per query.
async fn serve_truth(shared: &Arc<Shared>, connection: quinn::Connection, name: String) {
    let peer = match ClusterName::new(&name) {
        Ok(peer) if shared.peers.contains_key(&peer) => peer,
        _ => {
            let reason = format!(
                "cluster `{name}` is not a peer of cluster `{}`",
                shared.cluster
            );
            tracing::warn!(cluster = %shared.cluster, %reason, "oracle query refused");
            close_connection(&connection, close::UNKNOWN_PEER, &reason);
            return;
        }
    };
    while let Ok((mut send, mut recv)) = connection.accept_bi().await {
        let shared = shared.clone();
        let peer = peer.clone();
        let connection = connection.clone();
        tokio::spawn(async move {
            let seq = match recv
                .read_to_end(QUERY_SIZE)
                .await
                .map(|bytes| <[u8; QUERY_SIZE]>::try_from(bytes.as_slice()).map(u64::from_be_bytes))
            {
                Ok(Ok(seq)) => seq,
                Ok(Err(_)) | Err(_) => {
                    let reason = "a bad oracle query";
                    tracing::warn!(cluster = %shared.cluster, %peer, reason, "closing the connection");
                    close_connection(&connection, close::BAD_FRAME, reason);
                    return;
                }
            };
            let (reply, answer) = oneshot::channel();
            shared.emit(Event::Truth(TruthCall {
                peer: peer.clone(),
                seq,
                reply,
            }));
            let mut bytes = Vec::new();
            if let Ok(Some(update)) = answer.await {
                if let Err(error) = encode_frame(
                    &Message::CounterUpdate(update),
                    &mut bytes,
                    shared.max_frame,
                ) {
                    tracing::error!(cluster = %shared.cluster, %peer, %error, "oracle answer not sent");
                    bytes.clear();
                }
            }
            let _ = send.write_all(&bytes).await;
            let _ = send.finish();
            let _ = send.stopped().await;
        });
    }
}

fn shared_admin(shared: &Shared) -> crate::admin::AdminContext {
    crate::admin::AdminContext {
        cluster: shared.cluster.clone(),
        events: shared.events.clone(),
    }
}

/// Checks a message from peer `name` before it is handed on: nothing may
/// speak for another cluster, and a hello comes only once.
pub(crate) fn check_message(name: &ClusterName, message: &Message) -> Result<(), (u32, String)> {
    match message {
        Message::Hello(_) => Err((
            close::PROTOCOL,
            "a second hello on an open connection".to_owned(),
        )),
        Message::CounterUpdate(update) => {
            if &update.sender != name {
                return Err((
                    close::IDENTITY,
                    format!(
                        "counter update sent as `{}` by cluster `{name}` (its certificate)",
                        update.sender
                    ),
                ));
            }
            match update.queues.iter().find(|queue| &queue.cluster != name) {
                Some(queue) => Err((
                    close::IDENTITY,
                    format!(
                        "counters of queue `{}@{}` sent by cluster `{name}` (its certificate)",
                        queue.queue, queue.cluster
                    ),
                )),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

async fn serve_peer(shared: &Shared, connection: quinn::Connection, name: String) {
    let remote = connection.remote_address();
    let refuse = |code: u32, reason: String| {
        tracing::warn!(cluster = %shared.cluster, %remote, peer = %name, %reason, "connection closed");
        close_connection(&connection, code, &reason);
    };
    let handshake = async {
        let (send, mut recv) = connection.accept_bi().await.map_err(|e| e.to_string())?;
        let mut decoder = FrameDecoder::new(shared.max_frame);
        let message = read_message(&mut recv, &mut decoder).await?;
        Ok::<_, String>((send, recv, decoder, message))
    };
    let (mut send, mut recv, mut decoder, first) =
        match tokio::time::timeout(shared.timeouts.handshake, handshake).await {
            Ok(Ok(opened)) => opened,
            Ok(Err(reason)) => return refuse(close::PROTOCOL, format!("no hello: {reason}")),
            Err(_) => return refuse(close::PROTOCOL, "no hello in time".to_owned()),
        };
    let Message::Hello(hello) = first else {
        return refuse(
            close::PROTOCOL,
            format!("the connection opened with a {}, not a hello", first.kind()),
        );
    };
    if hello.version != PROTOCOL_VERSION {
        return refuse(
            close::VERSION,
            format!(
                "protocol version {} is not this cluster's ({PROTOCOL_VERSION})",
                hello.version
            ),
        );
    }
    if hello.cluster.as_str() != name {
        return refuse(
            close::IDENTITY,
            format!(
                "says hello as cluster `{}` but its certificate names cluster `{name}`",
                hello.cluster
            ),
        );
    }
    let peer = hello.cluster.clone();
    if !shared.peers.contains_key(&peer) {
        return refuse(
            close::UNKNOWN_PEER,
            format!(
                "cluster `{peer}` is not a peer of cluster `{}`",
                shared.cluster
            ),
        );
    }
    let reply = match frame(&Message::Hello(shared.hello.clone()), shared.max_frame) {
        Ok(reply) => reply,
        Err(error) => return refuse(close::PROTOCOL, error.to_string()),
    };
    if let Err(error) = send.write_all(&reply).await {
        tracing::debug!(cluster = %shared.cluster, peer = %peer, %error, "hello reply not sent");
        return;
    }
    let _ = send.finish();
    shared.update_status(&peer, |status| {
        status.inbound += 1;
        status.incarnation = Some(hello.incarnation);
    });
    // A new incarnation means the peer restarted: this process's own
    // connection to it is to a dead process; make it again now rather than
    // when it times out.
    if let Some((incarnation, notify)) = shared.outbound.get(&peer) {
        let stale = incarnation
            .lock()
            .map(|known| known.is_some_and(|known| known != hello.incarnation))
            .unwrap_or(false);
        if stale {
            notify.notify_one();
        }
    }
    tracing::info!(cluster = %shared.cluster, peer = %peer, %remote, "peer connected");
    shared.emit(Event::PeerUp {
        peer: peer.clone(),
        hello,
        direction: Direction::Inbound,
    });
    let reason = read_loop(shared, &connection, &peer, &mut recv, &mut decoder).await;
    shared.update_status(&peer, |status| {
        status.inbound = status.inbound.saturating_sub(1)
    });
    shared.emit(Event::PeerDown {
        peer,
        direction: Direction::Inbound,
        reason,
    });
}

async fn read_loop(
    shared: &Shared,
    connection: &quinn::Connection,
    peer: &ClusterName,
    recv: &mut quinn::RecvStream,
    decoder: &mut FrameDecoder,
) -> String {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        loop {
            match decoder.next_message() {
                Ok(Some(message)) => {
                    if let Err((code, reason)) = check_message(peer, &message) {
                        tracing::warn!(cluster = %shared.cluster, peer = %peer, %reason, "closing the connection");
                        close_connection(connection, code, &reason);
                        return reason;
                    }
                    shared.emit(Event::Message(Envelope {
                        from: peer.clone(),
                        to: shared.cluster.clone(),
                        message,
                    }));
                }
                Ok(None) => break,
                Err(error) => {
                    let reason = format!("bad frame: {error}");
                    tracing::warn!(cluster = %shared.cluster, peer = %peer, %reason, "closing the connection");
                    close_connection(connection, close::BAD_FRAME, &reason);
                    return reason;
                }
            }
        }
        match recv.read(&mut buffer).await {
            Ok(Some(read)) => decoder.extend(&buffer[..read]),
            Ok(None) => return "the peer finished its stream".to_owned(),
            Err(error) => return error.to_string(),
        }
    }
}
