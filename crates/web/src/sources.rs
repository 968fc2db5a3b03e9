//! The clusters the live page watches, and the poll that asks each of them
//! what it holds: the process the page runs in (`mcfed cluster --web`) is
//! read directly; the processes of a launched federation (`mcfed launch
//! --web`) are asked over the admin channel, with the launcher's
//! certificate. Either way the answer is a [`WatchReply`], built by the
//! same code in the process; nothing asked changes anything.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcfed_admin::{AdminRequest, AdminResponse, WatchReply};
use mcfed_process::client::Session;
use mcfed_process::client::Started;
use mcfed_process::process::LocalWatch;
use mcfed_transport::FederationTls;
use tokio::sync::{broadcast, mpsc};

use crate::server::Push;

use crate::state::LiveState;

/// How long connecting to a process may take before the poll gives up on
/// it until the next one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a process may take to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// One watched cluster.
pub(crate) enum Source {
    /// The process the page runs in.
    Local(LocalWatch),
    /// A process reached over the admin channel.
    Remote {
        tls: Arc<FederationTls>,
        cluster: String,
        address: String,
        session: Option<Session>,
    },
}

impl Source {
    /// What the cluster holds now, with its decision records from `from`
    /// on.
    async fn watch(&mut self, from: usize) -> Result<WatchReply, String> {
        match self {
            Source::Local(local) => local.watch(from).await,
            Source::Remote {
                tls,
                cluster,
                address,
                session,
            } => {
                let open = match session.take() {
                    Some(open) => open,
                    None => Session::connect(tls, cluster, address, CONNECT_TIMEOUT)
                        .await
                        .map_err(|error| error.to_string())?,
                };
                let request = AdminRequest::Watch { from };
                match tokio::time::timeout(ANSWER_TIMEOUT, open.ask(&request)).await {
                    Ok(Ok(AdminResponse::Watch(reply))) => {
                        *session = Some(open);
                        Ok(reply)
                    }
                    // A broken or stuck connection is dropped and made
                    // again at the next poll (the process may have been
                    // started again after an outage).
                    Ok(Ok(_)) => Err(format!("cluster `{cluster}` gave an unexpected answer")),
                    Ok(Err(error)) => Err(error.to_string()),
                    Err(_) => Err(format!(
                        "no answer within {}",
                        mcfed_protocol::words::duration(ANSWER_TIMEOUT)
                    )),
                }
            }
        }
    }
}

/// Where new clusters to watch come from.
pub(crate) struct Arrivals {
    /// The process the page runs in, once it runs.
    pub(crate) local: Option<mpsc::UnboundedReceiver<LocalWatch>>,
    /// A launched federation's processes, once they run.
    pub(crate) launched: Option<mpsc::UnboundedReceiver<Started>>,
}

impl Arrivals {
    /// The next clusters to watch, with their addresses if known; `None`
    /// once nothing more can come.
    async fn next(&mut self) -> Option<Vec<(Source, Option<String>)>> {
        loop {
            tokio::select! {
                local = recv(&mut self.local) => match local {
                    Some(local) => return Some(vec![(Source::Local(local), None)]),
                    None => self.local = None,
                },
                launched = recv(&mut self.launched) => match launched {
                    Some(started) => {
                        return Some(
                            started
                                .clusters
                                .into_iter()
                                .map(|(cluster, address)| {
                                    let known = Some(address.clone());
                                    let source = Source::Remote {
                                        tls: started.tls.clone(),
                                        cluster,
                                        address,
                                        session: None,
                                    };
                                    (source, known)
                                })
                                .collect(),
                        );
                    }
                    None => self.launched = None,
                },
            }
            if self.local.is_none() && self.launched.is_none() {
                return None;
            }
        }
    }
}

/// Receives from `receiver`, or waits forever if there is none.
async fn recv<T>(receiver: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

fn cluster_of(source: &Source) -> &str {
    match source {
        Source::Local(local) => local.cluster(),
        Source::Remote { cluster, .. } => cluster,
    }
}

/// Polls every watched cluster every `every`, takes their answers into
/// `state` and sends what changed to the pages (as one JSON text, made
/// once for all of them). Runs until the runtime stops.
pub(crate) async fn poll(
    state: Arc<Mutex<LiveState>>,
    pushes: broadcast::Sender<Push>,
    mut arrivals: Arrivals,
    every: Duration,
) {
    let mut sources: Vec<(usize, Source)> = Vec::new();
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut open = true;
    loop {
        tokio::select! {
            arrived = arrivals.next(), if open => match arrived {
                Some(arrived) => {
                    let mut state = lock(&state);
                    for (source, address) in arrived {
                        let index = state.add_cluster(cluster_of(&source), address);
                        sources.push((index, source));
                    }
                }
                None => open = false,
            },
            _ = ticks.tick() => {
                if sources.is_empty() || lock(&state).ended().is_some() {
                    continue;
                }
                let asks: Vec<usize> = {
                    let state = lock(&state);
                    sources.iter().map(|(index, _)| state.next_decision(*index)).collect()
                };
                let answers = futures_util::future::join_all(
                    sources
                        .iter_mut()
                        .zip(asks)
                        .map(|((index, source), from)| async move {
                            (*index, source.watch(from).await)
                        }),
                )
                .await;
                let mut state = lock(&state);
                if state.ended().is_some() {
                    // The end came while these were asked: what they met
                    // (the processes shutting down) is not shown.
                    continue;
                }
                for (index, answer) in answers {
                    state.update(index, answer);
                }
                // Sent under the lock: a page that connects takes its full
                // frame under it too, so it gets each change exactly once.
                let _ = pushes.send(changes(&mut state));
            }
        }
    }
}

/// What changed in `state` since the last frame, as the event every page
/// is sent (made once for all).
pub(crate) fn changes(state: &mut LiveState) -> Push {
    match serde_json::to_vec(&state.take_changes()) {
        Ok(json) => Push::frame(&json),
        Err(error) => {
            tracing::warn!(%error, "live page frame not made");
            Push::frame(b"{}")
        }
    }
}

/// Locks the state (a panic elsewhere while it was held leaves it usable:
/// it is only ever replaced field by field).
pub(crate) fn lock(state: &Mutex<LiveState>) -> std::sync::MutexGuard<'_, LiveState> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
