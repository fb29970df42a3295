//! BullMQ on PostgreSQL as evidence: the real fixture written by tests/e2e/pg-stalled.mjs (BullMQ
//! 6.7.0, `createPostgresBackend`, the tables exported with psql), analyzed as a case and from its
//! JSON exports, its figures checked against the rows read from the files here.

use serde_json::Value;

use super::leasetrace;

const CASE: &str = "fixtures/bullmq-6.7.0-postgres-stalled";

fn path(name: &str) -> String {
    format!("{}/{CASE}/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The `created_at_ms` of the `nth` (0-based) row of `event` for `job` in the fixture's
/// event.csv, as the JSON report writes a time.
fn row_time(event: &str, job: &str, nth: usize) -> String {
    let text = std::fs::read_to_string(path("event.csv")).unwrap();
    let millis: i64 = text
        .lines()
        .skip(1)
        .filter(|line| line.split(',').nth(2) == Some(event) && line.contains(&format!("\"\"jobId\"\": \"\"{job}\"\"")))
        .nth(nth)
        .and_then(|line| line.rsplit(',').next())
        .and_then(|millis| millis.parse().ok())
        .unwrap_or_else(|| panic!("no {event} #{nth} of {job} in event.csv"));
    chrono::DateTime::from_timestamp_millis(millis).unwrap().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn analyze(args: &[&str]) -> Value {
    let run = leasetrace(&[&["analyze"], args, &["--format", "json"]].concat()).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn of_kind<'a>(report: &'a Value, kind: &str, job: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind && f["metrics"]["job_id"] == job)
        .collect()
}

#[test]
fn the_tables_give_the_rerun_the_refusal_and_the_stall_limit_to_the_millisecond() {
    let report = analyze(&[CASE]);
    let reruns = of_kind(&report, "stalled-rerun", "pr-4412");
    assert_eq!(reruns.len(), 1, "{report:#}");
    let metrics = &reruns[0]["metrics"];
    assert_eq!(metrics["activated_at"], row_time("active", "pr-4412", 0));
    assert_eq!(metrics["rerun_at"], row_time("active", "pr-4412", 1));
    assert_eq!(metrics["queue"], "pr-review");
    assert_eq!(metrics["stalled_in_stream"], true);
    assert_eq!(metrics["rerun_in_stalled_window"], true);
    // The PostgreSQL model: 2 × stalledInterval (1 s) after the latest expiry, the rerun.
    assert_eq!(metrics["lock_expired_latest_at"], row_time("active", "pr-4412", 1));
    assert_eq!(metrics["stalled_check_window_end_at"], "2026-12-06T09:45:57.334Z");
    let formula =
        reruns[0]["arithmetic"].as_array().unwrap().iter().find(|a| a["result"] == "stalled_check_window_end_at");
    assert_eq!(formula.unwrap()["formula"], "lock_expired_latest_at + 2 × stalledInterval (2 s)");
    let notes = reruns[0]["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("BullMQ on PostgreSQL: every effective stalled check marks")),
        "the window is the PostgreSQL model's: {notes:#?}"
    );

    // Refused with `Lock mismatch` (never `Missing lock` on this backend): the log's millisecond.
    let log = std::fs::read_to_string(path("workers.log")).unwrap();
    let mismatch = log.lines().find(|line| line.contains("Lock mismatch")).unwrap();
    let stale = report["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "stale-completion").unwrap();
    assert_eq!(stale["at"], mismatch.split(' ').next().unwrap());
    assert_eq!(stale["severity"], "info");

    let limit = of_kind(&report, "stalled-limit-exceeded", "sweep-1");
    assert_eq!(limit.len(), 1, "{report:#}");
    let metrics = &limit[0]["metrics"];
    assert_eq!(metrics["queue"], "nightly-sweep");
    assert_eq!(metrics["stalls_seen"], 2);
    assert_eq!(metrics["failed_at"], row_time("failed", "sweep-1", 0));
    assert_eq!(metrics["last_activated_at"], row_time("active", "sweep-1", 2));
    assert_eq!(of_kind(&report, "stalled-rerun", "sweep-1").len(), 2);

    let assumptions: Vec<&str> = report["assumptions"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(assumptions.iter().any(|a| a.starts_with("BullMQ on PostgreSQL")), "{assumptions:#?}");
    assert!(
        assumptions.iter().any(|a| a.contains("event.csv: times are created_at_ms, the PostgreSQL server's clock"))
    );
    assert!(
        assumptions.iter().any(|a| a.contains("meta.csv: queue pr-review: the last effective stalled check ran at"))
    );
    for input in report["inputs"].as_array().unwrap().iter().filter(|input| input["kind"] != "bullmq-params") {
        let count = |key: &str| input[key].as_u64().unwrap();
        assert_eq!(count("lines"), count("used") + count("ignored") + count("rejected"), "{input:#}");
        assert_eq!(count("rejected"), 0, "{input:#}");
    }
    let formats: Vec<&str> = report["inputs"].as_array().unwrap().iter().filter_map(|i| i["format"].as_str()).collect();
    assert_eq!(formats, ["pg-event-table", "pg-job-table", "pg-meta-table", "text", "json"]);
    // A meta table places no event, but its lines said something: it is no empty input.
    let warnings = report["warnings"].as_array().unwrap();
    assert!(!warnings.iter().any(|w| w["kind"] == "input-contributed-nothing"), "{warnings:#?}");
}

#[test]
fn the_json_exports_read_as_the_csv_ones() {
    let kinds_at = |report: &Value| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["kind"].as_str().unwrap().to_string(), f["at"].as_str().unwrap().to_string()))
            .collect();
        found.sort();
        found
    };
    let case = kinds_at(&analyze(&[CASE]));
    for events in ["event.jsonl", "events.json"] {
        let report = analyze(&[
            "--events",
            &path(events),
            "--jobs",
            &path("job.jsonl"),
            "--jobs",
            &path("meta.jsonl"),
            "--log",
            &path("workers.log"),
            "--log-tz",
            "UTC",
            "--params",
            &path("bullmq.json"),
        ]);
        assert_eq!(kinds_at(&report), case, "{events}");
        let input = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "bullmq-events").unwrap();
        assert_eq!(input["format"], "pg-event-table");
        assert_eq!(input["used"], 15, "{events}: {input:#}");
    }
}

