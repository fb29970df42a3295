//! SARIF 2.1.0 (`--format sarif`): the findings as a static-analysis log, for GitHub code scanning
//! and the other tools that read SARIF (contract in docs/outputs/ci.md).
//!
//! Each finding is one `result` whose rule is its finding code; the rules are the detector
//! registry, with each finding's documentation. A result is located at the evidence line where the
//! finding became visible (the event at the finding's time: the second selection of a duplicate,
//! the rerun of a stalled job); its other evidence lines are `relatedLocations`. GitHub code
//! scanning rejects a result without a location and reads only the first one, so every result
//! gets one: a finding without an evidence line is placed at the lock parameters file (what such a
//! finding speaks of) or the first input, and says so.
//!
//! A result's message names the findings it follows from (`Follows from [3] sweep-overlap.`), and
//! its properties carry the numbers (`causedBy`), as the JSON report's `caused_by`: an alert is read
//! alone, away from the headline, which the run keeps in `properties.headline`.
//!
//! The report's header warnings (defaults in force, inputs that gave nothing, ...) are results of
//! one more rule, `leasetrace/warning`, not `toolExecutionNotifications`: GitHub shows only results,
//! and a warning is what a reader must see before trusting the findings next to it. They do not
//! count towards `check`'s verdict, which is in `invocations[0]`.
//!
//! The types below are the subset of the SARIF object model leasetrace writes, written out by hand
//! rather than taken from a generated crate: the test suite validates the output against the
//! official OASIS schema (tests/schemas/), which is what makes it SARIF.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use crate::detect::{DETECTORS, Detector};
use crate::model::report::View;
use crate::model::timeline::EventId;
use crate::model::warnings::Warning;
use crate::model::{Finding, Report, Severity};
use crate::time::{format_datetime, format_rfc3339};

use super::annotation::{finding_fingerprint, fingerprint, follows_from, message, primary_evidence};
use super::{Renderer, fill_summary};

/// The schema the output claims: the OASIS standard's, errata 01 (the one tests/schemas/ holds).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The rule of the report's header warnings.
pub const WARNING_RULE: &str = "leasetrace/warning";

/// The URI base id of relative paths: the directory leasetrace ran in, which a CI job runs in the
/// repository root. Its absolute URI is left out (SARIF 2.1.0 §3.14.14 allows it) so that the
/// output does not depend on the machine, and GitHub reads relative paths from the repository root.
pub const BASE_ID: &str = "WORKINGDIR";

/// The most `relatedLocations` a result lists: GitHub code scanning refuses a result with more
/// than 1,000 locations, the primary one included.
pub const MAX_RELATED: usize = 999;

/// The partial fingerprint's name (SARIF §3.27.17: a versioned, hierarchical name).
pub const FINGERPRINT: &str = "leasetraceFinding/v1";

pub struct Sarif;

impl Renderer for Sarif {
    fn name(&self) -> &'static str {
        "sarif"
    }

    fn refuses(&self, view: View) -> Option<&'static str> {
        match view {
            View::Timeline => Some("sarif lists findings and a timeline has none: use `check` or `analyze`"),
            _ => None,
        }
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let log = log(report);
        serde_json::to_writer_pretty(&mut *out, &log)?;
        out.write_all(b"\n")
    }
}

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    original_uri_base_ids: BTreeMap<&'static str, BaseLocation>,
    results: Vec<SarifResult>,
    properties: RunProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunProperties {
    /// The zone every time of the messages is written in.
    display_tz: String,
    /// What happened, as every human format opens with it: the chains, most severe first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    headline: Vec<String>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<&'static str>,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: String,
    short_description: Text,
    full_description: Text,
    default_configuration: Configuration,
    help: Help,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code_description: Option<String>,
    properties: InvocationProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InvocationProperties {
    command: &'static str,
    /// `check` only: its threshold, how many findings reach it, and the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    fail_on: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failing: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    passed: Option<bool>,
}

#[derive(Serialize)]
struct BaseLocation {
    description: Text,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    properties: ResultProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties {
    /// The finding's number in the report (1-based, as people are shown it); absent for warnings.
    #[serde(skip_serializing_if = "Option::is_none")]
    finding: Option<usize>,
    /// The finding's severity as leasetrace names it (`info` is SARIF's `note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    severity: Option<&'static str>,
    /// When the pattern became visible, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    /// The numbers of the findings this one follows from (the JSON report's `caused_by`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    caused_by: Vec<usize>,
    /// The first cause that is not a finding, filled in the display zone (JSON's `root_cause`).
    #[serde(skip_serializing_if = "Option::is_none")]
    root_cause: Option<String>,
    /// A warning's kind (`lock-params-default`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    warning_kind: Option<&'static str>,
    /// Why the location is not an evidence line, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    placed: Option<String>,
    /// How many evidence lines `relatedLocations` leaves out, when it leaves some out.
    #[serde(skip_serializing_if = "Option::is_none")]
    related_cut: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::struct_field_names)] // SARIF's own names
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
}

