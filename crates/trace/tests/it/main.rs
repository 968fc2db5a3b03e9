//! mcfed-trace's integration tests, one test binary.

mod gzip;
mod hostile;
mod lsb_acct;
mod lsb_acct_workload;
mod swf_workload_text;
