//! The formats CI reads: SARIF for GitHub code scanning and GitHub Actions annotations, from the
//! real binary on the fixtures. The SARIF is validated against the official OASIS schema kept in
//! tests/schemas/ (see its README), and against GitHub code scanning's own upload rules
//! ("SARIF support for code scanning" on docs.github.com); the annotations are parsed back the
//! way the Actions runner reads them.

use std::io::Write as _;

use super::*;

const FIXTURES: [&str; 4] = [INCIDENT, CLEAN, REAL_STALLED, REAL_LIMIT];

fn schema_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the official SARIF schema compiles")
}

fn assert_valid_sarif(validator: &jsonschema::Validator, sarif: &Value, what: &str) {
    let errors: Vec<String> = validator.iter_errors(sarif).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what}: not valid SARIF 2.1.0:\n{}", errors.join("\n"));
}

fn sarif(args: &[&str]) -> (Run, Value) {
    let run = leasetrace(args).run();
    let log =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run, log)
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().unwrap()
}

fn finding_results(log: &Value) -> Vec<&Value> {
    results(log).iter().filter(|r| r["ruleId"] != "leasetrace/warning").collect()
}

fn location_of(location: &Value) -> (String, u64) {
    let physical = &location["physicalLocation"];
    (
        physical["artifactLocation"]["uri"].as_str().unwrap().to_string(),
        physical["region"]["startLine"].as_u64().unwrap(),
    )
}

/// The incident's files copied into a folder, under hostile names and with a hostile item id,
/// so that the text the formats escape holds `%`, `,`, `:` and a newline.
const HOSTILE_LEDGER: &str = "ledger 100%, v:2\nexport.csv";
const HOSTILE_ITEM: &str = "PR-44,12:%0A";

fn hostile_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let ledger = std::fs::read_to_string(from.join("ledger.csv")).unwrap();
    assert!(ledger.contains(",PR-4412,"));
    std::fs::write(dir.path().join(HOSTILE_LEDGER), ledger.replace(",PR-4412,", &format!(",\"{HOSTILE_ITEM}\",")))
        .unwrap();
    for name in ["server.log", "bullmq.json"] {
        std::fs::copy(from.join(name), dir.path().join(name)).unwrap();
    }
    let manifest = std::fs::read_to_string(from.join("leasetrace.toml")).unwrap();
    let manifest = manifest.replace("path = \"ledger.csv\"", "path = \"ledger 100%, v:2\\nexport.csv\"");
    std::fs::write(dir.path().join("leasetrace.toml"), manifest).unwrap();
    dir
}

// ---------------------------------------------------------------- SARIF

#[test]
fn sarif_validates_against_the_official_schema() {
    let validator = schema_validator();
    let hostile = hostile_case();
    let hostile = hostile.path().to_str().unwrap().to_string();
    for case in FIXTURES.iter().copied().chain([hostile.as_str()]) {
        for command in ["check", "analyze"] {
            let (run, log) = sarif(&[command, case, "--format", "sarif"]);
            assert!(run.code == 0 || run.code == 1, "{case}: {}", run.stderr);
            assert_valid_sarif(&validator, &log, &format!("{command} {case}"));
        }
    }
}

