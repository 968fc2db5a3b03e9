//! The HTTP side of the live page: the page itself (static files embedded
//! in the binary), its stream of frames (server-sent events) and the state
//! as JSON. Every route answers GET (and HEAD) only: axum answers any other
//! method with 405, and nothing here changes anything. A page served on a
//! loopback address answers only requests naming that address (or
//! `localhost`) as their host, so that another web site cannot read it
//! through a DNS name rebound to 127.0.0.1.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::stream::Stream;
use tokio::sync::broadcast;

use crate::sources::lock;
use crate::state::LiveState;

/// The most pages streaming at once; more are told to come back later
/// (each holds a connection and its place in the queue of frames).
pub const MAX_STREAMS: usize = 32;

/// The most frames queued for the streams (shared by all of them): a page
/// that falls further behind skips to the whole state, made once for all.
pub const QUEUED_FRAMES: usize = 64;

/// How often an idle stream sends a comment, so that proxies and browsers
/// keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

const INDEX: &str = include_str!("../static/index.html");
const SCRIPT: &str = include_str!("../static/app.js");
const STYLE: &str = include_str!("../static/style.css");

/// No fetch beyond this server, no inline script: the page is what the
/// binary embeds.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// What is pushed to every page, made once for all of them: every stream
/// sends the same bytes (shared, not copied), each push one whole
/// server-sent event.
#[derive(Clone, Debug)]
pub(crate) enum Push {
    /// A frame: `data: JSON` (the JSON is one line).
    Frame(Bytes),
    /// The watched processes stopped: `event: end` with the reason, the
    /// last message.
    End(Bytes),
}

impl Push {
    /// The frame event of `json`.
    pub(crate) fn frame(json: &[u8]) -> Push {
        Push::Frame(event(b"", json))
    }

    /// The end event, for `why` (made one line).
    pub(crate) fn end(why: &str) -> Push {
        Push::End(event(
            b"event: end\n",
            why.replace(['\r', '\n'], " ").as_bytes(),
        ))
    }

    fn bytes(self) -> Bytes {
        match self {
            Push::Frame(bytes) | Push::End(bytes) => bytes,
        }
    }
}

/// A server-sent event: `head`, then `data: ` and `data` (one line).
fn event(head: &[u8], data: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(head.len() + data.len() + 8);
    event.extend_from_slice(head);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(data);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The whole state, made once per change: as JSON (`/api/state`) and as
/// the first event of a stream.
#[derive(Clone)]
pub(crate) struct Full {
    version: u64,
    json: Bytes,
    event: Bytes,
}

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) state: Arc<Mutex<LiveState>>,
    pub(crate) pushes: broadcast::Sender<Push>,
    pub(crate) streams: Arc<AtomicUsize>,
    /// The hosts a request may name (empty: any).
    pub(crate) hosts: Arc<Vec<String>>,
    /// The whole state, as last made.
    pub(crate) full: Arc<Mutex<Option<Full>>>,
}

impl Shared {
    /// Shares everything a server needs around `state`.
    pub(crate) fn new(state: LiveState, hosts: Vec<String>) -> Shared {
        Shared {
            state: Arc::new(Mutex::new(state)),
            pushes: broadcast::channel(QUEUED_FRAMES).0,
            streams: Arc::new(AtomicUsize::new(0)),
            hosts: Arc::new(hosts),
            full: Arc::new(Mutex::new(None)),
        }
    }

    /// The whole of `state` (which the caller holds locked): made once per
    /// change, whatever the number of pages asking.
    pub(crate) fn full(&self, state: &LiveState) -> Full {
        let mut cached = self
            .full
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(full) = cached
            .as_ref()
            .filter(|full| full.version == state.version())
        {
            return full.clone();
        }
        let json = serde_json::to_vec(&state.full_frame()).unwrap_or_else(|_| b"{}".to_vec());
        let full = Full {
            version: state.version(),
            event: event(b"", &json),
            json: Bytes::from(json),
        };
        *cached = Some(full.clone());
        full
    }
}

/// The `Host` values a server bound to `address` accepts: for a loopback
/// address, that address and `localhost` with its port; for any other
/// (served on purpose beyond this machine), any.
pub(crate) fn allowed_hosts(address: SocketAddr) -> Vec<String> {
    if !address.ip().is_loopback() {
        return Vec::new();
    }
    let port = address.port();
    vec![
        address.to_string(),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ]
}

