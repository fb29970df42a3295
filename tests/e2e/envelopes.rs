//! The staged incident's real server log as a platform would hand it over: wrapped as
//! `kubectl logs --timestamps` writes it, and as Grafana Loki's `logcli query --output=jsonl`
//! prints it (newest first, logcli's default), the same case must give the same findings with
//! the same figures, and the evidence must cite the export's lines with the pod that wrote them.
//!
//! The envelopes' shapes are those of the tools' own sources (docs/inputs/envelopes/): the
//! kubelet stamps a line with the time it read it, RFC 3339 in UTC with nine fraction digits
//! (kubernetes pkg/kubelet/kuberuntime/logs/logs.go, `timeFormatOut`); logcli's JSON Lines are Go's
//! `json.Marshal` of `{timestamp, line, labels}` (grafana/loki pkg/logcli/output/jsonl.go), keys in
//! order, the time as RFC 3339 with nanoseconds, trailing zeros dropped (Go's `RFC3339Nano`). Each
//! line's envelope time is its own KST time less 9 hours plus 3 ms (the runtime reads a line a
//! moment after it is written); a line without a time of its own (a continuation) gets the time
//! of the line before it.

use std::fmt::Write as _;

use chrono::{NaiveDateTime, TimeDelta};

use super::*;

const POD_LABELS: &str = r#"{"container":"worker","namespace":"queues","pod":"sweep-worker-0"}"#;

/// The staged log's lines, each with its envelope time.
fn stamped_lines(log: &str) -> Vec<(DateTime<Utc>, &str)> {
    let mut last = None;
    log.lines()
        .map(|line| {
            let own = line.get(..23).and_then(|head| NaiveDateTime::parse_from_str(head, "%Y-%m-%d %H:%M:%S%.3f").ok());
            if let Some(own) = own {
                last = Some(own.and_utc() - TimeDelta::hours(9) + TimeDelta::milliseconds(3));
            }
            (last.expect("the staged log starts with a stamped line"), line)
        })
        .collect()
}

/// The findings' kinds and metrics, and each evidence event's kind, time and ids: what must not
/// change when the log comes in an envelope.
fn summary(report: &Value) -> Vec<(Value, Value, Vec<Value>)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let evidence = f["evidence"]
                .as_array()
                .expect("evidence")
                .iter()
                .map(|e| serde_json::json!([e["kind"], e["at"], e["job_id"], e["raw"]]))
                .collect();
            (f["kind"].clone(), f["metrics"].clone(), evidence)
        })
        .collect()
}

/// Writes `name` and a manifest `manifest` that reads it in place of server.log, and analyzes it.
fn analyze_with_log(staged: &Staged, name: &str, text: &str, manifest: &str) -> Value {
    let root = staged.dir.path();
    std::fs::write(root.join(name), text).unwrap();
    let original = std::fs::read_to_string(root.join("leasetrace.toml")).unwrap();
    assert!(original.contains("path = \"server.log\""), "{original}");
    std::fs::write(root.join(manifest), original.replace("path = \"server.log\"", &format!("path = \"{name}\"")))
        .unwrap();
    staged.analyze_manifest(manifest)
}

pub fn assert_enveloped_logs_give_the_same_findings(staged: &Staged, report: &Value) {
    let log = std::fs::read_to_string(staged.dir.path().join("server.log")).unwrap();
    let lines = stamped_lines(&log);

    let mut kubectl = String::new();
    for (at, line) in &lines {
        kubectl.push_str(&at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true));
        kubectl.push(' ');
        kubectl.push_str(line);
        kubectl.push('\n');
    }
    let in_kubectl = analyze_with_log(staged, "pods.log", &kubectl, "leasetrace-kubectl.toml");

    // Newest first, as logcli prints by default.
    let mut loki = String::new();
    for (at, line) in lines.iter().rev() {
        let line = serde_json::to_string(line).unwrap();
        let at = at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
        let _ = writeln!(loki, "{{\"labels\":{POD_LABELS},\"line\":{line},\"timestamp\":\"{at}\"}}");
    }
    let in_loki = analyze_with_log(staged, "loki.jsonl", &loki, "leasetrace-loki.toml");

    let expected = summary(report);
    assert!(!expected.is_empty(), "the staged incident has findings");
    for (format, enveloped, lines_of) in [
        ("kubectl", &in_kubectl, Box::new(|line: u64| line) as Box<dyn Fn(u64) -> u64>),
        ("loki-jsonl", &in_loki, Box::new(move |line: u64| lines.len() as u64 + 1 - line)),
    ] {
        let input = enveloped["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap();
        assert_eq!(input["format"], format, "{input:#}");
        assert_eq!(input["rejected"], 0, "{input:#}");
        let plain = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap();
        assert_eq!(input["events"], plain["events"], "{format}: as many events as the plain log\n{input:#}");
        assert_eq!(summary(enveloped), expected, "{format}: findings differ from the plain log's");
        assert!(
            enveloped["findings"].as_array().unwrap().iter().all(|f| f["kind"] != "clock-offset-suspected"),
            "{format}: the declared zone agrees with the envelope"
        );
        // Each log event of the evidence cites the export's line of the plain log's line.
        let plain_lines: Vec<u64> = log_evidence(report).into_iter().map(|(line, _)| lines_of(line)).collect();
        let cited = log_evidence(enveloped);
        assert_eq!(cited.iter().map(|(line, _)| *line).collect::<Vec<_>>(), plain_lines, "{format}");
        if format == "loki-jsonl" {
            assert!(
                cited.iter().all(|(_, instance)| instance == "namespace=queues pod=sweep-worker-0 container=worker"),
                "{cited:?}"
            );
            let notes = enveloped["assumptions"].as_array().unwrap();
            assert!(notes.iter().any(|n| n.as_str().unwrap().contains("sorted newest first")), "{notes:#?}");
        }
        let notes = enveloped["assumptions"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n.as_str().unwrap().contains("the events keep the lines' own times")),
            "{notes:#?}"
        );
    }
}

/// The log events cited by the findings: their lines and instances.
fn log_evidence(report: &Value) -> Vec<(u64, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["evidence"].as_array().unwrap().iter())
        .filter(|e| e["channel"] == "log")
        .map(|e| {
            let instance = e["source"]["instance"].as_str().unwrap_or_default().to_string();
            (e["source"]["line"].as_u64().unwrap(), instance)
        })
        .collect()
}
