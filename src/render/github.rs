//! GitHub Actions annotations (`--format github`): one workflow command per line, which the runner
//! turns into an annotation on the file and line, as ruff's `--output-format github` prints them
//! (contract in docs/outputs/ci.md).
//!
//! The report's header warnings come first, without a file (GitHub shows them on the run's
//! summary), then what happened (the headline's chains) as one notice; then one annotation per
//! finding, in report order, at the evidence line where the finding became visible (the same line
//! as the SARIF result's location), its message naming what it follows from and listing every
//! evidence line. Levels: error → `::error`, warning → `::warning`, info → `::notice`.
//!
//! Escaping is the one the runner undoes, as the Actions toolkit writes it
//! (`packages/core/src/command.ts` in github.com/actions/toolkit): in the message `%`, CR and LF
//! become `%25`, `%0D`, `%0A`; in a property value also `:` and `,` become `%3A` and `%2C`. A
//! summary or path holding any of them cannot end the command early or forge another one.
//!
//! Before that, text from the case (warnings, the headline, summaries, paths) is made
//! `terminal::visible` in the message: the runner's log and the annotation show an escape
//! sequence, a carriage return or a bidi override written out, and the only line breaks are the
//! renderer's own. The `file` property names the file to annotate, so a line break in its path is
//! kept (the escaping above carries it back whole); any other control or invisible character in
//! it is written out, since the runner's escaping has no code for it.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::model::Report;
use crate::model::report::View;
use crate::terminal::visible;
use crate::time::format_datetime;

use super::annotation::{follows_from, message, primary_evidence};
use super::headline::plain_lines;
use super::{Renderer, fill_summary};

pub struct Github;

impl Renderer for Github {
    fn name(&self) -> &'static str {
        "github"
    }

    fn refuses(&self, view: View) -> Option<&'static str> {
        match view {
            View::Timeline => Some("github annotates findings and a timeline has none: use `check` or `analyze`"),
            _ => None,
        }
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        for warning in &report.warnings {
            let title = format!("leasetrace ({} warning)", warning.kind);
            writeln!(out, "{}", command("warning", &[("title", &title)], &visible(&warning.message)))?;
        }
        // What happened, in one notice at the top of the run: the chains, as every human format
        // opens with them.
        let tz = report.display_tz;
        let mut headline: Vec<String> = plain_lines(report).iter().map(|line| visible(line).into_owned()).collect();
        if !headline.is_empty() {
            headline.push(format!("(times in {})", tz.name()));
            writeln!(out, "{}", command("notice", &[("title", "leasetrace (what happened)")], &headline.join("\n")))?;
        }
        for (index, finding) in report.findings.iter().enumerate() {
            let level = match finding.severity {
                crate::model::Severity::Error => "error",
                crate::model::Severity::Warning => "warning",
                crate::model::Severity::Info => "notice",
            };
            let summary = message(&visible(&fill_summary(&finding.summary, &finding.metrics, tz)), tz);
            let title = format!("leasetrace ({})", finding.code);
            let mut text = String::new();
            let mut properties: Vec<(&str, String)> = vec![("title", title)];
            if let Some(id) = primary_evidence(report, finding) {
                let event = report.timeline.get(id);
                let path = report.timeline.path(event);
                let line = event.origin().line;
                properties.push(("file", file_property(path)));
                if line > 0 {
                    properties.push(("line", line.to_string()));
                }
                let _ = write!(text, "{}:{line}: ", visible(path));
            }
            let _ = write!(text, "[{}] {}: {summary}", index + 1, finding.code);
            if let Some(causes) = follows_from(report, finding) {
                let _ = write!(text, "\nfollows from {causes}");
            }
            if !finding.evidence.is_empty() {
                text.push_str("\nevidence:");
                for &id in &finding.evidence {
                    let event = report.timeline.get(id);
                    let _ = write!(
                        text,
                        "\n  {}:{}  {}  {}",
                        visible(report.timeline.path(event)),
                        event.origin().line,
                        format_datetime(event.at(), tz),
                        event.kind.name()
                    );
                }
            }
            let properties: Vec<(&str, &str)> = properties.iter().map(|(k, v)| (*k, v.as_str())).collect();
            writeln!(out, "{}", command(level, &properties, &text))?;
        }
        Ok(())
    }
}

/// A path as the `file` property: exact when the runner's escaping carries it (line breaks
/// included), else written out (`terminal::visible`).
fn file_property(path: &str) -> String {
    if path.chars().any(|c| !matches!(c, '\r' | '\n') && crate::terminal::is_hidden(c)) {
        visible(path).into_owned()
    } else {
        path.to_string()
    }
}

/// One workflow command: `::name key=value,key=value::message`, properties in the given order.
pub fn command(name: &str, properties: &[(&str, &str)], message: &str) -> String {
    let mut line = format!("::{name}");
    let mut first = true;
    for (key, value) in properties.iter().filter(|(_, value)| !value.is_empty()) {
        line.push(if first { ' ' } else { ',' });
        first = false;
        line.push_str(key);
        line.push('=');
        line.push_str(&escape_property(value));
    }
    line.push_str("::");
    line.push_str(&escape_data(message));
    line
}

/// The toolkit's `escapeData`.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// The toolkit's `escapeProperty`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// What the runner reads back from an escaped value (the inverse of both escapes): for tests and
/// for tools that parse these lines.
pub fn unescape(text: &str) -> String {
    text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_escape_as_the_actions_toolkit_does() {
        assert_eq!(
            command("error", &[("title", "a:b,c"), ("file", "x%y.log"), ("line", "3")], "50% done\r\nnext: a, b"),
            "::error title=a%3Ab%2Cc,file=x%25y.log,line=3::50%25 done%0D%0Anext: a, b"
        );
        // The toolkit leaves out empty properties, and writes no space for none.
        assert_eq!(command("notice", &[("title", "")], "m"), "::notice::m");
    }

    #[test]
    fn escaping_round_trips_hostile_text() {
        for text in ["%0A is not a newline", "a\nb\r\nc", "file:1,2", "100%", "%%25%3A", "::error::x"] {
            assert_eq!(unescape(&escape_property(text)), text);
            assert_eq!(unescape(&escape_data(text)), text);
            assert!(!escape_property(text).contains([':', ',', '\n', '\r']), "{text}");
            assert!(!escape_data(text).contains(['\n', '\r']), "{text}");
        }
    }
}
