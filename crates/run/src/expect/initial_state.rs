//! Checking that the jobs of a group present at start are all in the
//! expected state after the first dispatch pass.

use mcfed_scenario::expect::InitialState;

use super::{Check, Found, Run};

impl Check for InitialState {
    fn check(&self, run: Run<'_>) -> Found {
        let expected = format!(
            "every job of this group is {} after the first dispatch",
            self.state.as_str()
        );
        let position = run
            .scenario
            .clusters
            .iter()
            .position(|spec| spec.config.name == self.cluster);
        let group =
            position.and_then(|index| run.output.initial_states.get(index)?.get(self.group));
        match group {
            Some(found) => Found {
                expected,
                held: found.count(self.state) == found.total(),
                actual: format!(
                    "{} running, {} pending, {} other, of {}",
                    found.running,
                    found.pending,
                    found.other,
                    found.total()
                ),
                skipped: None,
            },
            None => Found::failed(expected, "the group was not built"),
        }
    }
}
