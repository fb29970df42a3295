//! leasetrace: incident forensics for job queues.
//!
//! Data flows one way: sources (`ingest`) → one UTC timeline (`model`) → findings (`detect`) →
//! output (`render`). `config` validates everything the user said before any of it runs.
//!
//! # A map of the house
//!
//! - **`commands/`**: one file per verb (`timeline`, `analyze`, `check`, `lock`, `init`,
//!   `capture`, `explain`, `docs`, `completions`, `man`), each with what its arguments mean and its `run`;
//!   `main.rs` parses the command line (`cli`, the only place clap's types live) and dispatches.
//! - **`analysis`**: the one way from a validated `Config` to a finished `Report`: read every
//!   source, build the timeline, resolve the lock parameters, run the detectors, gather the
//!   warnings and assumptions.
//! - **`ingest/`**: sources → events, one folder per source family, each with its `FORMATS`:
//!   `ledger/` (CSV, JSON Lines), `log/` (text, pino, winston, NestJS, the rules that classify a
//!   message, logged worker settings), `bullmq/` (events stream, job hashes, worker options),
//!   `trace/` (OpenTelemetry spans of BullMQ workers, as OTLP JSON), `envelope/` (the platforms' wrappers: kubectl, CRI, journald, Loki, CloudWatch, ...), and
//!   `io/`, the mechanics every reader shares (lines, gzip, read-ahead, spooling, reading back).
//! - **`model/`**: the shared vocabulary: events and their origins, the timeline, rounds and
//!   attempts, lock parameters, findings, chains, the inputs' summaries and the report.
//! - **`detect/`**: one file per finding, registered in `detect::DETECTORS`; a detector reads the
//!   timeline and writes findings, and knows nothing of files or printing.
//! - **`render/`**: one file per output format, registered in `render::RENDERERS`; a renderer is
//!   a sink over a finished report and computes nothing.
//! - **`init/`** and **`capture/`**: the rooms of the two verbs that look at the world: `init`
//!   reads a folder of exports and drafts a manifest; `capture` reads BullMQ's records from a live
//!   Redis into a case folder (read-only).
//! - **`coverage`**: what a source cannot speak for (the times before a trimmed events stream
//!   begins), said under Assumptions.
//! - **`docs`**: every page of docs/ carried in the binary, by topic (`leasetrace docs TOPIC`),
//!   which messages and help texts cite.
//! - **`time`** (zones, folds, `Moment`), **`error`**, **`progress`**, **`terminal`**,
//!   **`confine`** (sources kept inside the case folder), **`spelling`** (did you mean),
//!   **`parallel`** and **`phases`**: the ground floor, used by all and using none of the rooms
//!   above.

pub mod analysis;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod config;
pub mod confine;
pub mod coverage;
pub mod detect;
pub mod docs;
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
pub mod spelling;
pub mod terminal;
pub mod time;

pub use analysis::build_report;
