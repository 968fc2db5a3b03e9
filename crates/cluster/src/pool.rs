//! Queue-based fairshare (seed `000_36a42b5a2a658b91.txt`): slot pools and
//! the slots each queue of a pool deserves.
//!
//! A pool's total is the slots its queues' jobs run on plus the free slots
//! of its hosts, capped by MAX_SLOTS_IN_POOL. [`allocate`] divides it:
//!
//! 1. In allocation order (largest SLOT_SHARE first; among equal shares, the
//!    queue that has used least of its share so far), each queue with work
//!    gets `ceil(base × share / 100)` slots, where `base` is the total, but
//!    never more than is left: 12 slots at 50/30/20 give 6, 4, then 2 (not
//!    3), and 15 give 8, 5, 2.
//! 2. No queue gets more than it can use: its running slots plus its pending
//!    slots, capped by its QJOB_LIMIT. What it cannot use is left over.
//! 3. Leftover slots go round again to the queues that can use more, as a
//!    percentage of what is left (so with queue2 idle, 15 slots at 50/20
//!    give 8 and 3, then 2 and 1 of the 4 left, then the last one to the
//!    first queue: 11 and 4).
//!
//! The rounds end when nothing is left or every queue has what it can use.
//! Each round hands out at least one slot, and after
//! [`PROPORTIONAL_AFTER_ROUNDS`] rounds (only reachable when the shares of
//! the queues still wanting slots add up to far less than 100%) the rest is
//! divided in proportion to their shares, which ends within one round per
//! queue.

/// One queue of a pool, as [`allocate`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolClaim {
    /// SLOT_SHARE, in percent.
    pub share: u32,
    /// The most slots it can use now.
    pub need: u32,
}

/// Rounds of percentage-of-what-is-left before the rest is divided in
/// proportion to the shares.
pub const PROPORTIONAL_AFTER_ROUNDS: usize = 64;

fn ceil_share(base: u64, share: u64, whole: u64) -> u64 {
    (base * share).div_ceil(whole)
}

/// The slots each queue deserves out of `total`, for claims given in
/// allocation order. The result never adds up to more than `total`, and no
/// queue gets more than its need.
pub fn allocate(total: u32, claims: &[PoolClaim]) -> Vec<u32> {
    let mut granted = vec![0u32; claims.len()];
    let mut remaining = u64::from(total);
    let mut rounds = 0;
    while remaining > 0 {
        let wanting: Vec<usize> = (0..claims.len())
            .filter(|&i| granted[i] < claims[i].need && claims[i].share > 0)
            .collect();
        if wanting.is_empty() {
            break;
        }
        let unmet: u64 = wanting
            .iter()
            .map(|&i| u64::from(claims[i].need - granted[i]))
            .sum();
        if unmet <= remaining {
            for i in wanting {
                granted[i] = claims[i].need;
            }
            break;
        }
        let base = remaining;
        let whole = if rounds < PROPORTIONAL_AFTER_ROUNDS {
            100
        } else {
            wanting
                .iter()
                .map(|&i| u64::from(claims[i].share))
                .sum::<u64>()
        };
        for i in wanting {
            if remaining == 0 {
                break;
            }
            let want = ceil_share(base, u64::from(claims[i].share), whole);
            let room = u64::from(claims[i].need - granted[i]);
            let give = want.min(remaining).min(room);
            granted[i] += u32::try_from(give).unwrap_or(u32::MAX);
            remaining -= give;
        }
        rounds += 1;
    }
    granted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(shares: &[u32]) -> Vec<PoolClaim> {
        shares
            .iter()
            .map(|&share| PoolClaim {
                share,
                need: u32::MAX,
            })
            .collect()
    }

    /// Seed 000: two hosts of MXJ 6, shares 50/30/20: 6, 4 (3.6 rounded
    /// up), and 2 (2.4 would round up to 3, but the total cannot pass 12).
    #[test]
    fn the_seeds_three_queues_on_twelve_slots() {
        assert_eq!(allocate(12, &busy(&[50, 30, 20])), vec![6, 4, 2]);
    }

    /// 15 slots at 50/30/20: 8, 5, 2.
    #[test]
    fn fifteen_slots_at_fifty_thirty_twenty() {
        assert_eq!(allocate(15, &busy(&[50, 30, 20])), vec![8, 5, 2]);
    }

    /// A queue with no work leaves its slots to the others: with the 30%
    /// queue idle, 15 slots go 8 + 2 + 1 = 11 and 3 + 1 = 4.
    #[test]
    fn an_idle_queue_leaves_its_slots_to_the_others() {
        let claims = [
            PoolClaim {
                share: 50,
                need: 1000,
            },
            PoolClaim { share: 30, need: 0 },
            PoolClaim {
                share: 20,
                need: 1000,
            },
        ];
        assert_eq!(allocate(15, &claims), vec![11, 0, 4]);
    }

    /// Seed 000: a queue eligible for 50 with a job limit of 40 runs 40; the
    /// other 10 go to the other queues.
    #[test]
    fn a_job_limit_leaves_its_remainder_to_the_others() {
        let claims = [
            PoolClaim {
                share: 50,
                need: 40,
            },
            PoolClaim {
                share: 50,
                need: 1000,
            },
        ];
        assert_eq!(allocate(100, &claims), vec![40, 60]);
    }

    #[test]
    fn one_busy_queue_takes_everything() {
        let claims = [
            PoolClaim {
                share: 10,
                need: 1_000_000,
            },
            PoolClaim { share: 90, need: 0 },
        ];
        assert_eq!(allocate(160_000, &claims), vec![160_000, 0]);
    }

    #[test]
    fn small_shares_still_end_quickly_and_add_up() {
        let claims = busy(&[1, 1, 1]);
        let granted = allocate(160_000, &claims);
        assert_eq!(granted.iter().sum::<u32>(), 160_000);
        assert!(granted.iter().all(|&g| g >= 53_000), "{granted:?}");
    }

    #[test]
    fn needs_below_the_total_are_met_exactly() {
        let claims = [
            PoolClaim { share: 50, need: 2 },
            PoolClaim { share: 50, need: 3 },
        ];
        assert_eq!(allocate(12, &claims), vec![2, 3]);
        assert_eq!(allocate(0, &claims), vec![0, 0]);
    }
}
