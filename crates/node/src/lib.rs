//! mcfed's cluster processes.
//!
//! - [`process`]: `mcfed cluster`, one cluster as an OS process: the
//!   cluster's actors with the QUIC transport (`mcfed-transport`) in place
//!   of the in-process router;
//! - [`client`]: the administrator's side (connect, ask, decode) of the
//!   admin commands (`mcfed-admin`);
//! - [`faults`]: the scenario's faults on a process's datagrams, below
//!   QUIC;
//! - [`launch`]: `mcfed launch`, one process per cluster of a scenario,
//!   with the scenario's submissions played and every decision gathered.

pub mod client;
pub mod faults;
pub mod launch;
pub mod process;

pub use process::{ClusterOptions, LiveReport, NodeError, run_cluster};
