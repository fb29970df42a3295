//! BullMQ's own records: its events stream as `XRANGE` exports it (`events`), its job hashes as
//! `HGETALL` and the dumps people make of them (`jobs`), and its worker options wherever a config
//! keeps them (`params`, over the line-keeping JSON/YAML tree of `document`). The stream and the
//! hashes carry Redis's clock in epoch milliseconds: nothing here needs a zone.

pub mod document;
pub mod events;
pub mod jobs;
pub mod params;

use super::EventFormat;

/// BullMQ's record formats, in the order they are tried (`ingest::FAMILIES`).
pub const FORMATS: &[&dyn EventFormat] =
    &[&events::XrangeJson, &events::XrangeText, &jobs::HgetallJson, &jobs::HgetallText];
