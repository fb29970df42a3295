//! Elasticsearch and OpenSearch `_search` responses (`curl '…/_search?pretty'`, a scroll or
//! point-in-time page, the same JSON saved from Kibana's or Dashboards' "Inspect" panel).
//!
//! The response is one document, `{"took", "timed_out", "_shards", "hits": {"total",
//! "max_score", "hits": [{"_index", "_id", "_score", "_source": {...}, "sort": [...]}]}}`; each
//! hit's `_source` is the document a shipper (Filebeat, Elastic Agent, Fluent Bit, Logstash) sent,
//! with Elastic Common Schema field names, nested or dotted. A search with `"fields": [...]` and
//! `"_source": false` gives the same fields flattened under `fields`, each as an array. The hits
//! saved one per line (`jq -c '.hits.hits[]'`) are read too (`json_records`).

use std::io::BufRead;

use chrono::NaiveDateTime;
use serde_json::{Map, Value};

use super::json_records::{self, Read, Shape};
use super::{Context, Envelope, Labels, Piece};
use crate::error::Result;
use crate::model::Moment;

pub struct ElasticsearchJson;

static SHAPE: Shape = Shape {
    path: &["hits", "hits"],
    outside: "outside the `hits.hits` array: the response's brackets and its other keys \
              (`took`, `timed_out`, `_shards`, `hits.total`, `max_score`)",
    example: EXAMPLE,
};

const EXAMPLE: &str = r#"{"_index": "logs-app", "_id": "x1", "_score": null, "_source": {"@timestamp": "2026-10-06T23:50:00.004Z", "message": "2026-10-07 08:50:00.000 INFO  [main] started", "host": {"name": "web-1"}}, "sort": [1791330600004]}"#;

/// Where the application's line is: ECS's `message`; `log`, the whole line as Docker's JSON
/// driver and Fluentd/Fluent Bit's Kubernetes input keep it; `event.original`, when an ingest
/// pipeline parsed `message` into fields and kept the line there.
const MESSAGE_FIELDS: &[&str] = &["message", "log", "event.original"];

/// Labels from ECS (`host.name`, `container.name`, `process.pid`, `log.file.path`), Beats'
/// Kubernetes metadata (`kubernetes.pod.name`, `kubernetes.namespace`,
/// `kubernetes.container.name`) and Fluentd/Fluent Bit's (`kubernetes.pod_name`,
/// `kubernetes.namespace_name`, `kubernetes.container_name`, `kubernetes.host`): the first of
/// each row that the hit has.
const LABEL_FIELDS: &[(&str, &[&str])] = &[
    ("host", &["host.name", "host.hostname", "kubernetes.host"]),
    ("namespace", &["kubernetes.namespace", "kubernetes.namespace_name"]),
    ("pod", &["kubernetes.pod.name", "kubernetes.pod_name"]),
    ("container", &["kubernetes.container.name", "container.name", "kubernetes.container_name"]),
    ("pid", &["process.pid"]),
    ("stream", &["stream"]),
    ("log_file", &["log.file.path"]),
];

impl Envelope for ElasticsearchJson {
    fn name(&self) -> &'static str {
        "elasticsearch-json"
    }

    /// JSON with a hit's own keys: `_index` with a `_source` or `fields` object.
    fn sniff(&self, head: &str) -> bool {
        json_records::looks_like_json(head)
            && json_records::has_key(head, "_index", b"\"")
            && (json_records::has_key(head, "_source", b"{") || json_records::has_key(head, "fields", b"{"))
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        json_records::pieces(input, context, &SHAPE, hit)
    }
}

/// A field of the hit: from `_source` (nested or dotted), else from `fields` (the first value
/// of its array).
fn get<'v>(hit: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    if let Some(Value::Object(source)) = hit.get("_source")
        && let Some(value) = json_records::field(source, name)
    {
        return Some(value);
    }
    match hit.get("fields") {
        Some(Value::Object(fields)) => match fields.get(name) {
            Some(Value::Array(values)) => values.first(),
            other => other,
        },
        _ => None,
    }
}

