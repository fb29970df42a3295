//! BullMQ's own records: its events stream as `XRANGE` exports it (`events`), its job hashes as
//! `HGETALL` and the dumps people make of them (`jobs`), its worker options wherever a config
//! keeps them (`params`, over the line-keeping JSON/YAML tree of `document`), and the tables of its
//! PostgreSQL backend read as the same records (`postgres`). Every time is epoch milliseconds:
//! nothing here needs a zone.

pub mod document;
pub mod events;
pub mod jobs;
pub mod params;
pub mod postgres;

use super::EventFormat;

/// BullMQ's record formats, in the order they are tried (`ingest::FAMILIES`).
pub const FORMATS: &[&dyn EventFormat] = &[
    &events::XrangeJson,
    &events::XrangeText,
    &jobs::HgetallJson,
    &jobs::HgetallText,
    &postgres::events::PgEventTable,
    &postgres::jobs::PgJobTable,
    &postgres::meta::PgMetaTable,
];
