//! Tables for people (comfy-table). Colour and wrapping as the binary's `Terminal` allows
//! (`--color`, NO_COLOR, CLICOLOR_FORCE; the terminal's width, or COLUMNS or 80 when it says 0):
//! elsewhere no colour, and tables keep their natural width so that output piped into a file or a
//! ticket stays stable.
//!
//! Every text that came from the case (paths, ids, raw lines, summaries filled with input values,
//! warnings, notes, rejection reasons) is made `visible` where it enters the table, before any
//! colour is painted: only the renderer's own codes and line ends reach the terminal.

use std::io::{self, Write};

use comfy_table::{Cell, ContentArrangement, Table as Grid, presets};
use unicode_width::UnicodeWidthStr;

use crate::model::report::View;
use crate::model::timeline::EventId;
use crate::model::{Event, Finding, Report, Severity};
use crate::time::format_datetime;

use super::{Renderer, detailed_value, fill_summary, human_value};
use crate::terminal::{Terminal, visible};

pub struct Table;

struct Style {
    color: bool,
    /// The width grids wrap to; `None`: they keep their natural width.
    wrap: Option<u16>,
}

impl Style {
    fn new(terminal: Terminal) -> Style {
        Style { color: terminal.color, wrap: terminal.width }
    }

    fn grid(&self, header: &[&str]) -> Grid {
        let mut grid = Grid::new();
        grid.load_style(presets::UTF8_FULL_CONDENSED);
        match self.wrap {
            // Set, not left to comfy-table: it would take a terminal's 0 columns as the width.
            Some(width) => grid.set_content_arrangement(ContentArrangement::Dynamic).set_width(width),
            None => grid.set_content_arrangement(ContentArrangement::Disabled),
        };
        grid.set_header(header.iter().map(Cell::new));
        grid
    }

    /// `grid` for a table printed `indent` columns in, so that it still fits the width.
    fn indented_grid(&self, header: &[&str], indent: u16) -> Grid {
        let mut grid = self.grid(header);
        if let Some(width) = self.wrap {
            grid.set_width(width.saturating_sub(indent).max(1));
        }
        grid
    }

    /// `text` after `first`, wrapped to the width with `rest` before every later line, on a
    /// terminal; one line elsewhere (output kept in a file stays stable, and greppable). `text` is
    /// the report's (it may quote the case) and is made `visible`; `first` may hold colour.
    fn paragraph(&self, first: &str, rest: &str, text: &str) -> String {
        let line = format!("{first}{}", visible(text));
        match self.wrap {
            Some(width) => {
                // Ids such as run-0933-b and repeat:pr-review-sweep:… are never split at their hyphens.
                let options = textwrap::Options::new(usize::from(width).max(rest.len() + 20))
                    .subsequent_indent(rest)
                    .word_splitter(textwrap::WordSplitter::NoHyphenation);
                textwrap::fill(&line, options)
            }
            None => line,
        }
    }

    /// `text` in `style` when colour is on (anstyle writes the SGR codes).
    fn paint(&self, text: &str, style: anstyle::Style) -> String {
        if self.color { format!("{style}{text}{style:#}") } else { text.to_string() }
    }

    fn warning(&self) -> String {
        self.paint("WARNING", anstyle::AnsiColor::Yellow.on_default().bold())
    }

    fn severity(&self, severity: Severity) -> String {
        let color = match severity {
            Severity::Error => anstyle::AnsiColor::Red,
            Severity::Warning => anstyle::AnsiColor::Yellow,
            Severity::Info => anstyle::AnsiColor::Cyan,
        };
        self.paint(&severity.name().to_uppercase(), color.on_default().bold())
    }
}

