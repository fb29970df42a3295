//! Traces: the spans a BullMQ worker's telemetry (`bullmq-otel`) exports, one span per attempt of a
//! job with nanosecond UTC times. `otlp` reads the OTLP JSON encoding (the Collector's file
//! exporter, an OTLP/HTTP request body, Grafana Tempo's query API); `jaeger` reads Jaeger's query
//! API and UI JSON, by turning each span back into the OTLP span Jaeger made it from. A span
//! needs no zone, and no log line to be written: of all the evidence a responder can have, it is the most exact about when an attempt began and
//! ended.

pub mod jaeger;
mod json;
pub mod otlp;

use super::EventFormat;

/// The trace formats (`ingest::FAMILIES`), new ones last (a fuzz seed's format byte is an index
/// here). Jaeger's has no file ending of its own (an export is a `.json` file as OTLP's are): it is
/// told by its content, which `choose_format` tries before the endings.
pub const FORMATS: &[&dyn EventFormat] = &[&otlp::OtlpJson, &jaeger::JaegerJson];
