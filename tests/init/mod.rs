//! `leasetrace init` on folders of exports as users have them: a ledger with the app's own column
//! names and words, a naive log written in Seoul or Los Angeles, a nested parameters file. After
//! the user declares only what init said it could not decide (uncommenting one zone line), the
//! written manifest must give the findings of a hand-written one.

use std::fmt::Write as _;

#[allow(unused_imports)]
use super::*;

/// The incident's ledger with the names and words of another app: every column renamed, every
/// event value in its own words.
fn own_names_ledger() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let ledger = std::fs::read_to_string(format!("{root}/{INCIDENT}/ledger.csv")).unwrap();
    let mut lines = ledger.lines();
    let header = lines.next().unwrap();
    assert_eq!(header, "at,run_id,job_id,slot,sweep,event,item,worker,status,detail");
    let mut out = String::from("ts_utc,execution_id,bull_id,planned_at,scheduler,step,subject,node,phase,note\n");
    for line in lines {
        let renamed = line
            .replace(",round_started,", ",begin,")
            .replace(",item_selected,", ",pr_picked,")
            .replace(",effect_posted,", ",review_created,")
            .replace(",round_finished,", ",end,")
            .replace(",round_failed,", ",crashed,");
        out.push_str(&renamed);
        out.push('\n');
    }
    out
}

/// The incident's lock options as a config dump holds them: nested, next to other settings.
const NESTED_PARAMS: &str = r#"{
  "service": "pr-review",
  "redis": { "host": "redis.internal", "port": 6379 },
  "bullmq": {
    "queues": {
      "pr-review": {
        "worker": { "lockDuration": 1178000, "stalledInterval": 30000, "maxStalledCount": 1, "concurrency": 2 },
        "repeat": { "pattern": "12,33,54 * * * *" }
      }
    }
  }
}
"#;

/// What a user would write by hand for the same files.
const HAND_WRITTEN: &str = r#"display_tz = "Asia/Seoul"

[[sources]]
kind = "ledger"
path = "runs.csv"
columns = { time = "ts_utc", run = "execution_id", job = "bull_id", slot = "planned_at", sweep = "scheduler", event = "step", item = "subject", worker = "node", status = "phase", detail = "note" }
events = { begin = "round-started", pr_picked = "item-selected", review_created = "effect-posted", end = "round-finished", crashed = "round-failed" }

[[sources]]
kind = "log"
path = "api.log"
tz = "Asia/Seoul"

[[sources]]
kind = "bullmq-params"
path = "worker-config.json"
"#;

fn findings(report: &Value) -> Vec<(Value, Value, Value)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].clone(), f["metrics"].clone(), f["summary"].clone()))
        .collect()
}

