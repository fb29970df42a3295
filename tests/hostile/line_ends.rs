//! Byte-order marks and line endings: a text written by a Windows tool (a UTF-8 BOM, `\r\n`) or
//! an old Mac one (lone `\r`) is read as the same text with `\n` endings and no mark.

use std::path::Path;

use serde_json::Value;

use crate::{INCIDENT, REAL_STALLED, leasetrace};

const BOM: &[u8] = b"\xef\xbb\xbf";

/// A copy of the case folder `case` in a new directory, each file in `changed` rewritten by
/// `rewrite`.
fn copy_case(case: &str, changed: &[&str], rewrite: impl Fn(&[u8]) -> Vec<u8>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(case);
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        let bytes = if changed.contains(&name.as_str()) { rewrite(&bytes) } else { bytes };
        std::fs::write(dir.path().join(&name), bytes).unwrap();
    }
    dir
}

fn with_bom(bytes: &[u8]) -> Vec<u8> {
    [BOM, bytes].concat()
}

/// The JSON report of `analyze` on the case folder `dir`, with the folder's path taken out so that
/// two copies of a case compare equal.
fn report(dir: &Path) -> Value {
    let run = leasetrace(&["analyze", dir.to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = run.stdout.replace(&format!("{}/", dir.display()), "");
    serde_json::from_str(&text).unwrap()
}

/// What a report says of each input: its lines and how each was accounted for.
fn accounts(report: &Value) -> Vec<Value> {
    let keys = ["path", "lines", "used", "ignored", "rejected", "ignored_by_reason", "events"];
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|input| keys.iter().map(|k| (*k, input[k].clone())).collect())
        .collect()
}

fn assert_same_reading(original: &Value, changed: &Value, what: &str) {
    assert!(!original["findings"].as_array().unwrap().is_empty(), "the case has findings to compare");
    assert_eq!(original["findings"], changed["findings"], "{what}: the same findings, evidence lines and texts");
    assert_eq!(accounts(original), accounts(changed), "{what}: the same line accounting");
}

#[test]
fn a_bom_does_not_lose_the_first_log_line() {
    let files = ["server.log", "ledger.csv", "bullmq.json"];
    let plain = copy_case(INCIDENT, &[], <[u8]>::to_vec);
    let marked = copy_case(INCIDENT, &files, with_bom);
    let (original, changed) = (report(plain.path()), report(marked.path()));
    assert_same_reading(&original, &changed, "a BOM on every file of the incident");
    let log = &changed["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap().clone();
    assert!(log["ignored_by_reason"].get("continuation").is_none(), "line 1 is an entry, not a continuation: {log}");
}

#[test]
fn a_bom_does_not_lose_a_restart_on_the_first_log_line() {
    // The incident's log with its `server starting` line moved to line 1: the restart that the
    // stalled rerun's evidence cites (the log's zone has no fold, so line order places nothing).
    let cut = |bytes: &[u8]| {
        let text = std::str::from_utf8(bytes).unwrap();
        let restart = text.lines().find(|line| line.contains("[main] server starting")).expect("the restart");
        let others = text.lines().filter(|line| *line != restart);
        std::iter::once(restart).chain(others).flat_map(|line| [line, "\n"]).collect::<String>().into_bytes()
    };
    let plain = copy_case(INCIDENT, &["server.log"], cut);
    let marked = copy_case(INCIDENT, &["server.log"], |bytes| with_bom(&cut(bytes)));
    let (original, changed) = (report(plain.path()), report(marked.path()));
    let restart_cited = |report: &Value| {
        report["findings"].as_array().unwrap().iter().any(|finding| {
            finding["evidence"].as_array().into_iter().flatten().any(|e| {
                e["kind"] == "process-start" && e["source"]["path"] == "server.log" && e["source"]["line"] == 1
            })
        })
    };
    assert!(restart_cited(&original), "the restart on line 1 is evidence without a BOM");
    assert!(restart_cited(&changed), "and with one");
    assert_same_reading(&original, &changed, "a BOM before a restart on line 1");
}

#[test]
fn a_bom_on_json_sources_is_read_as_without() {
    // Real BullMQ exports: events stream (JSON), job hashes (JSON Lines), worker options (JSON).
    let files = ["server.log", "ledger.csv", "events.json", "jobs.jsonl", "bullmq.json"];
    let plain = copy_case(REAL_STALLED, &[], <[u8]>::to_vec);
    let marked = copy_case(REAL_STALLED, &files, with_bom);
    assert_same_reading(&report(plain.path()), &report(marked.path()), "a BOM on every file of a real export");
}

/// The incident's ledger as JSON Lines (an exporter omits empty values), with line ends `end`.
fn incident_ledger_jsonl(end: &str) -> Vec<u8> {
    let csv = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT).join("ledger.csv")).unwrap();
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let mut jsonl = String::new();
    for row in rows {
        let object: serde_json::Map<String, Value> = header
            .iter()
            .zip(row.split(','))
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| ((*k).to_string(), Value::from(v)))
            .collect();
        jsonl.push_str(&Value::Object(object).to_string());
        jsonl.push_str(end);
    }
    jsonl.into_bytes()
}

