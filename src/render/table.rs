//! Tables for people (comfy-table). Colour and wrapping as the binary's `Terminal` allows
//! (`--color`, NO_COLOR, CLICOLOR_FORCE; the terminal's width, or COLUMNS or 80 when it says 0):
//! elsewhere no colour, and tables keep their natural width so that output piped into a file or a
//! ticket stays stable.
//!
//! On a terminal nothing is left for the terminal to wrap: it would cut a word, an id or a path
//! anywhere. leasetrace decides each grid column's width itself (`column_widths`: a header is never
//! cut, numbers and kinds never wrap, a path gives up its leading folders before its file name) and
//! comfy-table wraps the cells inside them; a grid that cannot fit is written as records
//! (`Style::records`), and a cited line wraps whole under its indent (`Style::evidence`).
//!
//! Every text that came from the case (paths, ids, raw lines, summaries filled with input values,
//! warnings, notes, rejection reasons) is made `visible` where it enters the table, before any
//! colour is painted: only the renderer's own codes and line ends reach the terminal.

use std::io::{self, Write};

use comfy_table::{Cell, ColumnConstraint, ContentArrangement, Table as Grid, Width, presets};
use unicode_width::UnicodeWidthStr;

use crate::model::report::View;
use crate::model::timeline::EventId;
use crate::model::{Event, Finding, Report, Severity};
use crate::time::format_datetime;

