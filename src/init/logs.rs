//! Recognising a server log and reading its sampled lines: the time each was written (with or
//! without an offset), the message the log rules would see, and the ids its JSON keys give.
//! The zone proposer pairs these lines with moments of the same jobs and runs elsewhere; the rule
//! proposer looks at their wording.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::Value;

use crate::ingest::log::fields::Classified;
use crate::ingest::log::nestjs::strip_ansi;
use crate::ingest::log::rules::RuleSet;
use crate::ingest::log::structured::{error_text, json_fields};
use crate::ingest::{self, SourceKind};
use crate::model::{Channel, Event, EventKind, Moment, Origin};
use crate::time::fold::{LineOrder, Placed};
use crate::time::{self, Ambiguous, Leading, Stamp};

use super::sample::Sample;

#[derive(Debug)]
pub struct LogLine {
    pub line: u64,
    pub stamp: Stamp,
    /// What the log rules match: the text after the timestamp (text, NestJS) or the message key.
    pub message: String,
    /// Ids and names from the line's JSON keys (pino, winston).
    pub fields: Classified,
    /// The message of the Error the line carries (pino's `err`, winston's and NestJS's `error`,
    /// else its stack's first line): the rules read it when the message says nothing they know
    /// (`{"err":{"message":"Lock mismatch for job 42. ..."},"msg":"worker error"}`).
    pub error: Option<String>,
}

impl LogLine {
    /// What the log rules read of the line: its message, or the error it carries when the rules
    /// find nothing in the message (as `ingest::log::structured::emit` does).
    pub fn classify(&self, rules: &RuleSet) -> Classified {
        let found = rules.classify(&self.message);
        if found.kind.is_some() {
            return found;
        }
        match self.error.as_deref().map(|error| rules.classify(error)) {
            Some(in_error) if in_error.kind.is_some() => in_error,
            _ => found,
        }
    }

    /// The line as an example shows it: its message, and the error it carries.
    pub fn shown(&self) -> String {
        match &self.error {
            Some(error) => format!("{} [error: {error}]", self.message),
            None => self.message.clone(),
        }
    }
}

#[derive(Debug)]
pub struct Found {
    /// The log format, or the envelope's (`kubectl`).
    pub format: &'static str,
    /// In an envelope: the structured format of the lines inside (`pino`), written after the
    /// envelope's name (`kubectl+pino`) so that the reader takes every record as such, whatever
    /// the first one is.
    pub inner: Option<&'static str>,
    pub lines: Vec<LogLine>,
    /// Lines whose time has no offset.
    pub naive: usize,
    /// The line of the first one, with its text, for the evidence.
    pub first_naive: Option<(u64, String)>,
    /// Every sampled time is a whole second (NestJS always): the log's time resolution.
    pub whole_seconds: bool,
    /// Read inside a log envelope (`kubectl`, `journald-json`, ...): the envelope's UTC time of
    /// each sampled record that has one, by the record's line. Each is the same moment as the
    /// line's own time, so a naive line measures its zone against its own envelope.
    pub envelope: Vec<(u64, DateTime<Utc>)>,
}

/// The structured log formats, told by their lines' shape.
const STRUCTURED: [&str; 3] = ["pino", "winston", "nestjs"];

impl Found {
    /// The format to declare: `pino`, `text`, `kubectl`, or `kubectl+pino`.
    pub fn declared(&self) -> String {
        match self.inner {
            Some(inner) => format!("{}+{inner}", self.format),
            None => self.format.to_string(),
        }
    }
}

