//! Traces: the spans a BullMQ worker's telemetry (`bullmq-otel`) exports, one span per attempt of a
//! job with nanosecond UTC times. `otlp` reads the OTLP JSON encoding (the Collector's file
//! exporter, an OTLP/HTTP request body). A span needs no zone, and no log line to be written: of
//! all the evidence a responder can have, it is the most exact about when an attempt began and
//! ended.

pub mod otlp;

use super::EventFormat;

/// The trace formats, in the order they are tried (`ingest::FAMILIES`).
pub const FORMATS: &[&dyn EventFormat] = &[&otlp::OtlpJson];