use super::{Renderer, detailed_value, fill_summary, human_value, layout};
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

    /// A grid that keeps its natural width: what a pipe or a file gets.
    fn grid(header: &[&str]) -> Grid {
        let mut grid = Grid::new();
        grid.load_style(presets::UTF8_FULL_CONDENSED);
        grid.set_content_arrangement(ContentArrangement::Disabled);
        grid.set_header(header.iter().map(Cell::new));
        grid
    }

    /// `rows` under `columns` as a grid printed `indent` columns in, each line of it ended by the
    /// caller. Elsewhere than a terminal, at its natural width. On a terminal, in the width: each
    /// column at least as wide as its header (a header is never cut) and, for a column that
    /// `Give::Never`, as its widest cell; the room left goes to the columns that can give, up to
    /// their natural width, and a path column gets shorter from the left. When even that is wider
    /// than the terminal, the rows are laid out one record each (`records`).
    fn table(&self, columns: &[(&str, Give)], rows: &[Vec<Entry>], indent: usize) -> String {
        let pad = " ".repeat(indent);
        let with_indent = |text: &str| text.lines().map(|line| format!("{pad}{line}")).collect::<Vec<_>>().join("\n");
        let Some(width) = self.wrap else {
            let headers: Vec<&str> = columns.iter().map(|(header, _)| *header).collect();
            let mut grid = Style::grid(&headers);
            for row in rows {
                grid.add_row(row.iter().map(Entry::full).collect::<Vec<_>>());
            }
            return with_indent(&grid.to_string());
        };
        let room = usize::from(width).saturating_sub(indent);
        let Some(widths) = column_widths(columns, rows, room) else {
            return self.records(columns, rows, indent);
        };
        // A path shortened to its column may leave room unused (a long folder goes whole): the
        // widths again, from the shortened paths, give that room to the other columns.
        let shortened: Vec<Vec<Entry>> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(&widths)
                    .map(|(entry, &w)| match entry {
                        Entry::Path(path, after) => Entry::Path(
                            layout::shorten_path(path, w.saturating_sub(layout::width(after))).into_owned(),
                            after.clone(),
                        ),
                        Entry::Text(text) => Entry::Text(text.clone()),
                    })
                    .collect()
            })
            .collect();
        let rows = &shortened;
        let widths = column_widths(columns, rows, room).unwrap_or(widths);
        let mut grid = Grid::new();
        grid.load_style(presets::UTF8_FULL_CONDENSED);
        // Every column's width is decided above; comfy-table wraps each cell inside it.
        grid.set_content_arrangement(ContentArrangement::Dynamic).set_width(u16::try_from(room).unwrap_or(u16::MAX));
        grid.set_header(columns.iter().map(|(header, _)| Cell::new(header)));
        for row in rows {
            grid.add_row(row.iter().zip(&widths).map(|(entry, &w)| entry.within(w)).collect::<Vec<_>>());
        }
        for (column, &w) in grid.column_iter_mut().zip(&widths) {
            // Absolute widths count the padding, one space each side.
            column.set_constraint(ColumnConstraint::Absolute(Width::Fixed(u16::try_from(w + 2).unwrap_or(u16::MAX))));
        }
        with_indent(&grid.to_string())
    }

    /// Rows one record each, for a terminal too narrow for their grid: a record opens with its
    /// first cell, and the others follow as `header: value`, packed on lines under it (a pair
    /// of columns reads `first: second`).
    fn records(&self, columns: &[(&str, Give)], rows: &[Vec<Entry>], indent: usize) -> String {
        let width = usize::from(self.wrap.unwrap_or(u16::MAX));
        let room = width.saturating_sub(indent).max(1);
        let pad = " ".repeat(indent);
        let mut lines: Vec<String> = Vec::new();
        for row in rows {
            let Some((lead, others)) = row.split_first() else { continue };
            if others.len() == 1 {
                let text = format!("{}: {}", lead.within(room), others[0].within(room.saturating_sub(4)));
                lines.push(Style::fill(&pad, &format!("{pad}    "), &text, width));
                continue;
            }
            lines.push(Style::fill(&pad, &format!("{pad}  "), &lead.within(room), width));
            let inner = room.saturating_sub(2).max(1);
            let mut line = String::new();
            for ((header, _), entry) in columns.iter().skip(1).zip(others) {
                let item = format!("{header}: {}", entry.within(inner.saturating_sub(layout::width(header) + 2)));
                if !line.is_empty() && layout::width(&line) + 3 + layout::width(&item) <= inner {
                    line.push_str(" · ");
                    line.push_str(&item);
                    continue;
                }
                if !line.is_empty() {
                    lines.push(format!("{pad}  {line}"));
                }
                if layout::width(&item) <= inner {
                    line = item;
                } else {
                    lines.push(Style::fill(&format!("{pad}  "), &format!("{pad}    "), &item, width));
                    line = String::new();
                }
            }
            if !line.is_empty() {
                lines.push(format!("{pad}  {line}"));
            }
        }
        lines.join("\n")
    }

    /// `text` after `first`, wrapped to the width with `rest` before every later line, on a
    /// terminal; one line elsewhere (output kept in a file stays stable, and greppable). `text` is
    /// the report's (it may quote the case) and is made `visible`; `first` may hold colour.
    fn paragraph(&self, first: &str, rest: &str, text: &str) -> String {
        match self.wrap {
            Some(width) => Style::fill(first, rest, &visible(text), usize::from(width)),
            None => format!("{first}{}", visible(text)),
        }
    }

    /// `text` after `first` wrapped to `width` with `rest` before every later line. On a very
    /// narrow terminal the hanging indent gives way, so that every line still holds some text.
    fn fill(first: &str, rest: &str, text: &str, width: usize) -> String {
        let width = width.max(1);
        let rest = rest.char_indices().nth(width / 2).map_or(rest, |(at, _)| &rest[..at]);
        // Ids such as run-0933-b and repeat:pr-review-sweep:… are never split at their hyphens.
        let options =
            textwrap::Options::new(width).subsequent_indent(rest).word_splitter(textwrap::WordSplitter::NoHyphenation);
        textwrap::fill(&format!("{first}{text}"), options)
    }

    /// A cited line: `lead` (`file:line  time  kind`) and the line as written, clipped at 140
    /// characters elsewhere than a terminal; on a terminal the whole line, wrapped under a
    /// hanging indent without dropping or changing a character of it (`layout::pieces`).
    fn evidence(&self, lead: &str, raw: &str) -> String {
        const FIRST: &str = "      ";
        const REST: &str = "        ";
        match self.wrap {
            None => format!("{FIRST}{lead}  {}", visible(&clip(raw, 140))),
            Some(width) => {
                let text = format!("{lead}  {}", visible(raw));
                let width = usize::from(width);
                // The `file:line` the lead opens with stays on one line: on a very narrow terminal
                // the first indent gives way to it. The indents are spaces: sliced anywhere, they
                // stay whole characters.
                let place = layout::width(lead.split("  ").next().unwrap_or(lead));
                let rest = &REST[..REST.len().min(width / 2)];
                let first = &FIRST[..FIRST.len().min(width / 2).min(width.saturating_sub(place))];
                let pieces = layout::pieces(&text, width - first.len(), width - rest.len());
                let mut out = String::with_capacity(text.len() + 16 * pieces.len());
                for (i, piece) in pieces.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    out.push_str(if i == 0 { first } else { rest });
                    out.push_str(piece);
                }
                out
            }
        }
    }

    /// `path`, shortened from the left on a terminal so that it and the `after` that follows it
    /// fit in `room` columns; as it is elsewhere.
    fn path<'a>(&self, path: &'a str, after: usize, room: usize) -> std::borrow::Cow<'a, str> {
        match self.wrap {
            Some(_) => layout::shorten_path(path, room.saturating_sub(after)),
            None => std::borrow::Cow::Borrowed(path),
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

/// How a column gives way on a terminal narrower than its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Give {
    /// Kept whole: numbers, kinds, formats, zones, times, metric names (`bullmq-params` cut in
    /// two reads as two words).
    Never,
    /// Wrapped at its spaces (a word wider than the column, inside it).
    Words,
    /// Shortened from the left by whole folders, its file name and what follows kept whole.
    Path,
}

