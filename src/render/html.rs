//! `--format html`: the report as one self-contained web page, for a responder who wants to look
//! around: the chain of findings first, a timeline that zooms and pans, each finding with its
//! arithmetic and evidence lines, and filters by job, round and instance (docs/outputs/html.md).
//!
//! One file and nothing else: the style sheet and the script are inline, there is no URL to any
//! other place (no font, script, style or image is fetched), and the page's Content Security
//! Policy forbids fetching any, so it opens the same from a mail attachment, an air-gapped laptop
//! or a ticket.
//!
//! A case folder is untrusted: every text from it (ids, items, paths, raw lines, and the
//! summaries and warnings that quote them) is escaped as HTML text or attribute value here, after
//! `terminal::visible_line` has written out control and invisible characters. The script is a
//! constant: no byte of the inputs is ever written inside it. What it needs from the report it
//! reads from the page: numbers in `data-` attributes (a mark's place on the axis, a finding's
//! index into the filter lists) and the filter lists as `<option>` texts.
//!
//! The timeline is the chart of the pictures (`render::chart`) on their broken axis
//! (`render::scale`), laid out here once at the default zoom, so that the page shows it without
//! its script too; each mark carries its place on the axis as a share of the width (`data-u0`,
//! `data-u1`), which the script maps to pixels again when the view is zoomed or panned. Nothing is
//! computed: the times, labels and numbers are the findings'.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::Offset;

use super::chart::{self, Chart, Element, Mark};
use super::headline::{self, Role};
use super::scale::Scale;
use super::{Renderer, detailed_value, fill_summary, human_value};
use crate::model::report::View;
use crate::model::{Finding, Report, Value};
use crate::time::{format_datetime, format_rfc3339};

pub struct Html;

impl Renderer for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    /// A whole timeline is listed by kind and ids, never by its raw lines; a finding's evidence
    /// shows its lines.
    fn shows_raw(&self, view: View) -> bool {
        view != View::Timeline
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let page = page(report);
        if report.view != View::Timeline {
            return out.write_all(page.as_bytes());
        }
        // A whole timeline may be millions of events: its rows are written as they come, between
        // the page's parts, never held at once.
        let (before, after) = page.split_once(EVENTS_GO_HERE).unwrap_or((&page, ""));
        out.write_all(before.as_bytes())?;
        write_events(report, out)?;
        out.write_all(after.as_bytes())
    }
}

/// Text from anywhere as HTML text or a quoted attribute value, on one line (a line break or tab
/// is a space).
pub fn escape(text: &str) -> String {
    markup(&crate::terminal::visible_line(text))
}

/// A raw line from the case as HTML text, every control character written out (a quoted `\r`
/// inside a CSV record shows as `\r`, as the table's evidence shows it).
fn escape_raw(text: &str) -> String {
    markup(&crate::terminal::visible(text))
}

/// `text` with the characters HTML reads as markup as character references.
fn markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The timeline's width, and where its plot begins and ends (lane names are left of it).
const WIDTH: f64 = 1200.0;
const PLOT_LEFT: f64 = 270.0;
const PLOT_RIGHT: f64 = 1180.0;
/// The closest two moments at the default zoom (`render::scale`).
const MIN_GAP: f64 = 24.0;
const LABEL_ROW: f64 = 16.0;

/// The values a filter offers, each with its index (what a finding's `data-` attribute lists).
#[derive(Default)]
struct Filters {
    jobs: BTreeMap<String, usize>,
    rounds: BTreeMap<String, usize>,
    instances: BTreeMap<String, usize>,
}

/// What a finding is about, by filter: the indices of its jobs, rounds and instances.
struct About {
    jobs: Vec<usize>,
    rounds: Vec<usize>,
    instances: Vec<usize>,
}

fn page(report: &Report) -> String {
    let tz = report.display_tz;
    let chart = chart::chart(report);
    let command = match report.view {
        View::Timeline => "timeline",
        View::Analyze => "analyze",
        View::Check(_) => "check",
    };
    let zone = match chart.distinct_abbreviation() {
        Some(abbreviation) => format!("{} ({abbreviation})", tz.name()),
        None => tz.name().to_string(),
    };
    let (filters, about) = filters(report);

    // `timeline` runs no detector: its page is the events, not a chart of findings.
    let title = if report.view == View::Timeline { "Timeline".to_string() } else { chart.title.clone() };
    let mut body = String::new();
    let _ = writeln!(body, "<header>\n<h1>{}</h1>", escape(&title));
    let _ = writeln!(
        body,
        "<p class=\"sub\">Drafted by <code>leasetrace {command}</code> from {} input(s) · times in {}</p>\n</header>",
        report.inputs.len(),
        escape(&zone)
    );
    if !report.warnings.is_empty() {
        body.push_str("<section id=\"warnings\">\n");
        for warning in &report.warnings {
            let _ = writeln!(body, "<p class=\"report-warning\"><b>WARNING</b> {}</p>", escape(&warning.message));
        }
        body.push_str("</section>\n");
    }
    write_chain(report, &mut body);
    write_filters(&filters, &mut body);
    if report.view != View::Timeline {
        write_timeline(&chart, &mut body);
    }
    write_findings(report, &about, &mut body);
    if report.view == View::Timeline {
        body.push_str(EVENTS_GO_HERE);
    }
    write_inputs(report, &mut body);
    if let View::Check(threshold) = report.view {
        let _ = match report.failing() {
            0 => writeln!(body, "<p id=\"check\">Check passed: no finding at or above {}.</p>", threshold.name()),
            n => writeln!(body, "<p id=\"check\">Check failed: {n} finding(s) at or above {}.</p>", threshold.name()),
        };
    }
    let _ = writeln!(
        body,
        "<footer>Written by leasetrace from the report alone; every number is a finding's. \
         The page fetches nothing. Format: <code>leasetrace docs outputs/html</code>.</footer>"
    );

    let mut out = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 600);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // Nothing may be fetched: no network, whatever a text of the case holds.
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>leasetrace: {}</title>", escape(&title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str(&body);
    let _ = writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out
}

