//! Faults below QUIC: a UDP socket that wraps the endpoint's own and
//! delays, drops or duplicates the datagrams it sends to each peer, as a
//! [`DatagramFaults`] decides.
//!
//! quinn above it sees a slow, lossy, reordering network and copes as it
//! would with a real one — retransmission after loss detection, duplicate
//! packets discarded, stream data reassembled in order, keep-alives, idle
//! timeouts, and the writers' reconnection when a connection dies — so the
//! real code path is what runs. Each process applies the faults of the
//! links *from* it: the datagrams it sends to a peer, whether they carry
//! its own messages (its outbound connection) or the acknowledgements and
//! hello of the peer's connection to it.
//!
//! Only datagrams to a peer's address (as configured, resolved when the
//! endpoint starts, or learned from the peer's hello when it was not
//! configured: [`PeerAddresses`]) are touched. Everything else — answers to
//! administrators and to the launcher, answers to oracle queries
//! ([`crate::truth`]) — goes out at once.
//!
//! Datagrams held back wait in one queue per socket, ordered by when they
//! are due and then by when they were sent, and go out through the same
//! socket, so the peer sees them come from the endpoint's address.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};
use std::time::Duration;

use mcfed_protocol::ClusterName;
use quinn::udp::{EcnCodepoint, RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use rustc_hash::FxHashMap;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Decides what happens to each datagram a process sends to a peer.
/// Implementations hold their own (seeded) random generator and clock.
pub trait DatagramFaults: Send + Sync + std::fmt::Debug + 'static {
    /// The fate of a datagram sent now to `peer`.
    fn fate(&self, peer: &ClusterName) -> DatagramFate;
}

/// What happens to one datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatagramFate {
    /// It is dropped.
    Lost,
    /// It is sent once after each of these delays (zero: at once; two
    /// delays: it is duplicated).
    Deliver(Vec<Duration>),
}

/// A datagram held back.
struct Delayed {
    due: Instant,
    seq: u64,
    destination: SocketAddr,
    ecn: Option<EcnCodepoint>,
    src_ip: Option<IpAddr>,
    contents: Vec<u8>,
}

impl PartialEq for Delayed {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Delayed {}
impl PartialOrd for Delayed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Delayed {
    /// Reversed, so the max-heap yields the datagram due first (and, among
    /// those due at once, the one sent first).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.due, other.seq).cmp(&(self.due, self.seq))
    }
}

/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) as the IPv4 address.
fn canonical(address: SocketAddr) -> SocketAddr {
    SocketAddr::new(address.ip().to_canonical(), address.port())
}

/// Which peer each address is: the configured ones, and those learned
/// from hellos. Shared by the faulty socket and the endpoint's readers.
#[derive(Clone, Debug, Default)]
pub(crate) struct PeerAddresses(Arc<RwLock<FxHashMap<SocketAddr, ClusterName>>>);

impl PeerAddresses {
    /// The map of `addresses`.
    pub(crate) fn new(addresses: FxHashMap<SocketAddr, ClusterName>) -> Self {
        PeerAddresses(Arc::new(RwLock::new(
            addresses
                .into_iter()
                .map(|(address, name)| (canonical(address), name))
                .collect(),
        )))
    }

    /// Records that `peer` is at `address`.
    pub(crate) fn learn(&self, address: SocketAddr, peer: &ClusterName) {
        if let Ok(mut addresses) = self.0.write() {
            addresses.insert(canonical(address), peer.clone());
        }
    }

    /// The peer at `address`, if it is one.
    pub(crate) fn peer_at(&self, address: SocketAddr) -> Option<ClusterName> {
        self.0
            .read()
            .ok()
            .and_then(|addresses| addresses.get(&canonical(address)).cloned())
    }
}

/// The endpoint's UDP socket with faults on what it sends to peers.
pub(crate) struct FaultySocket {
    inner: Arc<dyn AsyncUdpSocket>,
    peers: PeerAddresses,
    faults: Arc<dyn DatagramFaults>,
    later: mpsc::UnboundedSender<Delayed>,
    sent: AtomicU64,
}

impl std::fmt::Debug for FaultySocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultySocket")
            .field("inner", &self.inner)
            .field("peers", &self.peers)
            .field("faults", &self.faults)
            .finish()
    }
}

