//! Workload traces for mcfed.
//!
//! - [`swf`]: the Standard Workload Format of the Parallel Workloads
//!   Archive, read as a stream of [`SwfRecord`]s (plain text or gzip), with
//!   its header comments, and errors that name the line and field;
//! - [`generate`]: a seeded generator of synthetic SWF traces (job widths,
//!   run times, a target load) for tests and benchmarks.
//!
//! Nothing here knows about clusters or scenarios: mapping records to jobs
//! is the scenario's business.

pub mod generate;
pub mod lsb_acct;
pub mod swf;

pub use generate::{GenerateError, SyntheticTrace};
pub use swf::{Header, SwfError, SwfReader, SwfRecord, open};
