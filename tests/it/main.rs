//! The end-to-end tests of the `mcfed` binary, one test binary (as ripgrep's
//! tests/it): CLI parsing and messages, exit codes, live cluster processes
//! over QUIC, kill -9 and restarts. What a library shows on its own is
//! tested in its crate. `common` holds the one way to run `mcfed` and the
//! test federations.

mod admin_commands;
mod aps_live;
mod aps_scenarios;
mod architecture;
mod batch_sweep;
mod chaos;
mod cli;
mod common;
mod documented_commands;
mod first_impressions;
mod forwarding_examples;
mod journal_damage;
mod kill_under_load;
mod launch_chaos;
mod launched_summary;
mod limits;
mod load;
mod long_answers;
mod lsb_acct;
mod lsf_import;
mod lsf_names;
mod processes;
mod recovery;
mod report;
mod reservations_live;
mod scheduling_examples;
mod separate_hosts;
mod traces;
mod unreachable;
mod web;
