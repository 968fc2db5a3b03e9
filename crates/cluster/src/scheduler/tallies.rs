//! The per-host tallies of the host-level limits: each user's slots on a
//! host (JL/U, a user's JL/P), each group's (a group's JL/P) and each
//! queue's (HJOB_LIMIT). A tally is kept only when some limit reads it
//! ([`Tracking`]), and an empty one is dropped, so a cluster without such
//! limits pays nothing for them.

use rustc_hash::FxHashMap;

use crate::job::{HostIndex, Placement, QueueIndex, UserId};
use crate::limits::Held;

use super::accounting::Change;

/// Which per-host tallies some limit needs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tracking {
    /// JL/U or a user's JL/P is configured.
    pub(crate) host_user: bool,
    /// A group's JL/P is configured.
    pub(crate) host_group: bool,
    /// HJOB_LIMIT is configured.
    pub(crate) host_queue: bool,
}

impl Tracking {
    /// Whether any host-level limit is configured.
    pub(crate) fn any_host_limit(&self) -> bool {
        self.host_user || self.host_group || self.host_queue
    }
}

/// Slots held on each host, per user, group and queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct HostTallies {
    /// Which tallies are kept.
    tracking: Tracking,
    user: FxHashMap<(HostIndex, UserId), Held>,
    group: FxHashMap<(HostIndex, usize), Held>,
    queue: FxHashMap<(HostIndex, QueueIndex), u32>,
}

impl HostTallies {
    /// No slots held yet; tallies kept as `tracking` says.
    pub(crate) fn new(tracking: Tracking) -> Self {
        HostTallies {
            tracking,
            ..HostTallies::default()
        }
    }

    /// Which tallies are kept.
    #[inline]
    pub(crate) fn tracking(&self) -> Tracking {
        self.tracking
    }

    /// Checks the kept tallies against `user` and `queue`, counted afresh
    /// from the jobs (an empty tally is not kept).
    pub(crate) fn audit(
        &self,
        user: &FxHashMap<(HostIndex, UserId), Held>,
        queue: &FxHashMap<(HostIndex, QueueIndex), u32>,
    ) -> Result<(), String> {
        if self.tracking.host_user {
            if let Some(key) = self
                .user
                .iter()
                .find_map(|(key, held)| (user.get(key) != Some(held)).then_some(key))
            {
                return Err(format!("per-host user tally {key:?} is stale"));
            }
            let nonempty = user.values().filter(|held| !held.is_empty()).count();
            if nonempty != self.user.len() {
                return Err("per-host user tallies are missing".to_owned());
            }
        }
        if self.tracking.host_queue && *queue != self.queue {
            return Err("per-host queue tallies are stale".to_owned());
        }
        Ok(())
    }

    /// A job of `user` (a member of `groups`) in `queue` moves its slots on
    /// one host by `change`.
    pub(crate) fn account(
        &mut self,
        place: Placement,
        user: UserId,
        groups: &[usize],
        queue: QueueIndex,
        change: Change,
    ) {
        if self.tracking.host_user {
            account_held(&mut self.user, (place.host, user), place.slots, change);
        }
        if self.tracking.host_group {
            for &group in groups {
                account_held(&mut self.group, (place.host, group), place.slots, change);
            }
        }
        if self.tracking.host_queue {
            let key = (place.host, queue);
            let held = self.queue.entry(key).or_default();
            Change::apply(change.held, held, place.slots);
            if *held == 0 {
                self.queue.remove(&key);
            }
        }
    }

    /// `user`'s slots on `host` (kept when `tracking.host_user`).
    pub(crate) fn user_held(&self, host: HostIndex, user: UserId) -> Option<&Held> {
        self.user.get(&(host, user))
    }

    /// Slots of the members of `group` on `host` (kept when
    /// `tracking.host_group`).
    pub(crate) fn group_held(&self, host: HostIndex, group: usize) -> Option<&Held> {
        self.group.get(&(host, group))
    }

    /// `queue`'s slots on `host` (kept when `tracking.host_queue`).
    pub(crate) fn queue_held(&self, host: HostIndex, queue: QueueIndex) -> u32 {
        self.queue.get(&(host, queue)).copied().unwrap_or(0)
    }
}

fn account_held<K: std::hash::Hash + Eq + Copy>(
    tallies: &mut FxHashMap<K, Held>,
    key: K,
    slots: u32,
    change: Change,
) {
    let held = tallies.entry(key).or_default();
    change.apply_held(held, slots);
    if held.is_empty() {
        tallies.remove(&key);
    }
}
