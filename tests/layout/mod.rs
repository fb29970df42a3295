//! The table on terminals of every width (issue 35): at 80, 40 and 20 columns no line is wider
//! than the terminal (the terminal would wrap it mid-word), a grid's header is whole on one line,
//! a path keeps its file name and line, and every cited line is there in full, wrapped under its
//! hanging indent. Run on a real pseudo-terminal, as a person sees it.

use std::path::Path;

use leasetrace::render::layout::width;

use crate::hostile::terminal::{hidden, hostile_case, on_a_terminal_of, without_colour};
use crate::{INCIDENT, leasetrace};

/// The headers of the table's grids: the inputs, a finding's metrics and the timeline.
const HEADERS: &[&str] = &[
    "input", "kind", "format", "zone", "lines", "events", "ignored", "rejected", "metric", "value", "time", "ids",
    "source",
];

/// The incident, copied under folders with long names, as a case handed over in an archive is.
fn deep_case() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("exports-from-the-production-cluster").join("pr-review-sweep-2026-10-07-incident");
    std::fs::create_dir_all(&case).unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    for name in ["ledger.csv", "server.log", "bullmq.json", "leasetrace.toml"] {
        std::fs::copy(from.join(name), case.join(name)).unwrap();
    }
    let case = case.to_str().unwrap().to_string();
    (dir, case)
}

/// `analyze CASE` as a terminal of `columns` columns shows it, without its colour.
fn table_on(columns: u16, case: &str) -> String {
    let (code, received) = on_a_terminal_of(columns, &["analyze", case], false);
    assert_eq!(code, 0);
    without_colour(&String::from_utf8(received).unwrap())
}

/// The cited lines of every finding, from the JSON report: each its file name and line
/// (`server.log:348`) and the line as written.
fn cited_lines(case: &str) -> Vec<(String, String)> {
    let report = leasetrace(&["analyze", case, "--format", "json"]).run().json();
    let mut lines = Vec::new();
    for finding in report["findings"].as_array().unwrap() {
        for event in finding["evidence"].as_array().unwrap() {
            let path = event["source"]["path"].as_str().unwrap();
            let name = path.rsplit('/').next().unwrap();
            let place = format!("{name}:{}", event["source"]["line"]);
            lines.push((place, event["raw"].as_str().unwrap().to_string()));
        }
    }
    assert!(!lines.is_empty());
    lines
}

/// Each evidence entry of the table: its first line, and the entry put back on one line (the
/// first line after its indent, 6 columns or fewer on a very narrow terminal, each continuation
/// after 8).
fn evidence_entries(table: &str) -> Vec<(String, String)> {
    let mut entries: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for line in table.lines() {
        if line.trim() == "evidence:" {
            inside = true;
        } else if inside && line.starts_with("        ") {
            entries.last_mut().unwrap().1.push_str(&line[8..]);
        } else if inside && line.starts_with("  ") && line.trim() != "notes:" {
            entries.push((line.to_string(), line.trim_start().to_string()));
        } else {
            inside = false;
        }
    }
    entries
}

fn assert_fits(table: &str, columns: u16, what: &str) {
    for line in table.lines() {
        assert!(width(line) <= usize::from(columns), "{what}: {} columns at {columns}: {line:?}\n{table}", width(line));
    }
}

/// Every grid's header row holds whole headers, on one line (the next is the header's rule).
fn assert_headers_whole(table: &str, what: &str) {
    let lines: Vec<&str> = table.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with('┌') {
            continue;
        }
        let header = lines[i + 1];
        for cell in header.trim().trim_matches('│').split('┆') {
            assert!(HEADERS.contains(&cell.trim()), "{what}: header cell {cell:?} in {header:?}\n{table}");
        }
        assert!(lines[i + 2].trim_start().starts_with('╞'), "{what}: a header on two lines:\n{table}");
    }
}

