//! A user's dynamic priority in a fairshare queue at a time: `at`,
//! `cluster`, `queue`, `user`, `priority`, within `tolerance` (default
//! 0.001).

use mcfed_protocol::{ClusterName, QueueName, SimTime};

use super::{DEFAULT_TOLERANCE, Entry, Kind};
use crate::format::RawExpect;

/// At `at`, a user's dynamic priority in a fairshare queue is `priority`,
/// within `tolerance`.
#[derive(Clone, Debug, PartialEq)]
pub struct UserPriority {
    /// The cluster.
    pub cluster: ClusterName,
    /// The queue.
    pub queue: QueueName,
    /// The user.
    pub user: String,
    /// When.
    pub at: SimTime,
    /// The expected priority.
    pub priority: f64,
    /// How far off it may be.
    pub tolerance: f64,
}

impl Kind for UserPriority {
    const NAME: &'static str = "a user's dynamic priority";
    const KEYS: &'static [&'static str] =
        &["at", "cluster", "queue", "user", "priority", "tolerance"];

    fn claims(raw: &RawExpect) -> bool {
        raw.priority.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let (cluster, queue, at) = entry.queue_at()?;
        let user = entry.required(&raw.user, "user")?.clone();
        let priority = raw.priority.unwrap_or_default();
        let tolerance = raw.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            entry.problem("tolerance", "tolerance must be a number of at least 0");
            return None;
        }
        let (spec, config) = entry.queue_config(&cluster, &queue)?;
        match &config.fairshare {
            None => {
                entry.problem(
                    "queue",
                    format!("queue `{queue}` has no FAIRSHARE, so no user priorities"),
                );
                return None;
            }
            Some(shares) if !has_account(shares, &spec.config.user_groups, &user) => {
                entry.problem(
                    "user",
                    format!("user `{user}` has no shares in queue `{queue}`"),
                );
                return None;
            }
            Some(_) => {}
        }
        Some(UserPriority {
            cluster,
            queue,
            user,
            at,
            priority,
            tolerance,
        })
    }
}

/// Whether `name` (a user, or a group named in the shares) has a share
/// account in a queue with `shares`, with lsb.users' `groups` (a directory
/// that does not build is refused elsewhere; its groups are then unknown).
fn has_account(
    shares: &mcfed_cluster::UserShares,
    groups: &[mcfed_cluster::UserGroupConfig],
    name: &str,
) -> bool {
    use mcfed_cluster::fairshare::{GroupDirectory, ShareTree};
    let directory = GroupDirectory::build(groups).unwrap_or_default();
    ShareTree::new(shares.clone(), &directory).has_account(name, &directory)
}
