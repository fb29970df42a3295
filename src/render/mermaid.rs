//! `--format mermaid`: the chart (`render::chart`) as a Mermaid gantt, the picture GitHub draws
//! from a fenced ```mermaid block (`--format markdown` embeds `gantt`).
//!
//! Mermaid's gantt has no time zones: it reads `dateFormat` times as the viewer's local wall
//! clock and draws its axis in the same, so the times written here are wall-clock times in the
//! display zone, and the title names the zone. Milestones are instants (`milestone`, 0 ms long);
//! the parts that went wrong are `crit`. Its axis is linear in time, which would put the decisive
//! seconds of an incident in a pixel: a chart with a dense stretch is written on the pictures'
//! broken axis instead (`render::scale`), its times placing the marks, its labels keeping the real
//! times, its ticks printing no clock time that would be wrong.
//!
//! Task and section names come from the evidence (run ids, job ids such as
//! `repeat:pr-review-sweep:1791333180000`, item names): `:` `;` `#` would end or break a task line,
//! so they and a few other characters are written as Mermaid's entity codes (`#58;`), which it
//! draws as the character itself; line breaks and tabs become spaces, and other control or
//! invisible characters (an escape sequence, a bidi override) are written out as
//! `terminal::visible_line` writes them (`\x1b`, `<U+202E>`).

use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::chart::{self, Chart};
use super::scale::Scale;
use crate::model::Report;
use crate::model::report::View;
use crate::time::format_clock;

pub struct Mermaid;

impl super::Renderer for Mermaid {
    fn name(&self) -> &'static str {
        "mermaid"
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(gantt(report).as_bytes())
    }

    fn shows_raw(&self, _view: View) -> bool {
        false
    }
}

/// The report's chart as Mermaid gantt source, ending in a newline (no code fence).
pub fn gantt(report: &Report) -> String {
    of_chart(&chart::chart(report))
}

