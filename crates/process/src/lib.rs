//! mcfed's cluster processes.
//!
//! - [`process`]: `mcfed cluster`, one cluster as an OS process: the
//!   cluster's member actor with the QUIC transport (`mcfed-transport`) in
//!   place of the in-process actor engine's mail;
//! - [`client`]: the administrator's side (connect, ask, decode) of the
//!   admin commands (`mcfed-admin`);
//! - [`faults`]: the scenario's faults on a process's datagrams, below
//!   QUIC;

pub mod client;
pub mod faults;
pub mod process;

pub use process::{ClusterOptions, ClusterPlan, LiveReport, NodeError, run_cluster};
