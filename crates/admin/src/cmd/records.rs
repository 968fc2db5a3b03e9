//! What a cluster process recorded: its decision records from an index
//! on, its job events, usage samples, metrics and counts (the launcher
//! gathers them into the run's output).

use mcfed_federation::GroupState;
use mcfed_forwarder::DecisionRecord;
use serde::{Deserialize, Serialize};

/// Decision records and the initial job states.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordsReply {
    /// The cluster.
    pub cluster: String,
    /// Records from the index asked for.
    pub records: Vec<DecisionRecord>,
    /// How many records the process has written in all.
    pub total: usize,
    /// Per initial job group, states after the first dispatch pass.
    pub initial_states: Vec<GroupState>,
    /// Every job event of the process (jobs started, suspended, finished,
    /// ...), for `mcfed launch --events`.
    #[serde(default)]
    pub events: Vec<mcfed_run::records::EventRecord>,
    /// The process's slot-usage samples (every shortest update interval
    /// of the scenario, from emulated time zero).
    #[serde(default)]
    pub usage: Vec<mcfed_run::records::UsageRecord>,
    /// The scheduling metrics of the process's jobs (merged by the
    /// launcher into the run's `summary`).
    #[serde(default)]
    pub metrics: Option<mcfed_run::metrics::MetricsRecorder>,
    /// What the process holds now: its slots and the jobs that never
    /// started (the end of the run's metrics and totals).
    #[serde(default)]
    pub end_state: Option<mcfed_run::metrics::EndState>,
    /// Counts of what happened in the process (updates, job starts and
    /// ends, decisions).
    #[serde(default)]
    pub stats: Option<mcfed_run::RunStats>,
}
