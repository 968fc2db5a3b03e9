//! The host book: every host with the slots its running jobs use and the
//! jobs placed on it, and the host sets queues dispatch to, with their
//! free-slot indexes. [`HostBook::account`] keeps the two in step as a job
//! takes or gives back slots.

use std::ops::Index;

use crate::config::HostConfig;
use crate::hostset::HostSet;
use crate::job::{HostIndex, JobId, Placement};

use super::accounting::Change;

/// A host and its jobs.
#[derive(Clone, Debug)]
pub(crate) struct Host {
    pub(crate) config: HostConfig,
    /// Slots counted against MXJ (running jobs' slots).
    pub(crate) used: u32,
    /// GPUs held by running jobs.
    pub(crate) used_gpus: u32,
    /// Jobs placed on the host, running or suspended.
    pub(crate) jobs: Vec<JobId>,
    /// Host sets the host belongs to.
    pub(crate) host_sets: Vec<usize>,
    /// Its name, shared (a journal names every running job's hosts).
    pub(crate) shared_name: std::sync::Arc<str>,
    /// It has failed and not recovered (it is closed meanwhile).
    pub(crate) failed: bool,
}

impl Host {
    /// An empty host.
    pub(crate) fn new(config: HostConfig) -> Self {
        Host {
            shared_name: config.name.as_str().into(),
            config,
            used: 0,
            used_gpus: 0,
            jobs: Vec::new(),
            host_sets: Vec::new(),
            failed: false,
        }
    }

    /// Slots free under MXJ (none on a closed host).
    pub(crate) fn free(&self) -> u32 {
        if self.config.closed {
            0
        } else {
            self.config.max_slots.saturating_sub(self.used)
        }
    }

    /// Whether `gpus` more GPUs are free on the host.
    pub(crate) fn has_gpus(&self, gpus: u32) -> bool {
        gpus == 0 || self.config.gpus.saturating_sub(self.used_gpus) >= gpus
    }

    /// Whether the host offers every one of `resources`.
    pub(crate) fn has_resources(&self, resources: &[String]) -> bool {
        resources
            .iter()
            .all(|resource| self.config.offers(resource))
    }

    /// Running slots over MXJ, as an integer ratio (0 to 1,000,000).
    pub(crate) fn load(&self) -> u64 {
        u64::from(self.used) * 1_000_000 / u64::from(self.config.max_slots.max(1))
    }
}

/// The cluster's hosts and host sets.
#[derive(Clone, Debug)]
pub(crate) struct HostBook {
    /// Hosts in configuration order (a host's index is its place here).
    list: Vec<Host>,
    /// Host sets, shared by queues with the same HOSTS.
    sets: Vec<HostSet>,
    /// Per host set, its slot group: sets that share a host (directly or
    /// through other sets) are in one group, whose number is the lowest
    /// set index in it.
    slot_groups: Vec<u32>,
}

impl HostBook {
    /// Empty hosts and the sets built over them: each host learns its sets,
    /// and each set indexes its open hosts' free slots.
    pub(crate) fn new(mut list: Vec<Host>, mut sets: Vec<HostSet>) -> Self {
        for (set_index, set) in sets.iter_mut().enumerate() {
            for &host in &set.members.clone() {
                list[host].host_sets.push(set_index);
                if !list[host].config.closed {
                    let slots = list[host].config.max_slots;
                    set.add_open_host(host, slots, slots);
                }
            }
        }
        let slot_groups = slot_groups(&list, sets.len());
        HostBook {
            list,
            sets,
            slot_groups,
        }
    }

    /// The host sets, by number.
    #[inline]
    pub(crate) fn sets(&self) -> &[HostSet] {
        &self.sets
    }

    /// Host set `set`.
    #[inline]
    pub(crate) fn set(&self, set: usize) -> &HostSet {
        &self.sets[set]
    }

    /// Host set `set`'s slot group (the lowest set index of the sets that
    /// share hosts with it, directly or through others).
    #[inline]
    pub(crate) fn slot_group(&self, set: usize) -> u32 {
        self.slot_groups[set]
    }

    /// The number of hosts.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Every host, in configuration order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Host> {
        self.list.iter()
    }

    /// Job `id`'s slots (and `gpus` GPUs) on one host move by `change`:
    /// the host's used slots and GPUs (and so its sets' free-slot indexes)
    /// follow running or stopped, its job list follows holding.
    pub(crate) fn account(&mut self, id: JobId, place: Placement, gpus: u32, change: Change) {
        let host = &mut self.list[place.host];
        Change::apply(change.occupy, &mut host.used_gpus, gpus);
        if change.occupy != 0 {
            let old = host.free();
            Change::apply(change.occupy, &mut host.used, place.slots);
            let new = host.free();
            if !host.config.closed {
                for &set in &host.host_sets {
                    self.sets[set].update_free(place.host, old, new);
                }
            }
        }
        if change.held > 0 {
            host.jobs.push(id);
        } else if change.held < 0 {
            host.jobs.retain(|&other| other != id);
        }
    }

    /// Open host `host`, with no job left, fails: it is closed, and its
    /// sets no longer count its slots.
    pub(crate) fn fail(&mut self, host: HostIndex) {
        let state = &mut self.list[host];
        let (slots, free) = (state.config.max_slots, state.free());
        state.config.closed = true;
        state.failed = true;
        for &set in &state.host_sets {
            self.sets[set].remove_open_host(host, slots, free);
        }
    }

    /// Failed host `host` recovers: open again, in its sets' counts.
    pub(crate) fn recover(&mut self, host: HostIndex) {
        let state = &mut self.list[host];
        state.config.closed = false;
        state.failed = false;
        let (slots, free) = (state.config.max_slots, state.free());
        for &set in &state.host_sets {
            self.sets[set].add_open_host(host, slots, free);
        }
    }

    /// The slots of `placement` on open hosts of host set `set`.
    pub(crate) fn reachable_slots(&self, set: usize, placement: &[Placement]) -> u32 {
        let set = &self.sets[set];
        placement
            .iter()
            .filter(|place| set.contains(place.host) && !self.list[place.host].config.closed)
            .map(|place| place.slots)
            .sum()
    }
}

/// The slot group of each of `set_count` host sets over `hosts`: the
/// connected components of "shares a host", each named by its lowest set.
fn slot_groups(hosts: &[Host], set_count: usize) -> Vec<u32> {
    let mut parent: Vec<usize> = (0..set_count).collect();
    fn root(parent: &mut [usize], mut set: usize) -> usize {
        while parent[set] != set {
            parent[set] = parent[parent[set]];
            set = parent[set];
        }
        set
    }
    for host in hosts {
        if let Some((&first, rest)) = host.host_sets.split_first() {
            for &other in rest {
                let (a, b) = (root(&mut parent, first), root(&mut parent, other));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    (0..set_count)
        .map(|set| u32::try_from(root(&mut parent, set)).unwrap_or(u32::MAX))
        .collect()
}

impl Index<HostIndex> for HostBook {
    type Output = Host;

    fn index(&self, host: HostIndex) -> &Host {
        &self.list[host]
    }
}
