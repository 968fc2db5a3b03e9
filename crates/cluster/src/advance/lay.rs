//! Laying the slots active and upcoming advance reservations hold on their
//! hosts. Each reservation first takes the free slots of its hosts with the
//! most free slots first, in configuration order; when that leaves one
//! short while reservations overlap on hosts (an earlier one took the only
//! host a later one has), the held slots are moved along augmenting paths
//! (a maximum flow from reservations to hosts, started from the greedy
//! laying) so that every reservation holds what its hosts can give it.

use crate::job::HostIndex;

/// How the search reached a claim: `Some(None)` as a start (it is short),
/// `Some(Some((previous, k, j)))` from claim `previous`, which would take
/// this claim's slots on its `k`th host, this claim's `j`th.
type Came = Option<Option<(usize, usize, usize)>>;

/// One reservation to lay: its hosts, the slots its own running jobs use
/// on each (by position), and its slots.
pub(crate) struct Claim<'a> {
    pub(crate) hosts: &'a [HostIndex],
    pub(crate) own: Vec<u32>,
    pub(crate) left: u32,
}

/// The free slots `claims` hold on each host, given each host's free
/// slots. A claim's own running jobs' slots count as its own (laid first):
/// they come back to it when those jobs end, so another reservation that
/// overlaps it may not count on them — which the free slots held show.
pub(crate) fn lay(claims: &[Claim<'_>], free: &[u32]) -> Vec<u32> {
    let mut own_all = vec![0u32; free.len()];
    for claim in claims {
        for (k, &host) in claim.hosts.iter().enumerate() {
            own_all[host] += claim.own[k];
        }
    }
    let capacity: Vec<u32> = free.iter().zip(&own_all).map(|(f, o)| f + o).collect();
    let mut held = own_all.clone();
    // taken[c][k]: slots claim c holds on its k-th host.
    let mut taken: Vec<Vec<u32>> = Vec::with_capacity(claims.len());
    let mut short = false;
    for claim in claims {
        let mut left = claim.left.saturating_sub(claim.own.iter().sum());
        let mut order: Vec<(u32, usize)> = claim
            .hosts
            .iter()
            .enumerate()
            .map(|(k, &host)| (capacity[host].saturating_sub(held[host]), k))
            .collect();
        order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(claim.hosts[a.1].cmp(&claim.hosts[b.1])));
        let mut mine = claim.own.clone();
        for (room, k) in order {
            let take = room.min(left);
            held[claim.hosts[k]] += take;
            mine[k] += take;
            left -= take;
        }
        short |= left > 0;
        taken.push(mine);
    }
    if short {
        while augment(claims, &capacity, &mut held, &mut taken) {}
    }
    held.iter().zip(&own_all).map(|(h, o)| h - o).collect()
}

/// Finds one path from a claim holding less than it should to a host with
/// free slots left, through hosts where other claims hold slots they could
/// hold elsewhere, and moves slots along it. False when there is none.
fn augment(claims: &[Claim<'_>], free: &[u32], held: &mut [u32], taken: &mut [Vec<u32>]) -> bool {
    let deficits: Vec<u32> = (0..claims.len())
        .map(|c| claims[c].left.saturating_sub(taken[c].iter().sum::<u32>()))
        .collect();
    // Breadth-first over claims; `came[c]` = (previous claim, its host k,
    // this claim's host index on that host) through which claim c was reached.
    let mut came: Vec<Came> = vec![None; claims.len()];
    let mut queue: std::collections::VecDeque<usize> = (0..claims.len())
        .filter(|&c| deficits[c] > 0)
        .inspect(|&c| came[c] = Some(None))
        .collect();
    let mut seen_host = vec![false; free.len()];
    while let Some(c) = queue.pop_front() {
        for (k, &host) in claims[c].hosts.iter().enumerate() {
            if std::mem::replace(&mut seen_host[host], true) {
                continue;
            }
            if free[host] > held[host] {
                push_along(claims, free, held, taken, &came, c, k, &deficits);
                return true;
            }
            for (other, claim) in claims.iter().enumerate() {
                if came[other].is_some() {
                    continue;
                }
                if let Some(j) = claim.hosts.iter().position(|&h| h == host) {
                    if taken[other][j] > 0 {
                        came[other] = Some(Some((c, k, j)));
                        queue.push_back(other);
                    }
                }
            }
        }
    }
    false
}

/// Moves slots along the path that ends with claim `last` taking free
/// slots on its `k`th host.
#[allow(clippy::too_many_arguments)]
fn push_along(
    claims: &[Claim<'_>],
    free: &[u32],
    held: &mut [u32],
    taken: &mut [Vec<u32>],
    came: &[Came],
    last: usize,
    k: usize,
    deficits: &[u32],
) {
    let end = claims[last].hosts[k];
    let mut amount = free[end] - held[end];
    let mut path = Vec::new();
    let mut at = last;
    while let Some(Some((previous, pk, j))) = came[at] {
        amount = amount.min(taken[at][j]);
        path.push((previous, pk, at, j));
        at = previous;
    }
    amount = amount.min(deficits[at]);
    taken[last][k] += amount;
    held[end] += amount;
    for (previous, pk, claim, j) in path {
        // `claim` gives up its slots on that host to `previous`.
        taken[claim][j] -= amount;
        taken[previous][pk] += amount;
    }
}