/// What happened: the headline's lines, each finding linked to its section below.
fn write_chain(report: &Report, body: &mut String) {
    if report.view == View::Timeline {
        return;
    }
    body.push_str("<section id=\"chain\">\n<h2>What happened</h2>\n<ol class=\"chain\">\n");
    let lines = headline::lines(report);
    if lines.is_empty() {
        body.push_str("<li>No findings.</li>\n");
    }
    for line in lines {
        let lead = match line.role {
            Role::Effect | Role::More => "",
            Role::CausedBy => "← caused by ",
            Role::RootCause => "← because ",
            Role::Also => "also ",
        };
        let finding = match (line.severity, line.code, line.number) {
            (Some(severity), Some(code), Some(number)) => format!(
                "<a href=\"#finding-{number}\" class=\"sev {}\">{} [{number}] {code}</a>: ",
                severity.name(),
                severity.name().to_uppercase()
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            body,
            "<li class=\"depth-{}\" style=\"margin-left:{}em\">{lead}{finding}{}</li>",
            line.depth,
            line.depth * 2,
            escape(&line.text)
        );
    }
    body.push_str("</ol>\n</section>\n");
}

/// The jobs, rounds and instances the findings are about (from their evidence and id metrics),
/// and each finding's.
fn filters(report: &Report) -> (Filters, Vec<About>) {
    let mut filters = Filters::default();
    let mut about = Vec::new();
    let index = |map: &mut BTreeMap<String, usize>, value: &str| -> usize {
        let next = map.len();
        *map.entry(value.to_string()).or_insert(next)
    };
    let mut raw: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
    for finding in &report.findings {
        let (mut jobs, mut rounds, mut instances) = (Vec::new(), Vec::new(), Vec::new());
        for &id in &finding.evidence {
            let event = report.timeline.get(id);
            jobs.extend(event.job_id.as_deref().map(str::to_string));
            rounds.extend(event.run_id.as_deref().map(str::to_string));
            instances.extend(event.instance.as_deref().map(str::to_string));
            instances.extend(event.worker.as_deref().map(str::to_string));
        }
        for (name, value) in &finding.metrics {
            if let Value::Text(text) = value {
                match *name {
                    "job_id" => jobs.push(text.clone()),
                    "run_id" | "run_a" | "run_b" | "rerun_run_id" => rounds.push(text.clone()),
                    _ => {}
                }
            }
        }
        raw.push((jobs, rounds, instances));
    }
    // Indices in sorted order: the options read alphabetically.
    for (jobs, rounds, instances) in &raw {
        for job in jobs {
            filters.jobs.insert(job.clone(), 0);
        }
        for round in rounds {
            filters.rounds.insert(round.clone(), 0);
        }
        for instance in instances {
            filters.instances.insert(instance.clone(), 0);
        }
    }
    for map in [&mut filters.jobs, &mut filters.rounds, &mut filters.instances] {
        for (i, value) in map.values_mut().enumerate() {
            *value = i;
        }
    }
    for (jobs, rounds, instances) in raw {
        let of = |map: &mut BTreeMap<String, usize>, values: Vec<String>| {
            let mut indices: Vec<usize> = values.iter().map(|v| index(map, v)).collect();
            indices.sort_unstable();
            indices.dedup();
            indices
        };
        about.push(About {
            jobs: of(&mut filters.jobs, jobs),
            rounds: of(&mut filters.rounds, rounds),
            instances: of(&mut filters.instances, instances),
        });
    }
    (filters, about)
}

fn numbers(indices: &[usize]) -> String {
    indices.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
}

fn write_filters(filters: &Filters, body: &mut String) {
    if filters.jobs.is_empty() && filters.rounds.is_empty() && filters.instances.is_empty() {
        return;
    }
    body.push_str("<section id=\"filters\">\n<h2>Show</h2>\n<form class=\"filters\">\n");
    for (name, label, map) in [
        ("jobs", "job", &filters.jobs),
        ("rounds", "round", &filters.rounds),
        ("instances", "instance", &filters.instances),
    ] {
        if map.is_empty() {
            continue;
        }
        let _ = writeln!(body, "<label>{label} <select data-filter=\"{name}\"><option value=\"\">any</option>");
        let mut sorted: Vec<(&String, &usize)> = map.iter().collect();
        sorted.sort_by_key(|(_, i)| **i);
        for (value, i) in sorted {
            let _ = writeln!(body, "<option value=\"{i}\">{}</option>", escape(value));
        }
        body.push_str("</select></label>\n");
    }
    body.push_str("<button type=\"reset\">show all</button> <span id=\"shown-count\"></span>\n</form>\n</section>\n");
}

fn colour(element: Element, crit: bool) -> &'static str {
    super::svg::colour(element, crit)
}

