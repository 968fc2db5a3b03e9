//! Bounds on everything read from configuration files, so a hostile or
//! broken file cannot make an import use unbounded memory or time.

/// The largest configuration file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The longest logical line (after `\` continuations are joined), in bytes.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
/// How deeply `#INCLUDE`s may nest.
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// How many files one configuration file may pull in through `#INCLUDE`s.
pub const MAX_INCLUDED_FILES: usize = 256;
/// How many sections one file (with its includes) may hold.
pub const MAX_SECTIONS: usize = 100_000;
/// How many columns a table may have.
pub const MAX_COLUMNS: usize = 256;
/// How many hosts one cluster may have.
pub const MAX_HOSTS: usize = 100_000;
/// How many queues one cluster may have.
pub const MAX_QUEUES: usize = 10_000;
/// How many clusters one import may hold.
pub const MAX_CLUSTERS: usize = 1_000;
/// How deeply host and user groups may nest.
pub const MAX_GROUP_DEPTH: usize = 32;
/// How many names one group may expand to.
pub const MAX_GROUP_MEMBERS: usize = 1_000_000;
