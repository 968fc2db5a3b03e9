//! Seeded faults for in-process runs: per-link delay and jitter, loss,
//! duplicated and reordered counter updates, partitions between clusters,
//! clusters going down and coming back, and clock skew.
//!
//! The faults act on messages, the way a network below QUIC would show
//! through it:
//! - counter updates are datagram-like: loss drops them, and they may be
//!   duplicated or held back (reordered);
//! - job messages travel on reliable streams: loss costs a retransmission
//!   delay, never the message, and a partition or an outage holds them until
//!   it ends.
//!
//! A cluster that is *down* (`[[chaos.outage]]`) neither dispatches nor
//! sends counters, and what is sent to it waits (reliable) or is lost
//! (updates); its running jobs keep running on their hosts, as they do when
//! LSF's mbatchd restarts, and are accounted when it comes back.
//!
//! Every random draw comes from one ChaCha generator seeded from the
//! scenario, in the order the engine asks, so the same seed gives the same
//! run.
//!
//! Cluster processes (`mcfed cluster`, `mcfed launch`) use the same
//! configuration and generator one level lower: on the UDP datagrams
//! between processes, below QUIC (the process crate's `faults` module).
//! [`ChaosOverrides`] are the command-line flags every command shares.

use std::time::Duration;

use mcfed_protocol::{ClusterName, SimTime};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Faults on the messages of one link (a direction between two clusters).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkFaults {
    /// Fixed one-way delay.
    pub delay: Duration,
    /// Extra delay, uniform between zero and this.
    pub jitter: Duration,
    /// Probability that a counter update is lost (a job message is
    /// retransmitted instead, after [`LinkFaults::retransmit`]).
    pub loss: f64,
    /// Probability that a counter update arrives twice.
    pub duplicate: f64,
    /// Probability that a counter update is held back by
    /// [`LinkFaults::reorder_delay`], so later ones overtake it.
    pub reorder: f64,
    /// How long a reordered update is held back.
    pub reorder_delay: Duration,
    /// How long a lost job message takes to be retransmitted.
    pub retransmit: Duration,
}

impl LinkFaults {
    /// Whether the link changes anything.
    pub fn is_clean(&self) -> bool {
        self.delay.is_zero()
            && self.jitter.is_zero()
            && self.loss == 0.0
            && self.duplicate == 0.0
            && self.reorder == 0.0
    }
}

/// Default retransmission delay for a lost job message.
pub const DEFAULT_RETRANSMIT: Duration = Duration::from_secs(1);

/// A time window during which two clusters cannot reach each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// One side.
    pub a: ClusterName,
    /// The other side.
    pub b: ClusterName,
    /// When it starts.
    pub from: SimTime,
    /// When it heals.
    pub until: SimTime,
}

/// A cluster down for a while, then restarted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outage {
    /// The cluster.
    pub cluster: ClusterName,
    /// When it goes down.
    pub at: SimTime,
    /// When it is back.
    pub until: SimTime,
}

/// Every fault of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChaosConfig {
    /// Seed of the fault generator.
    pub seed: u64,
    /// Faults of every link without its own entry.
    pub default_link: LinkFaults,
    /// Per-link faults: (from, to, faults).
    pub links: Vec<(ClusterName, ClusterName, LinkFaults)>,
    /// Partitions.
    pub partitions: Vec<Partition>,
    /// Outages.
    pub outages: Vec<Outage>,
    /// Clock skew per cluster, in milliseconds (positive: ahead).
    pub skews: Vec<(ClusterName, i64)>,
}

impl ChaosConfig {
    /// The longest a message can be held on any link: fixed delay plus
    /// jitter, plus the reorder delay where updates are reordered.
    pub fn longest_delay(&self) -> Duration {
        std::iter::once(&self.default_link)
            .chain(self.links.iter().map(|(_, _, faults)| faults))
            .map(|faults| {
                faults.delay
                    + faults.jitter
                    + if faults.reorder > 0.0 {
                        faults.reorder_delay
                    } else {
                        Duration::ZERO
                    }
            })
            .max()
            .unwrap_or_default()
    }