fn analyze_json(case: &str) -> Value {
    let run = leasetrace(&["analyze", case, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{case}: {}", run.stderr);
    run.json()
}

/// The manifest with one commented line uncommented, as a user would.
fn uncomment(manifest: &Path, line_start: &str) {
    let text = std::fs::read_to_string(manifest).unwrap();
    let commented = format!("# {line_start}");
    assert_eq!(text.matches(&commented).count(), 1, "one line to uncomment:\n{text}");
    std::fs::write(manifest, text.replace(&commented, line_start)).unwrap();
}

fn init(case: &Path) -> (String, String) {
    let run = leasetrace(&["init", case.to_str().unwrap()]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    (run.stdout, std::fs::read_to_string(case.join("leasetrace.toml")).unwrap())
}

/// The incident as another app exports it, in `folder`.
fn own_names_case(folder: &Path) {
    let root = env!("CARGO_MANIFEST_DIR");
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(folder.join("runs.csv"), own_names_ledger()).unwrap();
    std::fs::copy(format!("{root}/{INCIDENT}/server.log"), folder.join("api.log")).unwrap();
    std::fs::write(folder.join("worker-config.json"), NESTED_PARAMS).unwrap();
}

#[test]
fn init_maps_a_ledger_with_its_own_names_measures_the_kst_log_and_matches_a_hand_written_manifest() {
    let dir = tempfile::tempdir().unwrap();
    own_names_case(dir.path());
    let (stdout, manifest) = init(dir.path());

    // Columns and event values, each with its evidence.
    for mapping in [
        "time = \"ts_utc\"",
        "event = \"step\"",
        "run = \"execution_id\"",
        "job = \"bull_id\"",
        "slot = \"planned_at\"",
        "item = \"subject\"",
        "worker = \"node\"",
        "status = \"phase\"",
        "sweep = \"scheduler\"",
        "detail = \"note\"",
    ] {
        assert!(manifest.lines().any(|l| l.starts_with(mapping) && l.contains("   # ")), "{mapping}:\n{manifest}");
    }
    for (value, kind) in [
        ("begin", "round-started"),
        ("pr_picked", "item-selected"),
        ("review_created", "effect-posted"),
        ("end", "round-finished"),
        ("crashed", "round-failed"),
    ] {
        let line = format!("\"{value}\" = \"{kind}\"");
        assert!(manifest.lines().any(|l| l.starts_with(&line)), "{line}:\n{manifest}");
    }
    assert!(
        manifest.contains("the ledger reader on these 27 rows with the mapping below: 27 events, 0 rejected"),
        "{manifest}"
    );
    // The nested parameters file, found where it holds the lock options.
    assert!(manifest.contains("kind = \"bullmq-params\"\npath = \"worker-config.json\""), "{manifest}");
    assert!(manifest.contains("at bullmq.queues.pr-review.worker (lockDuration = 1178000"), "{manifest}");
    // The zone: measured, listed, not decided.
    assert!(manifest.contains("= +09:00 on 2026-10-06 to 2026-10-07"), "{manifest}");
    assert!(manifest.contains("# tz = \"Asia/Seoul\""), "{manifest}");
    assert!(!manifest.lines().any(|l| l.starts_with("tz =")), "no zone is decided:\n{manifest}");
    assert!(stdout.contains("ZONE UNDECIDED: measured +09:00"), "{stdout}");
    assert!(manifest.contains("#   - api.log: its zone: measured +09:00 against runs.csv"), "{manifest}");

    // Until then analysis stops, naming the source.
    let stopped = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(stopped.code, 2);
    assert!(stopped.stderr.contains("api.log:1: timestamp has no UTC offset"), "{}", stopped.stderr);

    // Declaring only the zone gives the hand-written manifest's findings, and the incident's.
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let hand = tempfile::tempdir().unwrap();
    for file in ["runs.csv", "api.log", "worker-config.json"] {
        std::fs::copy(dir.path().join(file), hand.path().join(file)).unwrap();
    }
    std::fs::write(hand.path().join("leasetrace.toml"), HAND_WRITTEN).unwrap();
    let by_hand = analyze_json(hand.path().to_str().unwrap());
    assert_eq!(findings(&from_init), findings(&by_hand));
    // The nested options are the incident's: the same findings as its shipped case.
    assert_eq!(kinds(&from_init), kinds(&analyze_json(INCIDENT)));
    assert!(
        manifest.contains(
            "# the parameters reader takes lockDuration = 1178000, stalledInterval = 30000, maxStalledCount = 1"
        ),
        "{manifest}"
    );
}

/// Every timestamp at the start of a line moved by `hours`.
fn shifted_log(text: &str, hours: i64) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let moved = line
            .get(..23)
            .and_then(|stamp| chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%d %H:%M:%S%.3f").ok())
            .map(|at| (at + chrono::Duration::hours(hours)).format("%Y-%m-%d %H:%M:%S%.3f").to_string());
        match moved {
            Some(stamp) => {
                out.push_str(&stamp);
                out.push_str(&line[23..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn init_proposes_los_angeles_for_a_log_written_there_not_seoul() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "bullmq.json"] {
        std::fs::copy(format!("{root}/{INCIDENT}/{file}"), dir.path().join(file)).unwrap();
    }
    // The same server in Los Angeles: 2026-10-07 is in summer time there (UTC-7), KST is UTC+9.
    let kst = std::fs::read_to_string(format!("{root}/{INCIDENT}/server.log")).unwrap();
    std::fs::write(dir.path().join("server.log"), shifted_log(&kst, -16)).unwrap();
    let (_, manifest) = init(dir.path());
    assert!(manifest.contains("= -07:00 on 2026-10-06 to 2026-10-07"), "{manifest}");
    let zones: Vec<&str> = manifest.lines().filter(|l| l.starts_with("# tz = ")).collect();
    assert!(zones[0].starts_with("# tz = \"America/Los_Angeles\""), "{zones:?}");
    assert!(zones[0].ends_with("# -08:00 in January, -07:00 in July"), "{zones:?}");
    assert!(zones.iter().any(|z| z.contains("America/Phoenix")), "{zones:?}");
    assert!(!manifest.contains("Asia/Seoul"), "{manifest}");

    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"America/Los_Angeles\"");
    let report = analyze_json(dir.path().to_str().unwrap());
    let incident = analyze_json(INCIDENT);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&report), metrics(&incident), "the same instants, whatever zone the log was in");
}

#[test]
fn init_without_evidence_leaves_the_zone_commented_with_no_placeholder_zone() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    // The log alone: nothing with offsets names its jobs.
    std::fs::copy(format!("{root}/{INCIDENT}/server.log"), dir.path().join("server.log")).unwrap();
    std::fs::copy(format!("{root}/{INCIDENT}/bullmq.json"), dir.path().join("bullmq.json")).unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(stdout.contains("ZONE UNDECIDED: 684 timestamps without a UTC offset"), "{stdout}");
    assert!(manifest.contains("# tz = \"...\""), "{manifest}");
    assert!(manifest.contains("no line names a job or run id that a source with offsets"), "{manifest}");
    let tz_lines: Vec<&str> = manifest.lines().filter(|l| l.trim_start_matches("# ").starts_with("tz = ")).collect();
    assert_eq!(tz_lines.len(), 1, "{manifest}");
    for zone in chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name()).filter(|name| name.contains('/')) {
        assert!(!manifest.contains(&format!("\"{zone}\"")), "no zone named: {zone}\n{manifest}");
    }
    let stopped = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(stopped.code, 2, "{}", stopped.stderr);
}

#[test]
fn init_on_the_incident_folder_without_its_manifest_gives_a_working_one() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(format!("{root}/{INCIDENT}")).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != "leasetrace.toml" {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let (_, manifest) = init(dir.path());
    assert!(!manifest.contains("NOTES.md"), "documents are not sources");
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let shipped = analyze_json(INCIDENT);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&from_init), metrics(&shipped));
    assert_eq!(from_init["inputs"].as_array().unwrap().len(), 3);
}

#[test]
fn init_on_a_real_bullmq_run_reads_each_record_once_and_matches_its_manifest() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "server.log", "bullmq.json", "events.json", "events.txt", "jobs.jsonl"] {
        std::fs::copy(format!("{root}/{REAL_STALLED}/{file}"), dir.path().join(file)).unwrap();
    }
    let (stdout, manifest) = init(dir.path());
    // The stream exported twice is read once; its queue comes from the job hashes.
    assert!(stdout.contains("events.txt: the same job moments as events.json"), "{stdout}");
    assert!(!manifest.contains("path = \"events.txt\""), "{manifest}");
    assert!(
        manifest.contains(
            "queue = \"pr-review\"   # every job id its entries name (4) is a job hash of queue pr-review (jobs.jsonl)"
        ),
        "{manifest}"
    );
    assert!(manifest.contains("kind = \"bullmq-jobs\"\npath = \"jobs.jsonl\""), "{manifest}");
    // The app has no stall listener: no rule, and said so; its activation lines are read already.
    assert!(
        manifest.contains("stalled (1 moment with a job id in the events stream): no line names the job"),
        "{manifest}"
    );
    assert!(
        manifest.contains("active (4 moments with a job id in the events stream): the built-in rules read"),
        "{manifest}"
    );
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let shipped = analyze_json(REAL_STALLED);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&from_init), metrics(&shipped));
}