/// The routes.
pub(crate) fn router(shared: Shared) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { page(INDEX, "text/html; charset=utf-8") }),
        )
        .route(
            "/app.js",
            get(|| async { page(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/style.css",
            get(|| async { page(STYLE, "text/css; charset=utf-8") }),
        )
        .route("/events", get(events))
        .route("/api/state", get(state))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            check_host,
        ))
        .layer(axum::middleware::map_response(no_sniffing))
        .with_state(shared)
}

/// Every answer — the page, the state, the stream, a refusal — tells the
/// browser to take its content type as given.
async fn no_sniffing(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn page(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn check_host(State(shared): State<Shared>, request: Request, next: Next) -> Response {
    if shared.hosts.is_empty() {
        return next.run(request).await;
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or_default();
    // Host names are case-insensitive (RFC 9110 section 4.2.3).
    if shared
        .hosts
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(host))
    {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            format!("this page answers requests for {} only\n", shared.hosts[0]),
        )
            .into_response()
    }
}

/// The whole state as JSON, for scripts (the same text every page's
/// first frame is).
async fn state(State(shared): State<Shared>) -> Response {
    let json = {
        let state = lock(&shared.state);
        shared.full(&state).json
    };
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        json,
    )
        .into_response()
}

/// Counts a stream while it lives.
struct StreamGuard(Arc<AtomicUsize>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The stream of frames (server-sent events): everything first, then
/// what changes at each poll (everything again if the page fell so far
/// behind that frames were dropped). At most [`MAX_STREAMS`] at once;
/// each sends the bytes made once for all.
async fn events(State(shared): State<Shared>) -> Response {
    if shared.streams.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
        shared.streams.fetch_sub(1, Ordering::SeqCst);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("at most {MAX_STREAMS} pages at once\n"),
        )
            .into_response();
    }
    let guard = StreamGuard(shared.streams.clone());
    // Subscribed under the lock the poll sends under: no change is missed
    // or sent twice.
    let (first, pushes) = {
        let state = lock(&shared.state);
        let mut first = vec![Push::Frame(shared.full(&state).event)];
        if let Some(why) = state.ended() {
            first.push(Push::end(why));
        }
        (first, shared.pushes.subscribe())
    };
    let stream = pushes_after(shared, first, pushes, guard);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// What one stream holds between the events it sends.
struct Streaming {
    queued: VecDeque<Bytes>,
    pushes: broadcast::Receiver<Push>,
    shared: Shared,
    _guard: StreamGuard,
    ended: bool,
}

/// `first`, then every push (everything again after falling so far behind
/// that pushes were dropped), a comment when idle, until the end.
fn pushes_after(
    shared: Shared,
    first: Vec<Push>,
    pushes: broadcast::Receiver<Push>,
    guard: StreamGuard,
) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let streaming = Streaming {
        queued: first.into_iter().map(Push::bytes).collect(),
        pushes,
        shared,
        _guard: guard,
        ended: false,
    };
    futures_util::stream::unfold(streaming, |mut streaming| async move {
        loop {
            if let Some(chunk) = streaming.queued.pop_front() {
                return Some((Ok(chunk), streaming));
            }
            if streaming.ended {
                return None;
            }
            let push = match tokio::time::timeout(KEEP_ALIVE, streaming.pushes.recv()).await {
                Err(_) => return Some((Ok(Bytes::from_static(b":\n\n")), streaming)),
                Ok(Ok(push)) => push,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => {
                    let state = lock(&streaming.shared.state);
                    streaming.pushes = streaming.pushes.resubscribe();
                    Push::Frame(streaming.shared.full(&state).event)
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => return None,
            };
            streaming.ended = matches!(push, Push::End(_));
            streaming.queued.push_back(push.bytes());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 pages connecting, and `/api/state`, share one serialization of
    /// the state until it changes (each used to make its own: 32 streams
    /// took a process from 431 MB to 2.7 GB).
    #[test]
    fn the_whole_state_is_made_once_per_change() {
        let shared = Shared::new(LiveState::default(), Vec::new());
        let mut state = lock(&shared.state);
        state.add_cluster("Cluster1", None);
        let first = shared.full(&state);
        for _ in 0..MAX_STREAMS {
            let again = shared.full(&state);
            assert_eq!(again.event.as_ptr(), first.event.as_ptr());
            assert_eq!(again.json.as_ptr(), first.json.as_ptr());
        }
        state.add_cluster("Cluster2", None);
        let changed = shared.full(&state);
        assert_ne!(changed.json.as_ptr(), first.json.as_ptr());
        assert!(String::from_utf8_lossy(&changed.json).contains("Cluster2"));
        assert_eq!(
            changed.event,
            Bytes::from(format!(
                "data: {}\n\n",
                String::from_utf8_lossy(&changed.json)
            ))
        );
    }
}