    /// Whether any fault is configured.
    pub fn is_active(&self) -> bool {
        !self.default_link.is_clean()
            || self.links.iter().any(|(_, _, faults)| !faults.is_clean())
            || !self.partitions.is_empty()
            || !self.outages.is_empty()
            || self.skews.iter().any(|(_, skew)| *skew != 0)
    }
}

/// What happens to one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Delivered at each of these times (one, or two for a duplicate).
    Deliver(Vec<SimTime>),
    /// Lost.
    Lost,
}

/// The fault generator of a run.
#[derive(Debug)]
pub struct Chaos {
    config: ChaosConfig,
    rng: ChaCha8Rng,
}

fn shift(time: SimTime, millis: i64) -> SimTime {
    let shifted = i128::from(time.as_millis()) + i128::from(millis);
    SimTime::from_millis(u64::try_from(shifted.max(0)).unwrap_or(u64::MAX))
}

impl Chaos {
    /// A generator for `config`.
    pub fn new(config: ChaosConfig) -> Self {
        let rng = ChaCha8Rng::seed_from_u64(config.seed);
        Chaos { config, rng }
    }

    /// The configuration.
    pub fn config(&self) -> &ChaosConfig {
        &self.config
    }

    fn link(&self, from: &ClusterName, to: &ClusterName) -> LinkFaults {
        self.config
            .links
            .iter()
            .find(|(a, b, _)| a == from && b == to)
            .map_or(self.config.default_link, |(_, _, faults)| *faults)
    }

    fn latency(&mut self, faults: &LinkFaults) -> Duration {
        let jitter = if faults.jitter.is_zero() {
            Duration::ZERO
        } else {
            faults.jitter.mul_f64(self.rng.random::<f64>())
        };
        faults.delay + jitter
    }

    /// When the partition between `from` and `to` that holds at `now`
    /// heals, if one does.
    pub fn partition_until(
        &self,
        from: &ClusterName,
        to: &ClusterName,
        now: SimTime,
    ) -> Option<SimTime> {
        self.config
            .partitions
            .iter()
            .filter(|p| {
                ((&p.a == from && &p.b == to) || (&p.a == to && &p.b == from))
                    && p.from <= now
                    && now < p.until
            })
            .map(|p| p.until)
            .max()
    }

    /// When `cluster`'s outage that holds at `now` ends, if it is down.
    pub fn down_until(&self, cluster: &ClusterName, now: SimTime) -> Option<SimTime> {
        self.config
            .outages
            .iter()
            .filter(|o| &o.cluster == cluster && o.at <= now && now < o.until)
            .map(|o| o.until)
            .max()
    }

    /// Every time a cluster goes down or comes back, for the engine to wake
    /// at.
    pub fn outage_edges(&self) -> Vec<(ClusterName, SimTime)> {
        self.config
            .outages
            .iter()
            .flat_map(|o| [(o.cluster.clone(), o.at), (o.cluster.clone(), o.until)])
            .collect()
    }

    /// `cluster`'s clock at global time `now`.
    pub fn local_time(&self, cluster: &ClusterName, now: SimTime) -> SimTime {
        let skew = self
            .config
            .skews
            .iter()
            .find(|(name, _)| name == cluster)
            .map_or(0, |(_, skew)| *skew);
        shift(now, skew)
    }

    /// The fate of a message sent at `now` from `from` to `to`; `update`
    /// says whether it is a counter update (lossy) or a job message
    /// (reliable).
    pub fn fate(
        &mut self,
        from: &ClusterName,
        to: &ClusterName,
        update: bool,
        now: SimTime,
    ) -> Fate {
        let faults = self.link(from, to);
        if let Some(heals) = self.partition_until(from, to, now) {
            if update {
                return Fate::Lost;
            }
            let latency = self.latency(&faults);
            return Fate::Deliver(vec![heals + latency]);
        }
        let latency = self.latency(&faults);
        let lost = faults.loss > 0.0 && self.rng.random::<f64>() < faults.loss;
        if !update {
            let retransmit = if lost {
                if faults.retransmit.is_zero() {
                    DEFAULT_RETRANSMIT
                } else {
                    faults.retransmit
                }
            } else {
                Duration::ZERO
            };
            return Fate::Deliver(vec![now + latency + retransmit]);
        }
        if lost {
            return Fate::Lost;
        }
        let held = faults.reorder > 0.0 && self.rng.random::<f64>() < faults.reorder;
        let first = now
            + latency
            + if held {
                faults.reorder_delay
            } else {
                Duration::ZERO
            };
        let mut times = vec![first];
        if faults.duplicate > 0.0 && self.rng.random::<f64>() < faults.duplicate {
            times.push(now + self.latency(&faults));
        }
        Fate::Deliver(times)
    }
}