#[test]
fn sarif_schema_check_catches_what_the_schema_forbids() {
    // The validator must reject what the schema rejects, or the test above proves nothing.
    let validator = schema_validator();
    let (_, mut log) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    log["runs"][0]["results"][1]["level"] = Value::from("fatal");
    assert!(!validator.is_valid(&log), "an unknown level must be refused");
    let (_, mut log) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    log["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = Value::from(0);
    assert!(!validator.is_valid(&log), "line 0 must be refused");
    let (_, mut log) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    log["version"] = Value::from("2.0.0");
    assert!(!validator.is_valid(&log), "another version must be refused");
}

#[test]
fn sarif_results_match_the_findings_one_to_one() {
    for case in FIXTURES {
        let report = leasetrace(&["check", case, "--format", "json"]).run().json();
        let (_, log) = sarif(&["check", case, "--format", "sarif"]);
        let findings = report["findings"].as_array().unwrap();
        let found = finding_results(&log);
        assert_eq!(found.len(), findings.len(), "{case}: one result per finding");
        let rules: Vec<&str> = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        for (finding, result) in findings.iter().zip(&found) {
            let code = finding["kind"].as_str().unwrap();
            assert_eq!(result["ruleId"], code, "{case}: same order as the report");
            assert_eq!(rules[usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap()], code);
            let level = match finding["severity"].as_str().unwrap() {
                "error" => "error",
                "warning" => "warning",
                _ => "note",
            };
            assert_eq!(result["level"], level, "{case} {code}");
            assert_eq!(result["message"]["text"], expected_message(&report, finding));
            assert_eq!(result["properties"]["finding"], finding["id"]);
            let caused_by = result["properties"].get("causedBy").cloned().unwrap_or(Value::Array(Vec::new()));
            assert_eq!(caused_by, finding["caused_by"], "{case} {code}");
            assert_eq!(result["properties"].get("rootCause"), finding.get("root_cause"), "{case} {code}");
            // Every evidence line once: the primary location and the related ones.
            let mut cited: Vec<(String, u64)> =
                result["locations"].as_array().unwrap().iter().map(location_of).collect();
            assert_eq!(cited.len(), 1, "{case} {code}: GitHub reads only the first location");
            cited.extend(result["relatedLocations"].as_array().into_iter().flatten().map(location_of));
            let mut evidence: Vec<(String, u64)> = finding["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| (e["source"]["path"].as_str().unwrap().to_string(), e["source"]["line"].as_u64().unwrap()))
                .collect();
            cited.sort();
            evidence.sort();
            assert_eq!(cited, evidence, "{case} {code}");
        }
        let warnings: Vec<&Value> = results(&log).iter().filter(|r| r["ruleId"] == "leasetrace/warning").collect();
        assert_eq!(
            warnings.len(),
            report["warnings"].as_array().unwrap().len(),
            "{case}: each header warning is a result"
        );
        for (warning, result) in report["warnings"].as_array().unwrap().iter().zip(warnings) {
            assert_eq!(result["message"]["text"], warning["message"]);
            assert_eq!(result["properties"]["warningKind"], warning["kind"]);
        }
    }
}

/// A result's message: the summary, the findings it follows from (`[n] code`), the zone.
fn expected_message(report: &Value, finding: &Value) -> String {
    let findings = report["findings"].as_array().unwrap();
    let causes: Vec<String> = finding["caused_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| {
            let cause = findings.iter().find(|f| f["id"] == *id).unwrap();
            format!("[{id}] {}", cause["kind"].as_str().unwrap())
        })
        .collect();
    let follows = if causes.is_empty() { String::new() } else { format!(" Follows from {}.", causes.join(", ")) };
    format!("{}{follows} (times in {})", finding["summary"].as_str().unwrap(), report["display_tz"].as_str().unwrap())
}

#[test]
fn sarif_of_the_incident_points_at_the_lines_that_show_each_finding() {
    let (run, log) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    assert_eq!(run.code, 1);
    let at = |code: &str| {
        let result = finding_results(&log).into_iter().find(|r| r["ruleId"] == code).unwrap();
        location_of(&result["locations"][0])
    };
    // The second selection of PR-4412, the rerun at 09:53:00, the start of the overlapping round.
    assert_eq!(at("duplicate-selection"), ("fixtures/incident-2026-10-07/ledger.csv".into(), 19));
    assert_eq!(at("stalled-rerun"), ("fixtures/incident-2026-10-07/server.log".into(), 491));
    assert_eq!(at("sweep-overlap"), ("fixtures/incident-2026-10-07/ledger.csv".into(), 17));
    let duplicate = finding_results(&log).into_iter().find(|r| r["ruleId"] == "duplicate-selection").unwrap();
    assert_eq!(duplicate["level"], "error");
    assert_eq!(duplicate["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"], "WORKINGDIR");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "leasetrace");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["exitCode"], 1);
    assert_eq!(invocation["properties"]["failing"], 4);
    assert_eq!(invocation["properties"]["passed"], false);
    assert_eq!(log["runs"][0]["properties"]["displayTz"], "Asia/Seoul");
}

