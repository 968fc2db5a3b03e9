//! The `[chaos]` table: link faults (`[chaos.links]`, `[[chaos.link]]`),
//! partitions, outages and clock skews, each naming known clusters.

use std::time::Duration;

use mcfed_protocol::{ClusterName, SimTime};

use crate::check::Checker;
use crate::format::{RawChaos, RawLink};
use crate::locate::FieldPath;
use mcfed_chaos::{ChaosConfig, DEFAULT_RETRANSMIT, LinkFaults, Outage, Partition};

impl Checker<'_> {
    /// The faults of `[chaos]`, at `path`; `seed` is the scenario's, used
    /// when the table gives none. `known` are the clusters faults may name.
    pub(super) fn chaos(
        &mut self,
        path: &FieldPath,
        raw: &RawChaos,
        seed: u64,
        known: &[ClusterName],
    ) -> ChaosConfig {
        let mut config = ChaosConfig {
            seed: raw.seed.unwrap_or(seed),
            ..ChaosConfig::default()
        };
        if let Some(links) = &raw.links {
            let links_path = path.key("links");
            if links.from.is_some() || links.to.is_some() {
                self.problem(links_path.clone(), "[chaos.links] applies to every link; name one link in a [[chaos.link]] with `from` and `to`");
            }
            config.default_link = self.link_faults(&links_path, links);
        }
        config.links = self.chaos_links(path, raw, known);
        config.partitions = self.partitions(path, raw, known);
        config.outages = self.outages(path, raw, known);
        config.skews = self.skews(path, raw, known);
        config
    }

    /// A cluster name that must be one of `known`.
    fn known_cluster(
        &mut self,
        path: FieldPath,
        text: &str,
        known: &[ClusterName],
    ) -> Option<ClusterName> {
        let name: ClusterName = self.name(path.clone(), text)?;
        if known.contains(&name) {
            Some(name)
        } else {
            self.problem(path, format!("unknown cluster `{name}`"));
            None
        }
    }

    /// A probability, 0 when not given.
    fn probability(&mut self, path: FieldPath, value: Option<f64>) -> f64 {
        match value {
            None => 0.0,
            Some(p) if p.is_finite() && (0.0..=1.0).contains(&p) => p,
            Some(p) => {
                self.problem(
                    path,
                    format!("a probability must be between 0 and 1, not {p}"),
                );
                0.0
            }
        }
    }

    /// The faults of a link table, defaults filled in.
    fn link_faults(&mut self, path: &FieldPath, raw: &RawLink) -> LinkFaults {
        let delay = raw.delay.map_or(Duration::ZERO, |d| d.0);
        LinkFaults {
            delay,
            jitter: raw.jitter.map_or(Duration::ZERO, |d| d.0),
            loss: self.probability(path.key("loss"), raw.loss),
            duplicate: self.probability(path.key("duplicate"), raw.duplicate),
            reorder: self.probability(path.key("reorder"), raw.reorder),
            reorder_delay: raw
                .reorder_delay
                .map_or(delay * 2 + Duration::from_secs(1), |d| d.0),
            retransmit: raw.retransmit.map_or(DEFAULT_RETRANSMIT, |d| d.0),
        }
    }

    /// `[[chaos.link]]`: the faults of one link, `from` → `to`.
    fn chaos_links(
        &mut self,
        path: &FieldPath,
        raw: &RawChaos,
        known: &[ClusterName],
    ) -> Vec<(ClusterName, ClusterName, LinkFaults)> {
        let mut links = Vec::new();
        for (index, link) in raw.link.iter().enumerate() {
            let link_path = path.key("link").index(index);
            let faults = self.link_faults(&link_path, link);
            let ends = match (&link.from, &link.to) {
                (Some(from), Some(to)) => (
                    self.known_cluster(link_path.key("from"), from, known),
                    self.known_cluster(link_path.key("to"), to, known),
                ),
                _ => {
                    self.problem(link_path.clone(), "a [[chaos.link]] needs `from` and `to`");
                    (None, None)
                }
            };
            if let (Some(from), Some(to)) = ends {
                links.push((from, to, faults));
            }
        }
        links
    }

    /// `[[chaos.partition]]`: two clusters cut off from each other for a
    /// while.
    fn partitions(
        &mut self,
        path: &FieldPath,
        raw: &RawChaos,
        known: &[ClusterName],
    ) -> Vec<Partition> {
        let mut partitions = Vec::new();
        for (index, partition) in raw.partition.iter().enumerate() {
            let entry = path.key("partition").index(index);
            if partition.between.len() != 2 {
                self.problem(entry.key("between"), "`between` names exactly two clusters");
                continue;
            }
            let a = self.known_cluster(entry.key("between").index(0), &partition.between[0], known);
            let b = self.known_cluster(entry.key("between").index(1), &partition.between[1], known);
            if partition.until.0 <= partition.from.0 {
                self.problem(entry.key("until"), "a partition must heal after it starts");
                continue;
            }
            if let (Some(a), Some(b)) = (a, b) {
                partitions.push(Partition {
                    a,
                    b,
                    from: SimTime::from(partition.from.0),
                    until: SimTime::from(partition.until.0),
                });
            }
        }
        partitions
    }

    /// `[[chaos.outage]]`: a cluster down for a while.
    fn outages(&mut self, path: &FieldPath, raw: &RawChaos, known: &[ClusterName]) -> Vec<Outage> {
        let mut outages = Vec::new();
        for (index, outage) in raw.outage.iter().enumerate() {
            let entry = path.key("outage").index(index);
            if outage.down_for.0.is_zero() {
                self.problem(entry.key("down_for"), "an outage lasts longer than zero");
                continue;
            }
            if let Some(cluster) = self.known_cluster(entry.key("cluster"), &outage.cluster, known)
            {
                let at = SimTime::from(outage.at.0);
                outages.push(Outage {
                    cluster,
                    at,
                    until: at + outage.down_for.0,
                });
            }
        }
        outages
    }

    /// `[[chaos.skew]]`: a cluster's clock ahead or behind, in
    /// milliseconds (positive: ahead).
    fn skews(
        &mut self,
        path: &FieldPath,
        raw: &RawChaos,
        known: &[ClusterName],
    ) -> Vec<(ClusterName, i64)> {
        let mut skews = Vec::new();
        for (index, skew) in raw.skew.iter().enumerate() {
            let entry = path.key("skew").index(index);
            let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
            let offset = match (skew.ahead, skew.behind) {
                (Some(ahead), None) => millis(ahead.0),
                (None, Some(behind)) => -millis(behind.0),
                _ => {
                    self.problem(
                        entry.clone(),
                        "a [[chaos.skew]] needs exactly one of `ahead` and `behind`",
                    );
                    continue;
                }
            };
            if let Some(cluster) = self.known_cluster(entry.key("cluster"), &skew.cluster, known) {
                skews.push((cluster, offset));
            }
        }
        skews
    }
}