/// Faults given on the command line (`--delay`, `--jitter`, `--loss`,
/// `--duplicate`, `--reorder`, `--reorder-delay`, `--chaos-seed`) for every
/// link, on top of the scenario's own `[chaos]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChaosOverrides {
    /// Fixed one-way delay of every link.
    pub delay: Option<Duration>,
    /// Extra random delay, up to this.
    pub jitter: Option<Duration>,
    /// Probability that a counter update (a datagram, between processes)
    /// is lost.
    pub loss: Option<f64>,
    /// Probability that it arrives twice.
    pub duplicate: Option<f64>,
    /// Probability that it is held back so later ones overtake it.
    pub reorder: Option<f64>,
    /// How long a reordered one is held back.
    pub reorder_delay: Option<Duration>,
    /// Seed of the fault generator.
    pub seed: Option<u64>,
}

impl ChaosOverrides {
    /// Whether any flag is given.
    pub fn is_set(&self) -> bool {
        self.delay.is_some()
            || self.jitter.is_some()
            || self.loss.is_some()
            || self.duplicate.is_some()
            || self.reorder.is_some()
            || self.seed.is_some()
    }

    /// A scenario's faults (`own`, its `[chaos]`, and `seed`, its seed)
    /// with these flags applied to every link (its own when no flag is
    /// given).
    pub fn apply(&self, own: Option<&ChaosConfig>, seed: u64) -> Option<ChaosConfig> {
        if !self.is_set() {
            return own.cloned();
        }
        let mut config = own.cloned().unwrap_or(ChaosConfig {
            seed,
            ..ChaosConfig::default()
        });
        let link = &mut config.default_link;
        if let Some(delay) = self.delay {
            link.delay = delay;
            link.reorder_delay = delay * 2 + Duration::from_secs(1);
        }
        link.jitter = self.jitter.unwrap_or(link.jitter);
        link.loss = self.loss.unwrap_or(link.loss);
        link.duplicate = self.duplicate.unwrap_or(link.duplicate);
        link.reorder = self.reorder.unwrap_or(link.reorder);
        link.reorder_delay = self.reorder_delay.unwrap_or(link.reorder_delay);
        if link.retransmit.is_zero() {
            link.retransmit = DEFAULT_RETRANSMIT;
        }
        config.seed = self.seed.unwrap_or(config.seed);
        Some(config)
    }

