//! A postmortem draft in GitHub-flavoured Markdown, to paste into a GitHub issue or a wiki page
//! (wire shape and a sample in docs/outputs/markdown.md).
//!
//! The order is the order a postmortem is read in: what happened (the headline), what makes the
//! numbers doubtful (GitHub alert blocks), the incident timeline of the events the findings cite
//! with what each one means in the incident (`roles`), each finding with its arithmetic, its
//! evidence and what to change, then the inputs, the lock parameters and the assumptions.
//!
//! Text that came from the inputs (ids, details, raw lines) is never written as Markdown: in
//! prose and table cells it goes through `text` (every character Markdown or HTML could read is
//! escaped, a `|` as `\|` so that it cannot end a cell), ids through `code` (a code span whose
//! backtick fence is longer than any run in the id; `cell_code` in a table, where a `|` is `\|`
//! even in code), raw lines only inside fenced blocks whose
//! fence is longer than any run of backticks in them. The only HTML written is the renderer's
//! own `<br>` between the meanings of one timeline row, the `<details>` that folds a finding's
//! metrics and the `<a name="finding-4">` in each finding's heading, which every `[4]` links to.
//! Sources are `file:line` in code, not links: a path of the machine that ran the analysis is no
//! link on the page it is pasted into.
//!
//! The draft is for a GitHub issue or comment, which holds at most 65,536 characters: a case with
//! many findings is drafted with less of each (`Detail::STEPS`) until it fits, every finding
//! keeping its heading, and the page ends by saying what it left out and where that is. A line of
//! a text block is cut at 100 columns (`fenced_wrapped`), so that no block scrolls sideways.
//!
//! Before any of that, text from the inputs is made visible (`terminal::visible_line` in prose,
//! cells and spans, `terminal::visible` in fenced blocks): a control character, a bidi override or
//! another invisible character is written out (`\x1b`, `<U+202E>`), never copied into the page,
//! where a terminal that shows the draft (`cat`, a pager) would obey it.

use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::model::report::View;
use crate::model::timeline::EventId;
use crate::model::{Event, EventKind, Finding, Report, Severity, Value};
use crate::time::format_clock;

use super::{Renderer, detailed_value, human_value, roles};

pub struct Markdown;

impl Renderer for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    /// A whole timeline is shown in words (kind, ids, detail), never its raw lines; a finding's
    /// evidence shows its lines.
    fn shows_raw(&self, view: View) -> bool {
        view != View::Timeline
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        if report.view != View::Timeline {
            return out.write_all(postmortem(report, BUDGET).as_bytes());
        }
        // A whole timeline is a table of every event, written as it goes: no budget holds it.
        let mut page = String::new();
        write_title(report, &mut page);
        write_warnings(report, &mut page);
        out.write_all(page.as_bytes())?;
        write_whole_timeline(report, out)?;
        page.clear();
        write_inputs(report, &mut page);
        write_params(report, &mut page);
        write_assumptions(report, &mut page);
        out.write_all(page.as_bytes())
    }
}

/// The most characters the draft may hold: GitHub refuses an issue, a pull request's description
/// or a comment longer than 65,536 characters.
pub const BUDGET: usize = 65_536;

/// Where a code block's line is cut: wider than this, GitHub shows a block that scrolls sideways.
pub const WRAP: usize = 100;

/// What begins the continuation of a cut line in a code block: a mark no one reads as part of
/// the line (it is not ASCII, and a cited line is shown as it was written).
pub const CONTINUED: &str = "  ↳ ";

/// The size of `page` as GitHub counts it when a browser sends it: characters, each line break
/// two (a form sends `\r\n`).
pub fn size(page: &str) -> usize {
    page.chars().count() + page.bytes().filter(|&b| b == b'\n').count()
}

/// How much of each finding a draft holds. The first that fits the budget is written, from
/// everything down to a heading per finding; what a draft leaves out is said at its end.
// Each flag is one part of a finding, shown or left out on its own: no state machine hides here.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, Copy)]
struct Detail {
    metrics: bool,
    /// The cited lines shown per finding (`None`: all of them).
    evidence: Option<usize>,
    chart: bool,
    what_to_change: bool,
    notes: bool,
    timeline: bool,
    arithmetic: bool,
    /// The summary and "Follows from" (else a finding is its heading alone).
    summary: bool,
}

impl Detail {
    const ALL: Detail = Detail {
        metrics: true,
        evidence: None,
        chart: true,
        what_to_change: true,
        notes: true,
        timeline: true,
        arithmetic: true,
        summary: true,
    };

    /// From everything down, each step leaving out more of what the JSON report (or `explain`)
    /// still holds, what a reader of the draft misses least first: the metrics (folded anyway),
    /// cited lines past the third, the chart, the documentation's advice, the notes, the
    /// timeline (each finding keeps its evidence), cited lines past the first, the arithmetic,
    /// the last cited line, and the summaries.
    const STEPS: [Detail; 11] = {
        let a = Detail { metrics: false, ..Detail::ALL };
        let b = Detail { evidence: Some(3), ..a };
        let c = Detail { chart: false, ..b };
        let d = Detail { what_to_change: false, ..c };
        let e = Detail { notes: false, ..d };
        let f = Detail { timeline: false, ..e };
        let g = Detail { evidence: Some(1), ..f };
        let h = Detail { arithmetic: false, ..g };
        let i = Detail { evidence: Some(0), ..h };
        let j = Detail { summary: false, ..i };
        [Detail::ALL, a, b, c, d, e, f, g, h, i, j]
    };
}

/// The postmortem draft in at most `budget` characters (`size`): the first `Detail` whose draft
/// fits; when not even headings fit, the findings the budget leaves no room for are counted
/// instead of listed.
fn postmortem(report: &Report, budget: usize) -> String {
    let mut page = String::new();
    for detail in Detail::STEPS {
        page = draft(report, detail, report.findings.len());
        if size(&page) <= budget {
            return page;
        }
    }
    let mut listed = report.findings.len();
    let headings_only = Detail::STEPS[Detail::STEPS.len() - 1];
    while listed > 0 && size(&page) > budget {
        // A tenth fewer each time (at least one): a few drafts even for thousands of findings.
        listed -= (listed / 10).max(1);
        page = draft(report, headings_only, listed);
    }
    page
}

/// `# Postmortem draft` (or `# Timeline`) and the line under it.
fn write_title(report: &Report, page: &mut String) {
    let command = match report.view {
        View::Timeline => "timeline",
        View::Analyze => "analyze",
        View::Check(_) => "check",
    };
    if report.view == View::Timeline {
        let _ = writeln!(page, "# Timeline\n");
    } else {
        let _ = writeln!(page, "# Postmortem draft\n");
    }
    let _ = writeln!(
        page,
        "Drafted by `leasetrace {command}` from {} · times in {}",
        count(report.inputs.len(), "input", "inputs"),
        zone_label(report, report.display_tz)
    );
}