/// An event's ids as `job=… run=… item=…`, appended to `out`.
fn write_ids(out: &mut String, event: &Event) {
    use std::fmt::Write as _;
    let start = out.len();
    let part = |out: &mut String, label: &str, value: &dyn std::fmt::Display| {
        if out.len() > start {
            out.push(' ');
        }
        let _ = write!(out, "{label}{value}");
    };
    for (label, value) in [
        ("job=", event.job_id.as_deref()),
        ("name=", event.job_name.as_deref()),
        ("run=", event.run_id.as_deref()),
        ("item=", event.item.as_deref()),
        ("worker=", event.worker.as_deref()),
    ] {
        if let Some(value) = value {
            part(out, label, &value);
        }
    }
    let lease = event.lease();
    if let Some(generation) = lease.generation {
        part(out, "gen=", &generation);
    }
    if let Some(attempt) = lease.attempt {
        part(out, "attempt=", &attempt);
    }
    if let Some(accepted) = lease.accepted {
        part(out, "", &if accepted { "accepted" } else { "REJECTED" });
    }
    if let Some(key) = &lease.key {
        part(out, "key=", &key.as_str());
    }
    if let Some(settings) = event.settings() {
        part(out, "", &settings.describe());
    }
}

/// Makes a cell the case filled `visible`, in place (no copy when nothing needs it).
fn make_visible(cell: &mut String) {
    if let std::borrow::Cow::Owned(shown) = visible(cell) {
        *cell = shown;
    }
}

/// The width of a cell in columns: its length when it is printable ASCII, as nearly all are.
fn width(cell: &str) -> usize {
    if cell.bytes().all(|b| (b' '..=b'~').contains(&b)) { cell.len() } else { cell.width() }
}

