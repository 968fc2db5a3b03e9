//! The jobs of a `[[cluster.job]]` group present at start are all running
//! or all pending after the first dispatch pass: the group's `state`
//! (`running` or `RUN`, `pending` or `PEND`). Not an `[[expect]]` entry:
//! the key is the group's.

use mcfed_cluster::JobState;
use mcfed_protocol::ClusterName;

use super::{ExpectKind, Expectation};
use crate::check::Checker;
use crate::locate::FieldPath;

/// After the first dispatch pass, the jobs of an initial group are all in
/// `state`.
#[derive(Clone, Debug, PartialEq)]
pub struct InitialState {
    /// The cluster.
    pub cluster: ClusterName,
    /// Index of the group in the cluster's initial jobs.
    pub group: usize,
    /// The expected state.
    pub state: JobState,
}

impl Checker<'_> {
    /// The expectation the `state` of the `[[cluster.job]]` at `path` makes
    /// of its group, the `group`th of `cluster`.
    pub(crate) fn initial_state(
        &mut self,
        path: &FieldPath,
        state: &str,
        cluster: &ClusterName,
        group: usize,
    ) -> Option<Expectation> {
        let state = match state {
            "running" | "RUN" => JobState::Running,
            "pending" | "PEND" => JobState::Pending,
            other => {
                self.problem(
                    path.key("state"),
                    format!("state must be `running` or `pending`, not `{other}`"),
                );
                return None;
            }
        };
        Some(Expectation {
            kind: ExpectKind::InitialState(InitialState {
                cluster: cluster.clone(),
                group,
                state,
            }),
            origin: path.key("state").to_string(),
        })
    }
}