    /// The same flags as command-line arguments (what `mcfed launch`
    /// passes on to each `mcfed cluster`).
    pub fn to_args(&self) -> Vec<String> {
        let millis = |duration: Duration| format!("{}ms", duration.as_millis());
        let mut args = Vec::new();
        let mut push = |flag: &str, value: Option<String>| {
            if let Some(value) = value {
                args.push(flag.to_owned());
                args.push(value);
            }
        };
        push("--delay", self.delay.map(millis));
        push("--jitter", self.jitter.map(millis));
        push("--loss", self.loss.map(|p| p.to_string()));
        push("--duplicate", self.duplicate.map(|p| p.to_string()));
        push("--reorder", self.reorder.map(|p| p.to_string()));
        push("--reorder-delay", self.reorder_delay.map(millis));
        push("--chaos-seed", self.seed.map(|seed| seed.to_string()));
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> ClusterName {
        ClusterName::new(text).expect("valid")
    }

    fn noisy(seed: u64) -> Chaos {
        Chaos::new(ChaosConfig {
            seed,
            default_link: LinkFaults {
                delay: Duration::from_millis(100),
                jitter: Duration::from_millis(50),
                loss: 0.2,
                duplicate: 0.2,
                reorder: 0.2,
                reorder_delay: Duration::from_secs(60),
                retransmit: Duration::from_secs(2),
            },
            ..ChaosConfig::default()
        })
    }

    #[test]
    fn same_seed_same_fates() {
        let (a, b) = (name("A"), name("B"));
        let run = |seed| {
            let mut chaos = noisy(seed);
            (0..200)
                .map(|i| chaos.fate(&a, &b, i % 3 != 0, SimTime::from_secs(i)))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn job_messages_are_never_lost() {
        let (a, b) = (name("A"), name("B"));
        let mut chaos = noisy(1);
        for i in 0..500 {
            match chaos.fate(&a, &b, false, SimTime::from_secs(i)) {
                Fate::Deliver(times) => assert_eq!(times.len(), 1),
                Fate::Lost => panic!("a job message was lost"),
            }
        }
    }

    #[test]
    fn updates_are_lost_duplicated_and_held_back() {
        let (a, b) = (name("A"), name("B"));
        let mut chaos = noisy(3);
        let fates: Vec<Fate> = (0..1000)
            .map(|i| chaos.fate(&a, &b, true, SimTime::from_secs(i)))
            .collect();
        assert!(fates.contains(&Fate::Lost));
        assert!(
            fates
                .iter()
                .any(|f| matches!(f, Fate::Deliver(t) if t.len() == 2))
        );
        assert!(fates.iter().enumerate().any(
            |(i, f)| matches!(f, Fate::Deliver(t) if t[0] >= SimTime::from_secs(i as u64 + 60))
        ));
    }

    #[test]
    fn partitions_drop_updates_and_hold_jobs_until_they_heal() {
        let (a, b) = (name("A"), name("B"));
        let mut chaos = Chaos::new(ChaosConfig {
            partitions: vec![Partition {
                a: a.clone(),
                b: b.clone(),
                from: SimTime::from_secs(10),
                until: SimTime::from_secs(20),
            }],
            ..ChaosConfig::default()
        });
        assert_eq!(chaos.fate(&b, &a, true, SimTime::from_secs(15)), Fate::Lost);
        assert_eq!(
            chaos.fate(&a, &b, false, SimTime::from_secs(15)),
            Fate::Deliver(vec![SimTime::from_secs(20)])
        );
        assert_eq!(
            chaos.fate(&a, &b, true, SimTime::from_secs(20)),
            Fate::Deliver(vec![SimTime::from_secs(20)])
        );
    }

    #[test]
    fn the_longest_delay_counts_jitter_and_reordering() {
        let config = ChaosConfig {
            default_link: LinkFaults {
                delay: Duration::from_secs(2),
                jitter: Duration::from_secs(1),
                ..LinkFaults::default()
            },
            links: vec![(
                name("A"),
                name("B"),
                LinkFaults {
                    delay: Duration::from_secs(1),
                    reorder: 0.1,
                    reorder_delay: Duration::from_secs(10),
                    ..LinkFaults::default()
                },
            )],
            ..ChaosConfig::default()
        };
        assert_eq!(config.longest_delay(), Duration::from_secs(11));
        assert_eq!(ChaosConfig::default().longest_delay(), Duration::ZERO);
    }

    #[test]
    fn overrides_round_trip_through_arguments() {
        let overrides = ChaosOverrides {
            delay: Some(Duration::from_millis(45_000)),
            jitter: Some(Duration::from_millis(1500)),
            loss: Some(0.25),
            duplicate: None,
            reorder: Some(0.1),
            reorder_delay: None,
            seed: Some(9),
        };
        assert_eq!(
            overrides.to_args(),
            [
                "--delay",
                "45000ms",
                "--jitter",
                "1500ms",
                "--loss",
                "0.25",
                "--reorder",
                "0.1",
                "--chaos-seed",
                "9"
            ]
        );
        assert!(ChaosOverrides::default().to_args().is_empty());
        assert!(!ChaosOverrides::default().is_set());
    }

    #[test]
    fn skew_shifts_local_clocks() {
        let chaos = Chaos::new(ChaosConfig {
            skews: vec![(name("A"), -5000), (name("B"), 3000)],
            ..ChaosConfig::default()
        });
        assert_eq!(
            chaos.local_time(&name("A"), SimTime::from_secs(2)),
            SimTime::ZERO
        );
        assert_eq!(
            chaos.local_time(&name("B"), SimTime::from_secs(2)),
            SimTime::from_secs(5)
        );
        assert_eq!(
            chaos.local_time(&name("C"), SimTime::from_secs(2)),
            SimTime::from_secs(2)
        );
    }
}
