//! `brsvadd` and `brsvdel` at a cluster's endpoint: the scheduler makes or
//! deletes the reservation ([`crate::advance::live`]); no job makes a
//! transition (a deleted reservation's jobs are detached in place), so no
//! submission cluster hears of it.

use mcfed_protocol::SimTime;

use super::ClusterNode;
use crate::advance::AdvanceReservationConfig;
use crate::advance::live::{Deleted, LiveReservations, ReservationError};

impl ClusterNode {
    /// `brsvadd` ([`crate::Cluster::add_reservation`]).
    pub fn add_reservation(
        &mut self,
        now: SimTime,
        config: AdvanceReservationConfig,
        by: Option<&str>,
    ) -> Result<(), ReservationError> {
        self.cluster.add_reservation(now, config, by)
    }

    /// `brsvdel` ([`crate::Cluster::delete_reservation`]).
    pub fn delete_reservation(
        &mut self,
        now: SimTime,
        name: &str,
        by: Option<&str>,
    ) -> Result<Deleted, ReservationError> {
        self.cluster.delete_reservation(now, name, by)
    }

    /// Restores the reservations a journal kept
    /// ([`crate::Cluster::restore_reservations`]).
    pub fn restore_reservations(&mut self, live: LiveReservations) -> Vec<String> {
        self.cluster.restore_reservations(live)
    }
}
