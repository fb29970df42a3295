//! Amazon CloudWatch Logs as the AWS CLI prints it: `aws logs filter-log-events` (and
//! `get-log-events`) with `--output json`, the default.
//!
//! The response (botocore's model `logs/2014-03-28/service-2.json`, `FilterLogEventsResponse`)
//! is one document: `{"events": [{"logStreamName", "timestamp", "message", "ingestionTime",
//! "eventId"}], "searchedLogStreams": [], "nextToken"}`; the CLI follows `nextToken` itself and
//! prints every page's events in one `events` array, indented by 4. `get-log-events`
//! (`GetLogEventsResponse`) has the same `events` without `logStreamName`. `timestamp` is when
//! the event happened (ms since 1970, UTC: the agent's reading of the line), `ingestionTime`
//! when CloudWatch took it. The same events saved one per line (`jq -c '.events[]'`) are read
//! too (`json_records`).

use std::io::BufRead;

use serde_json::{Map, Value};

use super::json_records::{self, Read, Shape};
use super::{Context, Envelope, Labels, Piece};
use crate::error::Result;

pub struct CloudwatchJson;

static SHAPE: Shape = Shape {
    path: &["events"],
    outside: "outside the `events` array: the document's brackets and its other keys \
              (`searchedLogStreams`, `nextToken`, `nextForwardToken`)",
    example: EXAMPLE,
};

const EXAMPLE: &str = r#"{"logStreamName": "i-0abc", "timestamp": 1791330600000, "message": "2026-10-07 08:50:00.000 INFO  [main] started", "ingestionTime": 1791330600125, "eventId": "3868..."}"#;

impl Envelope for CloudwatchJson {
    fn name(&self) -> &'static str {
        "cloudwatch-json"
    }

    /// JSON with CloudWatch's event keys: `timestamp` and `ingestionTime` as numbers. An app
    /// log in JSON has a time but no ingestion time.
    fn sniff(&self, head: &str) -> bool {
        const NUMBER: &[u8] = b"0123456789";
        json_records::looks_like_json(head)
            && json_records::has_key(head, "ingestionTime", NUMBER)
            && json_records::has_key(head, "timestamp", NUMBER)
            && json_records::has_key(head, "message", b"\"")
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        json_records::pieces(input, context, &SHAPE, event)
    }
}