/// The timeline: lanes of marks on the pictures' broken axis, with the controls that zoom it.
#[allow(clippy::too_many_lines)] // one picture, drawn top to bottom
fn write_timeline(chart: &Chart, body: &mut String) {
    let Some(scale) = Scale::of(chart, 0.0, 1.0, MIN_GAP / (PLOT_RIGHT - PLOT_LEFT)) else {
        if !chart.not_drawn.is_empty() || chart.lanes.is_empty() {
            body.push_str(
                "<section id=\"timeline\">\n<h2>Timeline</h2>\n<p>No warning or error finding to draw.</p>\n",
            );
            write_not_drawn(chart, body);
            body.push_str("</section>\n");
        }
        return;
    };
    let tz = chart.tz;
    let offset_ms = i64::from(scale.start().with_timezone(&tz).offset().fix().local_minus_utc()) * 1000;
    let px = |u: f64| PLOT_LEFT + u * (PLOT_RIGHT - PLOT_LEFT);

    // Lanes and their label rows, at the default zoom.
    let mut lanes = String::new();
    let mut y = 8.0;
    for (number, lane) in chart.lanes.iter().enumerate() {
        let rows = label_rows(&scale, &lane.marks, &px);
        let count = rows.iter().copied().max().map_or(0, |r| r + 1);
        #[allow(clippy::cast_precision_loss)]
        let height = 56.0 + count as f64 * LABEL_ROW;
        let findings: Vec<usize> = {
            let mut f: Vec<usize> = lane.marks.iter().flat_map(Mark::findings).collect();
            f.sort_unstable();
            f.dedup();
            f
        };
        let _ = writeln!(
            lanes,
            "<g class=\"lane\" id=\"lane-{}\" data-findings=\"{}\" transform=\"translate(0,{y})\" data-height=\"{height}\">",
            number + 1,
            numbers(&findings)
        );
        // Translucent: the tint of a dense stretch, drawn under the lanes, shows through.
        let opacity = if number % 2 == 0 { "0.04" } else { "0" };
        let _ = writeln!(
            lanes,
            "<rect class=\"stripe\" x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#123\" fill-opacity=\"{opacity}\"/>"
        );
        let _ = writeln!(lanes, "<text x=\"8\" y=\"22\" class=\"lane-title\">{}</text>", escape(&fit(&lane.title, 34)));
        if !lane.detail.is_empty() {
            let _ = writeln!(
                lanes,
                "<text x=\"8\" y=\"38\" class=\"lane-detail\">{}</text>",
                escape(&fit(&lane.detail, 40))
            );
        }
        // Labels may run past the plot's right edge into the margin; nothing runs into the names.
        let _ = writeln!(lanes, "<g clip-path=\"url(#marks)\">");
        let mut ordered: Vec<(usize, &Mark)> = lane.marks.iter().enumerate().collect();
        ordered.sort_by_key(|(_, m)| u8::from(m.end.is_none()));
        for (index, mark) in ordered {
            let u0 = scale.x(mark.start);
            let u1 = mark.end.map(|end| scale.x(end));
            let fill = colour(mark.element, mark.crit);
            let (x0, x1) = (px(u0), u1.map_or(px(u0), px));
            let _ = write!(
                lanes,
                "<g class=\"mark {} {}\" data-finding=\"{}\" data-u0=\"{u0:.6}\"",
                mark.element.name(),
                if mark.crit { "crit" } else { "" },
                numbers(&mark.findings().collect::<Vec<_>>())
            );
            if let Some(u1) = u1 {
                let _ = write!(lanes, " data-u1=\"{u1:.6}\"");
            }
            let _ = writeln!(
                lanes,
                " data-at=\"{}\"><title>{} ({})</title>",
                escape(&format_rfc3339(mark.start)),
                escape(&mark.caption()),
                mark.code
            );
            match (mark.element, u1) {
                (Element::RenewalWindow | Element::ExpiryWindow, Some(_)) => {
                    let _ = writeln!(
                        lanes,
                        "<rect class=\"shape\" x=\"{x0:.1}\" y=\"33\" width=\"{:.1}\" height=\"6\" rx=\"2\" fill=\"{fill}\"/>",
                        (x1 - x0).max(2.0)
                    );
                }
                (Element::Overlap | Element::Restart, Some(_)) => {
                    let _ = writeln!(
                        lanes,
                        "<rect class=\"shape\" x=\"{x0:.1}\" y=\"8\" width=\"{:.1}\" height=\"26\" fill=\"{fill}\" fill-opacity=\"0.35\" stroke=\"{fill}\"/>",
                        (x1 - x0).max(2.0)
                    );
                }
                (_, Some(_)) => {
                    let _ = writeln!(
                        lanes,
                        "<rect class=\"shape\" x=\"{x0:.1}\" y=\"12\" width=\"{:.1}\" height=\"18\" rx=\"3\" fill=\"{fill}\"/>",
                        (x1 - x0).max(2.0)
                    );
                }
                (Element::Unlogged, None) => {
                    let _ = writeln!(
                        lanes,
                        "<circle class=\"shape point\" cx=\"{x0:.1}\" cy=\"21\" r=\"10\" fill=\"none\" stroke=\"{fill}\" stroke-width=\"2.5\"/>"
                    );
                }
                (_, None) => {
                    let _ = writeln!(
                        lanes,
                        "<path class=\"shape point\" transform=\"translate({x0:.1},21)\" d=\"M 0 -7 L 7 0 L 0 7 L -7 0 Z\" fill=\"{fill}\" stroke=\"#fff\"/>"
                    );
                }
            }
            #[allow(clippy::cast_precision_loss)]
            let baseline = 54.0 + rows[index] as f64 * LABEL_ROW;
            let anchor = if ends_at_its_mark(x0, &mark.caption()) { "end" } else { "start" };
            let _ = writeln!(
                lanes,
                "<text class=\"label{}\" x=\"{x0:.1}\" y=\"{baseline}\" text-anchor=\"{anchor}\">{}</text>\n</g>",
                if mark.crit { " crit" } else { "" },
                escape(&mark.caption())
            );
        }
        lanes.push_str("</g>\n</g>\n");
        y += height;
    }
    let lanes_bottom = y;
    let height = lanes_bottom + 60.0;

    body.push_str("<section id=\"timeline\">\n<h2>Timeline</h2>\n");
    body.push_str(
        "<p class=\"tools\"><button type=\"button\" data-zoom=\"in\">zoom in</button> \
         <button type=\"button\" data-zoom=\"out\">zoom out</button> \
         <button type=\"button\" data-zoom=\"reset\">whole incident</button> \
         <span class=\"hint\">mouse wheel zooms at the pointer, dragging pans; tinted stretches are drawn at a scale of their own (×zoom)</span></p>\n",
    );
    let _ = writeln!(
        body,
        "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         data-left=\"{PLOT_LEFT}\" data-right=\"{PLOT_RIGHT}\" data-axis=\"{lanes_bottom}\" data-zone=\"{}\" data-offset=\"{offset_ms}\">",
        escape(tz.name())
    );
    let _ = writeln!(
        body,
        "<defs><clipPath id=\"plot\"><rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{height}\"/></clipPath>\
         <clipPath id=\"marks\"><rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{height}\"/></clipPath></defs>",
        PLOT_LEFT - 8.0,
        PLOT_RIGHT - PLOT_LEFT + 16.0,
        PLOT_LEFT - 8.0,
        WIDTH - PLOT_LEFT + 8.0
    );
    // The axis' segments, for the script's ticks: times in milliseconds and places on the axis.
    body.push_str("<g id=\"segments\">");
    for segment in &scale.segments {
        let _ = write!(
            body,
            "<g data-t0=\"{}\" data-t1=\"{}\" data-u0=\"{:.6}\" data-u1=\"{:.6}\"></g>",
            segment.start.timestamp_millis(),
            segment.end.timestamp_millis(),
            segment.x0,
            segment.x1
        );
    }
    body.push_str("</g>\n<g id=\"bands\" clip-path=\"url(#plot)\">\n");
    for band in scale.bands() {
        let _ = writeln!(
            body,
            "<g class=\"band\" data-u0=\"{:.6}\" data-u1=\"{:.6}\"><rect class=\"shape\" x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"{lanes_bottom}\" fill=\"#fff3cd\"/>\
             <text class=\"zoom\" x=\"{:.1}\" y=\"{}\">{}</text></g>",
            band.x0,
            band.x1,
            px(band.x0),
            px(band.x1) - px(band.x0),
            f64::midpoint(px(band.x0), px(band.x1)),
            lanes_bottom + 40.0,
            escape(&band.zoom_text())
        );
    }
    body.push_str("</g>\n");
    let _ = writeln!(
        body,
        "<g id=\"ticks\"></g>\n<line x1=\"{PLOT_LEFT}\" y1=\"{lanes_bottom}\" x2=\"{PLOT_RIGHT}\" y2=\"{lanes_bottom}\" stroke=\"#333\"/>"
    );
    body.push_str(&lanes);
    // Ticks at the default zoom, for a reader without the script; the script redraws them.
    body.push_str("<g id=\"static-ticks\">\n");
    for (_, x, label) in scale.ticks(tz, 90.0 / (PLOT_RIGHT - PLOT_LEFT)) {
        let _ = writeln!(
            body,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{}\">{}</text>",
            px(x),
            lanes_bottom + 18.0,
            escape(&label)
        );
    }
    body.push_str("</g>\n</svg>\n");
    write_not_drawn(chart, body);
    body.push_str("</section>\n");
}