#[test]
fn init_proposes_a_rule_for_the_stall_lines_an_app_writes_in_its_own_words() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "bullmq.json", "events.json", "jobs.jsonl"] {
        std::fs::copy(format!("{root}/{REAL_STALLED}/{file}"), dir.path().join(file)).unwrap();
    }
    // The app's own stalled listener, writing a few ms after BullMQ's stream entry.
    let stream: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/{REAL_STALLED}/events.json")).unwrap()).unwrap();
    let stall = stream.as_array().unwrap().iter().find(|e| e["fields"]["event"] == "stalled").unwrap();
    let millis: i64 = stall["id"].as_str().unwrap().split('-').next().unwrap().parse::<i64>().unwrap() + 4;
    let kst = chrono::DateTime::from_timestamp_millis(millis).unwrap() + chrono::Duration::hours(9);
    let job = stall["fields"]["jobId"].as_str().unwrap();
    let line = format!("{} WARN  [Recovery] Recovered {job} from a dead worker\n", kst.format("%Y-%m-%d %H:%M:%S%.3f"));
    let log = std::fs::read_to_string(format!("{root}/{REAL_STALLED}/server.log")).unwrap();
    let mut lines: Vec<String> = log.lines().map(|l| format!("{l}\n")).collect();
    let at = lines.iter().position(|l| l.get(..23).is_some_and(|t| t > &line[..23])).unwrap();
    lines.insert(at, line);
    std::fs::write(dir.path().join("server.log"), lines.concat()).unwrap();

    let (_, manifest) = init(dir.path());
    let rule = "[[sources.rules]]\nevent = \"job-stalled\"\npattern = '^WARN\\s+\\[Recovery\\]\\s+Recovered\\s+(?P<job_id>\\S+)\\s+from\\s+a\\s+dead\\s+worker'";
    assert!(manifest.contains(rule), "{manifest}");
    assert!(
        manifest.contains("stalled (1 moment with a job id in the events stream): 1 of them have a line like"),
        "{manifest}"
    );
    // The rule as written reads the line as the stall it records.
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let run = leasetrace(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let timeline = run.json();
    let stalls: Vec<&Value> = timeline["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "job-stalled" && e["source"]["path"].as_str().unwrap().ends_with("server.log"))
        .collect();
    assert_eq!(stalls.len(), 1, "{stalls:?}");
    assert_eq!(stalls[0]["job_id"], job);
}

#[test]
fn init_recognises_job_hash_exports_in_other_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let hgetall = "bull:notify:42\n1) \"name\"\n2) \"send-digest\"\n3) \"timestamp\"\n4) \"1791333180000\"\n5) \"processedOn\"\n6) \"1791333180004\"\n";
    std::fs::write(dir.path().join("job-42.txt"), hgetall).unwrap();
    std::fs::write(
        dir.path().join("jobs.json"),
        r#"[{"key":"bull:notify:43","id":"43","state":"failed","hash":{"name":"send-digest","timestamp":"1791333180500","processedOn":"1791333181000","finishedOn":"1791333182000","failedReason":"socket hang up","atm":"1"}}]"#,
    )
    .unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(stdout.contains("redis-cli HGETALL text"), "{stdout}");
    assert!(stdout.contains("{key, id, state, hash}"), "{stdout}");
    assert_eq!(manifest.matches("kind = \"bullmq-jobs\"").count(), 2, "{manifest}");
}

/// The block of `doc` in the fence that opens with `fence` after `heading`.
fn block<'a>(doc: &'a str, heading: &str, fence: &str) -> &'a str {
    let after = &doc[doc.find(heading).unwrap_or_else(|| panic!("{heading}"))..];
    let start = after.find(fence).unwrap_or_else(|| panic!("{fence}")) + fence.len();
    let end = after[start..].find("```").unwrap();
    &after[start..start + end]
}

#[test]
fn docs_init_sample_is_what_init_writes() {
    let dir = tempfile::tempdir().unwrap();
    own_names_case(&dir.path().join("case-2026-10-07"));
    let mut run = leasetrace(&["init", "case-2026-10-07"]);
    run.command.current_dir(dir.path());
    let run = run.run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = std::fs::read_to_string(dir.path().join("case-2026-10-07/leasetrace.toml")).unwrap();
    let doc = std::fs::read_to_string(format!("{}/docs/init.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert_eq!(block(&doc, "## A real sample", "```text\n"), run.stdout, "docs/init.md: the printed report");
    assert_eq!(block(&doc, "## A real sample", "```toml\n"), written, "docs/init.md: the manifest");
}

#[test]
fn init_leaves_out_a_parameters_file_the_reader_cannot_settle_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // Two workers with different lock settings: which one ran the jobs is not in the file.
    std::fs::write(
        dir.path().join("config.yaml"),
        "queues:\n  review:\n    worker:\n      lockDuration: 12000\n  digest:\n    worker:\n      lockDuration: 60000\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("runs.jsonl"), "{\"at\":\"2026-10-07T00:33:00Z\",\"run\":\"a\",\"event\":\"start\"}\n{\"at\":\"2026-10-07T00:34:00Z\",\"run\":\"a\",\"event\":\"done\"}\n").unwrap();
    let (_, manifest) = init(dir.path());
    assert!(manifest.contains("# [[sources]]\n# kind = \"bullmq-params\"\n# path = \"config.yaml\""), "{manifest}");
    assert!(manifest.contains("# NOT DECIDED: the parameters reader stops: "), "{manifest}");
    assert!(manifest.contains("#   - config.yaml: the parameters reader stops on it"), "{manifest}");
    // The rest is loadable as written.
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Choosing the worker: the source uncommented with one of the places proposed.
    let path = dir.path().join("leasetrace.toml");
    for line in [
        "[[sources]]\n# kind = \"bullmq-params\"",
        "kind = \"bullmq-params\"\n# path",
        "path = \"config.yaml\"",
        "params_at = \"/queues/review/worker\"",
    ] {
        uncomment(&path, line);
    }
    let report = analyze_json(dir.path().to_str().unwrap());
    assert_eq!(report["params"]["lockDuration"], 12000, "{}", report["params"]);
}

#[test]
fn init_gives_the_parameters_readers_error_for_a_file_with_keys_like_lock_options() {
    let dir = tempfile::tempdir().unwrap();
    // The options under the app's own spelling: BullMQ reads none of them.
    let yaml = "queues:\n  review:\n    worker:\n      lock_duration: 12000\n      stalled_interval: 5000\n      concurrency: 2\n";
    std::fs::write(dir.path().join("worker.yaml"), yaml).unwrap();
    std::fs::write(dir.path().join("runs.jsonl"), "{\"at\":\"2026-10-07T00:33:00Z\",\"run\":\"a\",\"event\":\"start\"}\n{\"at\":\"2026-10-07T00:34:00Z\",\"run\":\"a\",\"event\":\"done\"}\n").unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(!stdout.contains("not a ledger, log"), "{stdout}");
    assert!(
        stdout.contains("COMMENTED OUT: the parameters reader finds no lock option, only the key 'lock_duration' at line 4, the key 'stalled_interval' at line 5"),
        "{stdout}"
    );
    assert!(manifest.contains("# [[sources]]\n# kind = \"bullmq-params\"\n# path = \"worker.yaml\""), "{manifest}");
    assert!(
        manifest.contains("#   - worker.yaml: the parameters reader finds no BullMQ lock option in it, only the key 'lock_duration' at line 4, the key 'stalled_interval' at line 5, which BullMQ does not read; spell the keys as BullMQ does"),
        "{manifest}"
    );
    let prefix = "# NOT DECIDED: the parameters reader stops: ";
    let error = manifest.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("{manifest}"));
    assert!(
        error.contains("found 'lock_duration' at line 4, 'stalled_interval' at line 5, which BullMQ does not read"),
        "{error}"
    );
    // The rest is loadable as written.
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Uncommented as it is, analyze stops with the error init gave.
    let path = dir.path().join("leasetrace.toml");
    for line in
        ["[[sources]]\n# kind = \"bullmq-params\"", "kind = \"bullmq-params\"\n# path", "path = \"worker.yaml\""]
    {
        uncomment(&path, line);
    }
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains(error), "{}\n{error}", run.stderr);
}

