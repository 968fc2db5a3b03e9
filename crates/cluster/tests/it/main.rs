//! mcfed-cluster's integration tests, one test binary: the scheduler, its
//! policies and its properties.

mod advance_reservations;
mod aps;
mod aps_properties;
mod aps_send;
mod chunks;
mod control;
mod host_types;
mod indexed_dispatch;
mod live_reservations;
mod node;
mod policies;
mod preemptable_counter;
mod properties;
mod reservation_interplay;
mod scheduler;
mod twins;