fn write_not_drawn(chart: &Chart, body: &mut String) {
    if !chart.not_drawn.is_empty() {
        let _ = writeln!(body, "<p class=\"note\">Not drawn: {}</p>", escape(&chart.not_drawn.join("; ")));
    }
}

/// The row under the lane of each mark's label: the first where it does not run into the label
/// before it (about 7 px a character).
fn label_rows(scale: &Scale, marks: &[Mark], px: &dyn Fn(f64) -> f64) -> Vec<usize> {
    let mut ends: Vec<f64> = Vec::new();
    let mut rows = Vec::new();
    for mark in marks {
        let x = px(scale.x(mark.start));
        let caption = mark.caption();
        let width = label_width(&caption);
        let (from, to) = if ends_at_its_mark(x, &caption) { (x - width, x) } else { (x, x + width) };
        let row = ends.iter().position(|&end| from > end + 8.0).unwrap_or(ends.len());
        if row == ends.len() {
            ends.push(to);
        } else {
            ends[row] = to;
        }
        rows.push(row);
    }
    rows
}

/// A label's estimated width: about 7 px a character at 12 px.
#[allow(clippy::cast_precision_loss)]
fn label_width(caption: &str) -> f64 {
    caption.chars().count() as f64 * 7.0
}

/// Whether a label at `x` would run off the plot's right edge: then it ends at its mark.
fn ends_at_its_mark(x: f64, caption: &str) -> bool {
    x + label_width(caption) > PLOT_RIGHT + 10.0
}

