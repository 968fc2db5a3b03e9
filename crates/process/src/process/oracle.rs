//! The oracle's side in a cluster process: answers the member actor's
//! [`FetchTruth`] with oracle queries to the execution clusters, backing
//! off from clusters whose queries fail.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcfed_actors::{FetchTruth, TruthFetched};
use mcfed_protocol::ClusterName;
use mcfed_transport::TruthClient;
use rustc_hash::FxHashMap;

/// Answers the forwarder's [`FetchTruth`] with oracle queries to the
/// execution clusters, numbered in one increasing sequence.
pub(super) struct Oracle {
    pub(super) client: Arc<TruthClient>,
    pub(super) next_seq: u64,
    pub(super) timeout: Duration,
    /// Clusters whose last query failed: not asked again before the
    /// instant, and the wait after the next failure (doubling up to
    /// [`ORACLE_BACKOFF_MAX`]), so a killed cluster does not hold up every
    /// session.
    pub(super) backoff: FxHashMap<ClusterName, (tokio::time::Instant, Duration)>,
    /// The incarnation of each peer, from its hellos.
    pub(super) incarnations: FxHashMap<ClusterName, u64>,
}

/// The longest a cluster whose oracle queries fail goes unasked.
pub(super) const ORACLE_BACKOFF_MAX: Duration = Duration::from_secs(5);

impl Actor for Oracle {
    type Context = Context<Self>;
}

/// A peer said hello: if it restarted, ask it again at once, on a new
/// connection.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct PeerHello {
    pub(super) peer: ClusterName,
    pub(super) incarnation: u64,
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
