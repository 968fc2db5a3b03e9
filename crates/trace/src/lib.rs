//! Workload traces for mcfed.
//!
//! - [`swf`]: the Standard Workload Format of the Parallel Workloads
//!   Archive, read as a stream of [`SwfRecord`]s (plain text or gzip), with
//!   its header comments, and errors that name the line and field;
//! - [`generate`]: a seeded generator of synthetic SWF traces (job widths,
//!   run times, a target load) for tests and benchmarks;
//! - [`workload`]: a trace (SWF or lsb.acct) mapped onto a federation's
//!   clusters and queues (a scenario's `[[workload]]`), one [`Submission`]
//!   at a time, and
//!   [`read_ahead`]: the same stream read, parsed and mapped on a thread of
//!   its own;
//! - [`lsb_acct`]: LSF's accounting file (JOB_FINISH records), read,
//!   written and generated.

pub mod generate;
pub mod lsb_acct;
pub mod read_ahead;
pub mod swf;
pub mod workload;

pub use generate::{GenerateError, SyntheticTrace};
pub use read_ahead::ReadAhead;
pub use swf::{Header, SubmitOrder, SwfError, SwfReader, SwfRecord, open};
pub use workload::{
    AcctMapping, QueueTarget, Skipped, Submission, TraceFormat, WorkloadSpec, WorkloadStream,
};