fn fit(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(room - 1).collect();
    cut.push('…');
    cut
}

fn write_findings(report: &Report, about: &[About], body: &mut String) {
    if report.view == View::Timeline {
        return;
    }
    let tz = report.display_tz;
    body.push_str("<section id=\"findings\">\n<h2>Findings</h2>\n");
    for (index, finding) in report.findings.iter().enumerate() {
        let number = index + 1;
        let (jobs, rounds, instances) = about
            .get(index)
            .map_or_else(Default::default, |a| (numbers(&a.jobs), numbers(&a.rounds), numbers(&a.instances)));
        let _ = writeln!(
            body,
            "<article class=\"finding {}\" id=\"finding-{number}\" data-finding=\"{index}\" data-jobs=\"{jobs}\" data-rounds=\"{rounds}\" data-instances=\"{instances}\">",
            finding.severity.name()
        );
        let _ = writeln!(
            body,
            "<h3><span class=\"sev {}\">{}</span> [{number}] {} <small>at {}</small></h3>",
            finding.severity.name(),
            finding.severity.name().to_uppercase(),
            finding.code,
            escape(&format_datetime(finding.at, tz))
        );
        let _ = writeln!(
            body,
            "<p class=\"summary\">{}</p>",
            escape(&fill_summary(&finding.summary, &finding.metrics, tz))
        );
        if !finding.caused_by.is_empty() {
            let causes: Vec<String> = finding
                .caused_by
                .iter()
                .filter_map(|&i| {
                    report.findings.get(i).map(|f| format!("<a href=\"#finding-{}\">[{}] {}</a>", i + 1, i + 1, f.code))
                })
                .collect();
            let _ = writeln!(body, "<p class=\"follows\">follows from: {}</p>", causes.join(", "));
        }
        if let Some(root) = super::root_cause(finding, tz) {
            let _ = writeln!(body, "<p class=\"follows\">first cause: {}</p>", escape(&root));
        }
        write_metrics(finding, tz, body);
        if !finding.derivations.is_empty() {
            body.push_str("<h4>Arithmetic</h4>\n<pre class=\"arithmetic\">");
            for step in &finding.derivations {
                let value = finding.get(step.result).map(|v| format!(" = {}", human_value(v, tz))).unwrap_or_default();
                let _ = writeln!(body, "{}", escape(&format!("{} = {}{value}", step.result, step.formula)));
            }
            body.push_str("</pre>\n");
        }
        body.push_str("<h4>Evidence</h4>\n<ol class=\"evidence\">\n");
        for &id in &finding.evidence {
            let event = report.timeline.get(id);
            let mut source = format!("{}:{}", report.timeline.path(event), event.origin().line);
            if let Some(instance) = event.instance.as_deref() {
                let _ = write!(source, " ({instance})");
            }
            let _ = writeln!(
                body,
                "<li><code class=\"source\">{}</code> <span class=\"at\">{}</span> <span class=\"kind\">{}</span><pre class=\"raw\">{}</pre></li>",
                escape(&source),
                escape(&format_datetime(event.at(), tz)),
                event.kind.name(),
                escape_raw(report.raw(id))
            );
        }
        body.push_str("</ol>\n");
        if !finding.notes.is_empty() {
            body.push_str("<h4>Notes</h4>\n<ul class=\"notes\">\n");
            for note in &finding.notes {
                let _ = writeln!(body, "<li>{}</li>", escape(note));
            }
            body.push_str("</ul>\n");
        }
        body.push_str("</article>\n");
    }
    body.push_str("</section>\n");
}