#[test]
fn sarif_rules_are_the_finding_registry_with_its_docs() {
    let (_, log) = sarif(&["analyze", INCIDENT, "--format", "sarif"]);
    let codes: Vec<String> = leasetrace(&["explain"])
        .run()
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids[..codes.len()], codes.iter().map(String::as_str).collect::<Vec<_>>()[..]);
    assert_eq!(ids[codes.len()..], ["leasetrace/warning"]);
    for rule in &rules[..codes.len()] {
        let code = rule["id"].as_str().unwrap();
        let doc = std::fs::read_to_string(format!("{}/docs/findings/{code}.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(rule["help"]["markdown"], doc.as_str(), "{code}");
        let short = rule["shortDescription"]["text"].as_str().unwrap();
        assert!(doc.replace('`', "").contains(short), "{code}: {short}");
    }
}

/// GitHub code scanning's upload rules beyond the schema ("SARIF support for code scanning",
/// docs.github.com, and the limits table it includes): required properties, non-empty strings,
/// at least one location (the upload fails with "expected at least one location" otherwise),
/// relative URIs, and the size limits.
fn assert_github_accepts(log: &Value, case: &str) {
    let non_empty = |value: &Value, what: &str| {
        assert!(value.as_str().is_some_and(|s| !s.is_empty()), "{case}: {what} is required and not empty: {value}");
    };
    non_empty(&log["$schema"], "$schema");
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() <= 20, "{case}: runs per file");
    for run in runs {
        let driver = &run["tool"]["driver"];
        non_empty(&driver["name"], "tool.driver.name");
        let rules = driver["rules"].as_array().expect("tool.driver.rules");
        assert!(rules.len() <= 25_000, "{case}: rules per run");
        for rule in rules {
            non_empty(&rule["id"], "rule id");
            for field in ["shortDescription", "fullDescription"] {
                non_empty(&rule[field]["text"], field);
                assert!(rule[field]["text"].as_str().unwrap().chars().count() <= 1024, "{case}: {field} over 1024");
            }
            non_empty(&rule["help"]["text"], "help.text");
            assert!(rule["name"].as_str().unwrap_or("").chars().count() <= 255, "{case}: rule name over 255");
            if let Some(level) = rule["defaultConfiguration"]["level"].as_str() {
                assert!(["note", "warning", "error"].contains(&level));
            }
        }
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        let results = run["results"].as_array().expect("results");
        assert!(results.len() <= 25_000, "{case}: results per run");
        for result in results {
            let rule = result["ruleId"].as_str().expect("ruleId");
            assert!(ids.contains(&rule), "{case}: {rule} is not a rule of the run");
            non_empty(&result["message"]["text"], "message.text");
            let fingerprints = result["partialFingerprints"].as_object().expect("partialFingerprints");
            assert!(!fingerprints.is_empty());
            let locations = result["locations"].as_array().expect("locations");
            assert!((1..=10).contains(&locations.len()), "{case}: {rule}: 1 to 10 locations");
            let related = result["relatedLocations"].as_array().map_or(0, Vec::len);
            assert!(locations.len() + related <= 1_000, "{case}: locations per result");
            for location in locations.iter().chain(result["relatedLocations"].as_array().into_iter().flatten()) {
                let uri =
                    location["physicalLocation"]["artifactLocation"]["uri"].as_str().expect("artifactLocation.uri");
                assert!(
                    !uri.is_empty() && !uri.contains("://") && !uri.starts_with('/'),
                    "{case}: relative uri: {uri}"
                );
                assert!(location["physicalLocation"]["region"]["startLine"].as_u64().is_some_and(|n| n >= 1));
            }
        }
    }
    let text = serde_json::to_vec(log).unwrap();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(&text).unwrap();
    assert!(gzip.finish().unwrap().len() <= 10 * 1024 * 1024, "{case}: 10 MB gzip-compressed");
}

#[test]
fn sarif_meets_github_code_scanning_upload_rules() {
    let hostile = hostile_case();
    let hostile = hostile.path().to_str().unwrap().to_string();
    for case in FIXTURES {
        let (_, log) = sarif(&["check", case, "--format", "sarif"]);
        assert_github_accepts(&log, case);
    }
    // A case given by an absolute path: GitHub turns file:// URIs under the checkout into
    // repository paths itself (upload-sarif's checkout_path), so only check the rest.
    let (_, log) = sarif(&["check", &hostile, "--format", "sarif"]);
    let uri = finding_results(&log).into_iter().find(|r| r["ruleId"] == "duplicate-selection").unwrap()["locations"][0]
        ["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(uri.starts_with("file:///"), "{uri}");
    assert!(uri.ends_with("/ledger%20100%25%2C%20v%3A2%0Aexport.csv"), "{uri}");
}

#[test]
fn sarif_fingerprints_do_not_move_with_the_lines() {
    let (_, first) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    let (_, again) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    assert_eq!(first, again, "the same exports give the same SARIF");
    // The same log with one more line at its top: every log line moves, the findings do not.
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    for name in ["ledger.csv", "bullmq.json", "leasetrace.toml"] {
        std::fs::copy(from.join(name), dir.path().join(name)).unwrap();
    }
    let log = std::fs::read_to_string(from.join("server.log")).unwrap();
    std::fs::write(dir.path().join("server.log"), format!("an export banner line\n{log}")).unwrap();
    let (_, moved) = sarif(&["check", dir.path().to_str().unwrap(), "--format", "sarif"]);
    let prints = |log: &Value| -> Vec<(String, String, u64)> {
        finding_results(log)
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["leasetraceFinding/v1"].as_str().unwrap().to_string(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let (before, after) = (prints(&first), prints(&moved));
    assert_eq!(before.len(), after.len());
    for ((code, print, line), (moved_code, moved_print, moved_line)) in before.iter().zip(&after) {
        assert_eq!((code, print), (moved_code, moved_print), "{code}: the fingerprint is not a line number");
        if code == "stalled-rerun" {
            assert_eq!(*moved_line, line + 1, "the rerun's log line moved down one");
        }
    }
    let all: Vec<&String> = before.iter().map(|(_, print, _)| print).collect();
    let mut distinct = all.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), all.len(), "each result has its own fingerprint");
}

#[test]
fn check_exit_codes_hold_with_sarif() {
    let validator = schema_validator();
    let (findings, log) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    assert_eq!(findings.code, 1, "findings at or above --fail-on warning");
    assert_valid_sarif(&validator, &log, "check incident");
    let (errors_only, log) = sarif(&["check", INCIDENT, "--format", "sarif", "--fail-on", "error"]);
    assert_eq!(errors_only.code, 1, "duplicate-selection is an error");
    assert_eq!(log["runs"][0]["invocations"][0]["properties"]["failing"], 1);
    let (clean, log) = sarif(&["check", CLEAN, "--format", "sarif"]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 0);
    assert_eq!(log["runs"][0]["invocations"][0]["properties"]["passed"], true);
    assert!(finding_results(&log).is_empty());
    // An error writes no SARIF at all: nothing half-written for the upload step to send.
    let broken = case_with(
        &[("ledger.csv", b"at,run_id,event\nnot a time,r1,round_started\n")],
        "[[sources]]\nkind = \"ledger\"\npath = \"ledger.csv\"\n",
    );
    let run = leasetrace(&["check", broken.path().to_str().unwrap(), "--format", "sarif"]).run();
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("ledger.csv:2"), "{}", run.stderr);
    // analyze never fails on findings, and says no verdict.
    let (analyze, log) = sarif(&["analyze", INCIDENT, "--format", "sarif"]);
    assert_eq!(analyze.code, 0);
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["properties"]["command"], "analyze");
    assert!(invocation.get("exitCode").is_none() && invocation["properties"].get("passed").is_none());
    let (_, check) = sarif(&["check", INCIDENT, "--format", "sarif"]);
    assert_eq!(log["runs"][0]["results"], check["runs"][0]["results"], "the same results under both commands");
}