fn log(report: &Report) -> Log {
    let check = match report.view {
        View::Check(threshold) => Some((threshold, report.failing())),
        _ => None,
    };
    let mut results: Vec<SarifResult> = report.warnings.iter().map(|w| warning_result(report, w)).collect();
    results.extend(report.findings.iter().enumerate().map(|(index, f)| finding_result(report, index, f)));
    disambiguate(&mut results);
    Log {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "leasetrace",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: repository(),
                    rules: DETECTORS.iter().map(|&d| rule(d)).chain([warning_rule()]).collect(),
                },
            },
            invocations: vec![Invocation {
                execution_successful: true,
                exit_code: check.map(|(_, failing)| u8::from(failing > 0)),
                exit_code_description: check.map(|(threshold, failing)| {
                    format!("{failing} finding(s) at or above --fail-on {}", threshold.name())
                }),
                properties: InvocationProperties {
                    command: match report.view {
                        View::Timeline => "timeline",
                        View::Analyze => "analyze",
                        View::Check(_) => "check",
                    },
                    fail_on: check.map(|(threshold, _)| threshold.name()),
                    failing: check.map(|(_, failing)| failing),
                    passed: check.map(|(_, failing)| failing == 0),
                },
            }],
            original_uri_base_ids: BTreeMap::from([(
                BASE_ID,
                BaseLocation {
                    description: Text {
                        text: "The directory leasetrace ran in: relative input paths are relative to it (in CI, the repository root)."
                            .into(),
                    },
                },
            )]),
            results,
            properties: RunProperties {
                display_tz: report.display_tz.name().to_string(),
                headline: super::headline::plain_lines(report),
            },
        }],
    }
}

/// The repository named in Cargo.toml, if any: SARIF's `informationUri` and `helpUri` must be
/// absolute URIs, and no other public address of the docs is known to the binary.
fn repository() -> Option<&'static str> {
    Some(env!("CARGO_PKG_REPOSITORY")).filter(|uri| !uri.is_empty())
}

pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn rule(detector: &dyn Detector) -> Rule {
    let code = detector.code();
    let doc = detector.doc();
    let lead = lead(doc);
    let mut help_text = plain(&lead);
    let _ =
        write!(help_text, "\n\nFull documentation: `leasetrace explain {code}`, or `leasetrace docs findings/{code}`.");
    Rule {
        id: code,
        name: pascal_case(code),
        short_description: Text { text: limit(&first_sentence(&lead), GITHUB_DESCRIPTION_LIMIT) },
        full_description: Text { text: limit(&plain(&lead), GITHUB_DESCRIPTION_LIMIT) },
        // A finding's level depends on what it found (duplicate-selection is an error only when both
        // rounds acted); each result says its own.
        default_configuration: Configuration { level: "warning" },
        help: Help { text: help_text, markdown: doc.to_string() },
        help_uri: repository().map(|repo| format!("{}/blob/HEAD/docs/findings/{code}.md", repo.trim_end_matches('/'))),
    }
}

