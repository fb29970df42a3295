//! Evidence known to a whole second: a NestJS log writes no fraction. The real export of
//! `REAL_LIMIT_LOGGED` (a log in milliseconds) is rewritten here, in a temporary folder, into the
//! whole seconds NestJS would have written, and the findings of the two are held against each
//! other: what the coarse log gives must be a span that holds what the fine one shows.

#[allow(unused_imports)]
use super::*;

/// `line` with the fraction of its leading `YYYY-MM-DD HH:MM:SS.fff` timestamp dropped (NestJS
/// truncates to the second); other lines (a multi-line message's continuation) as they are.
fn to_whole_seconds(line: &str) -> String {
    let stamped = line.len() > 20
        && line.as_bytes()[10] == b' '
        && line.as_bytes()[19] == b'.'
        && chrono::NaiveDateTime::parse_from_str(&line[..19], "%Y-%m-%d %H:%M:%S").is_ok();
    if !stamped {
        return line.to_string();
    }
    let digits = line[20..].bytes().take_while(u8::is_ascii_digit).count();
    format!("{}{}", &line[..19], &line[20 + digits..])
}

/// A copy of the real fixture whose server.log writes whole seconds, and whose manifest leaves out
/// the events stream when `with_stream` is false.
fn whole_second_case(with_stream: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL_LIMIT_LOGGED);
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let log = std::fs::read_to_string(fixture.join("server.log")).unwrap();
    let coarse: Vec<String> = log.lines().map(to_whole_seconds).collect();
    assert_ne!(coarse.join("\n"), log.trim_end(), "the fixture's log has fractions to drop");
    std::fs::write(dir.path().join("server.log"), coarse.join("\n") + "\n").unwrap();
    if !with_stream {
        let manifest = std::fs::read_to_string(fixture.join("leasetrace.toml")).unwrap();
        let without: Vec<&str> = manifest.split("[[sources]]").filter(|s| !s.contains("bullmq-events")).collect();
        assert_eq!(without.len() + 1, manifest.split("[[sources]]").count(), "one events source left out");
        std::fs::write(dir.path().join("leasetrace.toml"), without.join("[[sources]]")).unwrap();
    }
    dir
}

fn analyze(case: &str, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", case, "--format", "json", "-q"];
    args.extend(extra);
    let run = leasetrace(&args).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn ms(value: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(value.as_str().unwrap()).unwrap().timestamp_millis()
}

fn secs_ms(value: &Value) -> i64 {
    #[allow(clippy::cast_possible_truncation)]
    let ms = (value.as_f64().unwrap() * 1000.0).round() as i64;
    ms
}

fn reruns(report: &Value) -> Vec<&Value> {
    let mut reruns: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "stalled-rerun").collect();
    reruns.sort_by_key(|f| ms(&f["metrics"]["rerun_at"]));
    reruns
}

#[test]
fn whole_second_restarts_are_spans_in_the_metrics_that_hold_the_millisecond_truth() {
    let fine = analyze(REAL_LIMIT_LOGGED, &[]);
    let dir = whole_second_case(true);
    let coarse = analyze(dir.path().to_str().unwrap(), &[]);
    let (fine, coarse) = (reruns(&fine), reruns(&coarse));
    assert_eq!(fine.len(), 2);
    assert_eq!(coarse.len(), fine.len());
    for (fine, coarse) in fine.iter().zip(&coarse) {
        let (f, c) = (&fine["metrics"], &coarse["metrics"]);
        // The millisecond log's restart is exact: no span there.
        assert!(f.get("restart_latest_at").is_none() && f.get("restart_resolution_s").is_none(), "{f}");
        let truth = ms(&f["restart_at"]);
        assert_eq!(ms(&c["restart_at"]), truth - truth.rem_euclid(1000), "the line's own second");
        assert_eq!(secs_ms(&c["restart_resolution_s"]), 1000);
        assert_eq!(ms(&c["restart_latest_at"]), ms(&c["restart_at"]) + 1000);
        assert!(ms(&c["restart_at"]) <= truth && truth <= ms(&c["restart_latest_at"]));
        let true_to_rerun = secs_ms(&f["restart_to_rerun_s"]);
        assert!(
            secs_ms(&c["restart_to_rerun_min_s"]) <= true_to_rerun
                && true_to_rerun <= secs_ms(&c["restart_to_rerun_s"]),
            "{c}"
        );
        let true_after = secs_ms(&f["activation_to_restart_s"]);
        assert!(
            secs_ms(&c["activation_to_restart_s"]) <= true_after
                && true_after <= secs_ms(&c["activation_to_restart_max_s"]),
            "{c}"
        );
        // Each end is named in the arithmetic.
        let formula = |name: &str| {
            coarse["arithmetic"].as_array().unwrap().iter().find(|s| s["result"] == name).unwrap()["formula"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert!(formula("restart_to_rerun_s").contains("the most (the restart at its earliest"));
        assert!(formula("restart_to_rerun_min_s").contains("the least (the restart at its latest)"));
        assert!(formula("died_before_first_renewal").contains("restart_latest_at"));
    }
}
