//! The HTTP side of the live page: the page itself (static files embedded
//! in the binary), its stream of frames (server-sent events) and the state
//! as JSON. Every route answers GET (and HEAD) only: axum answers any other
//! method with 405, and nothing here changes anything. A page served on a
//! loopback address answers only requests naming that address (or
//! `localhost`) as their host, so that another web site cannot read it
//! through a DNS name rebound to 127.0.0.1.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::stream::Stream;
use tokio::sync::broadcast;

use crate::sources::lock;
use crate::state::LiveState;

/// The most pages streaming at once; more are told to come back later
/// (each holds a connection and a queue of frames).
pub const MAX_STREAMS: usize = 32;

const INDEX: &str = include_str!("../static/index.html");
const SCRIPT: &str = include_str!("../static/app.js");
const STYLE: &str = include_str!("../static/style.css");

/// No fetch beyond this server, no inline script: the page is what the
/// binary embeds.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// What is pushed to every page.
#[derive(Clone, Debug)]
pub(crate) enum Push {
    /// A frame (JSON).
    Frame(Arc<str>),
    /// The watched processes stopped, for this reason: the last message.
    End(Arc<str>),
}

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) state: Arc<Mutex<LiveState>>,
    pub(crate) pushes: broadcast::Sender<Push>,
    pub(crate) streams: Arc<AtomicUsize>,
    /// The hosts a request may name (empty: any).
    pub(crate) hosts: Arc<Vec<String>>,
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
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            check_host,
        ))
        .with_state(shared)
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
    if shared.hosts.iter().any(|allowed| allowed == host) {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            format!("this page answers requests for {} only\n", shared.hosts[0]),
        )
            .into_response()
    }
}

/// The whole state as JSON, for scripts (and as the page's first frame).
async fn state(State(shared): State<Shared>) -> Response {
    let frame = lock(&shared.state).full_frame();
    match serde_json::to_string(&frame) {
        Ok(json) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            json,
        )
            .into_response(),
        Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
    }
}

/// Counts a stream while it lives.
struct StreamGuard(Arc<AtomicUsize>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The stream of frames: everything first, then what changes at each poll
/// (everything again if the page fell so far behind that frames were
/// dropped).
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
        let mut first = vec![Push::Frame(full_json(&state))];
        if let Some(why) = state.ended() {
            first.push(Push::End(why.into()));
        }
        (first, shared.pushes.subscribe())
    };
    let stream = pushes_after(shared, first, pushes, guard);
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(10)))
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn full_json(state: &LiveState) -> Arc<str> {
    serde_json::to_string(&state.full_frame())
        .unwrap_or_else(|_| "{}".to_owned())
        .into()
}

/// `first`, then every push (everything again after falling so far behind
/// that pushes were dropped), until the end.
fn pushes_after(
    shared: Shared,
    first: Vec<Push>,
    pushes: broadcast::Receiver<Push>,
    guard: StreamGuard,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let queued: std::collections::VecDeque<Push> = first.into();
    futures_util::stream::unfold(
        (queued, pushes, shared, guard, false),
        |(mut queued, mut pushes, shared, guard, ended)| async move {
            if ended {
                return None;
            }
            let push = match queued.pop_front() {
                Some(push) => push,
                None => match pushes.recv().await {
                    Ok(push) => push,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let state = lock(&shared.state);
                        pushes = pushes.resubscribe();
                        Push::Frame(full_json(&state))
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
            };
            let (event, ended) = match push {
                Push::Frame(json) => (Event::default().data(&*json), false),
                Push::End(why) => (Event::default().event("end").data(&*why), true),
            };
            Some((Ok(event), (queued, pushes, shared, guard, ended)))
        },
    )
}
