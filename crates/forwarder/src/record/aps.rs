//! What a decision record says of absolute priority scheduling: the APS
//! value that put a job of an APS send queue where it was decided, and how
//! many earlier submissions it went ahead of.

use super::DecisionRecord;
use crate::node::ApsStanding;

/// The words a reason ends with for a job of an APS send queue: its value
/// (`(V)` for a system value, as `bjobs -aps` shows it) and what it did.
fn describe_aps(standing: ApsStanding) -> String {
    let value = match standing.value {
        crate::ApsValue::System(_) => format!("APS system value {}", standing.value.render()),
        crate::ApsValue::Calculated(_) => format!("APS value {}", standing.value.render()),
    };
    match standing.ahead_of {
        0 => format!(" [{value}; no earlier submission was waiting]"),
        1 => format!(" [{value} put it ahead of 1 earlier submission]"),
        many => format!(" [{value} put it ahead of {many} earlier submissions]"),
    }
}

impl DecisionRecord {
    /// Cites `standing`: the APS fields, and the reason's last words.
    pub(super) fn cite_aps(&mut self, standing: ApsStanding) {
        self.aps_value = Some(standing.value.value());
        self.aps_kind = Some(standing.value.kind().to_owned());
        self.aps_ahead_of = Some(standing.ahead_of);
        self.reason.push_str(&describe_aps(standing));
    }
}
