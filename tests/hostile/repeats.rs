//! Evidence read twice is said and kept once: every line of a log twice (a shipper that delivers
//! at least once), a ledger's rows twice, one file named twice, a copy of a file in another folder.
//! The findings are the ones of the evidence read once, and the header says what was dropped.

use std::path::Path;

use serde_json::Value;

use crate::{INCIDENT, leasetrace};

/// A copy of the reference case in a new folder, with `edit` applied to it.
fn case(edit: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    edit(dir.path());
    dir
}

/// Every line of `file` written twice in a row, after its first `keep` lines (a CSV header).
fn doubled(dir: &Path, file: &str, keep: usize) {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let mut out = String::new();
    for (index, line) in text.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if index >= keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    std::fs::write(dir.join(file), out).unwrap();
}

fn report(dir: &Path) -> Value {
    let run = leasetrace(&["analyze", dir.to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout.replace(&format!("{}/", dir.display()), "")).unwrap()
}

/// Each finding's kind, time and metrics: what must not change when evidence is repeated.
fn findings(report: &Value) -> Vec<Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| serde_json::json!([finding["kind"], finding["at"], finding["metrics"]]))
        .collect()
}

fn warnings_of_kind<'a>(report: &'a Value, kind: &str) -> Vec<&'a str> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|warning| warning["kind"] == kind)
        .map(|warning| warning["message"].as_str().unwrap())
        .collect()
}

fn input<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["inputs"].as_array().unwrap().iter().find(|input| input["path"] == path).unwrap()
}

#[test]
fn every_log_line_twice_gives_the_same_findings_and_says_how_many_were_read_once() {
    let plain = report(case(|_| {}).path());
    let dir = case(|dir| doubled(dir, "server.log", 0));
    let twice = report(dir.path());
    assert_eq!(findings(&plain).len(), 5);
    assert_eq!(findings(&twice), findings(&plain), "the findings of the log read once");
    let said = warnings_of_kind(&twice, "duplicate-evidence");
    assert_eq!(said.len(), 1, "{said:?}");
    let log = input(&twice, "server.log");
    let repeats = log["ignored_by_reason"]["repeat of an earlier line, word for word"].as_u64().unwrap();
    assert_eq!(repeats, input(&plain, "server.log")["used"].as_u64().unwrap(), "every used line was repeated once");
    assert!(said[0].contains(&format!("repeats {repeats} of its lines")), "{}", said[0]);
    assert_eq!(log["used"], input(&plain, "server.log")["used"]);
    assert_eq!(log["events"], input(&plain, "server.log")["events"]);
    // Every line is still accounted for.
    let lines = log["lines"].as_u64().unwrap();
    let counted = ["used", "ignored", "rejected"].iter().map(|key| log[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(counted, lines);
    assert!(warnings_of_kind(&plain, "duplicate-evidence").is_empty(), "nothing said of a case read once");
}

#[test]
fn a_ledger_with_its_rows_twice_gives_the_same_findings() {
    let plain = report(case(|_| {}).path());
    let twice = report(case(|dir| doubled(dir, "ledger.csv", 1)).path());
    assert_eq!(findings(&twice), findings(&plain));
    let ledger = input(&twice, "ledger.csv");
    assert_eq!(ledger["ignored_by_reason"]["repeat of an earlier line, word for word"], 27);
    assert_eq!(ledger["events"], input(&plain, "ledger.csv")["events"]);
}

#[test]
fn two_rows_that_say_the_same_but_differ_in_text_are_both_kept() {
    // The same pick at the same millisecond, once with its item quoted: the same cells, so the
    // same event, but two rows as written, which only their texts tell apart.
    let plain = report(case(|_| {}).path());
    let dir = case(|dir| {
        let path = dir.join("ledger.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let pick = text.lines().find(|line| line.contains("item_selected,PR-4412")).unwrap().to_string();
        let mut out = text.clone();
        out.push_str(&pick.replace(",PR-4412,", ",\"PR-4412\","));
        out.push('\n');
        std::fs::write(&path, out).unwrap();
    });
    let both = report(dir.path());
    assert!(warnings_of_kind(&both, "duplicate-evidence").is_empty(), "{:?}", both["warnings"]);
    let events = |report: &Value| input(report, "ledger.csv")["events"].as_u64().unwrap();
    assert_eq!(events(&both), events(&plain) + 1, "both rows kept");
}

#[test]
fn two_rows_that_differ_in_text_each_delivered_twice_are_each_read_once() {
    // Found by the fleet harness: two lock errors of one job in one millisecond whose envelope
    // times differ say the same in different words; a shipper delivering the log twice repeats
    // each. The later of the two was compared with the first only, and kept.
    let with_two = |dir: &Path| {
        let path = dir.join("ledger.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let pick = text.lines().find(|line| line.contains("item_selected,PR-4412")).unwrap().to_string();
        let mut out = text.clone();
        out.push_str(&pick.replace(",PR-4412,", ",\"PR-4412\","));
        out.push('\n');
        std::fs::write(&path, out).unwrap();
    };
    let once = report(case(with_two).path());
    let twice = report(
        case(|dir| {
            with_two(dir);
            doubled(dir, "ledger.csv", 1);
        })
        .path(),
    );
    assert_eq!(findings(&twice), findings(&once), "the findings of the ledger read once");
    let ledger = input(&twice, "ledger.csv");
    assert_eq!(ledger["events"], input(&once, "ledger.csv")["events"], "each of the two rows read once");
    assert_eq!(
        ledger["ignored_by_reason"]["repeat of an earlier line, word for word"],
        input(&once, "ledger.csv")["used"],
        "every row repeated once"
    );
}

#[test]
fn one_log_named_twice_or_copied_elsewhere_is_read_once() {
    let plain = report(case(|_| {}).path());
    let dir = case(|dir| {
        std::fs::create_dir(dir.join("copy")).unwrap();
        std::fs::copy(dir.join("server.log"), dir.join("copy/server.log")).unwrap();
        let mut manifest = std::fs::read_to_string(dir.join("leasetrace.toml")).unwrap();
        manifest.push_str(
            "\n[[sources]]\nkind = \"log\"\npath = \"copy/server.log\"\ntz = \"Asia/Seoul\"\n\n[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"Asia/Seoul\"\n",
        );
        std::fs::write(dir.join("leasetrace.toml"), manifest).unwrap();
    });
    let twice = report(dir.path());
    assert_eq!(findings(&twice), findings(&plain), "the findings of the log read once");
    let said = warnings_of_kind(&twice, "duplicate-evidence");
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said.iter().any(|message| message.contains("copy/server.log holds the same evidence as server.log")));
    assert!(said.iter().any(|message| message.contains("server.log is named twice")));
    assert!(warnings_of_kind(&twice, "input-contributed-nothing").is_empty(), "the copy is said once, as a repeat");
    let copy = input(&twice, "copy/server.log");
    assert_eq!(copy["events"], 0);
    assert_eq!(copy["ignored_by_reason"]["same evidence as server.log"], input(&plain, "server.log")["used"]);
}
