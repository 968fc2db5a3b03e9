//! The scenario's faults ([`ChaosConfig`], the same `[chaos]` table and
//! flags as `mcfed run`) on a cluster process's UDP datagrams, below QUIC.
//!
//! The transport asks [`ChaosFaults`] the fate of every datagram it sends to
//! a peer; it answers with the same generator the event loop uses for a
//! counter update ([`Chaos::fate`]), at the emulated instant the datagram
//! leaves: lost (partition, loss), or delivered after the link's delay and
//! jitter, perhaps held back (reorder) or twice (duplicate). Emulated
//! delays become wall-clock ones through the run's speed.
//!
//! Faults act from emulated time zero on: a federation connects before its
//! clock starts (`mcfed launch` sets it a moment ahead), cleanly, as
//! in-process runs have no connection to make. Each process seeds its
//! generator with the faults' seed mixed with its cluster's name, so two
//! processes do not draw alike; which datagram gets which draw depends on
//! when quinn sends it, so launched runs are seeded but not bit-for-bit
//! reproducible.

use std::sync::Mutex;
use std::time::Duration;

use mcfed_chaos::{Chaos, ChaosConfig, Fate};
use mcfed_protocol::{ClusterName, SimTime};
use mcfed_transport::{DatagramFate, DatagramFaults, Timeouts};
use tokio::time::Instant;

/// A cluster process's faults on what it sends to its peers.
#[derive(Debug)]
pub struct ChaosFaults {
    cluster: ClusterName,
    chaos: Mutex<Chaos>,
    origin: Instant,
    speed: f64,
}

/// FNV-1a, to mix a cluster's name into the seed.
fn mix(seed: u64, name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    seed ^ hash
}

impl ChaosFaults {
    /// The faults of `config` on what `cluster` sends, with emulated time
    /// zero at `origin` (the federation's, without this cluster's skew) and
    /// `speed` emulated seconds per wall second.
    pub fn new(cluster: ClusterName, config: &ChaosConfig, origin: Instant, speed: f64) -> Self {
        let mut config = config.clone();
        config.seed = mix(config.seed, cluster.as_str());
        ChaosFaults {
            cluster,
            chaos: Mutex::new(Chaos::new(config)),
            origin,
            speed: speed.max(1e-6),
        }
    }

    /// The fate of a datagram sent to `peer` at wall instant `at`.
    fn fate_at(&self, peer: &ClusterName, at: Instant) -> DatagramFate {
        let at_once = DatagramFate::Deliver(vec![Duration::ZERO]);
        let Some(since) = at.checked_duration_since(self.origin) else {
            return at_once;
        };
        let now = SimTime::from(since.mul_f64(self.speed));
        let Ok(mut chaos) = self.chaos.lock() else {
            return at_once;
        };
        match chaos.fate(&self.cluster, peer, true, now) {
            Fate::Lost => DatagramFate::Lost,
            Fate::Deliver(times) => DatagramFate::Deliver(
                times
                    .iter()
                    .map(|time| time.saturating_since(now).div_f64(self.speed))
                    .collect(),
            ),
        }
    }
}

impl DatagramFaults for ChaosFaults {
    fn fate(&self, peer: &ClusterName) -> DatagramFate {
        self.fate_at(peer, Instant::now())
    }
}

/// Connection timeouts stretched for the faults: a datagram may take
/// `config.longest_delay()` (in wall time, at `speed`) to arrive, so a
/// connection must stay open at least twice that with nothing received,
/// and the hello exchange may take four one-way trips.
pub fn stretched_timeouts(timeouts: Timeouts, config: &ChaosConfig, speed: f64) -> Timeouts {
    let longest = config.longest_delay().div_f64(speed.max(1e-6));
    Timeouts {
        idle: timeouts.idle.max(Timeouts::default().idle + longest * 2),
        handshake: timeouts
            .handshake
            .max(Timeouts::default().handshake + longest * 4),
        ..timeouts
    }
}

/// Emulated time zero of `cluster`'s own clock: the federation's `origin`
/// moved by the cluster's skew in `config` (a clock ahead reached zero
/// earlier), at `speed`.
pub fn skewed_origin(
    origin: Instant,
    config: &ChaosConfig,
    cluster: &ClusterName,
    speed: f64,
) -> Instant {
    let millis = config
        .skews
        .iter()
        .find(|(name, _)| name == cluster)
        .map_or(0, |(_, skew)| *skew);
    let shift = Duration::from_millis(millis.unsigned_abs()).div_f64(speed.max(1e-6));
    if millis >= 0 {
        origin.checked_sub(shift).unwrap_or(origin)
    } else {
        origin + shift
    }
}