/// A cell of a table: text, or a path and what follows it (`:348 (api-1)`), which a shortened
/// path keeps.
enum Entry {
    Text(String),
    Path(String, String),
}

impl Entry {
    fn full(&self) -> String {
        match self {
            Entry::Text(text) => text.clone(),
            Entry::Path(path, after) => format!("{path}{after}"),
        }
    }

    /// The cell for a column `room` columns wide: a path shortened from the left to fit, when it
    /// can; text as it is (the grid wraps it).
    fn within(&self, room: usize) -> String {
        match self {
            Entry::Text(text) => text.clone(),
            Entry::Path(path, after) => {
                format!("{}{after}", layout::shorten_path(path, room.saturating_sub(layout::width(after))))
            }
        }
    }

    /// The narrowest this cell may be in a column that gives as `give`.
    fn floor(&self, give: Give) -> usize {
        match (self, give) {
            (Entry::Path(path, after), Give::Path) => {
                layout::width(&layout::shorten_path(path, 0)) + layout::width(after)
            }
            (_, Give::Never) => layout::width(&self.full()),
            // Its longest word whole (an id cut in three reads as three ids), up to 40 columns:
            // a longer one is cut in a column of 40 rather than the table given up.
            _ => self.full().split(' ').map(layout::width).max().unwrap_or(0).min(40),
        }
    }
}