#[test]
fn timeline_refuses_the_finding_formats() {
    for format in ["sarif", "github"] {
        let run = leasetrace(&["timeline", INCIDENT, "--format", format]).run();
        assert_eq!(run.code, 2);
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.contains(&format!("--format {format}")) && run.stderr.contains("use `check`"),
            "{}",
            run.stderr
        );
    }
}

// ---------------------------------------------------------------- GitHub annotations

/// One workflow command as the runner reads it: name, properties and message, unescaped.
struct Annotation {
    level: String,
    properties: Vec<(String, String)>,
    message: String,
}

impl Annotation {
    fn property(&self, key: &str) -> Option<&str> {
        self.properties.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// The runner's inverse of the toolkit's escapes (actions/toolkit packages/core/src/command.ts).
fn unescape(text: &str) -> String {
    text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

fn parse_annotations(stdout: &str) -> Vec<Annotation> {
    stdout
        .lines()
        .map(|line| {
            let rest = line.strip_prefix("::").unwrap_or_else(|| panic!("not a workflow command: {line}"));
            let (head, message) = rest.split_once("::").unwrap();
            let (level, properties) = head.split_once(' ').unwrap_or((head, ""));
            let properties = properties
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (key, value) = p.split_once('=').unwrap();
                    (key.to_string(), unescape(value))
                })
                .collect();
            Annotation { level: level.to_string(), properties, message: unescape(message) }
        })
        .collect()
}

#[test]
fn github_annotations_are_one_per_finding_after_the_warnings() {
    for case in FIXTURES {
        let report = leasetrace(&["check", case, "--format", "json"]).run().json();
        let run = leasetrace(&["check", case, "--format", "github"]).run();
        assert_eq!(run.code, i32::from(report["check"]["passed"] == false), "{case}: {}", run.stderr);
        let annotations = parse_annotations(&run.stdout);
        let warnings = report["warnings"].as_array().unwrap();
        let findings = report["findings"].as_array().unwrap();
        let headline = usize::from(!findings.is_empty());
        assert_eq!(annotations.len(), warnings.len() + headline + findings.len(), "{case}");
        for (warning, annotation) in warnings.iter().zip(&annotations) {
            assert_eq!(annotation.level, "warning");
            assert_eq!(annotation.message, warning["message"].as_str().unwrap());
            assert_eq!(annotation.property("file"), None, "a warning is about the report, not a line");
        }
        if headline == 1 {
            // What happened: the table's headline, line for line, and the zone.
            let notice = &annotations[warnings.len()];
            assert_eq!(
                (notice.level.as_str(), notice.property("title")),
                ("notice", Some("leasetrace (what happened)"))
            );
            let table = leasetrace(&["check", case]).run().stdout;
            let expected: Vec<&str> = table
                .lines()
                .skip_while(|l| !l.starts_with("What happened"))
                .skip(1)
                .take_while(|l| !l.is_empty())
                .map(str::trim)
                .collect();
            let mut lines: Vec<&str> = notice.message.lines().map(str::trim).collect();
            let zone = format!("(times in {})", report["display_tz"].as_str().unwrap());
            assert_eq!(lines.pop(), Some(zone.as_str()));
            assert!(!expected.is_empty(), "{case}: {table}");
            assert_eq!(lines, expected, "{case}");
        }
        let (_, log) = sarif(&["check", case, "--format", "sarif"]);
        let shown = &annotations[warnings.len() + headline..];
        for ((finding, annotation), result) in findings.iter().zip(shown).zip(finding_results(&log)) {
            let code = finding["kind"].as_str().unwrap();
            let level = match finding["severity"].as_str().unwrap() {
                "error" => "error",
                "warning" => "warning",
                _ => "notice",
            };
            assert_eq!(annotation.level, level, "{case} {code}");
            assert_eq!(annotation.property("title"), Some(format!("leasetrace ({code})").as_str()));
            // At the same line as the SARIF result.
            let (uri, line) = location_of(&result["locations"][0]);
            assert_eq!(annotation.property("file"), Some(uri.as_str()), "{case} {code}");
            assert_eq!(annotation.property("line"), Some(line.to_string().as_str()));
            let summary = finding["summary"].as_str().unwrap();
            assert!(annotation.message.starts_with(&format!("{uri}:{line}: ")), "{}", annotation.message);
            assert!(annotation.message.contains(summary), "{case} {code}: {}", annotation.message);
            let causes: Vec<String> = finding["caused_by"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| {
                    format!("[{id}] {}", findings.iter().find(|f| f["id"] == *id).unwrap()["kind"].as_str().unwrap())
                })
                .collect();
            let follows = annotation.message.lines().find(|l| l.starts_with("follows from "));
            let expected = (!causes.is_empty()).then(|| format!("follows from {}", causes.join(", ")));
            assert_eq!(follows.map(str::to_string), expected, "{case} {code}");
            for evidence in finding["evidence"].as_array().unwrap() {
                let cited = format!("{}:{}", evidence["source"]["path"].as_str().unwrap(), evidence["source"]["line"]);
                assert!(annotation.message.contains(&cited), "{case} {code}: {cited} missing");
            }
        }
    }
}

#[test]
fn github_annotations_round_trip_hostile_text() {
    let dir = hostile_case();
    let case = dir.path().to_str().unwrap();
    let report = leasetrace(&["check", case, "--format", "json"]).run().json();
    let duplicate = finding(&report, "duplicate-selection");
    let summary = duplicate["summary"].as_str().unwrap();
    assert!(summary.contains(HOSTILE_ITEM), "{summary}");
    let run = leasetrace(&["check", case, "--format", "github"]).run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    // Each command is one line whatever the text holds: the path's newline is escaped.
    let annotations = parse_annotations(&run.stdout);
    assert_eq!(
        annotations.len(),
        report["warnings"].as_array().unwrap().len() + 1 + report["findings"].as_array().unwrap().len(),
        "warnings, what happened, findings: one line each"
    );
    let annotation =
        annotations.iter().find(|a| a.property("title") == Some("leasetrace (duplicate-selection)")).unwrap();
    let ledger = dir.path().join(HOSTILE_LEDGER);
    let ledger = ledger.to_str().unwrap();
    assert_eq!(annotation.property("file"), Some(ledger), "the path with %, ',', ':' and a newline comes back whole");
    assert_eq!(annotation.property("line"), Some("19"));
    assert!(annotation.message.contains(summary), "{}", annotation.message);
    // The literal `%0A` of the item stays four characters, not a newline.
    assert!(annotation.message.contains(HOSTILE_ITEM));
    assert!(run.stdout.contains("PR-44,12:%250A"), "the item's % is escaped in the message");
    let raw_line = run.stdout.lines().find(|l| l.contains("title=leasetrace (duplicate-selection)")).unwrap();
    assert!(raw_line.contains("ledger 100%25%2C v%3A2%0Aexport.csv,line=19::"), "{raw_line}");
}

// ---------------------------------------------------------------- docs

/// The fenced block of `doc` that follows the text `heading`, with the given info string.
fn sample<'a>(doc: &'a str, heading: &str, info: &str) -> &'a str {
    let section = &doc[doc.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
    let start = section.find(&format!("```{info}\n")).unwrap() + info.len() + 4;
    let end = section[start..].find("```").unwrap();
    &section[start..start + end]
}