#[cfg(unix)]
#[test]
fn the_table_fits_terminals_of_80_40_and_20_columns() {
    let (_dir, deep) = deep_case();
    for case in [INCIDENT, deep.as_str()] {
        let cited = cited_lines(case);
        for columns in [80, 40, 20] {
            let what = format!("{case} at {columns}");
            let table = table_on(columns, case);
            assert_fits(&table, columns, &what);
            assert_headers_whole(&table, &what);
            // A file name is never cut: wherever a file is named, its whole name is.
            for (stem, name) in [("server.", "server.log"), ("ledger.", "ledger.csv"), ("bullmq.", "bullmq.json")] {
                for (at, _) in table.match_indices(stem) {
                    assert!(table[at..].starts_with(name), "{what}: {:?}\n{table}", &table[at..at + 12]);
                }
            }
            for place in ["server.log:348", "ledger.csv:18", "ledger.csv:19", "server.log:491"] {
                assert!(table.contains(place), "{what}: {place} is not whole\n{table}");
            }
            // Every cited line in full, its first line and its continuations put back together.
            let entries = evidence_entries(&table);
            assert_eq!(entries.len(), cited.len(), "{what}:\n{table}");
            for ((first, entry), (place, raw)) in entries.iter().zip(&cited) {
                assert!(entry.ends_with(raw.as_str()), "{what}: {raw:?} is not whole in {entry:?}\n{table}");
                // Its file name and line whole on its first line.
                let shown = first.trim_start().split("  ").next().unwrap();
                assert!(
                    shown == place || shown.ends_with(&format!("/{place}")),
                    "{what}: {place} shown as {first:?}\n{table}"
                );
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn a_wide_terminal_keeps_the_grids_and_a_long_path_loses_folders_first() {
    let (_dir, deep) = deep_case();
    let table = table_on(120, &deep);
    assert_fits(&table, 120, "120");
    assert_headers_whole(&table, "120");
    assert!(table.contains("│ input "), "the inputs as a grid:\n{table}");
    assert!(table.contains("│ metric "), "the metrics as a grid:\n{table}");
    // Where the grid has no room for them, the case's folders go, from the left: the file name
    // and the line stay. An evidence line has the room.
    assert!(table.contains("│ …/server.log "), "{table}");
    assert!(table.contains("┆ …/server.log:348 │"), "{table}");
    assert!(table.contains(&format!("      {deep}/server.log:348  ")), "{table}");
    // A pipe gets the whole path, as before.
    let piped = leasetrace(&["analyze", &deep]).run().stdout;
    assert!(piped.contains(&format!("{deep}/server.log:348")), "{piped}");
}

#[cfg(unix)]
#[test]
fn a_narrow_terminal_gets_records_not_columns_of_two_characters() {
    let table = table_on(40, INCIDENT);
    // The inputs, one record each: the path, then its counts by name.
    assert!(table.contains("fixtures/incident-2026-10-07/ledger.csv\n  kind: ledger"), "{table}");
    assert!(table.contains("ignored: 665"), "{table}");
    assert!(table.contains("    job_name: pr-review-sweep"), "a metric as name: value\n{table}");
}

#[cfg(unix)]
#[test]
fn every_verb_and_a_hostile_case_fit_a_narrow_terminal() {
    let dir = hostile_case();
    let hostile = dir.path().to_str().unwrap();
    for (args, code) in [
        (vec!["timeline", INCIDENT], 0),
        (vec!["check", INCIDENT], 1),
        (vec!["analyze", hostile], 0),
        (vec!["timeline", hostile], 0),
    ] {
        for columns in [40, 20] {
            let what = format!("{args:?} at {columns}");
            let (exit, received) = on_a_terminal_of(columns, &args, false);
            assert_eq!(exit, code, "{what}");
            let table = without_colour(&String::from_utf8(received).unwrap());
            assert_eq!(hidden(&table), Vec::<char>::new(), "{what}: a control character from the case");
            assert_fits(&table, columns, &what);
            assert_headers_whole(&table, &what);
        }
    }
}
