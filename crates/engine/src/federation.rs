//! A scenario's federation: one [`Member`] per cluster, built at time zero,
//! as the in-process engines run it.

use mcfed_chaos::ChaosConfig;
use mcfed_federation::{GroupState, Member};
use mcfed_protocol::ClusterName;
use mcfed_scenario::Scenario;
use rustc_hash::FxHashMap;

pub use mcfed_federation::BuildError;

/// Every cluster of a scenario, ready to run.
#[derive(Debug)]
pub struct Federation {
    /// The members, in scenario order.
    pub members: Vec<Member>,
    /// The members' names, in the same order.
    names: Vec<ClusterName>,
    /// Index of each member by name.
    index: FxHashMap<ClusterName, usize>,
    /// Per cluster, per initial group, the states after the first pass.
    pub initial_states: Vec<Vec<GroupState>>,
}

impl Federation {
    /// Builds the federation of `scenario` at time zero.
    pub fn build(scenario: &Scenario) -> Result<Federation, BuildError> {
        let mut members = Vec::with_capacity(scenario.clusters.len());
        let mut names = Vec::with_capacity(scenario.clusters.len());
        let mut index = FxHashMap::default();
        let mut initial_states = Vec::with_capacity(scenario.clusters.len());
        for spec in &scenario.clusters {
            let (member, states) = Member::build(spec.member_spec())?;
            index.insert(spec.config.name.clone(), members.len());
            names.push(spec.config.name.clone());
            members.push(member);
            initial_states.push(states);
        }
        mcfed_federation::connect_in_process(&mut members);
        Ok(Federation {
            members,
            names,
            index,
            initial_states,
        })
    }

    /// Skews the members' clocks as `chaos` says, and turns the oracle on
    /// if asked.
    pub fn prepare(&mut self, chaos: Option<&ChaosConfig>, oracle: bool) {
        for member in &mut self.members {
            let skew = chaos
                .and_then(|chaos| chaos.skews.iter().find(|(name, _)| name == member.name()))
                .map_or(0, |(_, skew)| *skew);
            member.set_clock_skew(skew);
            if oracle {
                member.enable_oracle();
            }
        }
    }

    /// Keeps every member's job history (with its CLEAN_PERIOD) when the
    /// scenario gives job control commands or has a closed advance
    /// reservation: a job they end is then known as EXIT (or DONE) to
    /// expectations. Runs without either keep none (trace replays pay
    /// nothing for it).
    pub fn keep_history_for(&mut self, scenario: &Scenario) {
        let closed_reservation = scenario.clusters.iter().any(|spec| {
            spec.config
                .advance_reservations
                .iter()
                .any(|reservation| !reservation.open)
        });
        if scenario.actions.is_empty() && !closed_reservation {
            return;
        }
        for (member, spec) in self.members.iter_mut().zip(&scenario.clusters) {
            let period = spec
                .config
                .params
                .clean_period
                .unwrap_or(mcfed_cluster::DEFAULT_CLEAN_PERIOD);
            member.keep_history(period);
        }
    }

    /// What the members have left to do at `now`, together.
    pub fn activity(&mut self, now: mcfed_protocol::SimTime) -> mcfed_federation::Activity {
        self.members
            .iter_mut()
            .fold(mcfed_federation::Activity::default(), |all, member| {
                all.and(member.activity(now))
            })
    }

    /// The position of cluster `name`.
    pub fn position(&self, name: &ClusterName) -> Option<usize> {
        // Asked for every job and message, mostly with clones of the
        // members' own names (a workload's cluster, a message's
        // receiver): found by address first, without hashing the name.
        let same = |held: &ClusterName| std::ptr::eq(held.as_str(), name.as_str());
        self.names
            .iter()
            .position(same)
            .or_else(|| self.index.get(name).copied())
    }

    /// The name of the member at `index`.
    pub fn name(&self, index: usize) -> &ClusterName {
        &self.names[index]
    }
}