#[test]
fn docs_samples_are_cut_from_the_real_output() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/outputs/ci.md")).unwrap();
    let github = leasetrace(&["check", INCIDENT, "--format", "github"]).run().stdout;
    let lines =
        sample(&doc, "Sample, cut from `leasetrace check fixtures/incident-2026-10-07 --format github`", "text");
    assert!(lines.lines().count() >= 2);
    for line in lines.lines() {
        assert!(github.lines().any(|l| l == line), "docs/outputs/ci.md: not in the output: {line}");
    }
    let sarif = leasetrace(&["check", INCIDENT, "--format", "sarif"]).run().stdout;
    let cut = sample(&doc, "Sample, cut from `leasetrace check fixtures/incident-2026-10-07 --format sarif`", "json");
    let actual: Vec<&str> = sarif.lines().map(str::trim).collect();
    let mut checked = 0;
    for line in cut.lines().map(str::trim).filter(|l| l.contains("\": ") && !l.contains('…')) {
        assert!(actual.contains(&line), "docs/outputs/ci.md: not in the output: {line}");
        checked += 1;
    }
    assert!(checked > 30, "{checked}");
    let concise = leasetrace(&["check", INCIDENT, "--format", "concise"]).run().stdout;
    assert_eq!(
        sample(&doc, "Sample: `leasetrace check fixtures/incident-2026-10-07 --format concise`", "text"),
        concise
    );
    let gitlab: Value =
        serde_json::from_str(&leasetrace(&["check", INCIDENT, "--format", "gitlab"]).run().stdout).unwrap();
    let cut: Value = serde_json::from_str(sample(
        &doc,
        "Sample, cut from `leasetrace check fixtures/incident-2026-10-07 --format gitlab`",
        "json",
    ))
    .unwrap();
    assert_eq!(cut[0], gitlab[3]);
    let junit = leasetrace(&["check", INCIDENT, "--format", "junit", "--fail-on", "error"]).run().stdout;
    let cut = sample(
        &doc,
        "Sample, cut from `leasetrace check fixtures/incident-2026-10-07 --format junit --fail-on error`",
        "xml",
    );
    for line in cut.lines() {
        assert!(junit.lines().any(|l| l == line), "docs/outputs/ci.md: not in the output: {line}");
    }
}