pub fn recognise(sample: &Sample) -> Option<Found> {
    let first = sample.first_line()?;
    // The first line's format, else the one most of the first 50 lines have (a banner, `npm
    // start`'s echo, before the JSON lines).
    let head: Vec<&str> = sample.lines().take(50).map(|(_, line)| line.trim()).collect();
    let structured = ingest::plain_formats()
        .filter(|f| f.kind() == SourceKind::Log && STRUCTURED.contains(&f.name()))
        .find(|f| f.sniff(first))
        .or_else(|| {
            ingest::plain_formats()
                .filter(|f| f.kind() == SourceKind::Log && STRUCTURED.contains(&f.name()))
                .map(|f| (f, head.iter().filter(|line| f.sniff(line)).count()))
                .filter(|(_, count)| count * 2 > head.len())
                .max_by_key(|(_, count)| *count)
                .map(|(f, _)| f)
        });
    let format = if let Some(format) = structured {
        format.name()
    } else {
        // A banner before the first stamped line is a continuation: most lines decide. A time
        // followed by a comma or tab after a first line without one is a table's column.
        let head: Vec<&str> = sample.lines().take(50).map(|(_, line)| line).collect();
        let table = !matches!(time::leading_stamp(first), Leading::Found(..));
        let stamped = head
            .iter()
            .filter(|line| match time::leading_stamp(line) {
                Leading::Found(_, at) => !(table && matches!(line.as_bytes().get(at), Some(b',' | b'\t'))),
                _ => false,
            })
            .count();
        if stamped == 0 || stamped * 2 < head.len() {
            return None;
        }
        "text"
    };
    let mut found = Found {
        format,
        inner: None,
        lines: Vec::new(),
        naive: 0,
        first_naive: None,
        whole_seconds: true,
        envelope: Vec::new(),
    };
    for (line, text) in sample.lines() {
        let parsed = match format {
            "text" => text_line(text),
            "nestjs" => nest_line(text),
            "pino" => json_line(text, "time", "msg"),
            _ => json_line(text, "timestamp", "message"),
        };
        let Some((stamp, message, fields, error)) = parsed else { continue };
        if let Stamp::Local(naive) = stamp {
            found.naive += 1;
            found.first_naive.get_or_insert_with(|| (line, text.to_string()));
            found.whole_seconds &= naive.and_utc().timestamp_subsec_millis() == 0;
        }
        found.lines.push(LogLine { line, stamp, message, fields, error });
    }
    Some(found)
}

/// A log inside an envelope: the envelope that knows the sample, and the application's lines in
/// its records read as `recognise` reads a log, each numbered by its record's line.
pub fn recognise_enveloped(sample: &Sample) -> Option<Found> {
    let envelope = ingest::envelope::ENVELOPES.iter().map(|format| format.0).find(|e| e.sniff(&sample.text))?;
    let context = ingest::envelope::Context {
        path: std::path::Path::new("sample"),
        max_line_bytes: ingest::io::lines::MAX_LINE_BYTES,
    };
    let input = Box::new(std::io::Cursor::new(sample.text.clone().into_bytes()));
    // A sample ends mid-record when the file goes on: the records before it are enough.
    let records: Vec<ingest::envelope::Record> = envelope
        .pieces(input, context)
        .map_while(std::result::Result::ok)
        .filter_map(|piece| match piece {
            ingest::envelope::Piece::Record(record) => Some(record),
            _ => None,
        })
        .collect();
    // As the reader gets them (`envelope::unwrap`): each message's first line, colour codes left out.
    let messages: Vec<String> = records
        .iter()
        .map(|r| strip_ansi(r.message.split(['\n', '\r']).next().unwrap_or_default()).into_owned())
        .collect();
    let inner = Sample { text: messages.join("\n"), truncated: false, lossy: sample.lossy };
    let mut found = recognise(&inner).unwrap_or(Found {
        format: "text",
        inner: None,
        lines: Vec::new(),
        naive: 0,
        first_naive: None,
        whole_seconds: false,
        envelope: Vec::new(),
    });
    for line in &mut found.lines {
        line.line =
            usize::try_from(line.line).ok().and_then(|l| records.get(l.checked_sub(1)?)).map_or(line.line, |r| r.line);
    }
    if let Some((line, _)) = &mut found.first_naive {
        *line = usize::try_from(*line).ok().and_then(|l| records.get(l.checked_sub(1)?)).map_or(*line, |r| r.line);
    }
    found.envelope = records.iter().filter_map(|r| Some((r.line, r.at?.utc()))).collect();
    if found.lines.is_empty() {
        // The lines carry no time of their own: each record's is the envelope's, with an offset.
        found.lines = records
            .iter()
            .filter_map(|r| {
                let at = r.at?.utc();
                let message = r.message.split(['\n', '\r']).next().unwrap_or_default().to_string();
                Some(LogLine {
                    line: r.line,
                    stamp: Stamp::Absolute(at),
                    message,
                    fields: Classified::default(),
                    error: None,
                })
            })
            .collect();
        found.envelope.clear();
    }
    found.inner = STRUCTURED.contains(&found.format).then_some(found.format);
    found.format = envelope.name();
    Some(found)
}