/// One event: `message` is the line as the agent sent it (its `\n` kept when the agent kept
/// it), `timestamp` its time in ms.
fn event(object: &Map<String, Value>) -> std::result::Result<Read, String> {
    let Some(Value::String(message)) = object.get("message") else {
        return Err("no `message` string".into());
    };
    let at = match object.get("timestamp") {
        Some(Value::Number(number)) => match number.as_i64().and_then(json_records::epoch_millis) {
            Some(at) => at,
            None => return Err(format!("`timestamp` {number} is not a time in milliseconds since 1970")),
        },
        Some(other) => return Err(format!("`timestamp` is {other}, not milliseconds since 1970")),
        None => return Err("no `timestamp` (milliseconds since 1970)".into()),
    };
    let mut labels = Labels::default();
    // Not in the API's event: a group only when a tool that read several groups added it.
    for key in ["logGroupName", "logGroupIdentifier"] {
        if let Some(Value::String(group)) = object.get(key) {
            labels.push("log_group", group.as_str());
            break;
        }
    }
    if let Some(Value::String(stream)) = object.get("logStreamName") {
        labels.push("log_stream", stream.as_str());
    }
    Ok(Read { at: Some(at), labels, message: json_records::without_line_end(message) })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ingest::envelope::testing::{lines, records};

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("events.json"), max_line_bytes: 1 << 20 };
        CloudwatchJson.pieces(Box::new(std::io::Cursor::new(text.to_string())), context).map(|p| p.unwrap()).collect()
    }

    /// As `aws logs filter-log-events` prints it (4-space indent, `ensure_ascii` off).
    const FILTERED: &str = r#"{
    "events": [
        {
            "logStreamName": "i-0a1b2c3d4e5f60718",
            "timestamp": 1791330600004,
            "message": "2026-10-07 08:50:00.000 INFO  [main] log rotated pid=41877\n",
            "ingestionTime": 1791330600131,
            "eventId": "39268450380948234808340245823099478235672318263848960000"
        },
        {
            "logStreamName": "i-0a1b2c3d4e5f60718",
            "timestamp": 1791330602339,
            "message": "2026-10-07 08:50:02.334 DEBUG [Redis] ping \"ok\" — 지연 0.30ms",
            "ingestionTime": 1791330602401,
            "eventId": "39268450433016718938327617087040045837216372418293760001"
        }
    ],
    "searchedLogStreams": [],
    "nextToken": "Bxkq6kVGFtq2y_MoigeqscPOdhXVbhiVtLoAmXb5jCrI7fXDrEA"
}
"#;

    #[test]
    fn filter_log_events_gives_each_event_with_its_stream_and_millisecond_time() {
        let pieces = pieces(FILTERED);
        let records = records(&pieces);
        assert_eq!(records.len(), 2);
        assert_eq!((records[0].line, records[0].lines), (3, 7));
        assert_eq!(records[0].at.unwrap().utc().to_rfc3339(), "2026-10-06T23:50:00.004+00:00");
        assert_eq!(records[0].message, "2026-10-07 08:50:00.000 INFO  [main] log rotated pid=41877");
        assert_eq!(records[0].labels.get("log_stream"), Some("i-0a1b2c3d4e5f60718"));
        assert_eq!(records[0].labels.instance().as_deref(), Some("log_stream=i-0a1b2c3d4e5f60718"));
        assert_eq!(records[1].message, "2026-10-07 08:50:02.334 DEBUG [Redis] ping \"ok\" — 지연 0.30ms");
        assert_eq!(pieces[0], Piece::Ignored { line: 1, lines: 2, reason: SHAPE.outside });
        assert_eq!(pieces.last(), Some(&Piece::Ignored { line: 17, lines: 4, reason: SHAPE.outside }));
        assert_eq!(lines(&pieces), u64::try_from(FILTERED.lines().count()).unwrap());
    }

    #[test]
    fn get_log_events_has_no_stream_name_and_json_lines_are_read_too() {
        let text = "{\n    \"events\": [\n        {\n            \"timestamp\": 1791330600004,\n            \"message\": \"a\",\n            \"ingestionTime\": 1791330600131\n        }\n    ],\n    \"nextForwardToken\": \"f/1\",\n    \"nextBackwardToken\": \"b/1\"\n}\n";
        let pieces = pieces(text);
        assert_eq!(records(&pieces)[0].labels, Labels::default());
        assert_eq!(lines(&pieces), 11);
        let lines = "{\"logStreamName\":\"s\",\"timestamp\":1791330600004,\"message\":\"a\\n\",\"ingestionTime\":1}\n{\"logGroupName\":\"/app\",\"logStreamName\":\"s\",\"timestamp\":1791330600005,\"message\":\"b\",\"ingestionTime\":1}\n";
        let pieces = super::tests::pieces(lines);
        let records = records(&pieces);
        assert_eq!(records.iter().map(|r| r.message.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(records[1].labels.instance().as_deref(), Some("log_stream=s"));
        assert_eq!(records[1].labels.get("log_group"), Some("/app"));
    }

    #[test]
    fn an_event_without_its_time_or_message_is_rejected_with_the_shape_expected() {
        let text = "{\"events\": [\n{\"message\": \"a\"},\n{\"timestamp\": \"2026-10-06\", \"message\": \"b\"},\n{\"timestamp\": 1}\n]}\n";
        let reasons: Vec<String> = pieces(text)
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Rejected { reason, .. } => Some(reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons.len(), 3);
        assert!(
            reasons[0]
                .starts_with("no `timestamp` (milliseconds since 1970): expected a record like {\"logStreamName\"")
        );
        assert!(reasons[1].starts_with("`timestamp` is \"2026-10-06\", not milliseconds since 1970"));
        assert!(reasons[2].starts_with("no `message` string"));
    }

    #[test]
    fn sniffs_cloudwatch_and_not_plain_or_other_json_logs() {
        assert!(CloudwatchJson.sniff(FILTERED));
        assert!(CloudwatchJson.sniff(
            "{\"logStreamName\":\"s\",\"timestamp\":1,\"message\":\"a\",\"ingestionTime\":2,\"eventId\":\"1\"}\n"
        ));
        for name in ["pino.log", "winston.log", "nestjs.log"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/formats").join(name);
            if let Ok(text) = std::fs::read_to_string(&path) {
                assert!(!CloudwatchJson.sniff(&text), "{name}");
            }
        }
        for dir in ["fixtures/incident-2026-10-07", "fixtures/formats"] {
            for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if let Ok(text) = std::fs::read_to_string(&path) {
                    assert!(!CloudwatchJson.sniff(&text), "{}", path.display());
                }
            }
        }
        assert!(
            !CloudwatchJson.sniff("2026-10-06T23:50:00.004Z {\"timestamp\":1,\"ingestionTime\":2,\"message\":\"a\"}\n")
        );
        assert!(!CloudwatchJson.sniff("[\n  {\n    \"logName\": \"projects/p/logs/stdout\",\n    \"timestamp\": \"2026-10-06T23:50:00Z\"\n  }\n]\n"));
    }

    #[test]
    fn the_reference_log_wrapped_reads_back_line_for_line() {
        json_records::check_reference_fixture(&CloudwatchJson, "cloudwatch-filter-log-events.json", false);
    }
}
