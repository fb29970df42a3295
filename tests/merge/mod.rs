//! One thing, many records: an activation seen by the events stream, the log and the ledger is
//! one activation, and one that a trimmed stream lost is still found in the others.

use super::*;

/// The real 5.81.5 stall (`fixtures/bullmq-5.81.5-stalled`), in a copy of its folder whose
/// events stream keeps only the entries from `first_kept` on: BullMQ trimmed the rest.
fn stalled_case_with_stream_from(first_kept: &str) -> tempfile::TempDir {
    let root = env!("CARGO_MANIFEST_DIR");
    let from = Path::new(root).join("fixtures/bullmq-5.81.5-stalled");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let events: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(from.join("events.json")).unwrap()).unwrap();
    let kept: Vec<&Value> = events.iter().skip_while(|e| e["id"] != first_kept).collect();
    assert!(kept.len() < events.len() && !kept.is_empty(), "{first_kept} is an entry of the stream");
    std::fs::write(dir.path().join("events.json"), serde_json::to_string_pretty(&kept).unwrap()).unwrap();
    dir
}

fn reruns(report: &Value) -> Vec<&Value> {
    report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "stalled-rerun").collect()
}

#[test]
fn a_stream_trimmed_between_a_jobs_two_activations_loses_no_rerun() {
    let root = env!("CARGO_MANIFEST_DIR");
    let whole = leasetrace(&["analyze", &format!("{root}/fixtures/bullmq-5.81.5-stalled"), "--format", "json"]).run();
    let whole = whole.json();
    let [full] = reruns(&whole)[..] else { panic!("one rerun in the whole case: {whole}") };
    // Trimmed just after the stalled job's first activation (1796028391236-1): the stream has its
    // stall and its rerun, the log both activations.
    let case = stalled_case_with_stream_from("1796028395659-0");
    let run = leasetrace(&["analyze", case.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let [rerun] = reruns(&report)[..] else { panic!("the rerun is still found: {report}") };
    assert_eq!(rerun["metrics"]["job_id"], full["metrics"]["job_id"]);
    assert_eq!(rerun["metrics"]["rerun_at"], full["metrics"]["rerun_at"], "the rerun from the stream, as before");
    // The lost activation is now the log's line of it: the same moment to within the clocks' skew.
    let at = |f: &Value, key: &str| {
        chrono::DateTime::parse_from_rfc3339(f["metrics"][key].as_str().unwrap()).unwrap().timestamp_millis()
    };
    assert!((at(rerun, "activated_at") - at(full, "activated_at")).abs() <= 1_000, "{rerun}");
    let log_line = rerun["evidence"].as_array().unwrap().iter().find(|e| e["kind"] == "job-active").unwrap();
    assert_eq!(log_line["channel"], "log", "the first activation is cited from the log: {rerun}");
    let notes = rerun["notes"].to_string();
    assert!(notes.contains("merged from every channel") && notes.contains("trimmed"), "{notes}");
}