/// The draft of `analyze` or `check` with `detail` of each finding and the first `listed`
/// findings; what it leaves out is said in a last section.
fn draft(report: &Report, detail: Detail, listed: usize) -> String {
    let mut page = String::new();
    let mut left_out = LeftOut::default();
    write_title(report, &mut page);
    write_headline(report, &mut page);
    write_warnings(report, &mut page);
    if detail.timeline {
        write_incident_timeline(report, &mut page);
    } else if !report.findings.is_empty() {
        left_out.parts.push("the timeline of the events the findings cite".into());
    }
    if detail.chart {
        write_picture(report, &mut page);
    } else if !super::chart::chart(report).lanes.is_empty() {
        left_out.parts.push("the chart (`--format mermaid` draws it)".into());
    }
    write_findings(report, detail, listed, &mut page, &mut left_out);
    write_inputs(report, &mut page);
    write_params(report, &mut page);
    write_assumptions(report, &mut page);
    if let View::Check(threshold) = report.view {
        let _ = writeln!(page, "\n## Check\n");
        let _ = match report.failing() {
            0 => writeln!(page, "Check passed: no finding at or above {}.", threshold.name()),
            n => writeln!(page, "Check failed: {n} finding(s) at or above {}.", threshold.name()),
        };
    }
    left_out.write(report, &mut page);
    page
}

/// What a draft held to the budget leaves out, said at its end.
#[derive(Debug, Default)]
struct LeftOut {
    parts: Vec<String>,
    metrics: usize,
    evidence: usize,
    what_to_change: Vec<&'static str>,
    notes: usize,
    arithmetic: usize,
    summaries: usize,
    findings: usize,
}

impl LeftOut {
    fn write(&self, report: &Report, page: &mut String) {
        let mut parts = self.parts.clone();
        if self.metrics > 0 {
            parts.push(format!("the metrics of {}", count(self.metrics, "finding", "findings")));
        }
        if self.evidence > 0 {
            parts.push(format!("{} of evidence", count(self.evidence, "cited line", "cited lines")));
        }
        if !self.what_to_change.is_empty() {
            let codes: Vec<String> = self.what_to_change.iter().map(|code| format!("`{code}`")).collect();
            parts.push(format!("\"What to change\" for {} (`leasetrace explain CODE` prints it)", codes.join(", ")));
        }
        for (n, what) in [(self.notes, "notes"), (self.arithmetic, "arithmetic"), (self.summaries, "summary")] {
            if n > 0 {
                parts.push(format!("the {what} of {}", count(n, "finding", "findings")));
            }
        }
        if self.findings > 0 {
            parts.push(format!(
                "{} past the first {}",
                count(self.findings, "finding", "findings"),
                report.findings.len() - self.findings
            ));
        }
        if parts.is_empty() {
            return;
        }
        let command = match report.view {
            View::Check(_) => "check",
            _ => "analyze",
        };
        let _ = writeln!(page, "\n## Left out\n");
        let _ = writeln!(
            page,
            "This draft is held to {},{:03} characters, the most GitHub takes in an issue or a comment. Left out:\n",
            BUDGET / 1000,
            BUDGET % 1000
        );
        for part in &parts {
            let _ = writeln!(page, "- {part}");
        }
        let _ = writeln!(
            page,
            "\nAll of it is in the JSON report: the same command with `--format json` (`leasetrace {command} CASE \
             --format json`), or on a terminal with `--format table`. How the draft is cut: `leasetrace docs \
             outputs/markdown`."
        );
    }
}

// ---------------------------------------------------------------- escaping

/// Text from anywhere (an input, a template filled with input values) as Markdown that reads
/// as that text: every ASCII punctuation character that Markdown, GitHub's extensions or HTML
/// give a meaning inline is backslash-escaped (CommonMark lets any ASCII punctuation be), a line
/// break becomes a space (a table row is one line). Safe in paragraphs, list items and cells.
pub fn text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 8);
    for c in one_line(raw).chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '#' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `raw` on one line: each line break (`\r\n`, `\n`, `\r`) and tab a space, every other control
/// or invisible character written out (`terminal::visible_line`).
fn one_line(raw: &str) -> String {
    crate::terminal::visible_line(raw).into_owned()
}

/// `text` at the start of a block: a leading list marker, ordered-list number or heading rule
/// cannot make the paragraph something else.
fn paragraph(raw: &str) -> String {
    block_start(text(raw))
}

/// Already-escaped Markdown at the start of a block: a leading `-`, `+`, `=` or `1.` is escaped
/// so that the paragraph stays one.
fn block_start(escaped: String) -> String {
    let digits = escaped.bytes().take_while(u8::is_ascii_digit).count();
    let first = escaped.as_bytes().first().copied();
    if matches!(first, Some(b'-' | b'+' | b'=')) {
        format!("\\{escaped}")
    } else if digits > 0 && matches!(escaped.as_bytes().get(digits), Some(b'.' | b')')) {
        format!("{}\\{}", &escaped[..digits], &escaped[digits..])
    } else {
        escaped
    }
}

/// A summary template (`{metric}` placeholders) filled as Markdown: the template's own words
/// escaped as `text`, a text value (an id, an item, a reason: words from the inputs) as a code
/// span, so that not even GitHub's autolinks, `#123` references or `@name` mentions are made of
/// it, and every other value as `human_value` writes it in the display zone.
pub fn fill(template: &str, metrics: &[(&'static str, Value)], tz: Tz, place: Place) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            metrics.iter().find(|(n, _)| *n == name).map(|(_, value)| (close, value))
        });
        if let Some((close, value)) = value {
            out.push_str(&text(&rest[..open]));
            out.push_str(&match value {
                Value::Text(words) => place.code(words),
                other => text(&human_value(other, tz)),
            });
            rest = &after[close + 1..];
        } else {
            out.push_str(&text(&rest[..=open]));
            rest = after;
        }
    }
    out.push_str(&text(rest));
    out
}

/// Where a piece of Markdown goes: a table cell needs its `|` escaped, even in code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Prose,
    Cell,
}

impl Place {
    fn code(self, raw: &str) -> String {
        match self {
            Place::Prose => code(raw),
            Place::Cell => cell_code(raw),
        }
    }
}

/// An inline code span that shows `raw` as it is, in prose: the fence is one backtick longer
/// than the longest run in it, padded with a space when the text starts or ends with a backtick
/// or a space (CommonMark strips one space from each end of a span that has both).
pub fn code(raw: &str) -> String {
    span(&one_line(raw))
}

/// `code` in a table cell: a `|` is `\|` (GitHub splits table rows on any unescaped `|`, code
/// spans included, and takes the backslash out again). A `\` right before a `|` cannot be
/// written in a span (GitHub would read `\\|` as an escaped backslash and a cell's end), so
/// the pair is spaced apart: `\ |`.
pub fn cell_code(raw: &str) -> String {
    span(&one_line(raw).replace("\\|", "\\ |").replace('|', "\\|"))
}