fn hit(object: &Map<String, Value>) -> std::result::Result<Read, String> {
    if !matches!(object.get("_source"), Some(Value::Object(_)))
        && !matches!(object.get("fields"), Some(Value::Object(_)))
    {
        if let Some(error) = object.get("error") {
            return Err(format!("an error response, not a hit: {error}"));
        }
        return Err("no `_source` or `fields` object".into());
    }
    let Some(message) = MESSAGE_FIELDS.iter().find_map(|name| match get(object, name) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    }) else {
        return Err("no `message`, `log` or `event.original` string in `_source` or `fields`".into());
    };
    let at = match get(object, "@timestamp") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            timestamp(value)
                .ok_or_else(|| format!("`@timestamp` {value} is not an ISO 8601 time or milliseconds since 1970"))?,
        ),
    };
    let mut labels = Labels::default();
    for (label, names) in LABEL_FIELDS {
        if let Some(text) = names.iter().find_map(|name| get(object, name).and_then(json_records::label_text)) {
            labels.push(label, text);
        }
    }
    Ok(Read { at, labels, message: json_records::without_line_end(message) })
}

/// `@timestamp` as Elasticsearch reads a `date` (or `date_nanos`) field by default
/// (`strict_date_optional_time||epoch_millis`): ISO 8601 with an offset; without one, UTC, as
/// Elasticsearch indexes it; or milliseconds since 1970, as a number or digits.
fn timestamp(value: &Value) -> Option<Moment> {
    match value {
        Value::Number(number) => millis(number.as_f64()?),
        Value::String(text) if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) => {
            json_records::epoch_millis(text.parse().ok()?)
        }
        Value::String(text) => json_records::rfc3339(text).or_else(|| {
            let naive = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
            Moment::new(naive.and_utc()).ok()
        }),
        _ => None,
    }
}