#[cfg(test)]
mod tests {
    use mcfed_chaos::{LinkFaults, Partition};

    use super::*;

    fn name(text: &str) -> ClusterName {
        ClusterName::new(text).expect("valid name")
    }

    fn delayed(delay: Duration) -> ChaosConfig {
        ChaosConfig {
            seed: 3,
            default_link: LinkFaults {
                delay,
                ..LinkFaults::default()
            },
            ..ChaosConfig::default()
        }
    }

    #[test]
    fn emulated_delays_become_wall_delays_at_the_runs_speed() {
        let origin = Instant::now();
        let faults = ChaosFaults::new(name("A"), &delayed(Duration::from_secs(45)), origin, 20.0);
        assert_eq!(
            faults.fate_at(&name("B"), origin + Duration::from_secs(1)),
            DatagramFate::Deliver(vec![Duration::from_millis(2250)])
        );
    }

    #[test]
    fn nothing_happens_before_emulated_time_zero() {
        let origin = Instant::now() + Duration::from_secs(60);
        let faults = ChaosFaults::new(name("A"), &delayed(Duration::from_secs(45)), origin, 20.0);
        assert_eq!(
            faults.fate(&name("B")),
            DatagramFate::Deliver(vec![Duration::ZERO])
        );
    }

    #[test]
    fn a_partition_drops_datagrams_both_ways_while_it_lasts() {
        let origin = Instant::now();
        let config = ChaosConfig {
            partitions: vec![Partition {
                a: name("A"),
                b: name("B"),
                from: SimTime::from_secs(100),
                until: SimTime::from_secs(200),
            }],
            ..ChaosConfig::default()
        };
        // Speed 10: emulated 100 s..200 s is wall 10 s..20 s.
        let a = ChaosFaults::new(name("A"), &config, origin, 10.0);
        let b = ChaosFaults::new(name("B"), &config, origin, 10.0);
        let at = |secs: u64| origin + Duration::from_secs(secs);
        assert_eq!(a.fate_at(&name("B"), at(15)), DatagramFate::Lost);
        assert_eq!(b.fate_at(&name("A"), at(15)), DatagramFate::Lost);
        assert_eq!(
            a.fate_at(&name("C"), at(15)),
            DatagramFate::Deliver(vec![Duration::ZERO])
        );
        assert_eq!(
            a.fate_at(&name("B"), at(21)),
            DatagramFate::Deliver(vec![Duration::ZERO])
        );
    }

    #[test]
    fn processes_draw_from_their_own_seeded_generators() {
        let config = ChaosConfig {
            seed: 5,
            default_link: LinkFaults {
                loss: 0.5,
                jitter: Duration::from_secs(10),
                ..LinkFaults::default()
            },
            ..ChaosConfig::default()
        };
        let origin = Instant::now();
        let draws = |cluster: &str| {
            let faults = ChaosFaults::new(name(cluster), &config, origin, 1.0);
            (0..50)
                .map(|i| faults.fate_at(&name("Z"), origin + Duration::from_secs(i)))
                .collect::<Vec<_>>()
        };
        assert_eq!(draws("A"), draws("A"), "same seed, same draws");
        assert_ne!(draws("A"), draws("B"), "another cluster, other draws");
    }

    #[test]
    fn a_skewed_clock_starts_earlier_or_later() {
        let origin = Instant::now() + Duration::from_secs(100);
        let config = ChaosConfig {
            skews: vec![(name("A"), 5000), (name("B"), -2000)],
            ..ChaosConfig::default()
        };
        // Speed 10: 5 s ahead is half a wall second earlier.
        assert_eq!(
            skewed_origin(origin, &config, &name("A"), 10.0),
            origin - Duration::from_millis(500)
        );
        assert_eq!(
            skewed_origin(origin, &config, &name("B"), 10.0),
            origin + Duration::from_millis(200)
        );
        assert_eq!(skewed_origin(origin, &config, &name("C"), 10.0), origin);
    }

    #[test]
    fn timeouts_stretch_with_the_longest_delay() {
        let stretched =
            stretched_timeouts(Timeouts::default(), &delayed(Duration::from_secs(40)), 20.0);
        assert_eq!(stretched.idle, Duration::from_secs(7));
        assert_eq!(stretched.handshake, Duration::from_secs(13));
        let calm = stretched_timeouts(Timeouts::default(), &ChaosConfig::default(), 20.0);
        assert_eq!(calm.idle, Timeouts::default().idle);
    }
}