fn warning_rule() -> Rule {
    let text = "A report header warning: something the numbers of this report rest on that a reader must know before trusting them (lock parameters that are BullMQ's defaults, sources that disagree about them, an input that contributed nothing, ...).";
    Rule {
        id: WARNING_RULE,
        name: "ReportWarning".into(),
        short_description: Text {
            text: "Something the findings of this report rest on that a reader must know first.".into(),
        },
        full_description: Text { text: text.into() },
        default_configuration: Configuration { level: "warning" },
        help: Help {
            text: format!(
                "{text} The message says what, and how to remove the doubt (a parameters file, a flag, the right file)."
            ),
            markdown: format!(
                "{text}\n\nThe message says what, and how to remove the doubt (a parameters file, a flag, the right file). These warnings are printed first by every leasetrace format; they do not change the exit code of `leasetrace check`."
            ),
        },
        help_uri: None,
    }
}

/// GitHub code scanning's limit on `shortDescription.text` and `fullDescription.text`.
pub const GITHUB_DESCRIPTION_LIMIT: usize = 1024;

/// The paragraphs between a finding doc's heading and its first section.
fn lead(doc: &str) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for line in doc.lines().skip_while(|l| l.trim().is_empty() || l.starts_with("# ")) {
        if line.starts_with("## ") {
            break;
        }
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs
}

/// Paragraphs as plain text: Markdown's emphasis and code marks dropped.
fn plain(paragraphs: &[String]) -> String {
    paragraphs.join("\n\n").replace("**", "").replace('`', "")
}

fn first_sentence(paragraphs: &[String]) -> String {
    let first = paragraphs.first().map_or("", String::as_str).replace("**", "").replace('`', "");
    match first.find(". ") {
        Some(end) => first[..=end].to_string(),
        None => first,
    }
}

/// `text` cut to at most `max` characters, at a word, with an ellipsis when cut.
fn limit(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.push('…');
    cut
}

/// `duplicate-selection` → `DuplicateSelection`: SARIF's rule `name` is an identifier for people.
fn pascal_case(code: &str) -> String {
    code.split(['-', '/'])
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
        })
        .collect()
}

fn rule_index(code: &str) -> usize {
    DETECTORS.iter().position(|d| d.code() == code).unwrap_or(DETECTORS.len())
}

fn finding_result(report: &Report, index: usize, finding: &Finding) -> SarifResult {
    let tz = report.display_tz;
    let primary = primary_evidence(report, finding);
    let event_location = |id: EventId, number: Option<usize>| {
        let event = report.timeline.get(id);
        Location {
            id: number,
            physical_location: physical(report.timeline.path(event), event.origin().line),
            message: Some(Text { text: format!("{} {}", format_datetime(event.at(), tz), event.kind.name()) }),
        }
    };
    let (locations, placed) = match primary {
        Some(id) => (vec![event_location(id, None)], None),
        None => fallback_location(report, "no evidence line")
            .map(|(location, why)| (vec![location], Some(why)))
            .unwrap_or_default(),
    };
    let related: Vec<Location> = finding
        .evidence
        .iter()
        .copied()
        .filter(|&id| Some(id) != primary)
        .enumerate()
        .map(|(n, id)| event_location(id, Some(n + 1)))
        .take(MAX_RELATED)
        .collect();
    let others = finding.evidence.iter().filter(|&&id| Some(id) != primary).count();
    let related_cut = (others > related.len()).then(|| {
        format!(
            "{} of the {others} other evidence lines are listed (GitHub code scanning refuses a result with more than 1,000 locations); the JSON report lists them all",
            related.len()
        )
    });
    SarifResult {
        rule_id: finding.code,
        rule_index: rule_index(finding.code),
        level: level(finding.severity),
        message: Text { text: finding_message(report, finding) },
        locations,
        related_locations: related,
        partial_fingerprints: BTreeMap::from([(FINGERPRINT, finding_fingerprint(report, finding))]),
        properties: ResultProperties {
            finding: Some(index + 1),
            severity: Some(finding.severity.name()),
            at: Some(format_rfc3339(finding.at)),
            caused_by: finding.caused_by.iter().map(|index| index + 1).collect(),
            root_cause: super::root_cause(finding, tz),
            warning_kind: None,
            placed,
            related_cut,
        },
    }
}