/// `chart` as Mermaid gantt source.
pub fn of_chart(chart: &Chart) -> String {
    // Mermaid leaves 75 px left of the bars for section names by default: room for the longest
    // lane name here (11 px text, about 7 px a character), within a third of a 1200 px page.
    let longest = chart.lanes.iter().map(|l| escape(&l.title).chars().count()).max().unwrap_or(0);
    let padding = (longest * 7 + 24).clamp(75, 400);
    let mut out = format!("---\nconfig:\n  gantt:\n    leftPadding: {padding}\n---\ngantt\n");
    let zone = match chart.distinct_abbreviation() {
        Some(abbreviation) => format!("{}, {abbreviation}", chart.tz.name()),
        None => chart.tz.name().to_string(),
    };
    // Mermaid draws the title on one line, centred, and cannot wrap it: a headline too long for
    // it is said by its chain of findings instead (whole, never cut), and in full in the chart's
    // accessible description, which Mermaid writes into the SVG for screen readers.
    let title = if chart.title.chars().count() <= TITLE_ROOM {
        chart.title.clone()
    } else {
        let chain = chart.chain.join(" ← ");
        if !chain.is_empty() && chain.chars().count() <= TITLE_ROOM {
            chain
        } else {
            chart.chain.first().cloned().unwrap_or_else(|| shorten(&chart.title, TITLE_ROOM))
        }
    };
    let _ = writeln!(out, "    title {} (times in {})", escape(&title), escape(&zone));
    if title != chart.title {
        let _ = writeln!(out, "    accDescr: {}", one_line(&chart.title));
    }
    out.push_str("    dateFormat YYYY-MM-DD HH:mm:ss.SSS\n");
    // The axis is linear in time: a chart with a dense stretch (`render::scale`) is given the
    // times of a broken axis instead, and its ticks, which would print those, print a dot.
    let scale = Scale::of(chart, 0.0, 1000.0, MIN_GAP).filter(Scale::is_broken);
    let at = |t: DateTime<Utc>| scale.as_ref().map_or(t, |scale| scale.chart_time(t));
    let _ = writeln!(out, "    axisFormat {}", if scale.is_some() { "·" } else { axis_format(chart) });
    out.push_str("    todayMarker off\n");
    if scale.is_none() {
        let _ = writeln!(out, "    %% Mermaid has no time zones: every time below is a wall-clock time in {zone}.");
    }
    if let Some(scale) = &scale {
        let stretches: Vec<String> = scale
            .bands()
            .iter()
            .map(|band| {
                format!(
                    "{}–{} {}",
                    format_clock(band.start, chart.tz),
                    format_clock(band.end, chart.tz),
                    band.zoom_text()
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    %% The axis is broken: {} drawn at scales of their own, so that no two moments merge. The times below place the marks on that axis; each label gives the real time, a wall-clock time in {zone}.",
            stretches.join(", ")
        );
    }
    // Mermaid shows no free text: the warnings are said where the source is read (the Markdown
    // report prints them above the chart).
    for warning in &chart.warnings {
        let _ = writeln!(out, "    %% WARNING: {}", one_line(warning));
    }
    if chart.crosses_offset_change() {
        let _ = writeln!(out, "    %% The zone's UTC offset changes inside this chart: its wall times jump there.");
    }
    if chart.lanes.is_empty() {
        out.push_str("    %% No warning or error finding to draw.\n");
    }
    for note in &chart.not_drawn {
        let _ = writeln!(out, "    %% Not drawn: {}", one_line(note));
    }
    let mut id = 0;
    for lane in &chart.lanes {
        // The lane's detail (a round's job id) would not fit left of the bars: a comment keeps it.
        let _ = writeln!(out, "    section {}", escape(&lane.title));
        if !lane.detail.is_empty() {
            let _ = writeln!(out, "    %% {}: {}", one_line(&lane.title), one_line(&lane.detail));
        }
        for mark in &lane.marks {
            id += 1;
            let mut tags = Vec::new();
            if mark.crit {
                tags.push("crit");
            }
            if mark.end.is_none() {
                tags.push("milestone");
            }
            let tags: String = tags.iter().fold(String::new(), |mut all, t| {
                all.push_str(t);
                all.push_str(", ");
                all
            });
            let start = wall(at(mark.start), chart.tz);
            let end = mark.end.map_or_else(|| "0ms".to_string(), |end| wall(at(end), chart.tz));
            let _ = writeln!(out, "    {} :{tags}m{id}, {start}, {end}", escape(&mark.caption()));
        }
    }
    out
}

/// The most characters of the title before the zone: a 1200 px page at Mermaid's title size.
const TITLE_ROOM: usize = 90;
/// The closest two moments, in pixels of a chart about 1000 px wide (`render::scale`).
const MIN_GAP: f64 = 24.0;

/// `text` cut at a word to at most `room` characters, with an ellipsis when cut.
fn shorten(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_string();
    }
    let cut: String = text.chars().take(room).collect();
    let cut = cut.rfind(' ').map_or(cut.as_str(), |space| &cut[..space]);
    format!("{}…", cut.trim_end_matches([',', ';', ':']))
}

/// A time as the `dateFormat` above reads it, in `tz`'s wall clock.
fn wall(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz).format("%Y-%m-%d %H:%M:%S%.3f").to_string()
}

/// Seconds on the axis for a short chart, the date for one over a day.
fn axis_format(chart: &Chart) -> &'static str {
    match chart.range() {
        Some((start, end)) if (end - start).num_days() >= 1 => "%m-%d %H:%M",
        Some((start, end)) if (end - start).num_minutes() > 10 => "%H:%M",
        _ => "%H:%M:%S",
    }
}

/// A name from the evidence as Mermaid text: the characters that end a task's name (`:`), its
/// data (`;`), start an entity code (`#`) or a comment (`%`), and angle brackets, as entity codes;
/// line breaks as spaces, other control and invisible characters written out.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).trim().chars() {
        match c {
            ':' | ';' | '#' | '%' | '<' | '>' => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    if out.is_empty() {
        out.push('?');
    }
    out
}