/// The incident with its ledger as `ledger.jsonl` of `bytes`.
fn incident_with_jsonl_ledger(bytes: &[u8]) -> tempfile::TempDir {
    let dir = copy_case(INCIDENT, &[], <[u8]>::to_vec);
    std::fs::remove_file(dir.path().join("ledger.csv")).unwrap();
    std::fs::write(dir.path().join("ledger.jsonl"), bytes).unwrap();
    let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
    std::fs::write(dir.path().join("leasetrace.toml"), manifest.replace("ledger.csv", "ledger.jsonl")).unwrap();
    dir
}

#[test]
fn a_bom_on_a_jsonl_ledger_is_read_as_without() {
    let plain = incident_with_jsonl_ledger(&incident_ledger_jsonl("\n"));
    let marked = incident_with_jsonl_ledger(&with_bom(&incident_ledger_jsonl("\n")));
    assert_same_reading(&report(plain.path()), &report(marked.path()), "a BOM on a JSON Lines ledger");
}

#[test]
fn a_bom_on_a_gzip_log_is_skipped_after_decompression() {
    use std::io::Write;
    let gzip = |bytes: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    };
    let rename = |dir: &tempfile::TempDir| {
        std::fs::rename(dir.path().join("server.log"), dir.path().join("server.log.gz")).unwrap();
        let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
        std::fs::write(dir.path().join("leasetrace.toml"), manifest.replace("server.log", "server.log.gz")).unwrap();
    };
    let plain = copy_case(INCIDENT, &["server.log"], gzip);
    let marked = copy_case(INCIDENT, &["server.log"], |bytes| gzip(&with_bom(bytes)));
    rename(&plain);
    rename(&marked);
    assert_same_reading(&report(plain.path()), &report(marked.path()), "a BOM inside a gzip log");
}

#[test]
fn a_bom_on_standard_input_is_skipped() {
    let log = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT).join("server.log")).unwrap();
    let run = |stdin: Vec<u8>| {
        let ledger = format!("{INCIDENT}/ledger.csv");
        let params = format!("{INCIDENT}/bullmq.json");
        let args = ["analyze", "--ledger", &ledger, "--log", "-", "--log-tz", "Asia/Seoul", "--params", &params];
        let run = leasetrace(&[&args[..], &["--format", "json"]].concat()).stdin(&stdin).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    };
    assert_same_reading(&run(log.clone()), &run(with_bom(&log)), "a BOM on standard input");
}