/// A result's message: the summary, what it follows from (an alert is read alone, away from the
/// headline that shows the chain), and the zone.
fn finding_message(report: &Report, finding: &Finding) -> String {
    let mut summary = fill_summary(&finding.summary, &finding.metrics, report.display_tz);
    if let Some(causes) = follows_from(report, finding) {
        let _ = write!(summary, " Follows from {causes}.");
    }
    message(&summary, report.display_tz)
}

fn warning_result(report: &Report, warning: &Warning) -> SarifResult {
    let (locations, placed) =
        warning_location(report, warning).map(|(location, why)| (vec![location], Some(why))).unwrap_or_default();
    SarifResult {
        rule_id: WARNING_RULE,
        rule_index: DETECTORS.len(),
        level: "warning",
        message: Text { text: warning.message.clone() },
        locations,
        related_locations: Vec::new(),
        partial_fingerprints: BTreeMap::from([(
            FINGERPRINT,
            fingerprint(&[WARNING_RULE, warning.kind, &warning.message]),
        )]),
        properties: ResultProperties {
            finding: None,
            severity: None,
            at: None,
            caused_by: Vec::new(),
            root_cause: None,
            warning_kind: Some(warning.kind),
            placed,
            related_cut: None,
        },
    }
}

/// A warning names no line: it is placed at line 1 of the input it names, else of the lock
/// parameters file, else of the first input.
fn warning_location(report: &Report, warning: &Warning) -> Option<(Location, String)> {
    let named = report
        .inputs
        .iter()
        .filter(|input| warning.message.contains(input.path.as_str()))
        .max_by_key(|input| input.path.len());
    match named {
        Some(input) => Some((
            Location { id: None, physical_location: physical(&input.path, 1), message: None },
            "a report warning names no line: placed at line 1 of the input it names".to_string(),
        )),
        None => fallback_location(report, "a report warning names no line"),
    }
}

/// Where a result without an evidence line goes: line 1 of the lock parameters file, else of the
/// first input. `None` only for a report without inputs, which leasetrace never builds.
fn fallback_location(report: &Report, reason: &str) -> Option<(Location, String)> {
    let params = report.inputs.iter().find(|input| input.kind == "bullmq-params");
    let (input, place) = match params {
        Some(input) => (input, "the lock parameters file"),
        None => (report.inputs.first()?, "the first input"),
    };
    Some((
        Location { id: None, physical_location: physical(&input.path, 1), message: None },
        format!("{reason}: placed at line 1 of {place}"),
    ))
}

fn physical(path: &str, line: u32) -> PhysicalLocation {
    PhysicalLocation {
        artifact_location: artifact(path),
        // Line 0 is no line (SARIF lines start at 1): the file alone, rather than a wrong line.
        region: (line > 0).then_some(Region { start_line: line }),
    }
}

/// A source path as a URI: relative paths (relative to the working directory, as given) stay
/// relative, under `WORKINGDIR`; absolute ones become `file://` URIs.
fn artifact(path: &str) -> ArtifactLocation {
    let mut path = path;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    if path.starts_with('/') {
        ArtifactLocation { uri: format!("file://{}", encode_path(path)), uri_base_id: None }
    } else {
        ArtifactLocation { uri: encode_path(path), uri_base_id: Some(BASE_ID) }
    }
}