impl FaultySocket {
    /// Wraps `inner`; `peers` maps each peer's address to its name (and
    /// learns more later). Starts the task that sends held-back datagrams
    /// (needs a tokio runtime).
    pub(crate) fn new(
        inner: Arc<dyn AsyncUdpSocket>,
        peers: PeerAddresses,
        faults: Arc<dyn DatagramFaults>,
    ) -> Arc<Self> {
        let (later, queue) = mpsc::unbounded_channel();
        tokio::spawn(send_later(inner.clone(), queue));
        Arc::new(FaultySocket {
            inner,
            peers,
            faults,
            later,
            sent: AtomicU64::new(0),
        })
    }
}

impl AsyncUdpSocket for FaultySocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit<'_>) -> io::Result<()> {
        let Some(peer) = self.peers.peer_at(transmit.destination) else {
            return self.inner.try_send(transmit);
        };
        let delays = match self.faults.fate(&peer) {
            DatagramFate::Lost => {
                tracing::trace!(%peer, bytes = transmit.contents.len(), "datagram dropped");
                // As far as quinn knows it was sent; the network lost it.
                return Ok(());
            }
            DatagramFate::Deliver(delays) => delays,
        };
        if let [only] = delays.as_slice() {
            if only.is_zero() {
                return self.inner.try_send(transmit);
            }
        }
        let now = Instant::now();
        for delay in delays {
            let seq = self.sent.fetch_add(1, AtomicOrdering::Relaxed);
            let delayed = Delayed {
                due: now + delay,
                seq,
                destination: transmit.destination,
                ecn: transmit.ecn,
                src_ip: transmit.src_ip,
                contents: transmit.contents.to_vec(),
            };
            if self.later.send(delayed).is_err() {
                // The sending task is gone only when the runtime is
                // shutting down: the datagram is lost, as on a real
                // network.
                tracing::debug!(%peer, "held-back datagram dropped: the socket is closing");
            }
        }
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        self.inner.poll_recv(cx, bufs, meta)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// One datagram per transmit, so that each one meets its own fate.
    fn max_transmit_segments(&self) -> usize {
        1
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

/// Sends held-back datagrams when they are due, in order.
async fn send_later(socket: Arc<dyn AsyncUdpSocket>, mut queue: mpsc::UnboundedReceiver<Delayed>) {
    let mut poller = socket.clone().create_io_poller();
    let mut held: BinaryHeap<Delayed> = BinaryHeap::new();
    loop {
        let next = held.peek().map(|delayed| delayed.due);
        tokio::select! {
            delayed = queue.recv() => match delayed {
                Some(delayed) => held.push(delayed),
                None => return,
            },
            () = async {
                match next {
                    Some(due) => tokio::time::sleep_until(due).await,
                    None => std::future::pending().await,
                }
            } => {
                let now = Instant::now();
                while held.peek().is_some_and(|delayed| delayed.due <= now) {
                    if let Some(delayed) = held.pop() {
                        send_now(socket.as_ref(), &mut poller, &delayed).await;
                    }
                }
            }
        }
    }
}

/// Sends one datagram, waiting while the socket is not writable.
async fn send_now(
    socket: &dyn AsyncUdpSocket,
    poller: &mut Pin<Box<dyn UdpPoller>>,
    delayed: &Delayed,
) {
    let transmit = Transmit {
        destination: delayed.destination,
        ecn: delayed.ecn,
        contents: &delayed.contents,
        segment_size: None,
        src_ip: delayed.src_ip,
    };
    loop {
        match socket.try_send(&transmit) {
            Ok(()) => return,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                if let Err(error) =
                    std::future::poll_fn(|cx| poller.as_mut().poll_writable(cx)).await
                {
                    tracing::debug!(%error, "held-back datagram not sent");
                    return;
                }
            }
            Err(error) => {
                tracing::debug!(%error, destination = %delayed.destination, "held-back datagram not sent");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_datagrams_come_out_by_due_time_then_by_sending_order() {
        let at = Instant::now();
        let datagram = |due: Duration, seq: u64| Delayed {
            due: at + due,
            seq,
            destination: "127.0.0.1:1".parse().expect("address"),
            ecn: None,
            src_ip: None,
            contents: vec![seq as u8],
        };
        let mut heap = BinaryHeap::new();
        heap.push(datagram(Duration::from_millis(20), 0));
        heap.push(datagram(Duration::from_millis(10), 1));
        heap.push(datagram(Duration::from_millis(20), 2));
        heap.push(datagram(Duration::from_millis(10), 3));
        let order: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|d| d.seq)).collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn mapped_ipv4_addresses_match_plain_ones() {
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:7100".parse().expect("address");
        let plain: SocketAddr = "127.0.0.1:7100".parse().expect("address");
        assert_eq!(canonical(mapped), plain);
    }
}
