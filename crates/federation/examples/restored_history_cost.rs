//! What keeping a history costs a cluster process restarted from its
//! state directory: a one-slot cluster holding N jobs (one running, the
//! rest pending: the held-jobs benchmark's shape, built in-process) is
//! restored from its durable state, then `Member::keep_history` enters
//! every job as it stands; against the same cluster not restored, whose
//! jobs enter as just submitted. Prints the time each takes, three
//! times.
//!
//! ```sh
//! cargo run -p mcfed-federation --example restored_history_cost -- 1000000
//! ```

use std::io::Write;
use std::time::{Duration, Instant};

use mcfed_federation::Member;
use mcfed_federation::history::JobRecord;
use mcfed_protocol::SimTime;

mod common;

fn main() {
    let jobs: usize = match std::env::args().nth(1).map(|arg| arg.parse()) {
        None => 1_000_000,
        Some(Ok(jobs)) => jobs,
        Some(Err(error)) => {
            eprintln!("restored_history_cost: JOBS must be a count: {error}");
            std::process::exit(2);
        }
    };
    let config = common::config();
    let state = common::held(&config, jobs, false).durable_state();
    let mut out = std::io::stdout().lock();
    for _ in 0..3 {
        let restored =
            Member::restore(common::spec(&config), state.clone(), SimTime::from_secs(60))
                .expect("restores");
        let (took, kept) = keep(restored);
        let unrestored = common::held(&config, jobs, false);
        let (took_before, _) = keep(unrestored);
        writeln!(
            out,
            "{jobs} jobs: restored, {kept} entered as they stand in {took:.2?}; not restored, entered as just submitted in {took_before:.2?} (a record: {} bytes)",
            std::mem::size_of::<JobRecord>()
        )
        .expect("stdout");
    }
}

/// Keeps `member`'s history: how long it took, and how many jobs it
/// holds.
fn keep(mut member: Member) -> (Duration, usize) {
    let start = Instant::now();
    member.keep_history(Duration::from_secs(3600));
    let took = start.elapsed();
    let kept = member.history().map_or(0, |history| history.len());
    (took, kept)
}
