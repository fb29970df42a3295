//! JUnit XML (`--format junit`): the test report every CI reads (GitLab's
//! `artifacts:reports:junit`, Jenkins, Azure Pipelines, CircleCI, GitHub test reporters), in the
//! common subset of the Ant/Jenkins schema those readers accept: `<testsuites>` holding one
//! `<testsuite name="leasetrace">` with one `<testcase>` per finding.
//!
//! A finding at or above the threshold (`check --fail-on`; for `analyze`, warning, `check`'s
//! default) is a `<failure>` whose `type` is its code and whose text names its evidence lines; a
//! finding below it passes, with its summary in `<system-out>`, so that every finding is listed.
//! A report with no finding has one passing test case (`no finding`), since an empty suite reads
//! as "nothing ran" in some readers. The report's header warnings are in the suite's
//! `<system-out>`, first.
//!
//! XML 1.0 cannot carry most control characters at all, even escaped: text from the case is made
//! `terminal::visible` (`\x1b`, `<U+202E>`) and then escaped (`&`, `<`, `>`, `"`, `'`), so a
//! hostile summary or path can neither break the document nor forge an element.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::model::report::View;
use crate::model::{Report, Severity};
use crate::terminal::visible;
use crate::time::format_datetime;

use super::annotation::{follows_from, message, primary_evidence};
use super::{Renderer, fill_summary};

pub struct Junit;

impl Renderer for Junit {
    fn name(&self) -> &'static str {
        "junit"
    }

    fn shows_raw(&self, _view: View) -> bool {
        false
    }

    fn refuses(&self, view: View) -> Option<&'static str> {
        match view {
            View::Timeline => Some("junit reports findings as test cases, and a timeline has none: use `check`"),
            _ => None,
        }
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let tz = report.display_tz;
        let threshold = match report.view {
            View::Check(threshold) => threshold,
            _ => Severity::Warning,
        };
        let failures = report.findings.iter().filter(|finding| finding.severity >= threshold).count();
        let tests = report.findings.len().max(1);
        let mut cases = String::new();
        for (number, finding) in (1..).zip(&report.findings) {
            let summary = message(&fill_summary(&finding.summary, &finding.metrics, tz), tz);
            // The test's name stays short, as test lists show it: the finding and where it is;
            // the summary is the failure's message.
            let mut name = format!("[{number}] {}", finding.code);
            let mut place = String::new();
            if let Some(id) = primary_evidence(report, finding) {
                let event = report.timeline.get(id);
                let path = report.timeline.path(event);
                let line = event.origin().line;
                let file = std::path::Path::new(path).file_name().map_or(path.into(), |name| name.to_string_lossy());
                let _ = write!(name, " at {file}:{line}");
                let _ = write!(place, r#" file="{}" line="{line}""#, xml(path));
            }
            let attributes = format!(r#"classname="leasetrace.{}" name="{}"{place}"#, finding.code, xml(&name));
            let mut detail = format!("{} [{number}] {}: {summary}", finding.severity.name(), finding.code);
            if let Some(causes) = follows_from(report, finding) {
                let _ = write!(detail, "\nfollows from {causes}");
            }
            if !finding.evidence.is_empty() {
                detail.push_str("\nevidence:");
                for &id in &finding.evidence {
                    let event = report.timeline.get(id);
                    let _ = write!(
                        detail,
                        "\n  {}:{}  {}  {}",
                        report.timeline.path(event),
                        event.origin().line,
                        format_datetime(event.at(), tz),
                        event.kind.name()
                    );
                }
            }
            if finding.severity >= threshold {
                let _ = writeln!(
                    cases,
                    r#"    <testcase {attributes}><failure type="{}" message="{}">{}</failure></testcase>"#,
                    finding.code,
                    xml(&summary),
                    xml(&detail)
                );
            } else {
                let _ =
                    writeln!(cases, "    <testcase {attributes}><system-out>{}</system-out></testcase>", xml(&detail));
            }
        }
        if report.findings.is_empty() {
            cases.push_str("    <testcase classname=\"leasetrace\" name=\"no finding\"/>\n");
        }
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(out, r#"<testsuites name="leasetrace" tests="{tests}" failures="{failures}" errors="0">"#)?;
        writeln!(
            out,
            r#"  <testsuite name="leasetrace" tests="{tests}" failures="{failures}" errors="0" skipped="0">"#
        )?;
        let mut notes: Vec<String> =
            report.warnings.iter().map(|warning| format!("WARNING [{}]: {}", warning.kind, warning.message)).collect();
        if let View::Check(threshold) = report.view {
            notes.push(super::verdict(report, threshold));
        }
        notes.push(format!("times in {}", tz.name()));
        writeln!(out, "    <system-out>{}</system-out>", xml(&notes.join("\n")))?;
        out.write_all(cases.as_bytes())?;
        writeln!(out, "  </testsuite>")?;
        writeln!(out, "</testsuites>")
    }
}

/// Text from the case as XML 1.0 can carry it, in an attribute or an element: characters XML
/// cannot hold written out (`terminal::visible` keeps line breaks and tabs, which it can), then
/// the five markup characters escaped. Line breaks in attributes become `&#10;`, since a reader
/// would turn a raw one into a space.
fn xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\n' => escaped.push_str("&#10;"),
            '\t' => escaped.push_str("&#9;"),
            '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(escaped, "&lt;U+{:04X}&gt;", u32::from(c));
            }
            c if crate::terminal::is_hidden(c) => escaped.push_str(&xml(&visible(&c.to_string()))),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_case_cannot_break_the_document() {
        assert_eq!(xml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(xml("</failure><testcase name=\"x\"/>"), "&lt;/failure&gt;&lt;testcase name=&quot;x&quot;/&gt;");
        assert_eq!(xml("esc\u{1b}[2J bell\u{7} nul\u{0}"), "esc\\x1b[2J bell\\x07 nul\\x00");
        assert_eq!(xml("two\nlines\ttab"), "two&#10;lines&#9;tab");
        assert_eq!(xml("\u{202e}reversed"), "<U+202E>reversed".replace('<', "&lt;").replace('>', "&gt;"));
    }
}