/// Line breaks and tabs as spaces (a Mermaid statement is one line), other control and invisible
/// characters written out (`terminal::visible_line`).
fn one_line(text: &str) -> String {
    crate::terminal::visible_line(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::chart::{Element, Lane, Mark, Source};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn mark(element: Element, label: &str, start: &str, end: Option<&str>, crit: bool) -> Mark {
        Mark {
            element,
            label: label.to_string(),
            start: at(start),
            end: end.map(at),
            crit,
            finding: 0,
            also: Vec::new(),
            code: "stalled-rerun",
            from: Source::Metrics("x", None),
        }
    }

    fn one_lane(title: &str, marks: Vec<Mark>) -> Chart {
        Chart {
            tz: chrono_tz::Asia::Seoul,
            title: "stalled-rerun: job re-run".to_string(),
            story: Vec::new(),
            chain: Vec::new(),
            warnings: Vec::new(),
            lanes: vec![Lane { keys: vec![], title: title.to_string(), detail: String::new(), marks }],
            not_drawn: vec!["lock-headroom (info)".to_string()],
        }
    }

    #[test]
    fn spans_and_milestones_are_written_in_the_display_zones_wall_clock() {
        let chart = one_lane(
            "round r-a",
            vec![
                mark(Element::Lock, "lock held", "2026-10-07T00:33:00Z", Some("2026-10-07T00:52:38Z"), false),
                mark(Element::Restart, "restart", "2026-10-07T00:37:26Z", None, true),
            ],
        );
        let text = of_chart(&chart);
        assert!(
            text.starts_with("---\nconfig:\n  gantt:\n    leftPadding: 87\n---\ngantt\n    title stalled-rerun#58; job re-run (times in Asia/Seoul, KST)\n"),
            "{text}"
        );
        assert!(text.contains("    section round r-a\n"), "{text}");
        assert!(text.contains("    lock held [1] :m1, 2026-10-07 09:33:00.000, 2026-10-07 09:52:38.000\n"), "{text}");
        assert!(text.contains("    restart [1] :crit, milestone, m2, 2026-10-07 09:37:26.000, 0ms\n"), "{text}");
        assert!(text.contains("    %% Not drawn: lock-headroom (info)\n"), "{text}");
        assert!(text.contains("axisFormat %H:%M\n"), "a 20-minute chart: {text}");
    }

    #[test]
    fn hostile_names_cannot_break_a_line() {
        let hostile = "repeat:a;b#c%%d <e>\nsection x: y";
        assert_eq!(escape(hostile), "repeat#58;a#59;b#35;c#37;#37;d #60;e#62; section x#58; y");
        assert_eq!(escape("PR-1\u{202E}kcab\u{1b}[2J"), "PR-1#60;U+202E#62;kcab\\x1b[2J");
        let chart = one_lane(hostile, vec![mark(Element::Pick, hostile, "2026-10-07T00:54:05.7Z", None, true)]);
        let text = of_chart(&chart);
        // One line per statement: the title, three settings, a comment, the note, the section and the task.
        let statements: Vec<&str> = text.lines().collect();
        assert_eq!(statements.len(), 14, "front matter (5 lines) and 9 statements: {text}");
        let task = statements[13];
        // The name ends at the first colon, where the task's data begin.
        let (name, data) = task.split_once(':').unwrap();
        assert_eq!(name, format!("    {} [1] ", escape(hostile)), "the label, then its finding's number");
        assert_eq!(data, "crit, milestone, m1, 2026-10-07 09:54:05.700, 0ms", "{task}");
        assert_eq!(escape(" \n "), "?");
    }

    #[test]
    fn a_long_title_is_cut_at_a_word() {
        assert_eq!(shorten("a short one", 20), "a short one");
        assert_eq!(
            shorten("PR-4412 was selected by round run-0933-b at 09:54:05.70", 30),
            "PR-4412 was selected by round…"
        );
    }
}