fn span(flat: &str) -> String {
    if flat.is_empty() {
        return "` `".to_string();
    }
    let longest = longest_run(flat, '`');
    let fence = "`".repeat(longest + 1);
    let pad = flat.starts_with('`') || flat.ends_with('`') || (flat.starts_with(' ') && flat.ends_with(' '));
    let space = if pad { " " } else { "" };
    format!("{fence}{space}{flat}{space}{fence}")
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// A fenced code block of `lines`: the backtick fence is longer than any run of backticks in
/// them (at least three), so no line can close it; nothing inside is read as Markdown or HTML.
/// Each line is made `visible` (a line break inside one is written `\n`): a block shows raw
/// lines as they are, but never hands their control characters to a terminal.
fn fenced(page: &mut String, info: &str, lines: &[String]) {
    let longest = lines.iter().map(|line| longest_run(line, '`')).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(page, "{fence}{info}");
    for line in lines {
        let _ = writeln!(page, "{}", crate::terminal::visible(line));
    }
    let _ = writeln!(page, "{fence}");
}

/// `fenced` for text a reader reads in the block (evidence, arithmetic): a line wider than `WRAP`
/// is cut (`layout::pieces`: after a space when one fits) and each continuation begins with
/// `CONTINUED`, so that the block never scrolls sideways. Nothing of the line is dropped: the
/// pieces, put back together without the marks, are the line as `visible` writes it.
fn fenced_wrapped(page: &mut String, lines: &[String]) {
    let mut cut: Vec<String> = Vec::with_capacity(lines.len());
    for line in lines {
        let shown = crate::terminal::visible(line);
        let pieces = super::layout::pieces(&shown, WRAP, WRAP - super::layout::width(CONTINUED));
        cut.push(pieces.join(&format!("\n{CONTINUED}")));
    }
    // Already visible: `fenced` leaves it as it is (a `\n` here is the cut's own line break).
    let longest = cut.iter().map(|line| longest_run(line, '`')).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(page, "{fence}text");
    for line in &cut {
        let _ = writeln!(page, "{line}");
    }
    let _ = writeln!(page, "{fence}");
}

/// One table row of already-escaped cells.
fn row(page: &mut String, cells: &[&str]) {
    page.push('|');
    for cell in cells {
        page.push(' ');
        page.push_str(cell);
        page.push_str(" |");
    }
    page.push('\n');
}

fn header(page: &mut String, cells: &[&str]) {
    row(page, cells);
    row(page, &vec!["---"; cells.len()]);
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

// ---------------------------------------------------------------- times

/// The display zone's abbreviation at `at` (`KST`; `CET` or `CEST` by the date): chrono-tz's
/// `%Z`. A zone without one gives its offset (`+04`).
fn abbreviation(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz).format("%Z").to_string()
}

/// `Asia/Seoul (KST)`, with every abbreviation the report's times use.
fn zone_label(report: &Report, tz: Tz) -> String {
    let mut abbreviations: Vec<String> = Vec::new();
    let timeline = &report.timeline;
    let ends = [timeline.events().first(), timeline.events().last()];
    for at in ends.into_iter().flatten().map(Event::at).chain(report.findings.iter().map(|f| f.at)) {
        let abbreviation = abbreviation(at, tz);
        if !abbreviations.contains(&abbreviation) {
            abbreviations.push(abbreviation);
        }
    }
    if abbreviations.is_empty() || abbreviations == [tz.name()] {
        tz.name().to_string()
    } else {
        format!("{} ({})", tz.name(), abbreviations.join(", "))
    }
}

/// A time for a timeline row: `09:54:05.70 KST`, with its date in front unless `date` is the
/// only date of the table (said once above it).
fn stamp(at: DateTime<Utc>, tz: Tz, date: Option<&str>) -> String {
    let local_date = at.with_timezone(&tz).format("%Y-%m-%d").to_string();
    let clock = format_clock(at, tz);
    let abbreviation = abbreviation(at, tz);
    if date == Some(local_date.as_str()) {
        format!("{clock} {abbreviation}")
    } else {
        format!("{local_date} {clock} {abbreviation}")
    }
}

/// The one local date of `times`, if they all fall on it.
fn single_date(times: impl Iterator<Item = DateTime<Utc>>, tz: Tz) -> Option<String> {
    let mut date: Option<String> = None;
    for at in times {
        let this = at.with_timezone(&tz).format("%Y-%m-%d").to_string();
        match &date {
            None => date = Some(this),
            Some(seen) if *seen != this => return None,
            Some(_) => {}
        }
    }
    date
}

// ---------------------------------------------------------------- headline and warnings

/// What happened, first: the headline every human format opens with (`render::headline`), its
/// chains as nested lists, each from its final effect back to its first cause. The lines' texts
/// are filled again here from the same templates, with `fill`: values from the inputs become code.
fn write_headline(report: &Report, page: &mut String) {
    use super::headline::Role;
    let tz = report.display_tz;
    let _ = writeln!(page, "\n## What happened\n");
    let lines = super::headline::lines(report);
    if lines.is_empty() {
        let _ = writeln!(page, "No finding: nothing in the inputs matches a known pattern.");
        return;
    }
    let _ = writeln!(page, "Most severe first; \\[n\\] is the finding of that number below.\n");
    // The finding of the line above: a root cause line is that finding's `root_cause`.
    let mut above: Option<&Finding> = None;
    for line in &lines {
        let finding = line.number.and_then(|n| report.findings.get(n - 1));
        let label = match (line.severity, line.code, line.number) {
            (Some(severity), Some(code), Some(number)) => {
                format!("**{}** {} `{code}`: ", severity_label(severity), number_label(number))
            }
            _ => String::new(),
        };
        let lead = match line.role {
            Role::Effect | Role::More => "",
            Role::CausedBy => "caused by ",
            Role::RootCause => "because ",
            Role::Also => "also ",
        };
        let words = match (line.role, finding, above) {
            (_, Some(finding), _) => fill(finding.headline_template(), &finding.metrics, tz, Place::Prose),
            (Role::RootCause, None, Some(cause)) => match &cause.root_cause {
                Some(template) => fill(template, &cause.metrics, tz, Place::Prose),
                None => text(&line.text),
            },
            (Role::More, _, _) => link_numbers(&text(&line.text)),
            _ => text(&line.text),
        };
        let _ = writeln!(page, "{}- {lead}{label}{words}", "  ".repeat(line.depth));
        if finding.is_some() {
            above = finding;
        }
    }
}

/// `\[4\]`, a link to the finding's heading: a finding's number as the headline, the timeline and
/// "Follows from" write it.
fn number_label(number: usize) -> String {
    format!("[\\[{number}\\]](#{})", anchor(number))
}

/// The name of the anchor each finding's heading holds (`<a name="finding-4">`). GitHub keeps an
/// anchor of the page's own (it writes `user-content-finding-4` and its script follows
/// `#finding-4` to it); a heading's generated id would change with its text.
pub fn anchor(number: usize) -> String {
    format!("finding-{number}")
}

/// The `\[n\]` in a line of the headline's own words (`1 info finding: lock-headroom \[5\]`),
/// each made a link to its finding.
fn link_numbers(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len() + 32);
    let mut rest = escaped;
    while let Some(open) = rest.find("\\[") {
        let after = &rest[open + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[digits..].starts_with("\\]").then(|| after[..digits].parse::<usize>().ok()).flatten() {
            Some(number) if digits > 0 => {
                out.push_str(&rest[..open]);
                out.push_str(&number_label(number));
                rest = &after[digits + 2..];
            }
            _ => {
                out.push_str(&rest[..open + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn severity_label(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "ERROR",
        Severity::Warning => "WARNING",
        Severity::Info => "INFO",
    }
}

/// Each warning as a GitHub alert block (`> [!WARNING]`), one block each: GitHub draws an alert
/// only from a blockquote whose first line is the marker alone.
fn write_warnings(report: &Report, page: &mut String) {
    for warning in &report.warnings {
        let _ = writeln!(page, "\n> [!WARNING]\n> {}", paragraph(&warning.message));
    }
}

// ---------------------------------------------------------------- timelines

/// The job name and queue of every job the events of `ids` name, when all of these jobs have
/// the same one: said once above the table instead of on every row. A job's name or queue is
/// what any of its events says (a ledger row may leave out the queue its log line gives); a job
/// that none of its events names leaves nothing to share.
#[derive(Debug, Default, PartialEq)]
struct Shared {
    name: Option<&'static str>,
    queue: Option<&'static str>,
}

impl Shared {
    fn of(report: &Report, ids: &[EventId]) -> Shared {
        let events = || ids.iter().map(|&id| report.timeline.get(id));
        let every = |field: fn(&Event) -> Option<&'static str>| -> Option<&'static str> {
            let mut jobs: Vec<(&'static str, Option<&'static str>)> = Vec::new();
            for event in events() {
                let Some(job) = event.job_id.map(|t| t.as_str()) else { continue };
                let value = field(event);
                match jobs.iter_mut().find(|(j, _)| *j == job) {
                    Some((_, seen)) => {
                        if seen.is_none() {
                            *seen = value;
                        } else if value.is_some() && value != *seen {
                            return None;
                        }
                    }
                    None => jobs.push((job, value)),
                }
            }
            let first = jobs.first()?.1?;
            jobs.iter().all(|(_, value)| *value == Some(first)).then_some(first)
        };
        Shared { name: every(|e| e.job_name.map(|t| t.as_str())), queue: every(|e| e.queue.map(|t| t.as_str())) }
    }

    /// `the job name is `pr-review-sweep` and the queue `pr-review` throughout`, or nothing.
    fn sentence(&self) -> Option<String> {
        match (self.name, self.queue) {
            (Some(name), Some(queue)) => {
                Some(format!("the job name is {} and the queue {} throughout", code(name), code(queue)))
            }
            (Some(name), None) => Some(format!("the job name is {} throughout", code(name))),
            (None, Some(queue)) => Some(format!("the queue is {} throughout", code(queue))),
            (None, None) => None,
        }
    }
}

/// An event in words: what happened, its ids as code (less those `shared` says above the
/// table), its detail.
fn observed(event: &Event, shared: &Shared) -> String {
    let mut cell = kind_words(event.kind).to_string();
    let mut ids: Vec<String> = Vec::new();
    let unless = |value: Option<&'static str>, said: Option<&'static str>| value.filter(|v| Some(*v) != said);
    for (label, value) in [
        ("job", event.job_id.as_deref()),
        ("name", unless(event.job_name.map(|t| t.as_str()), shared.name)),
        ("queue", unless(event.queue.map(|t| t.as_str()), shared.queue)),
        ("run", event.run_id.as_deref()),
        ("item", event.item.as_deref()),
        ("worker", event.worker.as_deref()),
    ] {
        if let Some(value) = value {
            ids.push(format!("{label} {}", cell_code(value)));
        }
    }
    let lease = event.lease();
    if let Some(generation) = lease.generation {
        ids.push(format!("generation {generation}"));
    }
    if let Some(attempt) = lease.attempt {
        ids.push(format!("attempt {attempt}"));
    }
    if let Some(accepted) = lease.accepted {
        ids.push(if accepted { "accepted" } else { "**rejected**" }.to_string());
    }
    if let Some(key) = &lease.key {
        ids.push(format!("key {}", cell_code(key)));
    }
    if let Some(settings) = event.settings() {
        ids.push(cell_code(&settings.describe()));
    }
    if !ids.is_empty() {
        let _ = write!(cell, ": {}", ids.join(", "));
    }
    if let Some(detail) = event.detail_str() {
        let _ = write!(cell, " — {}", text(&clip(detail, 200)));
    }
    cell
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// An event kind in words, for people reading the timeline.
fn kind_words(kind: EventKind) -> &'static str {
    match kind {
        EventKind::ProcessStart => "process started",
        EventKind::JobAdded => "job added",
        EventKind::JobWaiting => "job waiting",
        EventKind::JobDelayed => "job delayed",
        EventKind::JobActive => "job active",
        EventKind::JobProgress => "job progress",
        EventKind::JobStalled => "job stalled",
        EventKind::JobFailed => "job failed",
        EventKind::JobCompleted => "job completed",
        EventKind::JobRetriesExhausted => "job retries exhausted",
        EventKind::JobRemoved => "job removed",
        EventKind::Error => "error logged",
        EventKind::RoundStarted => "round started",
        EventKind::ItemSelected => "item selected",
        EventKind::EffectPosted => "effect delivered",
        EventKind::RoundFinished => "round finished",
        EventKind::RoundFailed => "round marked failed",
        EventKind::LeaseClaimed => "lease claimed",
        EventKind::LeaseExtended => "lease extended",
        EventKind::LeaseCompleted => "lease completed",
        EventKind::JobDead => "job given up",
        EventKind::LockRefused => "lock refused",
        EventKind::WorkerSettings => "worker lock settings logged",
        EventKind::EffectReceived => "effect received by the receiver",
    }
}

fn source(report: &Report, event: &Event) -> String {
    let at = cell_code(&format!("{}:{}", report.timeline.path(event), event.origin().line));
    match event.instance {
        Some(instance) => format!("{at} ({})", cell_code(&instance)),
        None => at,
    }
}

/// One row of the incident timeline: a cited event, or a moment only the arithmetic gives.
struct Moment {
    at: DateTime<Utc>,
    event: Option<EventId>,
    observed: String,
    meanings: Vec<String>,
    source: String,
}

/// The events the findings cite, with what each means in each finding that cites it, and the
/// moments no source recorded (a lock expiry), in time order.
fn write_incident_timeline(report: &Report, page: &mut String) {
    let tz = report.display_tz;
    let shown = report.shown_events();
    let shared = Shared::of(report, &shown);
    let mut moments: Vec<Moment> = shown
        .iter()
        .map(|&id| {
            let event = report.timeline.get(id);
            Moment {
                at: event.at(),
                event: Some(id),
                observed: observed(event, &shared),
                meanings: Vec::new(),
                source: source(report, event),
            }
        })
        .collect();
    for (index, finding) in report.findings.iter().enumerate() {
        let label = format!("{} `{}`", number_label(index + 1), finding.code);
        for &id in &finding.evidence {
            let event = report.timeline.get(id);
            let meaning = roles::of_event(finding, event.kind, event.at()).map_or_else(
                || format!("cited: {}", kind_words(event.kind)),
                |phrase| fill(phrase, &finding.metrics, tz, Place::Cell),
            );
            if let Some(moment) = moments.iter_mut().find(|m| m.event == Some(id))
                && !moment.meanings.iter().any(|m| m.starts_with(&label))
            {
                moment.meanings.push(format!("{label}: {meaning}"));
            }
        }
        let cited: Vec<DateTime<Utc>> = finding.evidence.iter().map(|&id| report.timeline.get(id).at()).collect();
        // Under a filter (`--since`, `--job`, ...), a moment only the arithmetic gives is shown
        // with the finding's shown events, and inside the window.
        let filter = report.shown.as_ref().map(|shown| &shown.filter);
        let beside_shown = filter.is_none_or(|f| finding.evidence.iter().any(|&id| f.shows(report.timeline.get(id))));
        let in_window = |at: DateTime<Utc>| {
            filter.is_none_or(|f| f.since.is_none_or(|s| at >= s) && f.until.is_none_or(|u| at <= u))
        };
        for computed in roles::computed(finding, &cited).into_iter().filter(|c| beside_shown && in_window(c.at)) {
            let arithmetic = computed.formula.as_deref().map_or_else(String::new, |f| format!(" = {f}"));
            moments.push(Moment {
                at: computed.at,
                event: None,
                observed: "*no record: computed*".to_string(),
                meanings: vec![format!("{label}: {}", fill(computed.phrase, &finding.metrics, tz, Place::Cell))],
                source: format!("computed: {}", cell_code(&format!("{}{arithmetic}", computed.metric))),
            });
        }
    }
    // Stable: a computed moment at the time of an event comes after it.
    moments.sort_by_key(|m| (m.at, m.event.is_none()));
    let _ = writeln!(page, "\n## Timeline\n");
    if moments.is_empty() {
        let _ = writeln!(page, "No finding cites an event.");
        return;
    }
    let date = single_date(moments.iter().map(|m| m.at), tz);
    let _ = write!(page, "The events the findings cite");
    if let Some(shown) = &report.shown {
        // Each finding below still shows all its evidence.
        let _ =
            write!(page, " among the {} (each finding's whole evidence is below it)", text(&shown.filter.describe(tz)));
    }
    if let Some(date) = &date {
        let _ = write!(page, ", on {date}");
    }
    let _ = write!(page, " ({}), and the moments only their arithmetic gives", tz.name());
    match shared.sentence() {
        Some(sentence) => {
            let _ = writeln!(page, "; {sentence}.\n");
        }
        None => {
            let _ = writeln!(page, ".\n");
        }
    }
    header(page, &["time", "what was observed", "what it means", "source"]);
    for moment in &moments {
        let time = stamp(moment.at, tz, date.as_deref());
        let meaning = moment.meanings.join("<br>");
        row(page, &[&time, &moment.observed, &meaning, &moment.source]);
    }
}

/// `timeline --format markdown`: every event, written a row at a time (millions of rows are
/// never held as one page).
fn write_whole_timeline(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let tz = report.display_tz;
    // Every event, or those a filter shows (`--since`, `--job`, ...), in time order.
    let shown = report.shown_events();
    let mut page = String::new();
    let _ = writeln!(page, "\n## Events\n");
    if let Some(filter) = &report.shown {
        let _ = writeln!(
            page,
            "The {}: {} of the timeline's {}.\n",
            text(&filter.filter.describe(tz)),
            shown.len(),
            report.timeline.len()
        );
    }
    if shown.is_empty() {
        let _ = writeln!(page, "No events.");
        return out.write_all(page.as_bytes());
    }
    // In time order: the ends say whether the table spans one date.
    let ends = [shown.first(), shown.last()];
    let date = single_date(ends.into_iter().flatten().map(|&id| report.timeline.get(id).at()), tz);
    if let Some(date) = &date {
        let _ = writeln!(page, "All on {date} ({}).\n", tz.name());
    }
    header(&mut page, &["time", "what was observed", "source"]);
    out.write_all(page.as_bytes())?;
    for &id in &shown {
        let event = report.timeline.get(id);
        page.clear();
        let observed = observed(event, &Shared::default());
        row(&mut page, &[&stamp(event.at(), tz, date.as_deref()), &observed, &source(report, event)]);
        out.write_all(page.as_bytes())?;
    }
    Ok(())
}

/// The incident as a Mermaid gantt (`render::mermaid`: the same source `--format mermaid`
/// writes), between the timeline and the findings: GitHub draws a fenced block whose info string
/// is `mermaid`. A chart with no lane (no warning or error finding to draw) is left out: it would
/// be an empty frame. `fenced` makes the fence longer than any backtick run in the source.
fn write_picture(report: &Report, page: &mut String) {
    let chart = super::chart::chart(report);
    if chart.lanes.is_empty() {
        return;
    }
    let _ = writeln!(page, "\n## Chart\n");
    let source: Vec<String> = super::mermaid::of_chart(&chart).lines().map(str::to_string).collect();
    fenced(page, "mermaid", &source);
}

// ---------------------------------------------------------------- findings

fn write_findings(report: &Report, detail: Detail, listed: usize, page: &mut String, left_out: &mut LeftOut) {
    let _ = writeln!(page, "\n## Findings\n");
    if report.findings.is_empty() {
        let _ = writeln!(page, "None.");
        return;
    }
    let of = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        page,
        "{} ({} error, {} warning, {} info).",
        count(report.findings.len(), "finding", "findings"),
        of(Severity::Error),
        of(Severity::Warning),
        of(Severity::Info)
    );
    for (index, finding) in report.findings.iter().enumerate().take(listed) {
        write_finding(report, index + 1, finding, detail, page, left_out);
    }
    left_out.findings = report.findings.len() - listed.min(report.findings.len());
    if left_out.findings > 0 {
        let more = count(left_out.findings, "finding", "findings");
        let _ = write!(page, "\n*… and {more} more (see \"Left out\" below).*");
        // The anchors of the findings not listed: a `[n]` above still leads to where it is said.
        for number in listed + 1..=report.findings.len() {
            let _ = write!(page, "<a name=\"{}\"></a>", anchor(number));
        }
        page.push('\n');
    }
}

fn write_finding(
    report: &Report,
    number: usize,
    finding: &Finding,
    detail: Detail,
    page: &mut String,
    left_out: &mut LeftOut,
) {
    let tz = report.display_tz;
    let _ = writeln!(
        page,
        "\n### <a name=\"{}\"></a>\\[{number}\\] {} `{}` at {}",
        anchor(number),
        severity_label(finding.severity),
        finding.code,
        stamp(finding.at, tz, None)
    );
    if detail.summary {
        let _ = writeln!(page, "\n{}", block_start(fill(&finding.summary, &finding.metrics, tz, Place::Prose)));
    } else {
        left_out.summaries += 1;
    }
    if detail.summary && (!finding.caused_by.is_empty() || finding.root_cause.is_some()) {
        let mut causes: Vec<String> = finding
            .caused_by
            .iter()
            .filter_map(|&i| report.findings.get(i).map(|cause| format!("{} `{}`", number_label(i + 1), cause.code)))
            .collect();
        if let Some(root) = &finding.root_cause {
            causes.push(fill(root, &finding.metrics, tz, Place::Prose));
        }
        let _ = writeln!(page, "\n**Follows from:** {}", causes.join("; "));
    }
    if !finding.derivations.is_empty() && !detail.arithmetic {
        left_out.arithmetic += 1;
    } else if !finding.derivations.is_empty() {
        let _ = writeln!(page, "\n**Arithmetic**\n");
        let lines: Vec<String> = finding
            .derivations
            .iter()
            .map(|step| {
                let value = finding.get(step.result).map(|v| format!(" = {}", human_value(v, tz))).unwrap_or_default();
                format!("{} = {}{value}", step.result, step.formula)
            })
            .collect();
        fenced_wrapped(page, &lines);
    }
    let shown = detail.evidence.unwrap_or(usize::MAX).min(finding.evidence.len());
    if shown > 0 {
        let _ = writeln!(page, "\n**Evidence** (source, time in {}, line as written)\n", tz.name());
        let lines: Vec<String> = finding.evidence[..shown]
            .iter()
            .map(|&id| {
                let event = report.timeline.get(id);
                let raw = report.raw(id);
                let raw = if raw.is_empty() { event.kind.name() } else { raw };
                format!(
                    "{}:{}  {}  {raw}",
                    report.timeline.path(event),
                    event.origin().line,
                    stamp(event.at(), tz, None)
                )
            })
            .collect();
        fenced_wrapped(page, &lines);
    }
    let unshown = finding.evidence.len() - shown;
    if unshown > 0 {
        left_out.evidence += unshown;
        let _ =
            writeln!(page, "\n*… and {} more (see \"Left out\" below).*", count(unshown, "cited line", "cited lines"));
    }
    if !finding.notes.is_empty() && !detail.notes {
        left_out.notes += 1;
    } else if !finding.notes.is_empty() {
        let _ = writeln!(page, "\n**Notes**\n");
        for note in &finding.notes {
            let _ = writeln!(page, "- {}", text(note));
        }
    }
    if !finding.metrics.is_empty() && !detail.metrics {
        left_out.metrics += 1;
    } else if !finding.metrics.is_empty() {
        // Folded: the numbers a reader checks, not the story. A blank line after `<summary>` lets
        // GitHub read the table inside as Markdown.
        let _ = writeln!(page, "\n<details><summary>Metrics</summary>\n");
        header(page, &["metric", "value"]);
        for (name, value) in &finding.metrics {
            let shown = match value {
                Value::Text(words) => cell_code(words),
                other => text(&detailed_value(other, tz)),
            };
            row(page, &[&cell_code(name), &shown]);
        }
        let _ = writeln!(page, "\n</details>");
    }
    // Said once per code: the section is the code's, not the finding's.
    let earlier = report.findings[..number - 1].iter().position(|f| f.code == finding.code);
    if let Some(first) = earlier {
        let _ = writeln!(
            page,
            "\n**What to change:** as for {} (`leasetrace explain {}`).",
            number_label(first + 1),
            finding.code
        );
        return;
    }
    if !detail.what_to_change {
        left_out.what_to_change.push(finding.code);
        let _ = writeln!(page, "\n**What to change:** `leasetrace explain {}` (left out here).", finding.code);
        return;
    }
    match doc_of(finding.code).and_then(what_to_change) {
        Some(section) => {
            let _ = writeln!(page, "\n**What to change** (from `leasetrace explain {}`)\n", finding.code);
            let _ = writeln!(page, "{section}");
        }
        None => {
            let _ = writeln!(page, "\n*No \"What to change\" section in the documentation of `{}`.*", finding.code);
        }
    }
}

fn doc_of(code: &str) -> Option<&'static str> {
    crate::detect::DETECTORS.iter().find(|d| d.code() == code).map(|d| d.doc())
}

/// The body of a finding doc's `## What to change…` section, up to the next heading of the same
/// or a higher level (lines inside fenced blocks are not headings), with its own sub-headings
/// moved under the finding's heading level (`###`) so that the page's outline holds.
pub fn what_to_change(doc: &str) -> Option<String> {
    let mut body: Vec<String> = Vec::new();
    let mut inside = false;
    let mut fence: Option<String> = None;
    for line in doc.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str()) {
                fence = None;
            }
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let marker = trimmed.chars().next().unwrap_or('`');
            fence = Some(trimmed.chars().take_while(|&c| c == marker).collect());
        } else {
            let level = trimmed.bytes().take_while(|&b| b == b'#').count();
            let is_heading = level > 0 && trimmed.as_bytes().get(level).is_none_or(|&b| b == b' ');
            if is_heading && level <= 2 {
                if inside {
                    break;
                }
                inside = level == 2 && trimmed[level..].trim_start().to_lowercase().starts_with("what to change");
                continue;
            }
            if inside && is_heading {
                // `###` in the doc sits under `##`; here the section is under `###`.
                body.push(format!("#{trimmed}"));
                continue;
            }
        }
        if inside {
            body.push(line.to_string());
        }
    }
    let text = body.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

// ---------------------------------------------------------------- inputs, parameters, assumptions

fn write_inputs(report: &Report, page: &mut String) {
    let _ = writeln!(page, "\n## Inputs\n");
    if report.inputs.is_empty() {
        let _ = writeln!(page, "None.");
        return;
    }
    let _ = writeln!(page, "Every line of every input is used, ignored as noise, or rejected with a reason.\n");
    header(page, &["input", "kind", "format", "zone", "lines", "used", "events", "ignored", "rejected"]);
    for input in &report.inputs {
        let ignored = if input.ignored_by_reason.is_empty() {
            input.ignored.to_string()
        } else {
            let reasons: Vec<String> =
                input.ignored_by_reason.iter().map(|(reason, n)| format!("{}: {n}", text(reason))).collect();
            format!("{} ({})", input.ignored, reasons.join(", "))
        };
        row(
            page,
            &[
                &cell_code(&input.path),
                input.kind,
                input.format,
                &input.tz.as_deref().map_or_else(|| "–".to_string(), text),
                &input.lines.to_string(),
                &input.used.to_string(),
                &input.events.to_string(),
                &ignored,
                &input.rejected.to_string(),
            ],
        );
    }
    let rejected: Vec<_> = report.inputs.iter().filter(|i| i.rejected > 0).collect();
    if !rejected.is_empty() {
        let _ = writeln!(page, "\nRejected lines:\n");
        for input in rejected {
            for rejection in &input.rejections {
                let _ = writeln!(
                    page,
                    "- {}: {}",
                    code(&format!("{}:{}", input.path, rejection.line)),
                    text(&rejection.reason)
                );
            }
            let unlisted = input.rejected - input.rejections.len() as u64;
            if unlisted > 0 {
                let _ = writeln!(page, "- {}: … and {unlisted} more", code(&input.path));
            }
        }
    }
}

fn write_params(report: &Report, page: &mut String) {
    use crate::model::params::Param;
    let params = &report.params;
    let _ = writeln!(page, "\n## Lock parameters in force\n");
    let disputed = Param::ALL.iter().any(|&p| params.given(p).iter().any(|g| g.value != params.value(p)));
    if disputed {
        header(page, &["parameter", "value", "origin", "other values given"]);
    } else {
        header(page, &["parameter", "value", "origin"]);
    }
    for param in Param::ALL {
        let name = cell_code(param.name());
        let value = text(&param.show(params.value(param)));
        let origin = text(&params.describe_origin(param));
        if disputed {
            let others: Vec<String> = params
                .given(param)
                .iter()
                .filter(|g| g.value != params.value(param))
                .map(|g| format!("{} ({})", text(&param.show(g.value)), text(&g.place)))
                .collect();
            row(page, &[&name, &value, &origin, &others.join(", ")]);
        } else {
            row(page, &[&name, &value, &origin]);
        }
    }
    if let Some(bull) = &params.bull_version {
        let _ = writeln!(page, "\nBull version: {}", code(bull));
    } else if let Some(version) = &params.version {
        let _ = writeln!(page, "\nBullMQ version: {}", code(version));
    } else if let Some(floor) = &params.version_at_least {
        let _ = writeln!(
            page,
            "\nBullMQ version: at least {} (a dependency range; the exact version is not known)",
            code(floor)
        );
    }
}

fn write_assumptions(report: &Report, page: &mut String) {
    if report.assumptions.is_empty() {
        return;
    }
    let _ = writeln!(page, "\n## Assumptions\n");
    for assumption in &report.assumptions {
        let _ = writeln!(page, "- {}", text(assumption));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use comrak::nodes::{AstNode, NodeValue};

    pub(crate) fn gfm() -> comrak::Options<'static> {
        let mut options = comrak::Options::default();
        options.extension.table = true;
        options.extension.strikethrough = true;
        options.extension.autolink = true;
        options.extension.tasklist = true;
        options.extension.alerts = true;
        options.extension.math_dollars = true;
        // Raw HTML passes through, as on GitHub: text that escaped as HTML would show here.
        options.render.r#unsafe = true;
        options
    }

    /// The text a node shows: its text and code, a line break as a space.
    fn shown<'a>(node: &'a AstNode<'a>) -> String {
        let mut out = String::new();
        for descendant in node.descendants() {
            match &descendant.data.borrow().value {
                NodeValue::Text(text) => out.push_str(text),
                NodeValue::Code(code) => out.push_str(&code.literal),
                NodeValue::SoftBreak | NodeValue::LineBreak => out.push(' '),
                _ => {}
            }
        }
        out
    }

    /// Every table cell's text, and every piece of raw HTML, of `markdown` as GitHub reads it.
    fn read(markdown: &str) -> (Vec<Vec<Vec<String>>>, Vec<String>, Vec<String>) {
        let arena = comrak::Arena::new();
        let root = comrak::parse_document(&arena, markdown, &gfm());
        let (mut tables, mut html, mut blocks) = (Vec::new(), Vec::new(), Vec::new());
        for node in root.descendants() {
            match &node.data.borrow().value {
                NodeValue::Table(_) => {
                    tables.push(node.children().map(|row| row.children().map(shown).collect()).collect());
                }
                NodeValue::HtmlInline(raw) => html.push(raw.clone()),
                NodeValue::HtmlBlock(block) => html.push(block.literal.clone()),
                NodeValue::CodeBlock(block) => blocks.push(block.literal.clone()),
                _ => {}
            }
        }
        (tables, html, blocks)
    }

    const HOSTILE: &[&str] = &[
        "a | b",
        "a \\| b",
        "ends with a backslash \\",
        "`tick` and ``two`` and ```three```",
        "`",
        " padded ",
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "*bold* _em_ **strong** ~~gone~~",
        "[link](https://example.com) ![img](x.png)",
        "&lt; &amp; &#60;",
        "$x^2$ and $$y$$",
        "line one\nline two\r\nthree",
        "# not a heading",
        "- not a list",
        "1. not a list",
        "PR-4412",
        "PR-OK (no duplicate)\rERROR [4] duplicate-selection",
        "\u{1b}]0;owned\u{7}title \u{1b}]8;;file:///etc/passwd\u{1b}\\link \u{1b}[2J",
        "abc\u{202E}fed\u{2066} \u{0}\u{7f}\u{9b}",
    ];

    /// What a hostile text shows: on one line, control and invisible characters written out.
    fn flat(raw: &str) -> String {
        crate::terminal::visible_line(raw).into_owned()
    }

    #[test]
    fn hostile_text_stays_text_in_a_table_cell_and_in_a_code_span() {
        for &raw in HOSTILE {
            let mut page = String::new();
            header(&mut page, &["text", "code"]);
            row(&mut page, &[&text(raw), &cell_code(raw)]);
            let (tables, html, _) = read(&page);
            assert_eq!(tables.len(), 1, "{raw:?}:\n{page}");
            assert_eq!(tables[0].len(), 2, "a header and one row: {raw:?}:\n{page}");
            assert_eq!(tables[0][1].len(), 2, "two cells: {raw:?}:\n{page}");
            assert_eq!(tables[0][1][0], flat(raw).trim(), "text cell of {raw:?}:\n{page}");
            // The one change a code span makes: a `\` before a `|` is spaced from it.
            assert_eq!(tables[0][1][1], flat(raw).replace("\\|", "\\ |"), "code cell of {raw:?}:\n{page}");
            assert!(html.is_empty(), "{raw:?} became HTML {html:?}");
        }
    }

    #[test]
    fn hostile_text_stays_itself_in_a_code_span_in_prose() {
        for &raw in HOSTILE {
            let page = format!("see {} here\n", code(raw));
            let arena = comrak::Arena::new();
            let root = comrak::parse_document(&arena, &page, &gfm());
            let spans: Vec<String> = root
                .descendants()
                .filter_map(|n| match &n.data.borrow().value {
                    NodeValue::Code(code) => Some(code.literal.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(spans, [flat(raw)], "{raw:?}:\n{page}");
        }
    }

    #[test]
    fn hostile_text_stays_text_at_the_start_of_a_paragraph() {
        for &raw in HOSTILE {
            let page = format!("{}\n", paragraph(raw));
            let arena = comrak::Arena::new();
            let root = comrak::parse_document(&arena, &page, &gfm());
            let blocks: Vec<String> = root
                .children()
                .map(|node| format!("{:?}", node.data.borrow().value).chars().take(9).collect())
                .collect();
            assert_eq!(blocks, ["Paragraph"], "{raw:?}:\n{page}");
            assert_eq!(shown(root), flat(raw).trim(), "{raw:?}:\n{page}");
            let html = comrak::markdown_to_html(&page, &gfm());
            assert!(!html.contains("<script") && !html.contains("<img"), "{raw:?}: {html}");
        }
    }

    #[test]
    fn a_fenced_block_shows_control_characters_written_out() {
        let lines = vec!["PR-OK\rERROR".to_string(), "\u{1b}[2J\u{202E}x".to_string()];
        let mut page = String::new();
        fenced(&mut page, "text", &lines);
        let (_, _, blocks) = read(&page);
        assert_eq!(blocks, ["PR-OK\\rERROR\n\\x1b[2J<U+202E>x\n"], "{page}");
        assert!(!page.chars().any(|c| c != '\n' && crate::terminal::is_hidden(c)), "{page:?}");
    }

    #[test]
    fn a_fenced_block_holds_any_line_as_it_is() {
        let lines: Vec<String> = ["```", "````text", "~~~", "<script>x</script>", "| a | b |", "    indented", "`"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        let mut page = String::new();
        fenced(&mut page, "text", &lines);
        page.push_str("after\n");
        let (_, html, blocks) = read(&page);
        assert_eq!(blocks, [lines.join("\n") + "\n"], "{page}");
        assert!(html.is_empty());
        assert!(comrak::markdown_to_html(&page, &gfm()).ends_with("<p>after</p>\n"), "the block was closed");
    }

    #[test]
    fn numbers_in_the_headlines_own_words_become_links() {
        assert_eq!(
            link_numbers("1 info finding: lock-headroom \\[5\\]"),
            "1 info finding: lock-headroom [\\[5\\]](#finding-5)"
        );
        assert_eq!(link_numbers("\\[4\\], \\[12\\]"), "[\\[4\\]](#finding-4), [\\[12\\]](#finding-12)");
        for plain in ["\\[x\\]", "\\[\\]", "\\[12", "ends with \\[", ""] {
            assert_eq!(link_numbers(plain), plain);
        }
    }

    #[test]
    fn a_wrapped_block_keeps_every_character_of_its_lines() {
        let long = "2026-10-07T00:54:05.700Z,run-0933-b,repeat:pr-review-sweep:1791333180000,".repeat(4);
        let lines = vec![format!("ledger.csv:18  09:54:05.70 KST  {long}"), "short".to_string(), "x\ry".repeat(40)];
        let mut page = String::new();
        fenced_wrapped(&mut page, &lines);
        let (_, _, blocks) = read(&page);
        assert_eq!(blocks.len(), 1, "{page}");
        assert!(blocks[0].lines().all(|line| line.chars().count() <= WRAP), "{page}");
        let whole: Vec<String> = lines.iter().map(|line| crate::terminal::visible(line).into_owned()).collect();
        assert_eq!(blocks[0].replace(&format!("\n{CONTINUED}"), ""), whole.join("\n") + "\n");
    }

    /// The fleet fixture's report: 48 findings.
    fn fleet() -> Report {
        let case = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet-bullmq-6.7.0-shared-ledger");
        let args = crate::cli::CaseArgs {
            case: Some(case),
            formats: vec![crate::cli::Output::stdout("markdown")],
            ..Default::default()
        };
        let config = crate::config::Config::build(&args).unwrap();
        crate::build_report(&config, View::Analyze).unwrap()
    }

    #[test]
    fn a_smaller_budget_leaves_out_more_and_every_number_still_leads_to_its_finding() {
        let report = fleet();
        let link = regex::Regex::new(r"\]\(#(finding-\d+)\)").unwrap();
        let anchor = regex::Regex::new(r#"<a name="(finding-\d+)"></a>"#).unwrap();
        let mut sizes = Vec::new();
        for budget in [BUDGET, 30_000, 16_000, 13_000, 100] {
            let page = postmortem(&report, budget);
            let named: Vec<&str> = anchor.captures_iter(&page).map(|c| c.get(1).unwrap().as_str()).collect();
            assert_eq!(named.len(), report.findings.len(), "at {budget}: one anchor per finding");
            for target in link.captures_iter(&page) {
                assert!(named.contains(&&target[1]), "at {budget}: #{} leads nowhere", &target[1]);
            }
            // Below 13,000 not even the headline, the inputs and the assumptions fit.
            if budget >= 13_000 {
                assert!(size(&page) <= budget, "{} over {budget}", size(&page));
            }
            assert!(page.contains("## Left out"), "at {budget}");
            sizes.push(size(&page));
        }
        assert!(sizes.windows(2).all(|pair| pair[0] >= pair[1]), "{sizes:?}");
        let least = postmortem(&report, 13_000);
        assert!(least.contains("past the first"), "findings counted, not listed:\n{least}");
    }

    #[test]
    fn the_size_counts_a_line_break_as_a_browser_sends_it() {
        assert_eq!(size("ab\ncd\n"), 8);
        assert_eq!(size("리뷰"), 2, "characters, not bytes");
    }

    #[test]
    fn a_code_span_is_never_empty_or_open() {
        assert_eq!(code(""), "` `");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(cell_code("a|b"), "`a\\|b`");
        assert_eq!(code("a|b"), "`a|b`", "in prose a backslash would show");
    }

    #[test]
    fn what_to_change_is_the_section_up_to_the_next_heading_of_its_level() {
        let doc = "# code\n\n## What it means\n\nmeans\n\n## What to change in the system\n\n- first\n\n\
                   ### Sub\n\n```\n## not a heading, inside a fence\n```\n\n- last\n\n## Next\n\nother\n";
        let section = what_to_change(doc).unwrap();
        assert_eq!(section, "- first\n\n#### Sub\n\n```\n## not a heading, inside a fence\n```\n\n- last");
        assert_eq!(what_to_change("# code\n\n## What it means\n\nx\n"), None);
        assert_eq!(what_to_change("## What to change\n\n## Next\n"), None, "an empty section is none");
    }

    #[test]
    fn every_findings_doc_has_a_what_to_change_section() {
        for detector in crate::detect::DETECTORS {
            let section = what_to_change(detector.doc());
            assert!(section.is_some_and(|s| s.len() > 40), "docs/findings/{}.md", detector.code());
        }
    }

    #[test]
    fn times_carry_the_zone_abbreviation_of_their_date() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let seoul = chrono_tz::Asia::Seoul;
        assert_eq!(stamp(at("2026-10-07T00:54:05.700Z"), seoul, Some("2026-10-07")), "09:54:05.70 KST");
        assert_eq!(stamp(at("2026-10-07T00:54:05.700Z"), seoul, None), "2026-10-07 09:54:05.70 KST");
        let berlin = chrono_tz::Europe::Berlin;
        assert_eq!(stamp(at("2026-07-01T10:00:00Z"), berlin, None), "2026-07-01 12:00:00 CEST");
        assert_eq!(stamp(at("2026-12-01T10:00:00Z"), berlin, None), "2026-12-01 11:00:00 CET");
        let times = [at("2026-10-07T14:59:59Z"), at("2026-10-07T15:00:00Z")];
        assert_eq!(single_date(times.into_iter(), seoul), None, "midnight in Seoul falls between");
        assert_eq!(single_date(times.into_iter(), chrono_tz::UTC).as_deref(), Some("2026-10-07"));
    }
}
