//! Benchmarks of absolute priority scheduling on the dispatch path, next to
//! `dispatch.rs`'s `dispatch_cycle`:
//!
//! - `dispatch_cycle_aps`: `dispatch_cycle`'s cluster (5,000 hosts × 32
//!   slots, two slot pools, six fairshare and eight first-come-first-served
//!   queues, 1,000 users, 100,000 pending jobs, every job with `-sp` and
//!   `rusage[mem]`), with (`true`) and without (`false`) APS_PRIORITY on its
//!   14 queues outside the pools: FS, JPRIORITY, PROC and MEM on the
//!   fairshare queues; JPRIORITY, QPRIORITY, PROC and MEM on the others;
//!   JOB_PRIORITY_OVER_TIME set. One `Cluster::advance` over all of them.
//! - `deep_queue_pass`: a full cluster (32 hosts × 32 slots, all busy) with
//!   10,000 jobs pending in one queue of 200 users; one job ends, and the
//!   pass that follows runs (one job starts, the rest pend): the cost of
//!   the pass of one event, for a first-come-first-served queue (`fcfs`), a
//!   FAIRSHARE queue (`fairshare`) and a FAIRSHARE queue with APS_PRIORITY
//!   weighing FS, JPRIORITY, PROC, MEM and SWAP with a grace period
//!   (`aps`).
//!
//! Run: `cargo bench -p mcfed-cluster --bench aps`; instruction counts:
//! docs/performance.md, "APS".

use divan::{Bencher, black_box};
use mcfed_protocol::SimTime;

#[path = "common/aps_shapes.rs"]
mod shapes;
use shapes::{DEEP, PENDING_JOBS, deep_cluster, loaded_big_cluster};

fn main() {
    divan::main();
}

/// One dispatch pass over 100,000 pending jobs, without and with APS.
#[divan::bench(args = [false, true], sample_count = 10, sample_size = 1)]
fn dispatch_cycle_aps(bencher: Bencher, aps: bool) {
    let full = loaded_big_cluster(aps);
    bencher
        .counter(divan::counter::ItemsCount::new(PENDING_JOBS))
        .with_inputs(|| (full.clone(), Vec::with_capacity(PENDING_JOBS)))
        .bench_local_values(|(mut cluster, mut transitions)| {
            cluster.advance(SimTime::ZERO, &mut transitions);
            black_box(transitions.len());
            (cluster, transitions)
        });
}

/// The pass after one job of a full cluster ends, 10,000 jobs pending.
#[divan::bench(args = DEEP, sample_count = 20, sample_size = 1)]
fn deep_queue_pass(bencher: Bencher, kind: &str) {
    let full = deep_cluster(kind);
    bencher
        .with_inputs(|| (full.clone(), Vec::with_capacity(4)))
        .bench_local_values(|(mut cluster, mut transitions)| {
            cluster.advance(SimTime::from_secs(60), &mut transitions);
            black_box(transitions.len());
            (cluster, transitions)
        });
}