/// Where `render` writes a whole timeline's rows into the page.
const EVENTS_GO_HERE: &str = "<!-- events -->";

/// Every shown event as a row: time, kind, ids and `file:line` (a whole timeline is shown in
/// words, never by its raw lines).
fn write_events(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let tz = report.display_tz;
    let shown = report.shown_events();
    let mut chunk = String::from("<section id=\"events\">\n<h2>Events</h2>\n");
    if let Some(filter) = &report.shown {
        let _ = writeln!(
            chunk,
            "<p>The {}: {} of the timeline&#39;s {}.</p>",
            escape(&filter.filter.describe(tz)),
            shown.len(),
            report.timeline.len()
        );
    }
    chunk.push_str("<table>\n<tr><th>time</th><th>kind</th><th>ids</th><th>source</th></tr>\n");
    for &id in &shown {
        let event = report.timeline.get(id);
        let mut ids = Vec::new();
        for (label, value) in [
            ("job", event.job_id.as_deref()),
            ("run", event.run_id.as_deref()),
            ("item", event.item.as_deref()),
            ("worker", event.worker.as_deref()),
            ("instance", event.instance.as_deref()),
        ] {
            if let Some(value) = value {
                ids.push(format!("{label}={value}"));
            }
        }
        let _ = writeln!(
            chunk,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}:{}</code></td></tr>",
            escape(&format_datetime(event.at(), tz)),
            event.kind.name(),
            escape(&ids.join(" ")),
            escape(report.timeline.path(event)),
            event.origin().line
        );
        if chunk.len() > 1 << 16 {
            out.write_all(chunk.as_bytes())?;
            chunk.clear();
        }
    }
    chunk.push_str("</table>\n</section>\n");
    out.write_all(chunk.as_bytes())
}

fn write_metrics(finding: &Finding, tz: chrono_tz::Tz, body: &mut String) {
    if finding.metrics.is_empty() {
        return;
    }
    body.push_str("<details class=\"metrics\"><summary>Metrics</summary>\n<table>\n");
    for (name, value) in &finding.metrics {
        let _ = writeln!(body, "<tr><th>{name}</th><td>{}</td></tr>", escape(&detailed_value(value, tz)));
    }
    body.push_str("</table></details>\n");
}