/// The `run: |` script of the workflow step named `name` in the doc's YAML, dedented.
fn step_script(doc: &str, name: &str) -> String {
    let step = &doc[doc.find(&format!("- name: {name}\n")).unwrap_or_else(|| panic!("no step {name}"))..];
    let lines: Vec<&str> = step.lines().collect();
    let run = lines.iter().position(|l| l.trim() == "run: |").unwrap_or_else(|| panic!("{name}: no run block"));
    let body: Vec<&str> = lines[run + 1..].iter().take_while(|l| l.starts_with("          ")).copied().collect();
    body.iter().map(|l| &l[10..]).collect::<Vec<_>>().join("\n") + "\n"
}

/// Runs a step's script as GitHub's runner does (`bash --noprofile --norc -eo pipefail`), in
/// `dir`, with the binary on PATH, and `outputs` substituted for `${{ steps.check.outputs.code }}`.
fn run_step(dir: &Path, script: &str, code: Option<&str>) -> (i32, String) {
    let script = match code {
        Some(code) => script.replace("${{ steps.check.outputs.code }}", code),
        None => script.to_string(),
    };
    assert!(!script.contains("${{"), "an expression left in the script: {script}");
    let bin = Path::new(env!("CARGO_BIN_EXE_leasetrace")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let output = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .env("GITHUB_OUTPUT", dir.join("github-output"))
        .output()
        .unwrap();
    (output.status.code().unwrap(), String::from_utf8(output.stdout).unwrap())
}

#[test]
fn docs_workflow_keeps_the_exit_code_for_its_last_step() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/outputs/ci.md")).unwrap();
    let check = step_script(&doc, "leasetrace check");
    let fail = step_script(&doc, "Fail on findings or errors");
    let validator = schema_validator();
    let bad_ledger: &[u8] = b"at,run_id,event\nnot a time,r1,round_started\n";
    for (case, expected) in [(INCIDENT, "1"), (CLEAN, "0"), ("broken", "2")] {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("exports/case");
        std::fs::create_dir_all(&export).unwrap();
        if case == "broken" {
            std::fs::write(export.join("ledger.csv"), bad_ledger).unwrap();
            std::fs::write(export.join("leasetrace.toml"), "[[sources]]\nkind = \"ledger\"\npath = \"ledger.csv\"\n")
                .unwrap();
        } else {
            for file in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(case)).unwrap() {
                let file = file.unwrap().path();
                std::fs::copy(&file, export.join(file.file_name().unwrap())).unwrap();
            }
        }
        // The check step never stops the job; it keeps the exit code for the last step.
        let (code, _) = run_step(dir.path(), &check, None);
        assert_eq!(code, 0, "{case}: the check step must not fail the job");
        let outputs = std::fs::read_to_string(dir.path().join("github-output")).unwrap();
        assert_eq!(outputs, format!("code={expected}\n"), "{case}");
        let sarif = dir.path().join("leasetrace.sarif");
        if expected == "2" {
            assert!(!sarif.exists(), "no SARIF to upload after an error");
        } else {
            let sarif = std::fs::read_to_string(sarif).unwrap();
            assert_valid_sarif(&validator, &serde_json::from_str(&sarif).unwrap(), case);
        }
        // The last step fails the job on findings and on errors, with its own annotation.
        let (code, stdout) = run_step(dir.path(), &fail, Some(expected));
        assert_eq!(code.to_string(), expected, "{case}: {stdout}");
        assert_eq!(stdout.starts_with("::error "), expected != "0", "{case}: {stdout}");
    }
}

// ---------------------------------------------------------------- several outputs in one run

