//! leasetrace: incident forensics for job queues.
//!
//! Data flows one way: sources (`ingest`) → one UTC timeline (`model`) → findings (`detect`) →
//! output (`render`). `config` validates everything the user said before any of it runs.

pub mod analysis;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod config;
pub mod confine;
pub mod coverage;
pub mod detect;
pub mod error;
/// What the fuzz targets (fuzz/) and their stable regression test run: not an API.
#[doc(hidden)]
pub mod fuzzing;
pub mod ingest;
pub mod init;
pub mod model;
pub mod parallel;
pub mod phases;
pub mod progress;
pub mod render;
pub mod terminal;
pub mod time;

pub use analysis::build_report;
