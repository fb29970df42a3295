//! Recognising OpenTelemetry traces: OTLP JSON, one `{"resourceSpans": [...]}` object a line (the
//! Collector's file exporter, a saved OTLP/HTTP body). Told by its first line, then read by the
//! trace reader on the sample, as `analyze` will read it: its times are UTC nanoseconds, so the
//! source needs no zone, and its job moments say which job ids the folder's other files name.

use crate::model::{Event, EventKind};

use super::sample::Sample;
use super::{Reference, What};

#[derive(Debug)]
pub struct Found {
    /// The format read, as the messages name it.
    pub format: &'static str,
    /// The sampled lines and those with a BullMQ job span.
    pub lines: u64,
    pub used: u64,
    /// The events the spans gave, and the moments of jobs among them.
    pub events: u64,
    pub moments: Vec<Reference>,
}

impl Found {
    pub fn evidence(&self) -> String {
        format!(
            "{}, {} of {} lines with BullMQ job spans (process, job stalled, add), {} events",
            self.format, self.used, self.lines, self.events
        )
    }
}

/// The trace format the sample's start is in (OTLP JSON, Tempo's answers, Jaeger JSON, compact or
/// pretty-printed), if any.
pub fn format_of(sample: &Sample) -> Option<&'static str> {
    crate::ingest::trace::FORMATS.iter().find(|format| format.sniff_head(&sample.text)).map(|format| format.name())
}

/// What the trace reader made of the sample (`read`: its events and account).
pub fn found(read: &[Event], summary: &crate::model::InputSummary) -> Found {
    let what = |kind| match kind {
        EventKind::JobActive => What::Active,
        EventKind::JobStalled => What::Stalled,
        EventKind::JobFailed => What::Failed,
        EventKind::JobCompleted => What::Completed,
        _ => What::Other,
    };
    let moments = read
        .iter()
        .filter_map(|event| {
            let id = event.job_id?.to_string();
            Some(Reference {
                id,
                at: event.at(),
                what: what(event.kind),
                file: 0,
                line: u64::from(event.origin().line),
            })
        })
        .collect();
    let format = match summary.format {
        "jaeger-json" => "Jaeger JSON",
        "redis-monitor" => "redis-cli MONITOR",
        _ => "OTLP JSON",
    };
    Found { format, lines: summary.lines, used: summary.used, events: read.len() as u64, moments }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_told_by_its_first_line() {
        assert_eq!(format_of(&Sample::from_text("\n{\"resourceSpans\":[]}\n")), Some("otlp-json"));
        assert_eq!(format_of(&Sample::from_text("{\"level\":30,\"msg\":\"resourceSpans\"}\n")), None);
        assert_eq!(format_of(&Sample::from_text("{\"batches\":[{\"scopeSpans\":[]}]}")), Some("otlp-json"));
        let jaeger = "{\n  \"data\": [\n    {\n      \"traceID\": \"1b34\",\n      \"spans\": []\n    }\n  ]\n}\n";
        assert_eq!(format_of(&Sample::from_text(jaeger)), Some("jaeger-json"));
    }
}