#[test]
fn the_queue_column_separates_the_queues_of_a_schema() {
    let report =
        analyze(&["--events", &path("event.csv"), "--queue", "nightly-sweep", "--params", &path("bullmq.json")]);
    let input = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "bullmq-events").unwrap();
    assert_eq!(input["ignored_by_reason"]["another queue's row"], 7, "{input:#}");
    assert!(of_kind(&report, "stalled-rerun", "pr-4412").is_empty(), "{report:#}");
    assert_eq!(of_kind(&report, "stalled-rerun", "sweep-1").len(), 2, "{report:#}");
}

/// `init` knows each table by its content, whatever the file's name, drafts the kinds and formats
/// that read them (no queue for the event table: its rows say theirs), and the draft gives the
/// case's findings.
#[test]
fn init_drafts_the_tables_as_events_and_job_sources() {
    let dir = tempfile::tempdir().unwrap();
    for (from, to) in [
        ("event.csv", "bullmq-event-export.csv"),
        ("job.jsonl", "jobs.json"),
        ("meta.csv", "meta.csv"),
        ("meta.jsonl", "meta.jsonl"),
        ("bullmq.json", "bullmq.json"),
    ] {
        std::fs::copy(path(from), dir.path().join(to)).unwrap();
    }
    let folder = dir.path().to_str().unwrap();
    let run = leasetrace(&["init", folder]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
    // The meta table exported twice (CSV and JSON rows) is read once, and the other is said.
    assert!(!manifest.contains("path = \"meta.jsonl\""), "{manifest}");
    assert!(run.stdout.contains("meta.jsonl: the same meta rows as meta.csv"), "{}", run.stdout);
    for (kind, file, format) in [
        ("bullmq-events", "bullmq-event-export.csv", "pg-event-table"),
        ("bullmq-jobs", "jobs.json", "pg-job-table"),
        ("bullmq-jobs", "meta.csv", "pg-meta-table"),
    ] {
        let source = format!("[[sources]]\nkind = \"{kind}\"\npath = \"{file}\"\nformat = \"{format}\"\n");
        assert!(manifest.contains(&source), "{source}\nnot in\n{manifest}");
    }
    assert!(!manifest.contains("queue ="), "{manifest}");
    let report = analyze(&[folder]);
    assert_eq!(of_kind(&report, "stalled-limit-exceeded", "sweep-1").len(), 1, "{report:#}");
    assert_eq!(of_kind(&report, "stalled-rerun", "pr-4412").len(), 1, "{report:#}");
}

/// The event table as a JSON array that a tool spread over many lines is not taken for a Redis
/// stream export: the error says what it is and how to read it.
#[test]
fn a_pretty_printed_event_table_says_how_to_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Value> = std::fs::read_to_string(path("event.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pretty = dir.path().join("event.json");
    std::fs::write(&pretty, serde_json::to_string_pretty(&rows).unwrap()).unwrap();
    let run = leasetrace(&["timeline", "--events", pretty.to_str().unwrap()]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("a row of BullMQ's PostgreSQL event table"), "{}", run.stderr);
    assert!(run.stderr.contains("jq -c '.[]'"), "{}", run.stderr);
}

/// On PostgreSQL the lock runs from the claiming worker's clock, read before its call wrote the
/// `active` row: under load the move can come a little less than lockDuration after that row (an
/// e2e run on a busy machine saw a rerun 1.958 s after an activation with a 2 s lock). The fixture's
/// sweep-1, moved and rerun 1.951 and 1.958 s after its first activation, is still a stalled rerun
/// inside its window, and contradicts no lock parameter.
#[test]
fn a_move_a_little_before_activation_plus_lock_duration_is_no_contradiction() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(path("event.csv")).unwrap();
    let moved = text
        .replace(
            ",11,stalled,\"{\"\"jobId\"\": \"\"sweep-1\"\"}\",1796550360943",
            ",11,stalled,\"{\"\"jobId\"\": \"\"sweep-1\"\"}\",1796550359950",
        )
        .replace("\"\"sweep-1\"\"}\",1796550360956", "\"\"sweep-1\"\"}\",1796550359957");
    assert_ne!(moved, text);
    std::fs::write(dir.path().join("event.csv"), moved).unwrap();
    let events = dir.path().join("event.csv");
    let report = analyze(&["--events", events.to_str().unwrap(), "--params", &path("bullmq.json")]);
    let reruns = of_kind(&report, "stalled-rerun", "sweep-1");
    let first =
        reruns.iter().find(|f| f["metrics"]["rerun_at"] == "2026-12-06T09:45:59.957Z").expect("the early rerun");
    assert_eq!(first["metrics"]["rerun_in_stalled_window"], true, "{first:#}");
    assert_eq!(first["metrics"]["lock_expired_earliest_at"], "2026-12-06T09:45:58.999Z", "{first:#}");
    let kinds: Vec<&str> = report["findings"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
    assert!(!kinds.contains(&"lock-params-contradicted"), "{kinds:?}");
}

#[test]
fn the_report_names_the_event_table_never_a_redis_stream() {
    // A PostgreSQL case has no events stream: a summary that says so sends the reader to Redis.
    let report = analyze(&[CASE]);
    let mut said_table = 0;
    for finding in report["findings"].as_array().unwrap() {
        let mut words = vec![finding["summary"].as_str().unwrap_or_default().to_string()];
        words.extend(finding["notes"].as_array().into_iter().flatten().filter_map(|n| n.as_str()).map(String::from));
        for text in words {
            assert!(!text.contains("events stream"), "{}: {text}", finding["code"]);
            said_table += usize::from(text.contains("event table"));
        }
    }
    assert!(said_table > 0, "no finding names the event table: {report:#}");
}