/// A timestamptz as psql prints it in the ISO DateStyle: `2026-11-30 17:46:24.208+09`.
fn psql_time(utc: &str, hours: i32) -> String {
    let at = chrono::DateTime::parse_from_rfc3339(utc).unwrap();
    let local = at.with_timezone(&chrono::FixedOffset::east_opt(hours * 3600).unwrap());
    let text = local.format("%Y-%m-%d %H:%M:%S%.6f").to_string();
    format!(
        "{}{}{:02}",
        text.trim_end_matches('0').trim_end_matches('.'),
        if hours < 0 { '-' } else { '+' },
        hours.abs()
    )
}

#[test]
fn init_maps_a_psql_export_of_the_apps_own_table_once_and_matches_the_real_runs_manifest() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    // The real run's ledger as a PostgreSQL table of the app's own, exported twice with
    // `\copy (select * from sweep_ledger order by id) to ... csv header`: PGTZ=Asia/Seoul and UTC.
    let ledger = std::fs::read_to_string(format!("{root}/{REAL_STALLED}/ledger.csv")).unwrap();
    let steps = [
        ("round_started", "begin"),
        ("item_selected", "picked"),
        ("effect_posted", "review-created"),
        ("round_finished", "end"),
        ("round_failed", "reaped"),
    ];
    for (file, hours) in [("ledger.csv", 9), ("ledger-utc.csv", 0)] {
        let mut out =
            String::from("id,ts_utc,execution_id,bull_id,due_at,sweep_name,step,subject,node,phase,note,meta\n");
        for (id, line) in ledger.lines().skip(1).enumerate() {
            let c: Vec<&str> = line.split(',').collect();
            let step = steps.iter().find(|(event, _)| *event == c[5]).unwrap().1;
            let pid = c[7].rsplit('/').next().unwrap();
            let row = [
                (id + 1).to_string(),
                psql_time(c[0], hours),
                c[1].into(),
                c[2].into(),
                psql_time(c[3], hours),
                c[4].into(),
                step.into(),
                c[6].into(),
                c[7].into(),
                c[8].into(),
                c[9].into(),
                format!("\"{{\"\"pid\"\": {pid}}}\""),
            ];
            out.push_str(&row.join(","));
            out.push('\n');
        }
        std::fs::write(dir.path().join(file), out).unwrap();
    }
    for file in ["server.log", "events.json", "jobs.jsonl", "bullmq.json"] {
        std::fs::copy(format!("{root}/{REAL_STALLED}/{file}"), dir.path().join(file)).unwrap();
    }
    let (stdout, manifest) = init(dir.path());
    assert!(stdout.contains("ledger.csv: the same job moments as ledger-utc.csv"), "{stdout}");
    for line in [
        "time = \"ts_utc\"",
        "slot = \"due_at\"",
        "sweep = \"sweep_name\"",
        "# column \"id\" is not mapped (e.g. '1')",
        "# column \"meta\" is not mapped (e.g. '{\"pid\": 23582}')",
        "\"reaped\" = \"round-failed\"",
        "# timestamps carry their offset (e.g. '2026-11-30 08:46:24.208+00'): no tz needed",
    ] {
        assert!(manifest.lines().any(|l| l.starts_with(line)), "{line}:\n{manifest}");
    }
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let shipped = analyze_json(REAL_STALLED);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&from_init), metrics(&shipped));
}

