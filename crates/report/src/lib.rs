//! Reports on mcfed runs.
//!
//! - [`input`]: reading the JSON lines `mcfed run --report json --events`
//!   (or `mcfed launch`) writes;
//! - [`summary`]: the figures of a run (decisions per mode, forwards per
//!   queue, stale decisions, view age, wait per cluster, ...);
//! - [`timeline`]: what happened to each job, step by step;
//! - [`plots`]: SVG plots drawn with plotters (no C font libraries);
//! - [`markdown`]: all of it as Markdown for pasting into a ticket;
//! - [`html`]: all of it as one self-contained HTML page, with the plots
//!   inline and a searchable timeline of every job;
//! - [`cells`]: a sweep's table (the sweeps themselves run in
//!   `mcfed-sweep`).

pub mod cells;
pub mod html;
pub mod input;
pub mod markdown;
pub mod plots;
pub mod summary;
mod tables;
pub mod timeline;

pub use input::{Records, ReportError, read_records, read_runs};
pub use summary::Summary;
pub use timeline::{JobTimeline, timelines};
