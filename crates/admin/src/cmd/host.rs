//! `mcfed host-fail` and `host-recover` (a scenario's `host_fail` and
//! `host_recover` actions): a host of the cluster fails or recovers.

use mcfed_federation::{Effects, Member};
use mcfed_protocol::SimTime;

pub use mcfed_cluster::HostEvent;

use crate::AdminResponse;

/// `host` of `member` fails or recovers at `now`: what happened, in words.
pub fn apply(
    member: &mut Member,
    now: SimTime,
    host: &str,
    event: HostEvent,
    effects: &mut Effects,
) -> AdminResponse {
    match member.host_event(now, host, event, effects) {
        Ok(what) => AdminResponse::HostChanged(what),
        Err(refused) => AdminResponse::Error(refused),
    }
}
