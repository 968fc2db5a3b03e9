//! The parts of a validated scenario: typed cluster configurations ready
//! to build members from, the submissions, and the actions.

use mcfed_cluster::ClusterConfig;
use mcfed_forwarder::ForwarderConfig;
use mcfed_protocol::{ClusterName, SimTime};

/// One cluster of a scenario.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// Hosts, queues and MC_PLUGIN_UPDATE_INTERVAL.
    pub config: ClusterConfig,
    /// Its submission side, when it has send queues.
    pub forwarder: Option<ForwarderConfig>,
    /// Submission clusters that forward to it.
    pub subscribers: Vec<ClusterName>,
    /// Those of them that collect its counters (their
    /// MC_PLUGIN_SCHEDULE_ENHANCE is set).
    pub collectors: Vec<ClusterName>,
    /// Jobs present at start.
    pub initial_jobs: Vec<InitialJobs>,
    /// Where its process listens (`host:port`), if the scenario says.
    pub address: Option<String>,
}

pub use mcfed_federation::InitialJobs;

impl ClusterSpec {
    /// What its federation member is built from, owned (a cluster
    /// process keeps it).
    pub fn member_config(&self) -> mcfed_federation::MemberConfig {
        mcfed_federation::MemberConfig {
            cluster: self.config.clone(),
            forwarder: self.forwarder.clone(),
            subscribers: self.subscribers.clone(),
            collectors: self.collectors.clone(),
        }
    }

    /// What its federation member is built from.
    pub fn member_spec(&self) -> mcfed_federation::MemberSpec<'_> {
        mcfed_federation::MemberSpec {
            config: &self.config,
            forwarder: self.forwarder.as_ref(),
            subscribers: &self.subscribers,
            collectors: &self.collectors,
            initial_jobs: &self.initial_jobs,
        }
    }
}

/// A job control command, or a host failure, given during the run
/// (`[[action]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// When.
    pub at: SimTime,
    /// At which cluster.
    pub cluster: ClusterName,
    /// The job, by name; for a host action, the host; for a reservation
    /// action, the reservation.
    pub job: String,
    /// What is asked.
    pub action: ActionKind,
    /// Where it was written (`action[0]`).
    pub origin: String,
}

/// What an `[[action]]` asks.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// A job control command on the job [`Action::job`] names.
    Job(mcfed_protocol::JobAction),
    /// Host [`Action::job`] fails or recovers.
    Host(mcfed_cluster::HostEvent),
    /// `brsvadd`: advance reservation [`Action::job`] is made, asked by
    /// `by` (`None`: the administrator).
    ReservationAdd {
        /// The reservation.
        config: mcfed_cluster::AdvanceReservationConfig,
        /// The user asking.
        by: Option<String>,
    },
    /// `brsvdel`: advance reservation [`Action::job`] is deleted, asked by
    /// `by` (`None`: the administrator).
    ReservationDelete {
        /// The user asking.
        by: Option<String>,
    },
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionKind::Job(action) => action.fmt(f),
            ActionKind::Host(event) => event.fmt(f),
            ActionKind::ReservationAdd { .. } => f.write_str("brsvadd"),
            ActionKind::ReservationDelete { .. } => f.write_str("brsvdel"),
        }
    }
}

pub use mcfed_trace::Submission;
