//! mcfed's live page (`mcfed launch --web`, `mcfed cluster --web`): a
//! read-only HTTP server that watches cluster processes and pushes what
//! they hold to browsers.
//!
//! - [`state`]: what the page shows, kept between polls (plain data);
//! - `sources`: the watched clusters and the poll that asks them;
//! - `server`: the routes — the page (static files embedded in the binary:
//!   no build step, nothing fetched from elsewhere), its stream of frames
//!   (server-sent events) and the state as JSON.
//!
//! The server runs on a thread of its own, with its own tokio runtime, so
//! a slow browser never holds up a cluster's actors or the launcher. Why
//! axum: it is tokio's own HTTP stack (hyper underneath), runs on the
//! plain tokio runtime the launcher and the transport already use, and has
//! server-sent events built in; actix-web would bring a second HTTP
//! runtime model (its own workers and system) for one read-only page.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use mcfed_process::client::Started;
use mcfed_process::process::LocalWatch;
use tokio::sync::mpsc;

mod server;
mod sources;
pub mod state;

pub use server::{MAX_STREAMS, QUEUED_FRAMES};

/// Where the page is served when `--web` names no address: loopback only.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:7180";

/// How often the watched clusters are asked what they hold.
pub const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// Why the page cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The address is not one.
    #[error("--web `{address}`: {reason}")]
    Address {
        /// What was given.
        address: String,
        /// Why it is not usable.
        reason: String,
    },
    /// Nothing can listen there.
    #[error("cannot serve the live page on {address}: {source}")]
    Bind {
        /// Where.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The server's thread or runtime could not start.
    #[error("cannot start the live page's server: {0}")]
    Start(#[from] std::io::Error),
}

/// Reads `--web`'s address: `PORT` (on 127.0.0.1) or `HOST:PORT` (any
/// host, `0.0.0.0:PORT` to serve beyond this machine).
pub fn parse_address(text: &str) -> Result<SocketAddr, WebError> {
    let fail = |reason: String| WebError::Address {
        address: text.to_owned(),
        reason,
    };
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.to_socket_addrs()
        .map_err(|error| fail(format!("{error} (give PORT or HOST:PORT)")))?
        .next()
        .ok_or_else(|| fail("it resolves to no address".to_owned()))
}

/// The live page's server, running on its own thread until the process
/// ends.
pub struct Web {
    address: SocketAddr,
    shared: server::Shared,
    local: mpsc::UnboundedSender<LocalWatch>,
    launched: mpsc::UnboundedSender<Started>,
}

impl Web {
    /// Listens on `address` (the error comes at once if it cannot) and
    /// serves the page, asking the clusters it is given what they hold
    /// every `poll`.
    pub fn start(address: SocketAddr, poll: Duration) -> Result<Web, WebError> {
        let listener = std::net::TcpListener::bind(address)
            .map_err(|source| WebError::Bind { address, source })?;
        listener.set_nonblocking(true)?;
        let bound = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (local, local_arrivals) = mpsc::unbounded_channel();
        let (launched, launched_arrivals) = mpsc::unbounded_channel();
        let shared = server::Shared::new(state::LiveState::default(), server::allowed_hosts(bound));
        let kept = shared.clone();
        let arrivals = sources::Arrivals {
            local: Some(local_arrivals),
            launched: Some(launched_arrivals),
        };
        std::thread::Builder::new()
            .name("mcfed-web".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    tokio::spawn(sources::poll(
                        shared.state.clone(),
                        shared.pushes.clone(),
                        arrivals,
                        poll,
                    ));
                    let served = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => axum::serve(listener, server::router(shared)).await,
                        Err(error) => Err(error),
                    };
                    if let Err(error) = served {
                        tracing::error!(%error, "the live page's server stopped");
                    }
                });
            })?;
        Ok(Web {
            address: bound,
            shared: kept,
            local,
            launched,
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// Where a cluster process in this process hands itself to be watched
    /// (`ClusterOptions::watch`).
    pub fn local_sender(&self) -> mpsc::UnboundedSender<LocalWatch> {
        self.local.clone()
    }

    /// Where a launcher in this process says where its processes listen
    /// (`LaunchOptions::watch`).
    pub fn launch_sender(&self) -> mpsc::UnboundedSender<Started> {
        self.launched.clone()
    }

    /// Tells every page that the watched processes stopped normally
    /// (`why`): every panel says `stopped`, not `down` with what its last
    /// poll met while they shut down. Waits until the pages have closed
    /// their streams (at most [`FINISH_WAIT`]), so that they show it rather
    /// than a lost connection. Nothing is polled afterwards.
    pub fn finish(&self, why: &str) {
        self.end(why, state::End::Stopped);
    }

    /// [`Web::finish`] after a failure (a process died, the launch
    /// failed): each panel keeps what its last poll found.
    pub fn fail(&self, why: &str) {
        self.end(why, state::End::Failed);
    }

    fn end(&self, why: &str, how: state::End) {
        {
            // The last frame (the panels as the end leaves them), then the
            // end, under the lock a page takes its first frame under.
            let mut state = sources::lock(&self.shared.state);
            state.end(why, how);
            let _ = self.shared.pushes.send(sources::changes(&mut state));
            let _ = self.shared.pushes.send(server::Push::end(why));
        }
        let deadline = std::time::Instant::now() + FINISH_WAIT;
        while self
            .shared
            .streams
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The line `mcfed` prints on standard error once the page is served:
    /// `WHO: the live page is at http://127.0.0.1:7180/ (read-only)`.
    pub fn announcement(&self, who: &str) -> String {
        let reach = if self.address.ip().is_loopback() {
            "read-only, this machine only"
        } else {
            "read-only, and reachable from other machines"
        };
        format!("{who}: {ANNOUNCEMENT}{} ({reach})", self.url())
    }
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web")
            .field("address", &self.address)
            .finish()
    }
}

/// How long [`Web::finish`] waits for the pages to close their streams.
pub const FINISH_WAIT: Duration = Duration::from_secs(1);

/// What [`Web::announcement`] says before the URL.
pub const ANNOUNCEMENT: &str = "the live page is at ";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_is_served_on_this_machine_only() {
        let address = parse_address("7180").expect("a port");
        assert_eq!(address, SocketAddr::from(([127, 0, 0, 1], 7180)));
        assert!(
            parse_address("0.0.0.0:80")
                .expect("all")
                .ip()
                .is_unspecified()
        );
        assert!(
            parse_address("localhost:0")
                .expect("local")
                .ip()
                .is_loopback()
        );
        let error = parse_address("nowhere").expect_err("no port");
        assert!(
            error.to_string().starts_with("--web `nowhere`: "),
            "{error}"
        );
    }

    #[test]
    fn a_loopback_page_answers_requests_for_itself_only() {
        let hosts = server::allowed_hosts(SocketAddr::from(([127, 0, 0, 1], 7180)));
        assert!(hosts.contains(&"127.0.0.1:7180".to_owned()));
        assert!(hosts.contains(&"localhost:7180".to_owned()));
        assert!(!hosts.iter().any(|host| host.contains("7181")));
        assert!(server::allowed_hosts(SocketAddr::from(([0, 0, 0, 0], 7180))).is_empty());
    }
}
