//! Google Cloud Logging as `gcloud logging read --format=json` prints it: one JSON array of
//! `LogEntry` (googleapis' `google/logging/v2/log_entry.proto`, in its JSON names), indented by
//! 2 with sorted keys, newest first unless `--order=asc`.
//!
//! An entry: `timestamp` (RFC 3339 with up to nanoseconds: when the line was written, as the
//! agent read it), `receiveTimestamp` (when Cloud Logging took it), `textPayload` or
//! `jsonPayload` (or `protoPayload`, an audit log), `resource: {type, labels}` (for GKE,
//! `k8s_container` with `pod_name`, `namespace_name`, `container_name`), `labels`, `logName`
//! (`projects/P/logs/stdout` for a container's standard output), `severity`, `insertId`. The
//! entries saved one per line (`jq -c '.[]'`) are read too (`json_records`).

use std::io::BufRead;

use serde_json::{Map, Value};

use super::json_records::{self, Read, Shape};
use super::{Context, Envelope, Labels, Piece};
use crate::error::Result;

pub struct GcloudJson;

static SHAPE: Shape = Shape { path: &[], outside: "outside the entries: the array's brackets", example: EXAMPLE };

const EXAMPLE: &str = r#"{"insertId": "a1b2", "logName": "projects/acme/logs/stdout", "receiveTimestamp": "2026-10-06T23:50:01.51Z", "resource": {"labels": {"pod_name": "web-1", "namespace_name": "prod", "container_name": "app"}, "type": "k8s_container"}, "severity": "INFO", "textPayload": "2026-10-07 08:50:00.000 INFO  [main] started", "timestamp": "2026-10-06T23:50:00.004123456Z"}"#;

/// `jsonPayload` keys that Google's agents and libraries add beside the application's own.
const GOOGLE_KEY: &str = "logging.googleapis.com/";

impl Envelope for GcloudJson {
    fn name(&self) -> &'static str {
        "gcloud-json"
    }

    /// JSON with LogEntry's own keys: `logName`, and `receiveTimestamp` or `insertId`.
    fn sniff(&self, head: &str) -> bool {
        json_records::looks_like_json(head)
            && json_records::has_key(head, "logName", b"\"")
            && (json_records::has_key(head, "receiveTimestamp", b"\"")
                || json_records::has_key(head, "insertId", b"\""))
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        json_records::pieces(input, context, &SHAPE, entry)
    }
}

fn entry(object: &Map<String, Value>) -> std::result::Result<Read, String> {
    let message = match (object.get("textPayload"), object.get("jsonPayload")) {
        (Some(Value::String(text)), _) => json_records::without_line_end(text),
        (_, Some(Value::Object(payload))) => json_message(payload),
        _ if object.contains_key("protoPayload") => {
            return Err("a `protoPayload` entry (an audit or platform log), not an application's line".into());
        }
        _ => return Err("no `textPayload` string or `jsonPayload` object".into()),
    };
    let at = match object.get("timestamp") {
        None => None,
        Some(Value::String(text)) => {
            Some(json_records::rfc3339(text).ok_or_else(|| format!("`timestamp` {text:?} is not an RFC 3339 time"))?)
        }
        Some(other) => return Err(format!("`timestamp` is {other}, not an RFC 3339 time")),
    };
    Ok(Read { at, labels: labels(object), message })
}

/// The line a `jsonPayload` stands for. The agents parse a JSON line the application wrote
/// (pino, winston, NestJS) into `jsonPayload`, so it is handed on whole, as one JSON line, for
/// those readers. A payload that is only a `message` (with Google's `logging.googleapis.com/…`
/// keys) is a text line a library or agent wrapped: its line is the `message`.
fn json_message(payload: &Map<String, Value>) -> String {
    let mut own = payload.iter().filter(|(key, _)| !key.starts_with(GOOGLE_KEY));
    if let (Some((key, Value::String(text))), None) = (own.next(), own.next())
        && key == "message"
    {
        return json_records::without_line_end(text);
    }
    Value::Object(payload.clone()).to_string()
}