#[test]
fn init_says_when_a_logs_offset_changes_inside_it_and_lists_zones_with_both() {
    let dir = tempfile::tempdir().unwrap();
    // Rounds every 12 hours across 2026-10-25, when Central Europe leaves summer time (01:00 UTC).
    let mut ledger = String::from("at,run_id,job_id,event\n");
    let mut log = String::new();
    for (n, hours) in [0i64, 12, 24, 36, 48, 60].into_iter().enumerate() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-10-24T06:00:00Z").unwrap() + chrono::Duration::hours(hours);
        let slot = at.timestamp_millis();
        let job = format!("repeat:nightly:{slot}");
        let _ = writeln!(ledger, "{},run-{n},{job},round_started", at.format("%Y-%m-%dT%H:%M:%S%.3fZ"));
        let berlin = at.with_timezone(&chrono_tz::Europe::Berlin).naive_local();
        let _ = writeln!(log, "{} INFO [Worker] picked up {job}", berlin.format("%Y-%m-%d %H:%M:%S%.3f"));
    }
    std::fs::write(dir.path().join("runs.csv"), ledger).unwrap();
    std::fs::write(dir.path().join("worker.log"), log).unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(stdout.contains("measured +02:00 then +01:00"), "{stdout}");
    assert!(
        manifest
            .contains("# The offset changes inside the file (a DST change): +02:00 on lines 1-2, +01:00 on lines 3-6."),
        "{manifest}"
    );
    let zones: Vec<&str> = manifest.lines().filter(|l| l.starts_with("# tz = ")).collect();
    assert!(zones.iter().any(|z| z.starts_with("# tz = \"Europe/Berlin\"")), "{zones:?}");
    assert!(zones.iter().all(|z| z.ends_with("# +01:00 in January, +02:00 in July")), "{zones:?}");
}

#[test]
fn init_places_a_los_angeles_logs_lines_in_the_repeated_hour_by_their_order_as_analyze_does() {
    let dir = tempfile::tempdir().unwrap();
    // Rounds every 20 minutes through 2026-11-01 08:00-10:00 UTC: in Los Angeles 01:00-02:00 twice
    // (PDT, then PST after the clocks go back at 09:00 UTC). The app logs each activation in its
    // own words, which no built-in rule reads; every such line is in the repeated hour.
    let mut ledger = String::from("at,run_id,job_id,event\n");
    let mut log = String::from("2026-11-01 00:50:00.000 INFO [HTTP] GET /healthz 200 1.2ms\n");
    let mut starts = Vec::new();
    for (n, minutes) in [5i64, 25, 45, 65, 85, 105].into_iter().enumerate() {
        let at =
            chrono::DateTime::parse_from_rfc3339("2026-11-01T08:00:00Z").unwrap() + chrono::Duration::minutes(minutes);
        let job = format!("repeat:nightly:{}", at.timestamp_millis());
        let _ = writeln!(ledger, "{},run-{n},{job},round_started", at.format("%Y-%m-%dT%H:%M:%S%.3fZ"));
        let local = (at + chrono::Duration::milliseconds(300)).with_timezone(&chrono_tz::America::Los_Angeles);
        let _ = writeln!(log, "{} INFO [Worker] took on {job}", local.naive_local().format("%Y-%m-%d %H:%M:%S%.3f"));
        starts.push((job, (at + chrono::Duration::milliseconds(300)).to_utc()));
    }
    log.push_str("2026-11-01 02:10:00.000 INFO [HTTP] GET /healthz 200 1.1ms\n");
    std::fs::write(dir.path().join("runs.csv"), ledger).unwrap();
    std::fs::write(dir.path().join("worker.log"), log).unwrap();
    let (_, manifest) = init(dir.path());
    assert!(
        manifest
            .contains("# The offset changes inside the file (a DST change): -07:00 on lines 2-4, -08:00 on lines 5-7."),
        "{manifest}"
    );
    assert!(manifest.contains("# tz = \"America/Los_Angeles\""), "{manifest}");
    // The activations are read from the lines in the repeated hour, both passes.
    let rule = "[[sources.rules]]\nevent = \"job-active\"\npattern = '^INFO\\s+\\[Worker\\]\\s+took\\s+on\\s+(?P<job_id>\\S+)'";
    assert!(manifest.contains(rule), "{manifest}");
    assert!(!manifest.contains("the app logs none"), "{manifest}");
    // analyze places those lines where init did: at the ledger's moments.
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"America/Los_Angeles\"");
    let run = leasetrace(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let timeline = run.json();
    let active: Vec<(String, String)> = timeline["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "job-active" && e["source"]["path"].as_str().unwrap().ends_with("worker.log"))
        .map(|e| (e["job_id"].as_str().unwrap().to_string(), e["at"].as_str().unwrap().to_string()))
        .collect();
    let expected: Vec<(String, String)> =
        starts.iter().map(|(job, at)| (job.clone(), at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))).collect();
    assert_eq!(active, expected);
}

#[test]
fn init_proposes_every_job_hash_shape_the_readers_read_with_their_format() {
    let root = env!("CARGO_MANIFEST_DIR");
    let shapes: Vec<PathBuf> = std::fs::read_dir(format!("{root}/fixtures/formats"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("jobs"))
        .collect();
    assert!(shapes.len() >= 10, "{shapes:?}");
    for shape in shapes {
        let name = shape.file_name().unwrap().to_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(&shape, dir.path().join(name)).unwrap();
        let (_, manifest) = init(dir.path());
        assert!(manifest.contains("kind = \"bullmq-jobs\""), "{name}:\n{manifest}");
        assert!(manifest.contains("format = \"hgetall-"), "{name}:\n{manifest}");
        let events = |args: &[&str]| -> Vec<Value> {
            let run = leasetrace(args).run();
            assert_eq!(run.code, 0, "{name}: {}", run.stderr);
            let report = run.json();
            report["timeline"].as_array().unwrap().iter().map(|e| e["kind"].clone()).collect()
        };
        let from_init = events(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]);
        let by_flag = events(&["timeline", "--jobs", shape.to_str().unwrap(), "--format", "json"]);
        assert!(!from_init.is_empty(), "{name}");
        assert_eq!(from_init, by_flag, "{name}");
    }
}

#[test]
fn init_comments_out_a_log_its_reader_stops_on_and_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.log"),
        "2026-10-07T00:33:00Z INFO job active id=7\n2026-10-07 9:33:00 INFO job failed id=7\n",
    )
    .unwrap();
    let (_, manifest) = init(dir.path());
    assert!(manifest.contains("# [[sources]]\n# kind = \"log\"\n# path = \"app.log\""), "{manifest}");
    assert!(manifest.contains("# NOT DECIDED: the log reader stops: app.log:2: malformed timestamp"), "{manifest}");
    assert!(
        manifest.contains("#   - app.log: the log reader stops on it (app.log:2: malformed timestamp"),
        "{manifest}"
    );
}

