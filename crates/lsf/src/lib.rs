//! mcfed's reader and writer of LSF configuration: one parser for the
//! grammar of LSF's files ([`grammar`]), the catalogue of every parameter
//! and what mcfed makes of it ([`catalog`]), the import of a site's
//! configuration directories into a federation ([`import`]) written as a
//! scenario's TOML with the source of each value ([`render`]), and the
//! export of a federation's clusters as lsb.* files ([`export`]).
//!
//! docs/lsf-import.md lists every parameter by file.

pub mod grammar;
pub mod limits;
pub mod source;

pub use source::{Diagnostic, Location, Severity, Spanned};
pub mod catalog;
pub mod doc;
pub mod export;
pub mod import;
pub mod notes;
pub mod render;

pub use doc::{ClusterDoc, FederationDoc};
pub use import::{ClusterSource, ImportError, ImportOptions, import, import_cluster};
