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

use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::history::JobRecord;
use mcfed_federation::{Effects, Member, MemberSpec};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};

fn main() {
    let jobs: usize = match std::env::args().nth(1).map(|arg| arg.parse()) {
        None => 1_000_000,
        Some(Ok(jobs)) => jobs,
        Some(Err(error)) => {
            eprintln!("restored_history_cost: JOBS must be a count: {error}");
            std::process::exit(2);
        }
    };
    let config = config();
    let state = held(&config, jobs).durable_state();
    let mut out = std::io::stdout().lock();
    for _ in 0..3 {
        let restored = Member::restore(spec(&config), state.clone(), SimTime::from_secs(60))
            .expect("restores");
        let (took, kept) = keep(restored);
        let unrestored = held(&config, jobs);
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

fn config() -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("Held").expect("valid"));
    config.hosts = vec![HostConfig::new("h", 1)];
    config.queues = vec![QueueConfig::new(QueueName::new("normal").expect("valid"))];
    config
}

fn spec(config: &ClusterConfig) -> MemberSpec<'_> {
    MemberSpec {
        config,
        forwarder: None,
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    }
}

/// A one-slot cluster holding `jobs` jobs of 100 hours.
fn held(config: &ClusterConfig, jobs: usize) -> Member {
    let (mut member, _) = Member::build(spec(config)).expect("builds");
    let mut effects = Effects::default();
    for n in 0..jobs {
        let job = JobSpec::simple(format!("held{n}"), "root", Duration::from_secs(360_000));
        member
            .submit(SimTime::ZERO, "normal", job, &mut effects)
            .expect("accepted");
        if n % 10_000 == 0 {
            member.step(SimTime::ZERO, &mut effects);
            effects.clear();
        }
    }
    member.step(SimTime::ZERO, &mut effects);
    member
}