/// Each line's instant in `tz`, placed as `analyze` places a log's lines (`ambiguous = "order"`,
/// a log's default): a time that a fall-back makes happen twice by the lines around it
/// (`time::fold::LineOrder`), so that init and analyze put a line at the same moment. A time the
/// clocks skipped, a naive time without a zone, or a repeated hour that line order cannot tell
/// (the sample is all inside it) is unplaced (`None`).
pub fn instants(lines: &[LogLine], tz: Option<Tz>) -> Vec<Option<DateTime<Utc>>> {
    let mut order = LineOrder::new(tz, Ambiguous::Order);
    let mut placed: Vec<Option<DateTime<Utc>>> = Vec::with_capacity(lines.len());
    // The order moves the events it was told about once it knows their pass: one stand-in event
    // per line it placed as pending, with the index of that line.
    let mut held: Vec<(Event, usize)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let at = match (line.stamp, order.as_mut()) {
            (Stamp::Local(local), Some(order)) => match order.local(line.line, local) {
                Placed::Outside => line.stamp.to_utc(tz).ok(),
                Placed::In { at, pending: false } => Some(at),
                Placed::In { at, pending: true } => match Moment::new(at) {
                    Ok(moment) => {
                        let origin = Origin {
                            channel: Channel::Log,
                            source: 0,
                            line: u32::try_from(line.line).unwrap_or(u32::MAX),
                        };
                        held.push((Event::new(moment, EventKind::JobActive, origin), index));
                        order.hold(held.len() - 1);
                        Some(at)
                    }
                    Err(_) => None,
                },
            },
            _ => line.stamp.to_utc(tz).ok(),
        };
        placed.push(at);
    }
    if let Some(order) = order {
        let (mut events, indexes): (Vec<Event>, Vec<usize>) = held.into_iter().unzip();
        let told = order.finish(&mut events, "ambiguous").is_ok();
        for (event, index) in events.iter().zip(indexes) {
            placed[index] = told.then(|| event.at());
        }
    }
    placed
}

/// A line's time, the text the rules see, the ids of its keys and the error it carries.
type Parsed = (Stamp, String, Classified, Option<String>);

fn text_line(text: &str) -> Option<Parsed> {
    let Leading::Found(stamp, offset) = time::leading_stamp(text) else { return None };
    Some((stamp, text.get(offset..)?.trim_start().to_string(), Classified::default(), None))
}

/// `[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active ...`: the date, and the
/// level, context and message after it (what the rules see), as the NestJS reader reads it.
fn nest_line(text: &str) -> Option<Parsed> {
    crate::ingest::log::nestjs::read_line(text)
}