/// `leasetrace` run in `dir` (relative output paths land there).
fn leasetrace_in(dir: &Path, args: &[&str]) -> Run {
    let mut run = leasetrace(args);
    run.command.current_dir(dir);
    run.run()
}

#[test]
fn one_run_writes_every_format_asked_for_each_as_its_own_run_would() {
    let dir = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let case = case.to_str().unwrap();
    let run = leasetrace_in(
        dir.path(),
        &[
            "check",
            case,
            "--format",
            "github",
            "--format",
            "sarif=out/leasetrace.sarif",
            "--format",
            "gitlab=gl.json",
            "--format",
            "junit=junit.xml",
            "--format",
            "json=report.json",
        ],
    );
    // out/ does not exist: nothing is written, and the error names the file.
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("out/leasetrace.sarif: cannot write"), "{}", run.stderr);
    assert_eq!(run.stdout, "", "no output at all after an error");
    assert!(!dir.path().join("gl.json").exists() && !dir.path().join("report.json").exists());
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let run = leasetrace_in(
        dir.path(),
        &[
            "check",
            case,
            "--format",
            "github",
            "--format",
            "sarif=out/leasetrace.sarif",
            "--format",
            "gitlab=gl.json",
            "--format",
            "junit=junit.xml",
            "--format",
            "json=report.json",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let alone = |format: &str| leasetrace_in(dir.path(), &["check", case, "--format", format]).run_stdout();
    assert_eq!(run.stdout, alone("github"), "stdout gets the format given without a file");
    for (file, format) in
        [("out/leasetrace.sarif", "sarif"), ("gl.json", "gitlab"), ("junit.xml", "junit"), ("report.json", "json")]
    {
        let written = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert_eq!(written, alone(format), "{file}");
    }
    // Without a format to stdout, stdout gets the table; --output-file sends it to a file.
    let run = leasetrace_in(dir.path(), &["check", case, "--format", "junit=junit.xml"]);
    assert_eq!(run.stdout, alone("table"));
    let run = leasetrace_in(dir.path(), &["analyze", case, "--format", "json", "--output-file", "analyze.json"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    let written = std::fs::read_to_string(dir.path().join("analyze.json")).unwrap();
    assert_eq!(written, leasetrace_in(dir.path(), &["analyze", case, "--format", "json"]).run_stdout());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("analyze.json")).unwrap().permissions().mode();
        assert_ne!(mode & 0o044, 0, "a report is readable as the user's other files are: {mode:o}");
    }
    // A failed run leaves the previous report whole.
    let broken = leasetrace_in(
        dir.path(),
        &["analyze", "--ledger", "missing.csv", "--format", "json", "--output-file", "analyze.json"],
    );
    assert_eq!(broken.code, 2);
    assert_eq!(std::fs::read_to_string(dir.path().join("analyze.json")).unwrap(), written);
}

trait RunStdout {
    fn run_stdout(self) -> String;
}

impl RunStdout for Run {
    fn run_stdout(self) -> String {
        assert!(self.code == 0 || self.code == 1, "{}", self.stderr);
        self.stdout
    }
}

#[test]
fn outputs_that_would_collide_are_refused_before_anything_is_read() {
    let cases: [(&[&str], &str); 4] = [
        (&["--format", "json", "--format", "sarif"], "--format json and --format sarif would both write to stdout"),
        (&["--format", "json=a.json", "--format", "sarif=a.json"], "two outputs would write a.json"),
        (
            &["--format", "json", "--output-file", "a.json", "--format", "sarif=a.json"],
            "two outputs would write a.json",
        ),
        (&["--format", "xml=a.xml"], "invalid value 'xml=a.xml' for '--format <NAME[=PATH]>'"),
    ];
    for (args, message) in cases {
        let run = leasetrace(&[&["check", "no-such-case"][..], args].concat()).run();
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
    let run = leasetrace(&["check", INCIDENT, "--format", "sarif="]).run();
    assert!(run.stderr.contains("the file name is missing after '='"), "{}", run.stderr);
    let run = leasetrace(&["timeline", INCIDENT, "--format", "junit=j.xml"]).run();
    assert!(run.code == 2 && run.stderr.contains("--format junit: junit reports findings"), "{}", run.stderr);
}

#[test]
fn gitlab_code_quality_has_one_issue_per_finding_at_the_sarif_location() {
    for case in FIXTURES {
        let run = leasetrace(&["check", case, "--format", "gitlab"]).run();
        assert!(run.code == 0 || run.code == 1, "{case}: {}", run.stderr);
        let issues: Value = serde_json::from_str(&run.stdout).unwrap();
        let issues = issues.as_array().unwrap();
        let (_, log) = sarif(&["check", case, "--format", "sarif"]);
        let results = finding_results(&log);
        assert_eq!(issues.len(), results.len(), "{case}");
        let mut fingerprints = std::collections::HashSet::new();
        for (issue, result) in issues.iter().zip(&results) {
            // GitLab's documented fields, each with its type.
            assert!(issue["description"].as_str().is_some_and(|d| !d.is_empty()), "{issue}");
            assert_eq!(issue["check_name"], result["ruleId"], "{case}");
            assert!(fingerprints.insert(issue["fingerprint"].as_str().unwrap().to_string()), "unique: {issue}");
            let severity = issue["severity"].as_str().unwrap();
            let expected = match result["level"].as_str().unwrap() {
                "error" => "critical",
                "warning" => "major",
                _ => "info",
            };
            assert_eq!(severity, expected, "{issue}");
            let (path, line) = location_of(&result["locations"][0]);
            assert!(path.ends_with(issue["location"]["path"].as_str().unwrap().rsplit('/').next().unwrap()), "{issue}");
            assert_eq!(issue["location"]["lines"]["begin"].as_u64().unwrap(), line, "{issue}");
        }
    }
}

#[test]
fn junit_is_xml_with_a_failure_for_each_finding_at_or_above_the_threshold() {
    let run = leasetrace(&["check", INCIDENT, "--format", "junit", "--fail-on", "error"]).run();
    assert_eq!(run.code, 1);
    let document = roxmltree::Document::parse(&run.stdout).expect("well-formed XML");
    let suite = document.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("tests"), Some("5"));
    assert_eq!(suite.attribute("failures"), Some("1"), "one error in the incident");
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 5);
    let failed: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("failure"))).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].attribute("name"), Some("[4] duplicate-selection at ledger.csv:19"));
    let failure = failed[0].children().find(|n| n.has_tag_name("failure")).unwrap();
    assert!(failure.attribute("message").unwrap().contains("0.66 s apart"));
    assert!(failure.text().unwrap().contains("ledger.csv:18"), "the evidence lines");
    // A clean case: one passing test, so the suite is not read as "nothing ran".
    let clean = leasetrace(&["check", CLEAN, "--format", "junit"]).run();
    assert_eq!(clean.code, 0);
    let document = roxmltree::Document::parse(&clean.stdout).unwrap();
    let cases: Vec<_> = document.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].attribute("name"), Some("no finding"));
    // Hostile text stays text, and the document stays XML.
    let dir = hostile_case();
    let run = leasetrace(&["check", dir.path().to_str().unwrap(), "--format", "junit"]).run();
    let document = roxmltree::Document::parse(&run.stdout).expect("well-formed XML");
    assert!(document.descendants().any(|n| n.attribute("message").is_some_and(|m| m.contains(HOSTILE_ITEM))));
    assert!(document.descendants().any(|n| n.attribute("file").is_some_and(|f| f.ends_with(HOSTILE_LEDGER))));
}