/// Percent-encodes every byte of a path but RFC 3986's unreserved characters and `/`: a path with
/// a space, `%`, `#` or `:` is still one URI reference, and never reads as a scheme.
pub fn encode_path(path: &str) -> String {
    let mut uri = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

/// Two results with the same fingerprint are told apart by a count, as GitHub's own line hashes
/// are (`hash:1`, `hash:2`), in report order.
fn disambiguate(results: &mut [SarifResult]) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for result in results {
        if let Some(value) = result.partial_fingerprints.get_mut(FINGERPRINT) {
            let count = seen.entry(value.clone()).or_default();
            *count += 1;
            let _ = write!(value, ":{count}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_severity() {
        assert_eq!(level(Severity::Error), "error");
        assert_eq!(level(Severity::Warning), "warning");
        assert_eq!(level(Severity::Info), "note");
    }

    #[test]
    fn relative_paths_stay_relative_and_absolute_ones_become_file_uris() {
        let relative = artifact("./cases/day 1/server.log");
        assert_eq!(relative.uri, "cases/day%201/server.log");
        assert_eq!(relative.uri_base_id, Some(BASE_ID));
        let absolute = artifact("/srv/exports/a#b%c.csv");
        assert_eq!(absolute.uri, "file:///srv/exports/a%23b%25c.csv");
        assert_eq!(absolute.uri_base_id, None);
        // A colon in the first segment would read as a scheme.
        assert_eq!(encode_path("c:x.log"), "c%3Ax.log");
        assert_eq!(encode_path("일지.log"), "%EC%9D%BC%EC%A7%80.log");
    }

    #[test]
    fn line_zero_is_no_region() {
        assert!(physical("a.log", 0).region.is_none());
        assert_eq!(physical("a.log", 7).region.map(|r| r.start_line), Some(7));
    }

    #[test]
    fn fingerprints_are_fixed_values_that_tell_parts_apart() {
        // FNV-1a 64 of the empty input is its offset basis; of "a", the published test vector.
        assert_eq!(fingerprint(&[""]), "cbf29ce484222325");
        assert_eq!(fingerprint(&["a"]), "af63dc4c8601ec8c");
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }

    #[test]
    fn equal_fingerprints_are_counted_apart() {
        let result = |value: &str| SarifResult {
            rule_id: "x",
            rule_index: 0,
            level: "note",
            message: Text { text: String::new() },
            locations: Vec::new(),
            related_locations: Vec::new(),
            partial_fingerprints: BTreeMap::from([(FINGERPRINT, value.to_string())]),
            properties: ResultProperties {
                finding: None,
                severity: None,
                at: None,
                caused_by: Vec::new(),
                root_cause: None,
                warning_kind: None,
                placed: None,
                related_cut: None,
            },
        };
        let mut results = vec![result("aa"), result("bb"), result("aa")];
        disambiguate(&mut results);
        let values: Vec<&str> = results.iter().map(|r| r.partial_fingerprints[FINGERPRINT].as_str()).collect();
        assert_eq!(values, ["aa:1", "bb:1", "aa:2"]);
    }

    #[test]
    fn rule_texts_come_from_the_doc_lead() {
        let doc = "# some-code\n\nThe first sentence. A second one with `code`.\n\n**Severity:** error.\n\n## What it means\n\nNot this.\n";
        let paragraphs = lead(doc);
        assert_eq!(paragraphs.len(), 2);
        assert_eq!(first_sentence(&paragraphs), "The first sentence.");
        assert_eq!(plain(&paragraphs), "The first sentence. A second one with code.\n\nSeverity: error.");
        assert_eq!(pascal_case("duplicate-selection"), "DuplicateSelection");
        assert_eq!(pascal_case(WARNING_RULE), "LeasetraceWarning");
    }

    #[test]
    fn descriptions_are_cut_at_a_word_within_the_limit() {
        let long = "word ".repeat(300);
        let cut = limit(&long, GITHUB_DESCRIPTION_LIMIT);
        assert!(cut.chars().count() <= GITHUB_DESCRIPTION_LIMIT);
        assert!(cut.ends_with("word…"), "{cut}");
        assert_eq!(limit("short", 10), "short");
    }

    #[test]
    fn every_registered_rule_fits_github_limits() {
        for detector in DETECTORS {
            let rule = rule(*detector);
            assert!(!rule.short_description.text.is_empty(), "{}", rule.id);
            assert!(rule.short_description.text.chars().count() <= GITHUB_DESCRIPTION_LIMIT);
            assert!(rule.full_description.text.chars().count() <= GITHUB_DESCRIPTION_LIMIT);
            assert!(rule.name.len() <= 255);
        }
    }

    fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&chrono::Utc)
    }

    /// A report over a ledger (`l.csv`, lines 2 and 3) and a parameters file (`p.json`).
    fn report(findings: Vec<Finding>, warnings: Vec<Warning>) -> Report {
        use crate::model::{Channel, Event, EventKind, InputSummary, Origin, Text, Timeline};
        let event = |when: &str, line: u32| {
            let mut event = Event::new(
                at(when).into(),
                EventKind::ItemSelected,
                Origin { channel: Channel::Ledger, source: 0, line },
            );
            event.item = Some("PR-1".into());
            event
        };
        let timeline = Timeline::new(vec![event("2026-10-07T00:00:01Z", 2), event("2026-10-07T00:00:02Z", 3)])
            .with_paths(vec![Text::from("l.csv"), Text::from("p.json")]);
        Report {
            view: View::Check(Severity::Warning),
            display_tz: chrono_tz::UTC,
            inputs: vec![
                InputSummary::new("l.csv", "ledger", "csv", None),
                InputSummary::new("p.json", "bullmq-params", "json", None),
            ],
            params: crate::model::LockParams::default(),
            warnings,
            assumptions: Vec::new(),
            timeline,
            findings,
            chains: Vec::new(),
            shown: None,
            raw_texts: crate::model::report::RawTexts::Read(std::collections::HashMap::new()),
        }
    }

    fn place(result: &SarifResult) -> (&str, Option<u32>) {
        let physical = &result.locations[0].physical_location;
        (physical.artifact_location.uri.as_str(), physical.region.as_ref().map(|r| r.start_line))
    }

    #[test]
    fn a_result_is_located_at_the_evidence_of_its_time_and_relates_the_rest() {
        let mut finding = Finding::new("duplicate-selection", Severity::Error, at("2026-10-07T00:00:02Z"));
        finding.evidence = vec![0, 1];
        let report = report(vec![finding], Vec::new());
        let result = finding_result(&report, 0, &report.findings[0]);
        assert_eq!(place(&result), ("l.csv", Some(3)), "the second selection, at the finding's time");
        assert_eq!(result.related_locations.len(), 1);
        assert_eq!(result.related_locations[0].physical_location.region.as_ref().map(|r| r.start_line), Some(2));
        assert!(result.properties.placed.is_none());
    }

    #[test]
    fn results_without_a_line_are_placed_where_github_accepts_them_and_say_so() {
        let finding = Finding::new("lock-params-contradicted", Severity::Warning, at("2026-10-07T00:00:02Z"));
        let warnings = vec![
            Warning { kind: "input-contributed-nothing", message: "l.csv contributed nothing".into() },
            Warning { kind: "lock-params-default", message: "lockRenewTime is the default".into() },
        ];
        let report = report(vec![finding], warnings);
        let result = finding_result(&report, 0, &report.findings[0]);
        assert_eq!(place(&result), ("p.json", Some(1)));
        assert_eq!(
            result.properties.placed.as_deref(),
            Some("no evidence line: placed at line 1 of the lock parameters file")
        );
        let named = warning_result(&report, &report.warnings[0]);
        assert_eq!(place(&named), ("l.csv", Some(1)), "the input the warning names");
        let unnamed = warning_result(&report, &report.warnings[1]);
        assert_eq!(place(&unnamed), ("p.json", Some(1)));
        assert_eq!(unnamed.rule_id, WARNING_RULE);
        assert_eq!(unnamed.rule_index, DETECTORS.len(), "the rule after the registry's");
    }

    #[test]
    fn related_locations_stop_at_githubs_limit_and_say_so() {
        let mut finding = Finding::new("retry-storm", Severity::Warning, at("2026-10-07T00:00:02Z"));
        finding.evidence = vec![0; MAX_RELATED + 5];
        finding.evidence.push(1);
        let report = report(vec![finding], Vec::new());
        let result = finding_result(&report, 0, &report.findings[0]);
        assert_eq!(result.locations.len() + result.related_locations.len(), 1_000);
        assert_eq!(
            result.properties.related_cut.as_deref(),
            Some(
                "999 of the 1004 other evidence lines are listed (GitHub code scanning refuses a result with more than 1,000 locations); the JSON report lists them all"
            )
        );
    }
}
