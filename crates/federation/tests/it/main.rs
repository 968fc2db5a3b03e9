//! mcfed-federation's integration tests, one test binary.

mod aps_journal;
mod aps_send;
mod control;
mod journal;
mod journaled_inputs;
mod lineage_change;
mod live_reservations;
mod restored_history;
mod snapshot_slices;
mod unsendable;