fn json_line(text: &str, time_key: &str, message_key: &str) -> Option<Parsed> {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else { return None };
    let stamp = match object.get(time_key)? {
        Value::String(text) => time::parse_field(text).ok()?,
        Value::Number(number) => time::parse_field(&number.to_string()).ok()?,
        _ => return None,
    };
    let message = match object.get(message_key) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => String::new(),
    };
    Some((stamp, message, json_fields(&object), error_text(&object)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_gives_time_message_and_key_ids() {
        let text = recognise(&Sample::from_text(
            "starting...\n2026-10-07 09:33:00.012 INFO [BullWorker] job active id=7\n2026-10-07 09:33:01 INFO x\n",
        ))
        .unwrap();
        assert_eq!(text.format, "text");
        assert_eq!(text.lines.len(), 2, "the banner is not a line with a time");
        assert_eq!(text.lines[0].message, "INFO [BullWorker] job active id=7");
        assert_eq!((text.naive, text.whole_seconds), (2, false));
        assert_eq!(text.first_naive.as_ref().map(|(line, _)| *line), Some(2));

        let nest = recognise(&Sample::from_text(
            "[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active id=7\nError: x\n",
        ))
        .unwrap();
        assert_eq!(nest.format, "nestjs");
        assert_eq!(nest.lines[0].message, "LOG [BullWorker] job active id=7");
        assert!(nest.whole_seconds);

        let pino = recognise(&Sample::from_text(
            r#"{"level":30,"time":1791333180004,"pid":41877,"jobId":"repeat:a:1791333180000","msg":"job active"}"#,
        ))
        .unwrap();
        assert_eq!(pino.format, "pino");
        assert!(matches!(pino.lines[0].stamp, Stamp::Absolute(_)));
        assert_eq!(pino.lines[0].fields.job_id.as_deref(), Some("repeat:a:1791333180000"));
        assert_eq!(pino.naive, 0);
    }

    fn instants_of(times: &[&str]) -> Vec<Option<String>> {
        let text: String = times.iter().flat_map(|t| [t, " INFO x\n"]).collect();
        let found = recognise(&Sample::from_text(&text)).unwrap();
        instants(&found.lines, Some(chrono_tz::America::Los_Angeles))
            .into_iter()
            .map(|at| at.map(|at| at.format("%H:%M:%SZ").to_string()))
            .collect()
    }

    #[test]
    fn lines_in_a_repeated_hour_are_placed_by_their_order_and_a_skipped_time_not_at_all() {
        // Los Angeles, 2026-11-01: 01:00-02:00 happens twice (PDT, then PST).
        let placed = instants_of(&["2026-11-01 00:50:00", "2026-11-01 01:40:00", "2026-11-01 01:10:00"]);
        assert_eq!(placed, [Some("07:50:00Z".into()), Some("08:40:00Z".into()), Some("09:10:00Z".into())]);
        // A log that starts in the hour: its first lines wait for the step back.
        let placed = instants_of(&["2026-11-01 01:40:00", "2026-11-01 01:10:00"]);
        assert_eq!(placed, [Some("08:40:00Z".into()), Some("09:10:00Z".into())]);
        // ... or for a line past the hour, without one: they were the second pass.
        let placed = instants_of(&["2026-11-01 01:40:00", "2026-11-01 02:10:00"]);
        assert_eq!(placed, [Some("09:40:00Z".into()), Some("10:10:00Z".into())]);
        // All in the hour, no step back: line order cannot tell.
        assert_eq!(instants_of(&["2026-11-01 01:10:00", "2026-11-01 01:40:00"]), [None, None]);
        // 2026-03-08 02:30 did not happen there.
        assert_eq!(instants_of(&["2026-03-08 01:50:00", "2026-03-08 02:30:00"]), [Some("09:50:00Z".into()), None]);
    }

    /// `kubectl logs --timestamps` of a pod whose app writes pino, the way the fleet's pods do;
    /// the first record is the npm script's echo, not JSON.
    const KUBECTL_PINO: &str = r#"2026-12-06T02:42:51.800000000Z > review-bot@4.2.0 start
2026-12-06T02:42:51.827888183Z {"level":30,"time":1796524971786,"pid":27806,"hostname":"review-bot-7d9f8c6b5-8nbbd","msg":"server starting"}
2026-12-06T02:42:53.842094238Z {"level":30,"time":1796524973839,"pid":27806,"hostname":"review-bot-7d9f8c6b5-8nbbd","queue":"review","jobId":"gh-1001","jobName":"review-pr","msg":"job active"}
2026-12-06T02:43:10.082683105Z {"level":40,"time":1796524990076,"pid":27806,"hostname":"review-bot-7d9f8c6b5-8nbbd","queue":"review","jobId":"gh-1007","err":{"type":"Error","message":"HTTP 502 Bad Gateway from review-api","stack":"Error: HTTP 502 Bad Gateway from review-api\n    at review-pr (file:///app/pod.mjs:184:21)"},"msg":"job failed"}
2026-12-06T02:43:11.000000000Z {"level":50,"time":1796524991000,"pid":27806,"hostname":"review-bot-7d9f8c6b5-8nbbd","err":{"type":"Error","message":"Lock mismatch for job gh-1003. Cmd moveToFinished from active","stack":"Error: Lock mismatch for job gh-1003. Cmd moveToFinished from active\n    at Scripts.finishedErrors"},"msg":"worker error"}
"#;

    #[test]
    fn pino_inside_kubectl_is_declared_as_both_whatever_the_first_record() {
        let found = recognise_enveloped(&Sample::from_text(KUBECTL_PINO)).unwrap();
        assert_eq!((found.format, found.inner, found.declared().as_str()), ("kubectl", Some("pino"), "kubectl+pino"));
        assert_eq!(found.lines.len(), 4, "the echo has no time of its own");
        assert_eq!(found.lines[1].message, "job active");
        assert_eq!(found.lines[1].fields.job_id.as_deref(), Some("gh-1001"));
        assert_eq!(found.lines[1].line, 3, "numbered by the export's lines");
        // A logged Error's own words, as the rules read them.
        assert_eq!(found.lines[2].error.as_deref(), Some("HTTP 502 Bad Gateway from review-api"));
        let rules = RuleSet::new(&[], true, "t").unwrap();
        let refused = found.lines[3].classify(&rules);
        assert_eq!((refused.kind, refused.job_id.as_deref()), (Some(EventKind::LockRefused), Some("gh-1003")));
        // A plain log (no envelope) with a banner first: the format most lines have.
        let plain: String = KUBECTL_PINO.lines().flat_map(|l| [&l[31..], "\n"]).collect();
        let plain = recognise(&Sample::from_text(&plain)).unwrap();
        assert_eq!((plain.format, plain.inner), ("pino", None));
    }

    #[test]
    fn winston_and_nestjs_errors_are_read_as_their_readers_read_them() {
        let winston = recognise(&Sample::from_text(
            r#"{"level":"error","message":"worker error","timestamp":"2026-10-07T00:21:12.901Z","error":{"message":"Missing lock for job 8815. moveToFinished","stack":"Error: Missing lock for job 8815. moveToFinished"}}"#,
        ))
        .unwrap();
        assert_eq!(winston.format, "winston");
        assert_eq!(winston.lines[0].error.as_deref(), Some("Missing lock for job 8815. moveToFinished"));
        let nest = recognise(&Sample::from_text(
            "[Nest] 41877  - 10/07/2026, 9:33:00 AM    WARN [BullWorker] worker error { error: 'Lock mismatch for job 7. Cmd moveToFinished from active' } +3ms\n",
        ))
        .unwrap();
        assert_eq!(nest.lines[0].message, "WARN [BullWorker] worker error", "params and elapsed time apart");
        assert_eq!(nest.lines[0].error.as_deref(), Some("Lock mismatch for job 7. Cmd moveToFinished from active"));
        let rules = RuleSet::new(&[], true, "t").unwrap();
        assert_eq!(nest.lines[0].classify(&rules).kind, Some(EventKind::LockRefused));
    }

    #[test]
    fn a_table_is_not_a_log() {
        assert!(recognise(&Sample::from_text("at,run\n2026-10-07T00:00:00Z,r1\n")).is_none());
        assert!(recognise(&Sample::from_text("[Nest] garbage\n")).unwrap().lines.is_empty());
    }
}