/// The same grid as `Style::grid` without wrapping, written row by row: a timeline of millions
/// of events is formatted twice (once to measure the columns) instead of being held as a table.
/// `row` writes a row's cells into the (cleared) buffers it is given, reused for every row.
fn stream_grid<const N: usize>(
    out: &mut dyn Write,
    header: [&str; N],
    ids: &[EventId],
    row: impl Fn(EventId, &mut [String; N]),
) -> io::Result<()> {
    let mut cells: [String; N] = std::array::from_fn(|_| String::new());
    let fill = |id: EventId, cells: &mut [String; N]| {
        cells.iter_mut().for_each(String::clear);
        row(id, cells);
    };
    let mut widths = header.map(width);
    for &id in ids {
        fill(id, &mut cells);
        for (width, cell) in widths.iter_mut().zip(&cells) {
            *width = (*width).max(self::width(cell));
        }
    }
    let rule = |left: &str, fill: &str, middle: &str, right: &str| {
        let parts: Vec<String> = widths.iter().map(|&w| fill.repeat(w + 2)).collect();
        format!("{left}{}{right}", parts.join(middle))
    };
    let mut line = String::new();
    let mut write_line = |out: &mut dyn Write, cells: &[&str]| {
        line.clear();
        line.push('│');
        for (column, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
            if column > 0 {
                line.push('┆');
            }
            line.push(' ');
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', w - width(cell) + 1));
        }
        line.push_str("│\n");
        out.write_all(line.as_bytes())
    };
    writeln!(out, "{}", rule("┌", "─", "┬", "┐"))?;
    write_line(out, &header)?;
    writeln!(out, "{}", rule("╞", "═", "╪", "╡"))?;
    for &id in ids {
        fill(id, &mut cells);
        write_line(out, &cells.each_ref().map(String::as_str))?;
    }
    writeln!(out, "{}", rule("└", "─", "┴", "┘"))
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

impl Renderer for Table {
    fn name(&self) -> &'static str {
        "table"
    }

    /// Raw lines are printed only as the evidence of findings, never in the timeline view.
    fn shows_raw(&self, view: View) -> bool {
        view != View::Timeline
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        self.render_to(report, Terminal::plain(), out)
    }

    fn render_to(&self, report: &Report, terminal: Terminal, out: &mut dyn Write) -> io::Result<()> {
        let style = Style::new(terminal);
        let tz = report.display_tz;
        let command = match report.view {
            View::Timeline => "timeline",
            View::Analyze => "analyze",
            View::Check(_) => "check",
        };
        writeln!(out, "leasetrace {command} · times in {}", tz.name())?;
        writeln!(out)?;
        // Before anything else: what makes the numbers below untrustworthy.
        for warning in &report.warnings {
            writeln!(out, "{}", style.paragraph(&format!("{}: ", style.warning()), "  ", &warning.message))?;
        }
        if !report.warnings.is_empty() {
            writeln!(out)?;
        }
        // Then what happened: the warnings above qualify it, the findings below detail it.
        if report.view != View::Timeline {
            render_headline(report, &style, out)?;
        }

        let mut inputs = style.grid(&["input", "kind", "format", "zone", "lines", "events", "ignored", "rejected"]);
        for input in &report.inputs {
            inputs.add_row(vec![
                visible(&input.path).into_owned(),
                input.kind.to_string(),
                input.format.to_string(),
                input.tz.as_deref().map_or_else(|| "-".into(), |tz| visible(tz).into_owned()),
                input.lines.to_string(),
                input.events.to_string(),
                input.ignored.to_string(),
                input.rejected.to_string(),
            ]);
        }
        writeln!(out, "{inputs}")?;
        writeln!(out, "{}", style.paragraph("Lock parameters: ", "  ", &report.params.summary_line()))?;
        if let Some(version) = &report.params.version {
            writeln!(out, "BullMQ version: {}", visible(version))?;
        } else if let Some(floor) = &report.params.version_at_least {
            // A dependency range: not the version, only a bound on it (see Assumptions).
            writeln!(
                out,
                "BullMQ version: at least {} (a dependency range; the exact version is not known)",
                visible(floor)
            )?;
        }

        if report.view != View::Timeline {
            writeln!(out)?;
            render_findings(report, &style, out)?;
        }

        let shown = report.shown_events();
        if !shown.is_empty() {
            writeln!(out)?;
            let title = if report.view == View::Timeline { "Timeline" } else { "Timeline (events cited by findings)" };
            writeln!(out, "{title}")?;
            let row = |id: EventId, cells: &mut [String; 4]| {
                use std::fmt::Write as _;
                let event = report.timeline.get(id);
                crate::time::write_datetime(&mut cells[0], event.at(), tz);
                cells[1].push_str(event.kind.name());
                write_ids(&mut cells[2], event);
                let _ = write!(cells[3], "{}:{}", report.timeline.path(event), event.origin().line);
                if let Some(instance) = event.instance {
                    let _ = write!(cells[3], " ({instance})");
                }
                // The ids and the path are the case's.
                make_visible(&mut cells[2]);
                make_visible(&mut cells[3]);
            };
            let header = ["time", "kind", "ids", "source"];
            if style.wrap.is_some() {
                let mut grid = style.grid(&header);
                for id in shown {
                    let mut cells = std::array::from_fn(|_| String::new());
                    row(id, &mut cells);
                    grid.add_row(cells.to_vec());
                }
                writeln!(out, "{grid}")?;
            } else {
                stream_grid(out, header, &shown, row)?;
            }
        }

        let rejected: Vec<_> = report.inputs.iter().filter(|i| i.rejected > 0).collect();
        if !rejected.is_empty() {
            writeln!(out)?;
            writeln!(out, "Rejected lines")?;
            for input in rejected {
                let path = visible(&input.path);
                for rejection in &input.rejections {
                    writeln!(out, "  {path}:{}: {}", rejection.line, visible(&rejection.reason))?;
                }
                let unlisted = input.rejected - input.rejections.len() as u64;
                if unlisted > 0 {
                    writeln!(out, "  {path}: … and {unlisted} more")?;
                }
            }
        }
        if !report.assumptions.is_empty() {
            writeln!(out)?;
            writeln!(out, "Assumptions")?;
            for assumption in &report.assumptions {
                writeln!(out, "{}", style.paragraph("  - ", "    ", assumption))?;
            }
        }
        if let View::Check(threshold) = report.view {
            writeln!(out)?;
            writeln!(out, "{}", super::verdict(report, threshold))?;
        }
        Ok(())
    }
}

