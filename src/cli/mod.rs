//! The subcommands beyond `run` and `validate`: cluster processes
//! (`cluster`, `launch`, `certs`), the LSF-style commands (`bsub`, `bjobs`,
//! `bqueues`, `bhosts`, `bclusters`), analysis (`report`, `sweep`), traces
//! (`gen swf`, `replay`) and the
//! printing `run` and `launch` share. Each module parses its own arguments
//! and calls the libraries.

pub(crate) mod analysis;
pub(crate) mod lsf;
pub(crate) mod processes;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod traces;

/// LSF spells some long options with one dash (`bjobs -fwd`); clap wants
/// two. Rewrites them before parsing.
pub(crate) fn lsf_spellings(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    args.into_iter()
        .map(|arg| match arg.to_str() {
            Some("-fwd") => "--fwd".into(),
            Some("-We") => "--We".into(),
            Some("-gpu") => "--gpu".into(),
            _ => arg,
        })
        .collect()
}