fn write_inputs(report: &Report, body: &mut String) {
    body.push_str("<section id=\"inputs\">\n<h2>Inputs</h2>\n<table>\n<tr><th>file</th><th>kind</th><th>zone</th><th>lines</th><th>used</th><th>ignored</th><th>rejected</th></tr>\n");
    for input in &report.inputs {
        let _ = writeln!(
            body,
            "<tr><td><code>{}</code></td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&input.path),
            input.kind,
            input.format,
            escape(input.tz.as_deref().unwrap_or("")),
            input.lines,
            input.used,
            input.ignored,
            input.rejected
        );
    }
    body.push_str("</table>\n");
    if !report.assumptions.is_empty() {
        body.push_str("<h3>Assumptions</h3>\n<ul>\n");
        for assumption in &report.assumptions {
            let _ = writeln!(body, "<li>{}</li>", escape(assumption));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("</section>\n");
}

const STYLE: &str = r"
body{font:14px/1.45 'DejaVu Sans',Verdana,Arial,Helvetica,sans-serif;color:#1b1f23;margin:0 auto;padding:16px 20px;max-width:1240px;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #dde1e6}h3{font-size:15px;margin:0 0 6px}h4{font-size:13px;margin:10px 0 4px;color:#444}
.sub{color:#555;margin:0}.report-warning{color:#7a4a00;background:#fff6e0;border-left:4px solid #e0a100;padding:6px 10px;margin:6px 0}
ol.chain{list-style:none;padding:0;margin:0}ol.chain li{margin:3px 0}
.sev{font-weight:bold;text-decoration:none}.sev.error{color:#c62828}.sev.warning{color:#9a5b00}.sev.info{color:#546e7a}
.filters label{margin-right:14px}.filters select{max-width:320px}#shown-count{color:#555}
.tools button{margin-right:4px}.hint{color:#666;font-size:12px}
#chart{display:block;border:1px solid #dde1e6;cursor:grab;user-select:none;touch-action:none;max-width:none}
#chart.dragging{cursor:grabbing}#chart text{font-size:12px}
#chart .lane-title{font-weight:bold;font-size:13px}#chart .lane-detail{fill:#555;font-size:11px}
#chart .label{fill:#222;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}#chart .label.crit{fill:#c62828;font-weight:bold}
#chart .tick{text-anchor:middle;fill:#333}#chart .zoom{text-anchor:middle;fill:#7a5a00;font-size:11px}
#chart .grid{stroke:#dde1e6}
.finding{border:1px solid #dde1e6;border-radius:6px;padding:10px 14px;margin:10px 0}
.finding.error{border-left:5px solid #c62828}.finding.warning{border-left:5px solid #e0a100}.finding.info{border-left:5px solid #8796a8}
.finding h3 small{font-weight:normal;color:#555}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0}pre.arithmetic{background:#f6f8fa;padding:6px 8px}
ol.evidence{padding-left:22px}ol.evidence li{margin:4px 0}pre.raw{background:#f6f8fa;padding:3px 6px;font-size:12px}
.source{font-weight:bold}.at{color:#333}.kind{color:#555}
table{border-collapse:collapse}th,td{border:1px solid #dde1e6;padding:3px 8px;text-align:left;vertical-align:top}
.note{color:#555}footer{color:#777;font-size:12px;margin-top:24px}
.hidden{display:none}
";

/// The page's script: a constant (no byte of the inputs is ever written into it). Zoom and pan
/// map each mark's place on the axis (`data-u0`, `data-u1`, a share of the plot's width) to
/// pixels of the view; ticks are drawn per segment of the axis at a round step of the display
/// zone's wall clock; the filters hide the findings, marks and lanes that are not about the
/// chosen job, round and instance.
const SCRIPT: &str = r"
(function () {
  'use strict';
  var svg = document.getElementById('chart');
  if (svg) {
    var left = +svg.dataset.left, right = +svg.dataset.right, axisY = +svg.dataset.axis;
    var zone = svg.dataset.zone, offset = +svg.dataset.offset;
    var view = [0, 1];
    var px = function (u) { return left + (u - view[0]) / (view[1] - view[0]) * (right - left); };
    var segments = Array.prototype.map.call(document.querySelectorAll('#segments > g'), function (g) {
      return { t0: +g.dataset.t0, t1: +g.dataset.t1, u0: +g.dataset.u0, u1: +g.dataset.u1 };
    });
    var steps = [10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
    var clock = function (ms, step) {
      var options = { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
      if (step < 6e4) { options.second = '2-digit'; }
      if (step < 1e3) { options.fractionalSecondDigits = step < 100 ? 3 : (step < 1e3 ? 2 : 1); }
      try { return new Intl.DateTimeFormat('en-GB', options).format(new Date(ms)); }
      catch (e) { return new Date(ms + offset).toISOString().slice(11, step < 1e3 ? 22 : (step < 6e4 ? 19 : 16)); }
    };
    var ns = 'http://www.w3.org/2000/svg';
    var draw = function () {
      Array.prototype.forEach.call(svg.querySelectorAll('[data-u0]'), function (g) {
        if (g.parentNode.id === 'segments') { return; }
        var x0 = px(+g.dataset.u0), has1 = g.dataset.u1 !== undefined, x1 = has1 ? px(+g.dataset.u1) : x0;
        Array.prototype.forEach.call(g.children, function (c) {
          if (c.classList.contains('point')) {
            if (c.tagName === 'circle') { c.setAttribute('cx', x0); } else { c.setAttribute('transform', 'translate(' + x0 + ',21)'); }
          } else if (c.classList.contains('shape')) {
            c.setAttribute('x', x0); c.setAttribute('width', Math.max(2, x1 - x0));
          } else if (c.classList.contains('label')) {
            c.setAttribute('x', x0);
            c.setAttribute('text-anchor', x0 + c.getComputedTextLength() > right + 10 ? 'end' : 'start');
          } else if (c.classList.contains('zoom')) {
            c.setAttribute('x', (x0 + x1) / 2);
          }
        });
      });
      var ticks = document.getElementById('ticks');
      while (ticks.firstChild) { ticks.removeChild(ticks.firstChild); }
      var statics = document.getElementById('static-ticks');
      if (statics) { statics.parentNode.removeChild(statics); }
      var last = -1e9;
      segments.forEach(function (s) {
        var perMs = (s.u1 - s.u0) / Math.max(1, s.t1 - s.t0) * (right - left) / (view[1] - view[0]);
        var step = steps.find(function (st) { return st * perMs >= 90; });
        if (!step) { return; }
        var t = Math.ceil((s.t0 + offset) / step) * step - offset;
        for (; t <= s.t1; t += step) {
          var x = px(s.u0 + (t - s.t0) / Math.max(1, s.t1 - s.t0) * (s.u1 - s.u0));
          if (x < left - 1 || x > right + 1 || x - last < 90) { continue; }
          last = x;
          var line = document.createElementNS(ns, 'line');
          line.setAttribute('class', 'grid'); line.setAttribute('x1', x); line.setAttribute('x2', x);
          line.setAttribute('y1', 0); line.setAttribute('y2', axisY + 5);
          ticks.appendChild(line);
          var text = document.createElementNS(ns, 'text');
          text.setAttribute('class', 'tick'); text.setAttribute('x', x); text.setAttribute('y', axisY + 18);
          text.textContent = clock(t, step);
          ticks.appendChild(text);
        }
      });
    };
    var zoomAt = function (factor, u) {
      var width = Math.min(1, Math.max(1e-6, (view[1] - view[0]) * factor));
      var start = u - (u - view[0]) * width / (view[1] - view[0]);
      start = Math.min(Math.max(0, start), 1 - width);
      view = [start, start + width];
      draw();
    };
    var uAt = function (clientX) {
      var box = svg.getBoundingClientRect();
      var x = (clientX - box.left) * svg.viewBox.baseVal.width / box.width;
      return view[0] + (x - left) / (right - left) * (view[1] - view[0]);
    };
    svg.addEventListener('wheel', function (e) {
      e.preventDefault();
      zoomAt(e.deltaY < 0 ? 0.8 : 1.25, Math.min(1, Math.max(0, uAt(e.clientX))));
    }, { passive: false });
    var drag = null;
    svg.addEventListener('pointerdown', function (e) { drag = { x: e.clientX, view: view.slice() }; svg.classList.add('dragging'); });
    window.addEventListener('pointerup', function () { drag = null; svg.classList.remove('dragging'); });
    window.addEventListener('pointermove', function (e) {
      if (!drag) { return; }
      var box = svg.getBoundingClientRect();
      var du = (e.clientX - drag.x) * svg.viewBox.baseVal.width / box.width / (right - left) * (drag.view[1] - drag.view[0]);
      var width = drag.view[1] - drag.view[0];
      var start = Math.min(Math.max(0, drag.view[0] - du), 1 - width);
      view = [start, start + width];
      draw();
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-zoom]'), function (b) {
      b.addEventListener('click', function () {
        var middle = (view[0] + view[1]) / 2;
        if (b.dataset.zoom === 'in') { zoomAt(0.5, middle); }
        else if (b.dataset.zoom === 'out') { zoomAt(2, middle); }
        else { view = [0, 1]; draw(); }
      });
    });
    draw();
  }

  // Filters: a finding is shown when it is about every chosen value.
  var selects = document.querySelectorAll('select[data-filter]');
  var apply = function () {
    var chosen = {};
    Array.prototype.forEach.call(selects, function (s) { if (s.value !== '') { chosen[s.dataset.filter] = s.value; } });
    var shown = {}, count = 0, total = 0;
    Array.prototype.forEach.call(document.querySelectorAll('article.finding'), function (a) {
      var ok = Object.keys(chosen).every(function (k) { return (a.dataset[k] || '').split(' ').indexOf(chosen[k]) >= 0; });
      a.classList.toggle('hidden', !ok);
      shown[a.dataset.finding] = ok; total += 1; if (ok) { count += 1; }
    });
    Array.prototype.forEach.call(document.querySelectorAll('#chart .mark'), function (m) {
      // A mark several findings draw stays while any of them is shown.
      m.classList.toggle('hidden', m.dataset.finding.split(' ').every(function (f) { return shown[f] === false; }));
    });
    var y = 8;
    Array.prototype.forEach.call(document.querySelectorAll('#chart .lane'), function (lane) {
      var any = lane.querySelector('.mark:not(.hidden)') !== null;
      lane.classList.toggle('hidden', !any);
      if (any) { lane.setAttribute('transform', 'translate(0,' + y + ')'); y += +lane.dataset.height; }
    });
    var counter = document.getElementById('shown-count');
    if (counter) { counter.textContent = Object.keys(chosen).length ? count + ' of ' + total + ' findings shown' : ''; }
  };
  Array.prototype.forEach.call(selects, function (s) { s.addEventListener('change', apply); });
  var form = document.querySelector('form.filters');
  if (form) { form.addEventListener('reset', function () { setTimeout(apply, 0); }); }
})();
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_a_case_is_text_in_the_page() {
        assert_eq!(
            escape("</script><img src=x onerror=alert(1)>"),
            "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(escape("a\"b'c&d"), "a&quot;b&#39;c&amp;d");
        // Control and invisible characters are written out, as every human format does.
        assert_eq!(escape("PR-1\u{202E}kcab\u{1b}[2J"), "PR-1&lt;U+202E&gt;kcab\\x1b[2J");
    }

    #[test]
    fn the_script_and_style_fetch_nothing() {
        for text in [SCRIPT, STYLE] {
            // The SVG namespace is a name, never fetched.
            let text = text.replace("'http://www.w3.org/2000/svg'", "");
            for forbidden in ["http:", "https:", "'//", "\"//", "url(", "@import", "fetch(", "XMLHttpRequest", "src="] {
                assert!(!text.contains(forbidden), "{forbidden}");
            }
        }
    }
}
