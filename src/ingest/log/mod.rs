//! The log readers: a server's own lines, whatever library wrote them. `text` reads plain lines
//! that start with a timestamp; `pino`, `winston` and `nestjs` read what those Node loggers write;
//! `rules` classifies a message into a typed event (the user's rules, then the built-in ones) and
//! `worker_settings` finds the lock parameters an app logs at boot. A log inside a platform's
//! envelope (kubectl, journald, Loki, ...) is unwrapped by `ingest::envelope` and its lines handed
//! to one of these.

pub mod fields;
pub mod nestjs;
pub mod pino;
pub mod rules;
pub mod structured;
pub mod text;
pub mod winston;
pub mod worker_settings;

use super::EventFormat;

/// The log formats, in the order they are tried (`ingest::FAMILIES`): the plain text reader
/// first, the structured ones (known by their content alone) after it.
pub const FORMATS: &[&dyn EventFormat] = &[&text::ServerLog, &pino::Pino, &winston::Winston, &nestjs::NestJs];