#[test]
fn init_finds_bullmqs_plain_job_ids_in_a_ledger_column_by_the_streams_ids() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    // The real stalled-limit run: job `1`, a plain BullMQ id, in a column named after the app.
    let ledger = std::fs::read_to_string(format!("{root}/{REAL_LIMIT}/ledger.csv")).unwrap();
    let renamed = ledger.replacen("at,run_id,job_id,", "at,run_id,queue_ref,", 1);
    std::fs::write(dir.path().join("ledger.csv"), renamed).unwrap();
    for file in ["server.log", "events.json", "jobs.jsonl", "bullmq.json"] {
        std::fs::copy(format!("{root}/{REAL_LIMIT}/{file}"), dir.path().join(file)).unwrap();
    }
    let (_, manifest) = init(dir.path());
    assert!(
        manifest.lines().any(|l| l.starts_with("job = \"queue_ref\"")
            && l.contains("job ids of the folder's events stream or job hashes")),
        "{manifest}"
    );
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let shipped = analyze_json(REAL_LIMIT);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&from_init), metrics(&shipped));
}

#[test]
fn init_proposes_no_rule_for_a_log_whose_zone_it_could_not_measure() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    // A stream of other jobs than the log's: nothing to measure the log's zone by.
    std::fs::copy(format!("{root}/{INCIDENT}/server.log"), dir.path().join("server.log")).unwrap();
    std::fs::copy(format!("{root}/{REAL_STALLED}/events.json"), dir.path().join("events.json")).unwrap();
    let (_, manifest) = init(dir.path());
    assert!(manifest.contains("# tz = \"...\""), "{manifest}");
    assert!(
        manifest.contains("# Log rules: not proposed: without the log's zone its lines cannot be placed at the moments other sources give."),
        "{manifest}"
    );
    assert!(!manifest.contains("the app logs none"), "{manifest}");
}

#[test]
fn init_measures_a_kubectl_logs_zone_against_its_own_envelope_and_the_case_reads_as_the_plain_log() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    // No other source with offsets: only the envelope's UTC times can measure the zone.
    std::fs::copy(format!("{root}/fixtures/envelopes/kubectl.log"), dir.path().join("pods.log")).unwrap();
    std::fs::copy(format!("{root}/{INCIDENT}/bullmq.json"), dir.path().join("bullmq.json")).unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(stdout.contains("measured +09:00"), "{stdout}");
    assert!(manifest.contains("format = \"kubectl\""), "{manifest}");
    assert!(manifest.contains("against pods.log (its envelope's UTC times)"), "{manifest}");
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let plain = leasetrace(&[
        "analyze",
        "--log",
        &format!("{root}/{INCIDENT}/server.log"),
        "--log-tz",
        "Asia/Seoul",
        "--params",
        &format!("{root}/{INCIDENT}/bullmq.json"),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&from_init), metrics(&plain.json()));
    assert!(!metrics(&from_init).is_empty());
}

/// A real fleet's evidence, trimmed (docs/fleet.md, the fixture's NOTES.md).
const FLEET: &str = "fixtures/fleet-bullmq-6.7.0-shared-ledger";

