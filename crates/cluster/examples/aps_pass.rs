//! Runs dispatch passes of the APS benchmarks' clusters a fixed number of
//! times, for instruction counting with callgrind (each pass in
//! `measured_pass`, so `--toggle-collect` leaves the setup out):
//! `aps_pass SHAPE PASSES`, SHAPE one of `fcfs`, `fairshare`, `aps` (the
//! pass after one job of a full cluster ends, 10,000 pending) or
//! `cycle-fcfs`, `cycle-aps` (one pass over 100,000 pending jobs).
//!
//! ```sh
//! valgrind --tool=callgrind --collect-atstart=no \
//!     --toggle-collect='*measured_pass*' target/release/examples/aps_pass aps 10
//! ```

use mcfed_cluster::{Cluster, Transition};
use mcfed_protocol::SimTime;

#[path = "../benches/common/aps_shapes.rs"]
#[allow(dead_code)]
mod shapes;

/// One pass of `cluster` at `at`: what the count measures.
#[inline(never)]
fn measured_pass(cluster: &mut Cluster, at: SimTime, transitions: &mut Vec<Transition>) {
    cluster.advance(at, transitions);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "aps".to_owned());
    let passes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let (loaded, at) = match shape.as_str() {
        "cycle-fcfs" => (shapes::loaded_big_cluster(false), SimTime::ZERO),
        "cycle-aps" => (shapes::loaded_big_cluster(true), SimTime::ZERO),
        kind if shapes::DEEP.contains(&kind) => {
            (shapes::deep_cluster(kind), SimTime::from_secs(60))
        }
        other => {
            eprintln!("unknown shape `{other}`: fcfs, fairshare, aps, cycle-fcfs or cycle-aps");
            std::process::exit(2);
        }
    };
    let mut started = 0;
    for _ in 0..passes {
        let mut cluster = loaded.clone();
        let mut transitions = Vec::new();
        measured_pass(&mut cluster, at, &mut transitions);
        started += transitions.len();
    }
    eprintln!("{shape}: {passes} passes, {started} transitions");
}
