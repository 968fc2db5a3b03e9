//! What a journal compaction costs the member's thread: a one-slot cluster
//! holding N pending jobs (the held-jobs benchmark's shape, built
//! in-process), its snapshot encoded straight from the member
//! (`Member::snapshot_view`, what a cluster process does) against the
//! state copied first (`Member::durable_state`, then encoded: what it did
//! before), and in slices of 20,000 jobs (`SnapshotBuilder`: what a
//! cluster process does between inputs), its beginning (the jobs are
//! walked where they are kept: no list of them made), its longest slice
//! and its end:
//! the part that needs the member (on the member's thread) and the rest
//! (`SnapshotBuilder::finish_later`: each job's newest entry kept and the
//! bytes joined, on the journal's snapshot thread). Prints each three
//! times.
//!
//! ```sh
//! cargo run --release -p mcfed-federation --example snapshot_cost -- 1000000
//! ```

use std::io::Write;
use std::time::{Duration, Instant};

use mcfed_federation::SnapshotBuilder;

mod common;

fn main() {
    let jobs: usize = match std::env::args().nth(1).map(|arg| arg.parse()) {
        None => 1_000_000,
        Some(Ok(jobs)) => jobs,
        Some(Err(error)) => {
            eprintln!("snapshot_cost: JOBS must be a count: {error}");
            std::process::exit(2);
        }
    };
    let member = common::held(&common::config(), jobs, true);
    let mut out = std::io::stdout().lock();
    for _ in 0..3 {
        let start = Instant::now();
        let streamed = postcard::to_allocvec(&member.snapshot_view(None)).expect("encodes");
        let view = start.elapsed();
        let start = Instant::now();
        let state = member.durable_state();
        let copied = postcard::to_allocvec(&state).expect("encodes");
        drop(state);
        let copy = start.elapsed();
        let (mut longest, mut total) = (Duration::ZERO, Duration::ZERO);
        // What a snapshot's beginning did before: list the ids of the jobs.
        let start = Instant::now();
        let ids: Vec<u64> = member.cluster().jobs().map(|job| job.id.0).collect();
        let listed = start.elapsed();
        drop(ids);
        let start = Instant::now();
        let mut builder = SnapshotBuilder::begin(&member);
        let begin = start.elapsed();
        loop {
            let start = Instant::now();
            let done = builder.advance(&member, 20_000).expect("encodes");
            longest = longest.max(start.elapsed());
            total += start.elapsed();
            if done {
                break;
            }
        }
        let start = Instant::now();
        let join = builder.finish_later(&member, None).expect("encodes");
        let end = start.elapsed();
        let start = Instant::now();
        let sliced = join().expect("encodes");
        let joined = start.elapsed();
        assert_eq!(streamed.len(), copied.len());
        assert_eq!(streamed, sliced);
        writeln!(
            out,
            "{jobs} jobs, a snapshot of {} bytes: copied first {copy:.2?}; from the member {view:.2?}; in slices: its beginning {begin:.2?} (listing the jobs' ids, as it did before: {listed:.2?}), its slices {total:.2?} (longest {longest:.2?}), then its end {end:.2?} (and {joined:.2?} on the snapshot's thread)",
            streamed.len()
        )
        .expect("stdout");
    }
}