/// What happened, first: the chains, each from its effect back to its first cause.
fn render_headline(report: &Report, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    use super::headline::Role;
    let lines = super::headline::lines(report);
    if lines.is_empty() {
        // Said at the top too: a clean report is an answer, not a missing section.
        writeln!(out, "What happened: no finding (nothing in the inputs matches a known pattern)")?;
        return writeln!(out);
    }
    writeln!(out, "What happened (most severe first; [n] is the finding below)")?;
    for line in &lines {
        let indent = "  ".repeat(line.depth + 1);
        let finding = match (line.severity, line.code, line.number) {
            (Some(severity), Some(code), Some(number)) => format!("{} [{number}] {code}: ", style.severity(severity)),
            _ => String::new(),
        };
        let lead = match line.role {
            Role::Effect | Role::More => "",
            Role::CausedBy => "← caused by ",
            Role::RootCause => "← because ",
            Role::Also => "also ",
        };
        let rest = format!("{indent}    ");
        writeln!(out, "{}", style.paragraph(&format!("{indent}{lead}{finding}"), &rest, &line.text))?;
    }
    writeln!(out)
}

fn render_findings(report: &Report, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    if report.findings.is_empty() {
        return writeln!(out, "Findings: none");
    }
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    writeln!(
        out,
        "Findings: {} ({} error, {} warning, {} info)",
        report.findings.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    )?;
    for (index, finding) in report.findings.iter().enumerate() {
        writeln!(out)?;
        render_finding(report, style, index + 1, finding, out)?;
    }
    Ok(())
}

fn render_finding(
    report: &Report,
    style: &Style,
    number: usize,
    finding: &Finding,
    out: &mut dyn Write,
) -> io::Result<()> {
    let tz = report.display_tz;
    writeln!(
        out,
        "[{number}] {} {} at {}",
        style.severity(finding.severity),
        finding.code,
        format_datetime(finding.at, tz)
    )?;
    writeln!(out, "{}", style.paragraph("    ", "    ", &fill_summary(&finding.summary, &finding.metrics, tz)))?;
    if !finding.caused_by.is_empty() {
        let causes: Vec<String> =
            finding.caused_by.iter().map(|&i| format!("[{}] {}", i + 1, report.findings[i].code)).collect();
        writeln!(out, "    follows from: {}", causes.join(", "))?;
    }
    let mut metrics = style.indented_grid(&["metric", "value"], 4);
    for (name, value) in &finding.metrics {
        metrics.add_row(vec![(*name).to_string(), visible(&detailed_value(value, tz)).into_owned()]);
    }
    for line in metrics.to_string().lines() {
        writeln!(out, "    {line}")?;
    }
    if !finding.derivations.is_empty() {
        writeln!(out, "    arithmetic:")?;
        for step in &finding.derivations {
            let value = finding.get(step.result).map(|v| format!(" = {}", human_value(v, tz))).unwrap_or_default();
            let text = format!("{} = {}{value}", step.result, step.formula);
            writeln!(out, "{}", style.paragraph("      ", "          ", &text))?;
        }
    }
    writeln!(out, "    evidence:")?;
    for &id in &finding.evidence {
        let event = report.timeline.get(id);
        // Clipped first, then made visible: an escape is never cut in two.
        writeln!(
            out,
            "      {}:{}  {}  {}  {}",
            visible(report.timeline.path(event)),
            event.origin().line,
            format_datetime(event.at(), tz),
            event.kind.name(),
            visible(&clip(report.raw(id), 140))
        )?;
    }
    if !finding.notes.is_empty() {
        writeln!(out, "    notes:")?;
        for note in &finding.notes {
            writeln!(out, "{}", style.paragraph("      - ", "        ", note))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    #[test]
    fn the_streamed_grid_is_the_table_grid() {
        let rows = [
            ["2026-10-07 09:33:00", "job-active", "job=7 item=PR-4412", "server.log:348"],
            ["2026-10-07 09:54:05.7", "item-selected", "run=run-0933-b item=리뷰-1", "ledger.csv:21"],
        ];
        let style = Style { color: false, wrap: None };
        let mut grid = style.grid(&["time", "kind", "ids", "source"]);
        for row in rows {
            grid.add_row(row.to_vec());
        }
        let mut streamed = Vec::new();
        stream_grid(&mut streamed, ["time", "kind", "ids", "source"], &[0, 1], |i, cells| {
            for (cell, text) in cells.iter_mut().zip(rows[i as usize]) {
                cell.push_str(text);
            }
        })
        .unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), format!("{grid}\n"));
    }
}
