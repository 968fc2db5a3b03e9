//! mcfed's cluster processes.
//!
//! - [`process`]: `mcfed cluster`, one cluster as an OS process: the
//!   cluster's actors with the QUIC transport (`mcfed-transport`) in place
//!   of the in-process router;
//! - [`admin`]: the requests the LSF-style commands and the launcher send a
//!   running process, and their answers;
//! - [`rows`]: what those commands show, built from the cores;
//! - [`lsf`]: printing it with LSF's columns, or as JSON;
//! - [`client`]: the administrator's side (connect, ask, decode);
//! - [`faults`]: the scenario's faults on a process's datagrams, below
//!   QUIC;
//! - [`launch`]: `mcfed launch`, one process per cluster of a scenario,
//!   with the scenario's submissions played and every decision gathered.

pub mod admin;
pub mod client;
pub mod faults;
pub mod launch;
pub mod lsf;
pub mod process;
pub mod rows;

pub use process::{ClusterOptions, LiveReport, NodeError, run_cluster};