#[test]
fn concise_is_one_line_per_finding_after_the_warnings_then_the_verdict() {
    let run = leasetrace(&["check", INCIDENT, "--format", "concise"]).run();
    assert_eq!(run.code, 1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("WARNING [lock-params-default]: lockRenewTime 589000 ms"), "{}", lines[0]);
    let findings: Vec<&str> =
        lines.iter().copied().filter(|l| !l.starts_with("WARNING") && !l.starts_with("check ")).collect();
    assert_eq!(findings.len(), 5, "{}", run.stdout);
    assert!(
        findings[3].starts_with(&format!("{INCIDENT}/ledger.csv:19: error [4] duplicate-selection: PR-4412 was selected by round run-0933-b at 09:54:05.70"))
            && findings[3].ends_with("(follows from [3] sweep-overlap)"),
        "{}",
        findings[3]
    );
    assert_eq!(lines.last(), Some(&"check failed: 4 finding(s) at or above warning"));
    // A line break in an item or path cannot add a line.
    let dir = hostile_case();
    let run = leasetrace(&["check", dir.path().to_str().unwrap(), "--format", "concise"]).run();
    assert_eq!(run.stdout.lines().count(), lines.len(), "{}", run.stdout);
}

#[test]
fn force_color_colours_a_pipe_unless_it_says_0() {
    let plain = leasetrace(&["check", INCIDENT]).run().stdout;
    assert!(!plain.contains('\u{1b}'));
    let forced = leasetrace(&["check", INCIDENT]).env("FORCE_COLOR", "1").run().stdout;
    assert!(forced.contains("\u{1b}["), "FORCE_COLOR=1 colours the table");
    assert_eq!(leasetrace(&["check", INCIDENT]).env("FORCE_COLOR", "0").run().stdout, plain);
    assert_eq!(leasetrace(&["check", INCIDENT]).env("FORCE_COLOR", "1").env("NO_COLOR", "1").run().stdout, plain);
    // Files are never coloured.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("table.txt");
    let run = leasetrace(&["check", INCIDENT, "--output-file", file.to_str().unwrap()]).env("FORCE_COLOR", "1").run();
    assert_eq!(run.code, 1);
    assert_eq!(std::fs::read_to_string(file).unwrap(), plain);
}