#[test]
fn init_on_a_fleet_case_maps_the_shared_ledger_the_pod_logs_and_the_streams_and_matches_its_manifest() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(format!("{root}/{FLEET}")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name != "leasetrace.toml" && name != "NOTES.md" {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    let (stdout, manifest) = init(dir.path());

    // The ledger: of the columns with a few short values on every row (a final state, a queue, a
    // worker whose pod names hold 'review'), the one whose runs open, go on and close.
    for mapping in [
        "time = \"logged_at\"",
        "event = \"lifecycle\"",
        "run = \"run_ref\"",
        "job = \"bull_job_id\"",
        "item = \"item_ref\"",
        "worker = \"worker_node\"",
        "status = \"final_state\"",
        "queue = \"queue_name\"",
        "detail = \"details\"",
        "key = \"idem_key\"",
    ] {
        assert!(manifest.lines().any(|l| l.starts_with(mapping) && l.contains("   # ")), "{mapping}:\n{manifest}");
    }
    assert!(manifest.contains("# column \"id\" is not mapped (e.g. '1')"), "{manifest}");
    assert!(
        manifest.contains(
            "# event column 'lifecycle': of 89 runs (by 'run_ref'), 89 open with their one round-started row"
        ),
        "{manifest}"
    );
    for (value, kind) in [
        ("sweep.begin", "round-started"),
        ("sweep.pick", "item-selected"),
        ("review.send", "effect-posted"),
        ("notify.end", "round-finished"),
        ("backfill.reaped", "round-failed"),
    ] {
        let line = format!("\"{value}\" = \"{kind}\"");
        assert!(manifest.lines().any(|l| l.starts_with(&line)), "{line}:\n{manifest}");
    }
    assert!(manifest.contains("the ledger reader on these 271 rows with the mapping below: 271 events, 0 rejected"));
    // No column names the job type: said, not guessed.
    assert!(
        manifest.contains("#   - ledger.csv: the job type: no column names it (no sweep field); it is the prefix of the values of column 'lifecycle'"),
        "{manifest}"
    );
    // The pods' logs: pino inside kubectl, and no rule made of a sample line.
    assert_eq!(manifest.matches("format = \"kubectl+pino\"").count(), 3, "{manifest}");
    assert!(stdout.contains("review-bot-7d9f8c6b5-8nbbd.log log            kubectl+pino"), "{stdout}");
    assert!(!manifest.contains("pattern ="), "{manifest}");
    // The streams' queues, from the job hashes that hold their job ids and their file names.
    for (file, queue, other, theirs) in
        [("events-review.json", "review", "notify", 9), ("events-notify.json", "notify", "review", 12)]
    {
        let line = format!("path = \"{file}\"\nformat = \"xrange-json\"\n# the bullmq-events reader on the sample: 8");
        assert!(manifest.contains(&line), "{line}:\n{manifest}");
        let decided = format!(
            "queue = \"{queue}\"   # every job id its entries name (17) is a job hash of queue {queue} (jobs-{queue}.jsonl), against queue {other}'s {theirs}; its file name names queue {queue}, the only known queue it names"
        );
        assert!(manifest.contains(&decided), "{decided}:\n{manifest}");
    }
    // The receiver's record: recognised and read as the receiver's, never a second sender's ledger.
    assert!(
        manifest
            .contains("[[sources]]\nkind = \"ledger\"\npath = \"receiver.csv\"\nrole = \"receiver\"\nformat = \"csv\""),
        "{manifest}"
    );
    for mapping in [
        "time = \"received_at\"",
        "outcome = \"status\"",
        "key = \"idempotency_key\"",
        "item = \"item\"",
        "job = \"job_id\"",
        "worker = \"sender\"",
    ] {
        assert!(manifest.lines().any(|l| l.starts_with(mapping)), "{mapping}:\n{manifest}");
    }
    assert!(manifest.contains("# the ledger reader on these 70 rows with the mapping below: 70 events, 0 rejected"));
    assert!(!manifest.contains("receiver.csv: the"), "nothing of it is left to decide:\n{manifest}");

    // Declaring the zone init lists (the only thing left) gives the hand-written manifest's
    // findings: BullMQ's refusals logged as pino error objects among them.
    uncomment(&dir.path().join("leasetrace.toml"), "tz = \"Asia/Seoul\"");
    let from_init = analyze_json(dir.path().to_str().unwrap());
    let by_hand = analyze_json(FLEET);
    let metrics = |r: &Value| -> Vec<(Value, Value)> {
        r["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(metrics(&from_init), metrics(&by_hand));
    for kind in ["duplicate-selection", "duplicate-effect", "stale-completion", "stalled-rerun", "retry-exhausted"] {
        assert!(kinds(&from_init).iter().any(|k| k == kind), "{kind}: {:?}", kinds(&from_init));
    }
}

/// A file name that would end its comment and add a source of its own reading a file outside
/// the folder (`\u002F` is `/` in a TOML string, so the name needs no slash).
const INJECTING_NAME: &str =
    "ledger.csv\n[[sources]]\nkind = \"log\"\npath = \"..\\u002Fsecret.log\"\ntz = \"UTC\"\n# ";

#[test]
fn a_file_name_cannot_add_a_source_to_the_manifest_or_reach_the_terminal_raw() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.log"), "2026-10-07 09:40:00.000 INFO  [main] server starting SECRET\n")
        .unwrap();
    let case = outer.path().join("case");
    std::fs::create_dir(&case).unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let params = "bullmq\u{1b}]0;owned\u{7}\u{202E}.json";
    std::fs::copy(from.join("ledger.csv"), case.join(INJECTING_NAME)).unwrap();
    std::fs::copy(from.join("bullmq.json"), case.join(params)).unwrap();
    let (stdout, manifest) = init(&case);
    // On the terminal: each name written out, on its own line.
    assert!(!stdout.chars().any(|c| c != '\n' && leasetrace::terminal::is_hidden(c)), "{stdout:?}");
    assert!(
        stdout.contains("  ledger.csv\\n[[sources]]\\nkind = \"log\"\\npath = \"..\\u002Fsecret.log\""),
        "{stdout}"
    );
    assert!(stdout.contains("  bullmq\\x1b]0;owned\\x07<U+202E>.json "), "{stdout}");
    assert_eq!(stdout.lines().count(), 4, "wrote, the display zone, and one line per file:\n{stdout}");
    // In the manifest: the names are exact as values, escaped in comments; two sources only.
    assert!(!manifest.chars().any(|c| c != '\n' && leasetrace::terminal::is_hidden(c)), "{manifest:?}");
    assert_eq!(manifest.lines().filter(|line| *line == "[[sources]]").count(), 2, "{manifest}");
    let parsed: toml::Table = manifest.parse().unwrap_or_else(|e| panic!("{e}\n{manifest}"));
    let mut paths: Vec<&str> =
        parsed["sources"].as_array().unwrap().iter().map(|s| s["path"].as_str().unwrap()).collect();
    paths.sort_unstable();
    assert_eq!(paths, [params, INJECTING_NAME]);
    for path in paths {
        assert!(case.join(path).is_file() && case.join(path).parent() == Some(case.as_path()), "{path:?}");
    }
    // And what is read is what is in the folder.
    let run = leasetrace(&["timeline", case.to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("SECRET"), "the file outside the folder was read");
    let report = run.json();
    let inputs: Vec<&str> = report["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert!(inputs.iter().all(|path| path.ends_with(params) || path.ends_with(INJECTING_NAME)), "{inputs:?}");
}

#[test]
fn init_leaves_two_event_columns_that_fit_about_equally_to_the_user_with_both_written() {
    let dir = tempfile::tempdir().unwrap();
    // The app's step and the state its UI shows: both tell each run's story; they read the send
    // rows differently (a post, or a selection?).
    let mut ledger = String::from("at,run,step,ui_state\n");
    for (n, minute) in [(1, 0), (2, 1), (3, 2)] {
        for (second, step, state) in
            [(0, "begin", "start"), (1, "pick", "select"), (2, "send", "select"), (3, "end", "done")]
        {
            let _ = writeln!(ledger, "2026-10-07T00:0{minute}:0{second}Z,r{n},{step},{state}");
        }
    }
    std::fs::write(dir.path().join("runs.csv"), ledger).unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(
        stdout.contains("COMMENTED OUT: two columns fit the event column about equally (step, ui_state)"),
        "{stdout}"
    );
    assert!(manifest.contains("\n# event = \"step\""), "{manifest}");
    assert!(manifest.contains("\n# event = \"ui_state\"   # the runner-up: 3 distinct values;"), "{manifest}");
    assert!(
        manifest.contains("#   - runs.csv: the event column: 'step' and 'ui_state' (lifecycle fit 1.00 against 1.00"),
        "{manifest}"
    );
    assert!(manifest.contains("# the values of column \"ui_state\" (the runner-up) not listed above:"), "{manifest}");
    assert!(manifest.contains("# \"start\" = \"round-started\""), "{manifest}");
    // Choosing the runner-up: the source uncommented with its event line.
    let text = manifest
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest)
                if ["[[sources]]", "kind =", "path =", "format =", "[sources.", "time =", "run =", "\""]
                    .iter()
                    .any(|p| rest.starts_with(p)) =>
            {
                rest
            }
            Some(rest) if rest.starts_with("event = \"ui_state\"") => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.path().join("leasetrace.toml"), text).unwrap();
    let run = leasetrace(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let kinds: Vec<Value> = run.json()["timeline"].as_array().unwrap().iter().map(|e| e["kind"].clone()).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "item-selected").count(), 6, "{kinds:?}");
}

/// The incident's files in a fresh folder, its log moved by `hours` from KST.
fn incident_folder(hours: i64) -> tempfile::TempDir {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "bullmq.json"] {
        std::fs::copy(format!("{root}/{INCIDENT}/{file}"), dir.path().join(file)).unwrap();
    }
    let kst = std::fs::read_to_string(format!("{root}/{INCIDENT}/server.log")).unwrap();
    std::fs::write(dir.path().join("server.log"), shifted_log(&kst, hours)).unwrap();
    dir
}