fn millis(millis: f64) -> Option<Moment> {
    if !millis.is_finite() || millis.abs() > 1e16 {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)] // bounded just above
    let nanos = (millis * 1e6).round() as i64;
    Moment::new(chrono::DateTime::from_timestamp_nanos(nanos)).ok()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ingest::envelope::testing::{lines, records};

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("search.json"), max_line_bytes: 1 << 20 };
        ElasticsearchJson
            .pieces(Box::new(std::io::Cursor::new(text.to_string())), context)
            .map(|p| p.unwrap())
            .collect()
    }

    /// As `?pretty` prints it (Jackson's printer: `" : "`, arrays one value a line).
    const PRETTY: &str = r#"{
  "took" : 3,
  "timed_out" : false,
  "_shards" : {
    "total" : 1,
    "successful" : 1,
    "skipped" : 0,
    "failed" : 0
  },
  "hits" : {
    "total" : {
      "value" : 2,
      "relation" : "eq"
    },
    "max_score" : null,
    "hits" : [
      {
        "_index" : ".ds-filebeat-8.15.0-2026.10.06-000001",
        "_id" : "b2xvZ2xpbmUtMg",
        "_score" : null,
        "_source" : {
          "@timestamp" : "2026-10-06T23:50:02.339123456Z",
          "message" : "2026-10-07 08:50:02.334 DEBUG [Redis] ping ok",
          "host" : {
            "name" : "review-1"
          },
          "kubernetes" : {
            "namespace" : "prod",
            "pod" : {
              "name" : "review-7c9d-x2x"
            },
            "container" : {
              "name" : "app"
            }
          },
          "process.pid" : 41877,
          "log" : {
            "file" : {
              "path" : "/var/log/server.log"
            }
          }
        },
        "sort" : [
          1791330602339
        ]
      },
      {
        "_index" : ".ds-filebeat-8.15.0-2026.10.06-000001",
        "_id" : "b2xvZ2xpbmUtMQ",
        "_score" : null,
        "_source" : {
          "@timestamp" : 1791330600004,
          "log" : "2026-10-07 08:50:00.000 INFO  [main] started\n"
        },
        "sort" : [
          1791330600004
        ]
      }
    ]
  }
}
"#;

    #[test]
    fn search_response_gives_each_hit_with_ecs_labels_and_its_time() {
        let pieces = pieces(PRETTY);
        let records = records(&pieces);
        assert_eq!(records.len(), 2);
        assert_eq!((records[0].line, records[0].lines), (17, 30));
        assert_eq!(records[0].at, Moment::new("2026-10-06T23:50:02.339123456Z".parse().unwrap()).ok());
        assert_eq!(records[0].message, "2026-10-07 08:50:02.334 DEBUG [Redis] ping ok");
        assert_eq!(
            records[0].labels.instance().as_deref(),
            Some("host=review-1 namespace=prod pod=review-7c9d-x2x container=app")
        );
        assert_eq!(records[0].labels.get("pid"), Some("41877"));
        assert_eq!(records[0].labels.get("log_file"), Some("/var/log/server.log"));
        assert_eq!(records[1].message, "2026-10-07 08:50:00.000 INFO  [main] started");
        assert_eq!(records[1].at.unwrap().utc().to_rfc3339(), "2026-10-06T23:50:00.004+00:00");
        assert_eq!(pieces[0], Piece::Ignored { line: 1, lines: 16, reason: SHAPE.outside });
        assert_eq!(lines(&pieces), u64::try_from(PRETTY.lines().count()).unwrap());
    }

    #[test]
    fn fields_instead_of_source_fluent_names_and_naive_times() {
        let text = concat!(
            r#"{"took":1,"hits":{"hits":[{"_index":"i","_id":"1","fields":{"@timestamp":["2026-10-06T23:50:00.004Z"],"message":["a"],"host.name":["h"]}},"#,
            r#"{"_index":"i","_id":"2","_source":{"@timestamp":"2026-10-06T23:50:00.005","event":{"original":"b"},"kubernetes":{"pod_name":"p","namespace_name":"n","container_name":"c","host":"node-1"}}}]}}"#
        );
        let pieces = pieces(text);
        let records = records(&pieces);
        assert_eq!(records.iter().map(|r| r.message.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(records[0].labels.instance().as_deref(), Some("host=h"));
        assert_eq!(records[1].labels.instance().as_deref(), Some("host=node-1 namespace=n pod=p container=c"));
        assert_eq!(records[1].at.unwrap().utc().to_rfc3339(), "2026-10-06T23:50:00.005+00:00");
        assert_eq!((records[1].line, records[1].lines), (1, 0));
        assert_eq!(lines(&pieces), 1);
    }

    #[test]
    fn hits_that_hold_no_line_are_rejected_with_why() {
        let text = concat!(
            "{\"hits\":{\"hits\":[\n",
            "{\"_index\":\"i\",\"_id\":\"1\"},\n",
            "{\"_index\":\"i\",\"_source\":{\"msg\":\"pino's key\"}},\n",
            "{\"_index\":\"i\",\"_source\":{\"message\":\"a\",\"@timestamp\":\"yesterday\"}}\n",
            "]}}\n",
            "{\"error\":{\"type\":\"index_not_found_exception\"},\"status\":404}\n"
        );
        let reasons: Vec<String> = pieces(text)
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Rejected { reason, .. } => Some(reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons.len(), 4, "{reasons:?}");
        assert!(reasons[0].starts_with("no `_source` or `fields` object: expected a record like {\"_index\""));
        assert!(reasons[1].starts_with("no `message`, `log` or `event.original` string"));
        assert!(reasons[2].starts_with("`@timestamp` \"yesterday\" is not an ISO 8601 time"));
        assert!(reasons[3].starts_with("an error response, not a hit: {\"type\":\"index_not_found_exception\"}"));
    }

    #[test]
    fn sniffs_search_responses_and_hit_lines_only() {
        assert!(ElasticsearchJson.sniff(PRETTY));
        assert!(ElasticsearchJson.sniff("{\"_index\":\"i\",\"_id\":\"1\",\"_source\":{\"message\":\"a\"}}\n"));
        for dir in ["fixtures/incident-2026-10-07", "fixtures/formats"] {
            for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if let Ok(text) = std::fs::read_to_string(&path) {
                    assert!(!ElasticsearchJson.sniff(&text), "{}", path.display());
                }
            }
        }
        assert!(
            !ElasticsearchJson.sniff("{\"events\": [{\"timestamp\": 1, \"message\": \"a\", \"ingestionTime\": 2}]}")
        );
        assert!(!ElasticsearchJson.sniff("2026-10-06T23:50:00Z {\"_index\":\"i\",\"_source\":{}}\n"));
    }

    #[test]
    fn the_reference_log_wrapped_reads_back_line_for_line() {
        json_records::check_reference_fixture(&ElasticsearchJson, "elasticsearch-search.json", true);
    }
}