fn labels(object: &Map<String, Value>) -> Labels {
    let text = |value: Option<&Value>| value.and_then(json_records::label_text);
    let resource = match object.get("resource").and_then(|resource| resource.get("labels")) {
        Some(Value::Object(labels)) => Some(labels),
        _ => None,
    };
    let entry_labels = match object.get("labels") {
        Some(Value::Object(labels)) => Some(labels),
        _ => None,
    };
    let from_resource = |name: &str| text(resource.and_then(|labels| labels.get(name)));
    let mut labels = Labels::default();
    // A VM by its name (the label Compute Engine's agent adds), else its id.
    let host = text(entry_labels.and_then(|labels| labels.get("compute.googleapis.com/resource_name")))
        .or_else(|| from_resource("instance_id"));
    if let Some(host) = host {
        labels.push("host", host);
    }
    for (label, name) in [("namespace", "namespace_name"), ("pod", "pod_name"), ("container", "container_name")] {
        if let Some(value) = from_resource(name) {
            labels.push(label, value);
        }
    }
    if let Some(Value::String(log)) = object.get("logName") {
        let stream = log.rsplit('/').next().unwrap_or_default();
        if matches!(stream, "stdout" | "stderr") {
            labels.push("stream", stream);
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ingest::envelope::testing::{lines, records};
    use crate::model::Moment;

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("entries.json"), max_line_bytes: 1 << 20 };
        GcloudJson.pieces(Box::new(std::io::Cursor::new(text.to_string())), context).map(|p| p.unwrap()).collect()
    }

    /// As gcloud's JSON printer writes it: `[`, each entry indented by 2 with sorted keys, `]`.
    const ENTRIES: &str = r#"[
  {
    "insertId": "0x9ksl2f3a1b2c",
    "labels": {
      "compute.googleapis.com/resource_name": "gke-prod-pool-1-3f2a-node",
      "k8s-pod/app": "review-server"
    },
    "logName": "projects/acme-prod/logs/stdout",
    "receiveTimestamp": "2026-10-06T23:50:02.951820145Z",
    "resource": {
      "labels": {
        "cluster_name": "prod",
        "container_name": "app",
        "location": "asia-northeast3",
        "namespace_name": "review",
        "pod_name": "review-server-7c9d5-x2x4q",
        "project_id": "acme-prod"
      },
      "type": "k8s_container"
    },
    "severity": "INFO",
    "textPayload": "2026-10-07 08:50:02.334 DEBUG [Redis] ping ok\n",
    "timestamp": "2026-10-06T23:50:02.339104712Z"
  },
  {
    "insertId": "0x9ksl2f3a1b2b",
    "jsonPayload": {
      "hostname": "review-server-7c9d5-x2x4q",
      "level": 30,
      "msg": "started",
      "pid": 1,
      "time": 1791330600000
    },
    "logName": "projects/acme-prod/logs/stderr",
    "receiveTimestamp": "2026-10-06T23:50:01.512Z",
    "resource": {
      "labels": {
        "instance_id": "4523452345234523452"
      },
      "type": "gce_instance"
    },
    "timestamp": "2026-10-06T23:50:00.004Z"
  }
]
"#;

    #[test]
    fn entries_give_text_payloads_with_nanosecond_times_and_resource_labels() {
        let pieces = pieces(ENTRIES);
        let records = records(&pieces);
        assert_eq!(records.len(), 2);
        assert_eq!((records[0].line, records[0].lines), (2, 23));
        assert_eq!(records[0].message, "2026-10-07 08:50:02.334 DEBUG [Redis] ping ok");
        assert_eq!(records[0].at, Moment::new("2026-10-06T23:50:02.339104712Z".parse().unwrap()).ok());
        assert_eq!(
            records[0].labels.instance().as_deref(),
            Some("host=gke-prod-pool-1-3f2a-node namespace=review pod=review-server-7c9d5-x2x4q container=app")
        );
        assert_eq!(records[0].labels.get("stream"), Some("stdout"));
        assert_eq!(pieces[0], Piece::Ignored { line: 1, lines: 1, reason: SHAPE.outside });
        assert_eq!(pieces.last(), Some(&Piece::Ignored { line: 44, lines: 1, reason: SHAPE.outside }));
        assert_eq!(lines(&pieces), u64::try_from(ENTRIES.lines().count()).unwrap());
    }

    #[test]
    fn a_structured_payload_is_the_apps_json_line_and_a_wrapped_message_its_text() {
        let records_of = pieces(ENTRIES);
        let pino = records(&records_of)[1];
        assert_eq!(
            pino.message,
            r#"{"hostname":"review-server-7c9d5-x2x4q","level":30,"msg":"started","pid":1,"time":1791330600000}"#
        );
        assert_eq!(pino.labels.instance().as_deref(), Some("host=4523452345234523452"));
        assert_eq!(pino.labels.get("stream"), Some("stderr"));
        let wrapped = r#"{"logName":"projects/p/logs/app","jsonPayload":{"message":"2026-10-07 08:50:00.000 INFO  [main] started","logging.googleapis.com/trace":"t"},"timestamp":"2026-10-06T23:50:00Z"}"#;
        let pieces = pieces(wrapped);
        assert_eq!(records(&pieces)[0].message, "2026-10-07 08:50:00.000 INFO  [main] started");
        assert_eq!(records(&pieces)[0].labels.get("stream"), None);
    }

    #[test]
    fn entries_without_an_applications_line_are_rejected_with_why() {
        let text = "[\n{\"logName\":\"l\",\"protoPayload\":{}},\n{\"logName\":\"l\"},\n{\"textPayload\":\"a\",\"timestamp\":\"2026-10-06 23:50\"}\n]\n";
        let reasons: Vec<String> = pieces(text)
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Rejected { reason, .. } => Some(reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons.len(), 3);
        assert!(reasons[0].starts_with("a `protoPayload` entry"));
        assert!(
            reasons[1]
                .starts_with("no `textPayload` string or `jsonPayload` object: expected a record like {\"insertId\"")
        );
        assert!(reasons[2].starts_with("`timestamp` \"2026-10-06 23:50\" is not an RFC 3339 time"));
    }

    #[test]
    fn sniffs_gcloud_entries_only() {
        assert!(GcloudJson.sniff(ENTRIES));
        assert!(
            GcloudJson.sniff("{\"insertId\":\"a\",\"logName\":\"projects/p/logs/stdout\",\"textPayload\":\"x\"}\n")
        );
        for dir in ["fixtures/incident-2026-10-07", "fixtures/formats"] {
            for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if let Ok(text) = std::fs::read_to_string(&path) {
                    assert!(!GcloudJson.sniff(&text), "{}", path.display());
                }
            }
        }
        assert!(!GcloudJson.sniff("{\"events\": [{\"timestamp\": 1, \"message\": \"a\", \"ingestionTime\": 2}]}"));
        assert!(!GcloudJson.sniff("{\"hits\":{\"hits\":[{\"_index\":\"i\",\"_source\":{\"message\":\"a\"}}]}}"));
    }

    #[test]
    fn the_reference_log_wrapped_reads_back_line_for_line() {
        json_records::check_reference_fixture(&GcloudJson, "gcloud-logging-read.json", true);
    }
}