#[test]
fn init_tz_accepts_a_proposed_zone_without_editing_the_manifest() {
    let dir = incident_folder(0);
    let case = dir.path().to_str().unwrap();
    let run = leasetrace(&["init", case, "--tz", "server.log=Asia/Seoul"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("server.log  log            text         zone Asia/Seoul (init --tz; one of the zones with the measured +09:00 at those dates)"), "{}", run.stdout);
    assert!(run.stdout.contains("display_tz = Asia/Seoul: the zone of server.log (init --tz)"), "{}", run.stdout);
    let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
    assert!(manifest.contains("\ntz = \"Asia/Seoul\"   # given by init --tz"), "{manifest}");
    assert!(manifest.contains("\ndisplay_tz = \"Asia/Seoul\""), "{manifest}");
    assert!(!manifest.contains("Could not decide"), "{manifest}");
    assert!(!manifest.contains("# tz = "), "no second tz line to uncomment:\n{manifest}");
    manifest.parse::<toml::Table>().unwrap();
    // analyze runs on it as written, with the shipped case's findings.
    let report = analyze_json(case);
    assert_eq!(findings(&report), findings(&analyze_json(INCIDENT)));
    assert_eq!(report["display_tz"], "Asia/Seoul");

    // The folder's path before the name is the file too; a zone the measurement does not fit is
    // written, and warned.
    let run = leasetrace(&["init", case, "--force", "--tz", &format!("{case}/server.log=Europe/Berlin")]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("zone Europe/Berlin (init --tz; WARNING: not one of the zones with the measured +09:00"),
        "{}",
        run.stdout
    );
}

#[test]
fn init_tz_for_a_file_it_did_not_find_names_the_files_it_found() {
    let dir = incident_folder(0);
    let case = dir.path().to_str().unwrap();
    let run = leasetrace(&["init", case, "--tz", "serer.log=Asia/Seoul"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    for needle in [
        "--tz serer.log=Asia/Seoul: init found no source serer.log",
        "bullmq.json, ledger.csv, server.log",
        "did you mean server.log?",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
    assert!(!dir.path().join("leasetrace.toml").exists(), "nothing written");
    let run = leasetrace(&["init", case, "--tz", "bullmq.json=UTC"]).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("bullmq.json is a bullmq-params source") && run.stderr.contains("no zone reads them"),
        "{}",
        run.stderr
    );
    let run = leasetrace(&["init", case, "--tz", "server.log=KST"]).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--tz server.log=KST: 'KST' is an abbreviation") && run.stderr.contains("Asia/Seoul"),
        "{}",
        run.stderr
    );
    let run = leasetrace(&["init", case, "--tz", "Asia/Seoul"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--tz expects FILE=ZONE"), "{}", run.stderr);
}

#[test]
fn init_display_tz_is_written_as_given() {
    let dir = incident_folder(0);
    let run = leasetrace(&["init", dir.path().to_str().unwrap(), "--display-tz", "europe/berlin"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("display_tz = Europe/Berlin: given by init --display-tz"), "{}", run.stdout);
    let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
    assert!(manifest.contains("\ndisplay_tz = \"Europe/Berlin\"   # given by init --display-tz"), "{manifest}");
}

#[test]
fn init_proposes_the_measured_local_zone_for_display() {
    // The log written at -08:00 (17 hours behind KST): a zone with -08:00 on those dates is
    // written as display_tz, saying that it is the first listed, and so is one at +09:00.
    for (hours, offset) in [(-17, "-08:00"), (0, "+09:00")] {
        let dir = incident_folder(hours);
        let (stdout, manifest) = init(dir.path());
        let first = manifest
            .lines()
            .find_map(|l| l.strip_prefix("# tz = \"").and_then(|rest| rest.split('"').next()))
            .unwrap_or_else(|| panic!("{manifest}"));
        assert!(
            manifest
                .contains(&format!("\ndisplay_tz = \"{first}\"   # the local zone measured for server.log ({offset})")),
            "{manifest}"
        );
        assert!(
            stdout.contains(&format!("display_tz = {first}: the local zone measured for server.log ({offset})")),
            "{stdout}"
        );
        assert!(stdout.contains("not evidence of which"), "{stdout}");
    }
    // Nothing measured: UTC, and why.
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(format!("{root}/{INCIDENT}/server.log"), dir.path().join("server.log")).unwrap();
    let (stdout, manifest) = init(dir.path());
    assert!(manifest.contains("\ndisplay_tz = \"UTC\"   # no log's zone was measured"), "{manifest}");
    assert!(stdout.contains("display_tz = UTC: no log's zone was measured"), "{stdout}");
}