/// The width of each column of a table in `room` columns (its borders and padding included), or
/// `None` when even the narrowest it may be is wider: the floors of `Entry::floor` and each
/// header's width, then what is left shared between the columns that give, in proportion to what
/// they lack of their natural width.
fn column_widths(columns: &[(&str, Give)], rows: &[Vec<Entry>], room: usize) -> Option<Vec<usize>> {
    let chrome = 3 * columns.len() + 1;
    let natural: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, (header, _))| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|entry| layout::width(&entry.full()))
                .fold(layout::width(header), usize::max)
        })
        .collect();
    let floors: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, (header, give))| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|entry| entry.floor(*give))
                .fold(layout::width(header), usize::max)
        })
        .collect();
    let spare = room.checked_sub(chrome + floors.iter().sum::<usize>())?;
    let lacking: Vec<usize> = natural.iter().zip(&floors).map(|(n, f)| n.saturating_sub(*f)).collect();
    let lacked: usize = lacking.iter().sum();
    if lacked <= spare {
        return Some(natural.into_iter().zip(floors).map(|(n, f)| n.max(f)).collect());
    }
    let mut widths: Vec<usize> = floors.iter().zip(&lacking).map(|(f, l)| f + l * spare / lacked).collect();
    // What the rounding down left, a column each, to those still short of their natural width.
    let mut left = spare - widths.iter().zip(&floors).map(|(w, f)| w - f).sum::<usize>();
    for (w, n) in widths.iter_mut().zip(&natural) {
        if left > 0 && *w < *n {
            *w += 1;
            left -= 1;
        }
    }
    Some(widths)
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
        writeln!(out, "{}", style.paragraph("", "  ", &format!("leasetrace {command} · times in {}", tz.name())))?;
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

        let columns = [
            ("input", Give::Path),
            ("kind", Give::Never),
            ("format", Give::Never),
            ("zone", Give::Never),
            ("lines", Give::Never),
            ("events", Give::Never),
            ("ignored", Give::Never),
            ("rejected", Give::Never),
        ];
        let rows: Vec<Vec<Entry>> = report
            .inputs
            .iter()
            .map(|input| {
                vec![
                    Entry::Path(visible(&input.path).into_owned(), String::new()),
                    Entry::Text(input.kind.to_string()),
                    Entry::Text(input.format.to_string()),
                    Entry::Text(input.tz.as_deref().map_or_else(|| "-".into(), |tz| visible(tz).into_owned())),
                    Entry::Text(input.lines.to_string()),
                    Entry::Text(input.events.to_string()),
                    Entry::Text(input.ignored.to_string()),
                    Entry::Text(input.rejected.to_string()),
                ]
            })
            .collect();
        writeln!(out, "{}", style.table(&columns, &rows, 0))?;
        writeln!(out, "{}", style.paragraph("Lock parameters: ", "  ", &report.params.summary_line()))?;
        if let Some(bull) = &report.params.bull_version {
            writeln!(out, "{}", style.paragraph("Bull version: ", "  ", bull))?;
        } else if let Some(version) = &report.params.version {
            writeln!(out, "{}", style.paragraph("BullMQ version: ", "  ", version))?;
        } else if let Some(floor) = &report.params.version_at_least {
            // A dependency range: not the version, only a bound on it (see Assumptions).
            let text = format!("at least {floor} (a dependency range; the exact version is not known)");
            writeln!(out, "{}", style.paragraph("BullMQ version: ", "  ", &text))?;
        }

        if report.view != View::Timeline {
            writeln!(out)?;
            render_findings(report, &style, out)?;
        }

        let shown = report.shown_events();
        if !shown.is_empty() {
            writeln!(out)?;
            let title = if report.view == View::Timeline { "Timeline" } else { "Timeline (events cited by findings)" };
            writeln!(out, "{}", style.paragraph("", "  ", title))?;
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
                let columns =
                    [("time", Give::Never), ("kind", Give::Never), ("ids", Give::Words), ("source", Give::Path)];
                let rows: Vec<Vec<Entry>> = shown
                    .iter()
                    .map(|&id| {
                        let mut cells = std::array::from_fn(|_| String::new());
                        row(id, &mut cells);
                        let [time, kind, ids, _] = cells;
                        let event = report.timeline.get(id);
                        let mut after = format!(":{}", event.origin().line);
                        if let Some(instance) = event.instance {
                            let _ = std::fmt::Write::write_fmt(&mut after, format_args!(" ({})", visible(&instance)));
                        }
                        let path = visible(report.timeline.path(event)).into_owned();
                        vec![Entry::Text(time), Entry::Text(kind), Entry::Text(ids), Entry::Path(path, after)]
                    })
                    .collect();
                writeln!(out, "{}", style.table(&columns, &rows, 0))?;
            } else {
                stream_grid(out, header, &shown, row)?;
            }
        }

        let rejected: Vec<_> = report.inputs.iter().filter(|i| i.rejected > 0).collect();
        if !rejected.is_empty() {
            writeln!(out)?;
            writeln!(out, "Rejected lines")?;
            let room = style.wrap.map_or(usize::MAX, usize::from).saturating_sub(2);
            for input in rejected {
                let path = visible(&input.path);
                for rejection in &input.rejections {
                    let place = format!("{}:{}: ", style.path(&path, 12, room), rejection.line);
                    writeln!(out, "{}", style.paragraph(&format!("  {place}"), "    ", &rejection.reason))?;
                }
                let unlisted = input.rejected - input.rejections.len() as u64;
                if unlisted > 0 {
                    let place = format!("  {}: ", style.path(&path, 2, room));
                    writeln!(out, "{}", style.paragraph(&place, "    ", &format!("… and {unlisted} more")))?;
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
            writeln!(out, "{}", style.paragraph("", "  ", &super::verdict(report, threshold)))?;
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
        let text = "What happened: no finding (nothing in the inputs matches a known pattern)";
        writeln!(out, "{}", style.paragraph("", "  ", text))?;
        return writeln!(out);
    }
    writeln!(out, "{}", style.paragraph("", "  ", "What happened (most severe first; [n] is the finding below)"))?;
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
    let text = format!(
        "Findings: {} ({} error, {} warning, {} info)",
        report.findings.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    );
    writeln!(out, "{}", style.paragraph("", "  ", &text))?;
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
    let heading = format!("{} at {}", finding.code, format_datetime(finding.at, tz));
    writeln!(
        out,
        "{}",
        style.paragraph(&format!("[{number}] {} ", style.severity(finding.severity)), "    ", &heading)
    )?;
    writeln!(out, "{}", style.paragraph("    ", "    ", &fill_summary(&finding.summary, &finding.metrics, tz)))?;
    if !finding.caused_by.is_empty() {
        let causes: Vec<String> =
            finding.caused_by.iter().map(|&i| format!("[{}] {}", i + 1, report.findings[i].code)).collect();
        writeln!(out, "{}", style.paragraph("    follows from: ", "      ", &causes.join(", ")))?;
    }
    let rows: Vec<Vec<Entry>> = finding
        .metrics
        .iter()
        .map(|(name, value)| {
            vec![Entry::Text((*name).to_string()), Entry::Text(visible(&detailed_value(value, tz)).into_owned())]
        })
        .collect();
    writeln!(out, "{}", style.table(&[("metric", Give::Never), ("value", Give::Words)], &rows, 4))?;
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
        let line = event.origin().line.to_string();
        let room = style.wrap.map_or(usize::MAX, usize::from).saturating_sub(6);
        let path = style.path(report.timeline.path(event), line.len() + 1, room);
        let lead = format!("{}:{line}  {}  {}", visible(&path), format_datetime(event.at(), tz), event.kind.name());
        writeln!(out, "{}", style.evidence(&lead, report.raw(id)))?;
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
    fn a_column_is_never_narrower_than_its_header_its_numbers_or_a_file_name() {
        let columns = [("input", Give::Path), ("rejected", Give::Never), ("ids", Give::Words)];
        let rows = vec![vec![
            Entry::Path("/var/incidents/exports/server.log".into(), String::new()),
            Entry::Text("0".into()),
            Entry::Text("job=repeat:pr-review-sweep:1 name=x".into()),
        ]];
        let widths = column_widths(&columns, &rows, 60).expect("fits in 60");
        assert_eq!(widths.iter().sum::<usize>() + 10, 60, "the room is used: {widths:?}");
        assert!(widths[0] >= "…/server.log".chars().count(), "{widths:?}");
        assert_eq!(widths[1], "rejected".len(), "{widths:?}");
        assert!(widths[2] >= "job=repeat:pr-review-sweep:1".len(), "the longest word whole: {widths:?}");
        assert_eq!(column_widths(&columns, &rows, 57), None, "narrower than its floors: records");
        let natural = column_widths(&columns, &rows, 200).unwrap();
        assert_eq!(natural, [33, 8, 35], "room to spare: each column at its natural width");
    }

    #[test]
    fn the_streamed_grid_is_the_table_grid() {
        let rows = [
            ["2026-10-07 09:33:00", "job-active", "job=7 item=PR-4412", "server.log:348"],
            ["2026-10-07 09:54:05.7", "item-selected", "run=run-0933-b item=리뷰-1", "ledger.csv:21"],
        ];
        let mut grid = Style::grid(&["time", "kind", "ids", "source"]);
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