#[test]
fn a_bom_does_not_change_what_init_proposes() {
    let files = ["server.log", "ledger.csv", "bullmq.json"];
    let proposal = |dir: &tempfile::TempDir| {
        std::fs::remove_file(dir.path().join("leasetrace.toml")).unwrap();
        let run = leasetrace(&["init", dir.path().to_str().unwrap(), "-q"]).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        let name = dir.path().file_name().unwrap().to_str().unwrap().to_string();
        std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap().replace(&name, "CASE")
    };
    let plain = copy_case(INCIDENT, &[], <[u8]>::to_vec);
    let marked = copy_case(INCIDENT, &files, with_bom);
    assert_eq!(proposal(&plain), proposal(&marked));
}

/// `bytes` with each `\n` replaced by `end`.
fn with_line_ends(bytes: &[u8], end: &[u8]) -> Vec<u8> {
    bytes.iter().flat_map(|&b| if b == b'\n' { end.to_vec() } else { vec![b] }).collect()
}

#[test]
fn a_log_with_lone_cr_line_ends_is_read_line_by_line() {
    let plain = copy_case(INCIDENT, &[], <[u8]>::to_vec);
    let cr = copy_case(INCIDENT, &["server.log"], |bytes| with_line_ends(bytes, b"\r"));
    let (original, changed) = (report(plain.path()), report(cr.path()));
    assert_same_reading(&original, &changed, "a log with lone CR line ends");
}

#[test]
fn a_log_with_crlf_line_ends_is_read_as_with_lf() {
    let plain = copy_case(INCIDENT, &[], <[u8]>::to_vec);
    let crlf = copy_case(INCIDENT, &["server.log"], |bytes| with_line_ends(bytes, b"\r\n"));
    assert_same_reading(&report(plain.path()), &report(crlf.path()), "a log with CRLF line ends");
}

#[test]
fn a_jsonl_ledger_with_lone_cr_line_ends_is_read_line_by_line() {
    let plain = incident_with_jsonl_ledger(&incident_ledger_jsonl("\n"));
    let cr = incident_with_jsonl_ledger(&incident_ledger_jsonl("\r"));
    assert_same_reading(&report(plain.path()), &report(cr.path()), "a JSON Lines ledger with lone CR line ends");
}

#[test]
fn a_gzip_log_with_lone_cr_line_ends_and_its_evidence_read_back() {
    use std::io::Write;
    let gzip = |bytes: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&with_line_ends(bytes, b"\r")).unwrap();
        encoder.finish().unwrap()
    };
    let plain = copy_case(INCIDENT, &[], <[u8]>::to_vec);
    let cr = copy_case(INCIDENT, &["server.log"], gzip);
    assert_same_reading(&report(plain.path()), &report(cr.path()), "a gzip log with lone CR line ends");
}

#[test]
fn many_timestamps_on_one_line_are_warned() {
    // The incident's log with its line ends lost after the first 20 lines (a tool that joined
    // them, or ends in a convention no reader splits at: here a record separator).
    let joined = |bytes: &[u8]| {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        format!("{}\n{}\n", lines[..20].join("\n"), lines[20..].join("\u{1e}")).into_bytes()
    };
    let original = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT).join("server.log")).unwrap();
    let stamped = String::from_utf8(original).unwrap().lines().skip(20).filter(|l| l.starts_with("2026-")).count();
    let dir = copy_case(INCIDENT, &["server.log"], joined);
    let changed = report(dir.path());
    let warnings: Vec<&Value> =
        changed["warnings"].as_array().unwrap().iter().filter(|w| w["kind"] == "many-timestamps-on-a-line").collect();
    assert_eq!(warnings.len(), 1, "{:#?}", changed["warnings"]);
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "server.log: line 21 holds {stamped} timestamps in the log's own layout: its line ends look lost"
        )),
        "{message}"
    );
    // The log as written has none.
    let plain = report(copy_case(INCIDENT, &[], <[u8]>::to_vec).path());
    assert!(plain["warnings"].as_array().unwrap().iter().all(|w| w["kind"] != "many-timestamps-on-a-line"));
}
