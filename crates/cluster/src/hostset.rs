//! The set of hosts a queue dispatches to, indexed by free slots.
//!
//! Queues with the same HOSTS share one [`HostSet`]. It keeps the hosts with
//! free slots ordered from most to fewest free, so a dispatch takes the
//! least-loaded hosts first without scanning every host, and it keeps the
//! totals the queue's counters need.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use crate::job::HostIndex;

/// Hosts of one or more queues, with their free slots.
#[derive(Clone, Debug)]
pub(crate) struct HostSet {
    /// The member hosts, in configuration order.
    pub(crate) members: Vec<HostIndex>,
    /// Membership by host index, for constant-time lookups.
    contains: Vec<bool>,
    /// Open member hosts with at least one free slot, most free first.
    by_free: BTreeSet<(Reverse<u32>, HostIndex)>,
    /// Slots of open member hosts.
    pub(crate) total_slots: u64,
    /// Free slots of open member hosts.
    pub(crate) free_slots: u64,
}

impl HostSet {
    pub(crate) fn new(members: Vec<HostIndex>, host_count: usize) -> Self {
        let mut contains = vec![false; host_count];
        for &host in &members {
            contains[host] = true;
        }
        HostSet {
            members,
            contains,
            by_free: BTreeSet::new(),
            total_slots: 0,
            free_slots: 0,
        }
    }

    pub(crate) fn contains(&self, host: HostIndex) -> bool {
        self.contains.get(host).copied().unwrap_or(false)
    }

    /// Adds an open host with `slots` slots of which `free` are free.
    pub(crate) fn add_open_host(&mut self, host: HostIndex, slots: u32, free: u32) {
        self.total_slots += u64::from(slots);
        self.free_slots += u64::from(free);
        if free > 0 {
            self.by_free.insert((Reverse(free), host));
        }
    }

    /// Takes out an open host with `slots` slots of which `free` are free
    /// (it closes).
    pub(crate) fn remove_open_host(&mut self, host: HostIndex, slots: u32, free: u32) {
        self.total_slots -= u64::from(slots);
        self.free_slots -= u64::from(free);
        if free > 0 {
            self.by_free.remove(&(Reverse(free), host));
        }
    }

    /// Records that an open member host went from `old` to `new` free slots.
    pub(crate) fn update_free(&mut self, host: HostIndex, old: u32, new: u32) {
        if old > 0 {
            self.by_free.remove(&(Reverse(old), host));
        }
        if new > 0 {
            self.by_free.insert((Reverse(new), host));
        }
        self.free_slots = self.free_slots + u64::from(new) - u64::from(old);
    }

    /// Open member hosts with free slots, most free first, with their free
    /// slots.
    pub(crate) fn hosts_with_free_slots(&self) -> impl Iterator<Item = (HostIndex, u32)> + '_ {
        self.by_free
            .iter()
            .map(|&(Reverse(free), host)| (host, free))
    }
}

impl HostSet {
    /// Checks the index against each open member's free slots.
    pub(crate) fn audit(&self, open_free: impl Fn(HostIndex) -> Option<u32>) -> Result<(), String> {
        let mut free_total = 0u64;
        let mut indexed = 0usize;
        for &host in &self.members {
            let Some(free) = open_free(host) else {
                continue;
            };
            free_total += u64::from(free);
            if free > 0 {
                indexed += 1;
                if !self.by_free.contains(&(Reverse(free), host)) {
                    return Err(format!("host {host} with {free} free slots is not indexed"));
                }
            }
        }
        if indexed != self.by_free.len() {
            return Err(format!(
                "{} hosts indexed, {indexed} have free slots",
                self.by_free.len()
            ));
        }
        if free_total != self.free_slots {
            return Err(format!(
                "free slots tally {} but hosts have {free_total}",
                self.free_slots
            ));
        }
        Ok(())
    }
}
