//! Report → bytes.
//!
//! Each output format is one file with one `Renderer`; `RENDERERS` is the only list, and
//! `--format` takes its values from it. Renderers only present: every number they print was
//! computed by a detector. They fill a finding's summary template with its own metrics, in the
//! display zone the user chose.

pub mod annotation;
pub mod chart;
pub mod concise;
pub mod github;
pub mod gitlab;
pub mod headline;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod layout;
pub mod markdown;
pub mod mermaid;
pub mod roles;
pub mod sarif;
pub mod scale;
pub mod svg;
pub mod table;
pub mod timesketch;

use std::io::{self, Write};

use chrono_tz::Tz;

use crate::model::report::View;
use crate::model::{Report, Value};
use crate::terminal::Terminal;
use crate::time::{format_clock, format_duration, format_rfc3339};

/// A cited line that could not be read back while the report was being written (the file
/// changed or went away during the run). It travels through the renderer's `io::Result` as
/// the error's payload, so that the caller reports it as the input error it is, with file and
/// line, rather than as "cannot write the output".
#[derive(Debug)]
pub struct ReadBackFailed(pub crate::error::Error);

impl std::fmt::Display for ReadBackFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ReadBackFailed {}

pub fn read_back_failed(error: crate::error::Error) -> io::Error {
    io::Error::other(ReadBackFailed(error))
}

/// The input error inside a renderer's write error, if that is what stopped it.
pub fn as_read_back_failure(error: io::Error) -> Result<crate::error::Error, io::Error> {
    if matches!(error.get_ref(), Some(inner) if inner.is::<ReadBackFailed>()) {
        let inner = error.into_inner().expect("checked above");
        return Ok(inner.downcast::<ReadBackFailed>().map(|failure| failure.0).expect("checked above"));
    }
    Err(error)
}

pub trait Renderer: Sync {
    fn name(&self) -> &'static str;
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()>;
    /// `render` onto stdout, as `terminal` allows (colour, the width to wrap to). Only formats for
    /// people look at it; the others are the same bytes wherever they go.
    fn render_to(&self, report: &Report, terminal: Terminal, out: &mut dyn Write) -> io::Result<()> {
        let _ = terminal;
        self.render(report, out)
    }
    /// Whether the output of `view` shows the raw lines of the events it lists: when it does not,
    /// they are not read back from the sources (a whole timeline's worth of lines).
    fn shows_raw(&self, view: View) -> bool {
        let _ = view;
        true
    }
    /// Why this format cannot show `view`, if it cannot (SARIF and annotations list findings; a
    /// timeline has none): said before any input is read, as a usage error.
    fn refuses(&self, view: View) -> Option<&'static str> {
        let _ = view;
        None
    }
}

/// Every output format. Adding one: one file and one line here.
#[rustfmt::skip]
pub static RENDERERS: &[&dyn Renderer] = &[&table::Table, &json::Json, &jsonl::JsonLines, &timesketch::Timesketch, &mermaid::Mermaid, &svg::Svg, &markdown::Markdown, &html::Html, &sarif::Sarif, &github::Github, &gitlab::Gitlab, &junit::Junit, &concise::Concise];

pub fn names() -> Vec<&'static str> {
    RENDERERS.iter().map(|r| r.name()).collect()
}

pub fn find(name: &str) -> Option<&'static dyn Renderer> {
    RENDERERS.iter().copied().find(|r| r.name() == name)
}

/// A check's verdict, as the human and CI formats end with it: `check passed: no finding at or
/// above warning`, with what a filter hid and the check did not count.
pub fn verdict(report: &Report, threshold: crate::model::Severity) -> String {
    let (shown, hidden) = match report.shown.as_ref().map(hidden_by_filter) {
        Some(Some(hidden)) => ("shown ", format!("; the filter hides {hidden}, not counted")),
        Some(None) => ("shown ", String::new()),
        None => ("", String::new()),
    };
    match report.failing() {
        0 => format!("check passed: no {shown}finding at or above {}{hidden}", threshold.name()),
        n => format!("check failed: {n} {shown}finding(s) at or above {}{hidden}", threshold.name()),
    }
}

/// What a filter hid, for a check's verdict: `5 findings (1 error, 3 warning, 1 info)`; `None`
/// when it hid nothing.
pub fn hidden_by_filter(shown: &crate::model::report::Shown) -> Option<String> {
    let total: usize = shown.hidden.iter().sum();
    if total == 0 {
        return None;
    }
    let by_severity: Vec<String> = [(0, "error"), (1, "warning"), (2, "info")]
        .iter()
        .filter(|(i, _)| shown.hidden[*i] > 0)
        .map(|(i, name)| format!("{} {name}", shown.hidden[*i]))
        .collect();
    let noun = if total == 1 { "finding" } else { "findings" };
    Some(format!("{total} {noun} ({})", by_severity.join(", ")))
}

/// A metric value for people: clock times in the display zone, durations as "15 min 34 s".
pub fn human_value(value: &Value, tz: Tz) -> String {
    match value {
        Value::Time(at) => format_clock(*at, tz),
        Value::Seconds(s) => format_duration(*s),
        Value::Count(n) => n.to_string(),
        Value::Ratio(r) => format!("{:.0}%", r * 100.0),
        Value::Flag(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Text(t) => t.clone(),
    }
}

/// A metric value in full, for metric tables: times with their date and the RFC 3339 UTC
/// instant, durations with their exact seconds.
pub fn detailed_value(value: &Value, tz: Tz) -> String {
    match value {
        Value::Time(at) => format!("{} ({})", crate::time::format_datetime(*at, tz), format_rfc3339(*at)),
        Value::Seconds(s) if s.abs() >= 60.0 => {
            format!("{} ({} s)", format_duration(*s), trim_number(*s))
        }
        other => human_value(other, tz),
    }
}

fn trim_number(n: f64) -> String {
    let text = format!("{n:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A finding's first cause that is not a finding (`Finding::root_cause`), filled in `tz`.
pub fn root_cause(finding: &crate::model::Finding, tz: Tz) -> Option<String> {
    finding.root_cause.as_ref().map(|root| fill_summary(root, &finding.metrics, tz))
}

/// Fills `{metric}` placeholders of a summary template.
pub fn fill_summary(template: &str, metrics: &[(&'static str, Value)], tz: Tz) -> String {
    let mut text = template.to_string();
    for (name, value) in metrics {
        let key = format!("{{{name}}}");
        if text.contains(&key) {
            text = text.replace(&key, &human_value(value, tz));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    #[test]
    fn summaries_are_filled_in_the_display_zone() {
        let at = DateTime::parse_from_rfc3339("2026-10-07T00:54:05.700Z").unwrap().with_timezone(&Utc);
        let metrics = vec![("selected_a_at", Value::Time(at)), ("delta_s", Value::Seconds(0.66))];
        assert_eq!(
            fill_summary("at {selected_a_at}, {delta_s} apart", &metrics, chrono_tz::Asia::Seoul),
            "at 09:54:05.70, 0.66 s apart"
        );
        assert_eq!(fill_summary("at {selected_a_at}", &metrics, chrono_tz::UTC), "at 00:54:05.70");
    }
}
