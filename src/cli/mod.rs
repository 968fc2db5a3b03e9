//! The subcommands beyond `run` and `validate`: cluster processes
//! (`cluster`, `launch`, `certs`), the LSF-style commands (`bsub`, `bjobs`,
//! `bqueues`, `bhosts`, `bclusters`, `bhist`, `bacct`, `lsid`, `bparams`,
//! `brsvs`, `bkill`, `bstop`, `bresume`, `brequeue`, `bswitch`, `bmod`),
//! analysis (`report`, `sweep`), traces (`gen swf`, `gen lsb-acct`,
//! `replay`), LSF configuration (`import lsf`, `export lsf`), LSF's own
//! command names (`lsf-env`, and mcfed run as `bsub`, `bjobs`, ...) and the
//! printing `run` and `launch` share. Each module parses its own arguments
//! and calls the libraries.

pub(crate) mod analysis;
pub(crate) mod import;
pub(crate) mod lsf;
pub(crate) mod lsf_names;
pub(crate) mod processes;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod submit;
pub(crate) mod sweep;
pub(crate) mod traces;

/// The options LSF spells with one dash and several letters.
const ONE_DASH_LONG: [&str; 10] = [
    "-fwd",
    "-json",
    "-sp",
    "-Wn",
    "-We",
    "-gpu",
    "-aps",
    "-apsn",
    "-prio",
    "-noheader",
];

/// LSF spells some long options with one dash (`bjobs -fwd`, `-json`,
/// `bsub -sp`, `bmod -Wn`, `bsub -We`, `bsub -gpu`, `bjobs -aps`, `bmod
/// -apsn`, `bjobs -prio`, `-noheader`); clap wants two.
/// Rewrites them before parsing.
pub(crate) fn lsf_spellings(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    args.into_iter()
        .map(|arg| match arg.to_str() {
            Some(text) if ONE_DASH_LONG.contains(&text) => format!("-{text}").into(),
            _ => arg,
        })
        .collect()
}
