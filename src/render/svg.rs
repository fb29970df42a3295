//! `--format svg`: the chart (`render::chart`) as a self-contained SVG swimlane picture, for
//! people who would rather look than read: 1200 px wide (a laptop screen, a GitHub comment), one
//! lane per round or job attempt with its name on the left, bars for spans, diamonds for
//! instants, a red line across every lane at a restart, a time axis in the display zone named by
//! its abbreviation, broken where the incident is dense so that its decisive seconds get a scale
//! of their own (`render::scale`), and a legend of what each look means.
//!
//! Nothing is measured here: each mark's place is its time from the chart. Text widths are
//! estimated (0.6 em a character, DejaVu Sans' average) only to keep labels from overlapping: a
//! label that would run into the previous one in its lane goes one row lower.
//!
//! Every text from the evidence (ids, items) is escaped as XML; line breaks and tabs become
//! spaces, and the characters XML 1.0 forbids (other control characters) and invisible ones (bidi
//! overrides, zero-width spaces) are written out as `terminal::visible_line` writes them
//! (`\x1b`, `<U+202E>`). No scripts, no external fonts or images: the file is safe
//! to open and renders the same anywhere (font-family falls back to the viewer's sans-serif).

use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::{DateTime, Utc};

use super::chart::{self, Chart, Element, Mark};
use super::scale::Scale;
use crate::model::Report;
use crate::model::report::View;

pub struct Svg;

impl super::Renderer for Svg {
    fn name(&self) -> &'static str {
        "svg"
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(picture(&chart::chart(report)).as_bytes())
    }

    fn shows_raw(&self, _view: View) -> bool {
        false
    }
}

/// The picture's width: a GitHub comment column and a laptop screen show it unscaled or nearly.
pub const WIDTH: f64 = 1200.0;
const MARGIN: f64 = 20.0;
/// Where the lanes' time area begins (the lane names are left of it) and ends.
const PLOT_LEFT: f64 = 300.0;
const PLOT_RIGHT: f64 = WIDTH - 30.0;
const FONT: &str = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif";
/// Label text size, and the estimated width of one of its characters.
const LABEL_SIZE: f64 = 12.0;
const CHAR_EM: f64 = 0.6;
/// The same for running text, where a cut matters more than a few pixels of margin.
const STORY_EM: f64 = 0.56;
/// A lane's bar band: its top below the lane's top, and its height.
const BAR_TOP: f64 = 12.0;
const BAR_HEIGHT: f64 = 18.0;
/// The thinner band under the bar for windows (renewal due, expiry).
const BAND_GAP: f64 = 3.0;
const BAND_HEIGHT: f64 = 7.0;
const LABEL_ROW: f64 = 16.0;
/// The most lines of one title, warning or headline line: every real one fits whole (a headline
/// is a sentence or two); only an input made to be huge (an id of a megabyte) is cut.
const MAX_LINES: usize = 8;

const RED: &str = "#c62828";
/// The report's warnings: the colour of caution, apart from the red of what went wrong.
const WARNING: &str = "#9a5b00";
const BACKGROUND: &str = "#ffffff";

/// The look of each element: fill colour, and whether it is a bar, a band under the bar, a
/// diamond or a line.
pub fn colour(element: Element, crit: bool) -> &'static str {
    match element {
        Element::Lock => "#3b6fb6",
        Element::Run => "#8796a8",
        Element::RenewalWindow => "#e0a100",
        Element::ExpiryWindow => "#8e44ad",
        Element::Overlap | Element::Restart | Element::Pick | Element::Failure => RED,
        Element::Expiry => "#212121",
        Element::Rerun => "#2e7d32",
        Element::Unlogged => "#ef6c00",
        Element::Evidence if crit => RED,
        Element::Evidence => "#546e7a",
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Bar,
    Band,
    Shade,
    Diamond,
    Line,
}

fn shape(mark: &Mark) -> Shape {
    match (mark.element, mark.end.is_some()) {
        (Element::RenewalWindow | Element::ExpiryWindow, _) => Shape::Band,
        (Element::Overlap, _) | (Element::Restart, true) => Shape::Shade,
        (Element::Restart, false) => Shape::Line,
        (Element::Lock | Element::Run, _) | (_, true) => Shape::Bar,
        (_, false) => Shape::Diamond,
    }
}

/// The closest two moments of the chart, in pixels (`render::scale`): two diamonds 14 px wide
/// with room to tell them apart.
const MIN_GAP: f64 = 24.0;
/// The closest two tick labels of the time axis.
const TICK_SPACING: f64 = 64.0;
/// The tint of a dense stretch, drawn at its own scale.
const DENSE_TINT: &str = "#fff3cd";

/// Text from the evidence as XML character data or an attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::terminal::visible_line(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows neither (control characters are written out above).
            '\u{FFFE}' | '\u{FFFF}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[allow(clippy::cast_precision_loss)]
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * CHAR_EM
}

/// `text` cut to about `width` pixels at `size`, with an ellipsis when cut.
fn fit(text: &str, width: f64, size: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let room = (width / (size * CHAR_EM)).floor().max(2.0) as usize;
    if text.chars().count() <= room {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(room - 1).collect();
    cut.push('…');
    cut
}

/// `text` in lines of at most `room` characters, broken at spaces; at most `lines` of them, the
/// last ending in an ellipsis when the text goes on.
fn wrap(text: &str, room: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    if out.len() > lines {
        out.truncate(lines);
        let last = out.last_mut().expect("lines > 0");
        let kept: String = last.chars().take(room.saturating_sub(1)).collect();
        *last = format!("{kept}…");
    }
    out
}

/// Where each label of a lane goes: its row (0 is the first row under the bars), its x and
/// whether it is anchored at its end (near the right edge).
fn place_labels(axis: &Scale, marks: &[Mark]) -> Vec<(usize, f64, bool)> {
    let mut row_ends: Vec<f64> = Vec::new();
    let mut places = Vec::new();
    for mark in marks {
        let x = axis.x(mark.start);
        let width = text_width(&mark.caption(), LABEL_SIZE);
        let (left, right, end_anchored) =
            if x + width > PLOT_RIGHT + 20.0 { (x - width, x, true) } else { (x, x + width, false) };
        let row = row_ends.iter().position(|&end| left > end + 10.0).unwrap_or(row_ends.len());
        if row == row_ends.len() {
            row_ends.push(right);
        } else {
            row_ends[row] = right;
        }
        places.push((row, x, end_anchored));
    }
    places
}

/// The SVG document of `chart`.
#[allow(clippy::too_many_lines)] // one picture, drawn top to bottom
pub fn picture(chart: &Chart) -> String {
    let tz = chart.tz;
    let abbreviation = chart.zone_abbreviation().unwrap_or_else(|| tz.name().to_string());
    let zone = match chart.distinct_abbreviation() {
        Some(abbreviation) => format!("{abbreviation} ({})", tz.name()),
        None => tz.name().to_string(),
    };
    let mut body = String::new();

    // The title: what happened, wrapped, whole.
    let mut y = MARGIN + 14.0;
    for line in wrap(&chart.title, 98, MAX_LINES) {
        let _ = writeln!(
            body,
            r##"<text x="{MARGIN}" y="{y}" font-size="18" font-weight="bold" fill="#111">{}</text>"##,
            escape(&line)
        );
        y += 24.0;
    }
    // What would make the picture wrong (defaults in force, a filter), before the story.
    for warning in &chart.warnings {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let room = ((WIDTH - 2.0 * MARGIN - 16.0) / (13.0 * CHAR_EM)) as usize;
        for (i, part) in wrap(&format!("WARNING: {warning}"), room, MAX_LINES).iter().enumerate() {
            let x = MARGIN + if i == 0 { 0.0 } else { 16.0 };
            let _ = writeln!(
                body,
                r#"<text x="{x}" y="{y}" font-size="13" font-weight="bold" fill="{WARNING}">{}</text>"#,
                escape(part)
            );
            y += 17.0;
        }
    }
    if !chart.warnings.is_empty() {
        y += 4.0;
    }
    // What the title follows from: the headline's other lines, indented by depth.
    for (depth, line) in &chart.story {
        #[allow(clippy::cast_precision_loss)]
        let x = MARGIN + 4.0 + *depth as f64 * 16.0;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let room = ((WIDTH - MARGIN - x) / (13.0 * STORY_EM)) as usize;
        for (i, part) in wrap(line, room, MAX_LINES).iter().enumerate() {
            let indent = if i == 0 { 0.0 } else { 16.0 };
            let _ = writeln!(
                body,
                r##"<text x="{}" y="{y}" font-size="13" fill="#333">{}</text>"##,
                x + indent,
                escape(part)
            );
            y += 17.0;
        }
    }
    if !chart.story.is_empty() {
        y += 4.0;
    }
    let dates = chart.range().map(|(start, end)| {
        let day = |t: DateTime<Utc>| t.with_timezone(&tz).format("%Y-%m-%d").to_string();
        if day(start) == day(end) { day(start) } else { format!("{} to {}", day(start), day(end)) }
    });
    let subtitle = match &dates {
        Some(dates) => format!("{dates}, times in {zone}"),
        None => format!("Times in {zone}"),
    };
    let _ = writeln!(body, r##"<text x="{MARGIN}" y="{y}" font-size="13" fill="#555">{}</text>"##, escape(&subtitle));
    y += 22.0;

    let Some(axis) = Scale::of(chart, PLOT_LEFT, PLOT_RIGHT, MIN_GAP) else {
        y += 10.0;
        let _ = writeln!(
            body,
            r##"<text x="{MARGIN}" y="{y}" font-size="14" fill="#333">No warning or error finding to draw.</text>"##
        );
        y += 28.0;
        footer(&mut body, chart, &mut y);
        return document(&body, y + MARGIN);
    };

    // Lanes, each as tall as its rows of labels need.
    let lanes_top = y;
    let mut lane_boxes = Vec::new();
    for lane in &chart.lanes {
        let places = place_labels(&axis, &lane.marks);
        let rows = places.iter().map(|p| p.0 + 1).max().unwrap_or(0);
        #[allow(clippy::cast_precision_loss)]
        let height = BAR_TOP + BAR_HEIGHT + BAND_GAP + BAND_HEIGHT + 8.0 + rows as f64 * LABEL_ROW + 6.0;
        lane_boxes.push((y, height, places));
        y += height;
    }
    let lanes_bottom = y;

    // Stripes and the grid under everything.
    for (i, (top, height, _)) in lane_boxes.iter().enumerate() {
        let fill = if i % 2 == 0 { "#f4f6f8" } else { BACKGROUND };
        let _ = writeln!(
            body,
            r#"<rect x="{MARGIN}" y="{top}" width="{}" height="{height}" fill="{fill}"/>"#,
            WIDTH - 2.0 * MARGIN
        );
    }
    // Each dense stretch, drawn at a scale of its own, is tinted across the lanes.
    let bands = axis.bands();
    for band in &bands {
        let _ = writeln!(
            body,
            r#"<rect class="dense" x="{:.1}" y="{lanes_top}" width="{:.1}" height="{}" fill="{DENSE_TINT}"/>"#,
            band.x0,
            band.x1 - band.x0,
            lanes_bottom - lanes_top
        );
    }
    let ticks = axis.ticks(tz, TICK_SPACING);
    for (_, x, _) in &ticks {
        let _ = writeln!(
            body,
            r##"<line x1="{x:.1}" y1="{lanes_top}" x2="{x:.1}" y2="{lanes_bottom}" stroke="#dde1e6" stroke-width="1"/>"##
        );
    }

    // A restart ends every job its process ran, not only the one in its lane: a line across all.
    for mark in chart.lanes.iter().flat_map(|l| &l.marks).filter(|m| shape(m) == Shape::Line) {
        let (x, stroke) = (axis.x(mark.start), colour(mark.element, mark.crit));
        let _ = writeln!(
            body,
            r#"<line class="{}" x1="{x:.1}" y1="{lanes_top}" x2="{x:.1}" y2="{lanes_bottom}" stroke="{stroke}" stroke-width="2" stroke-dasharray="6 4"/>"#,
            mark.element.name()
        );
    }

    let mut mark_number = 0;
    for (lane_number, (lane, (top, height, places))) in chart.lanes.iter().zip(&lane_boxes).enumerate() {
        let _ = writeln!(body, r#"<g id="lane-{}" class="lane">"#, lane_number + 1);
        // An invisible rectangle spans the lane, so that its box is the lane's, whatever is drawn.
        let _ = writeln!(
            body,
            r#"<rect x="{MARGIN}" y="{top}" width="{}" height="{height}" fill="none"/>"#,
            WIDTH - 2.0 * MARGIN
        );
        let name = lane.keys.first().map_or("", String::as_str);
        let _ = writeln!(body, "<title>{}</title>", escape(name));
        let label_room = PLOT_LEFT - MARGIN - 16.0;
        let _ = writeln!(
            body,
            r##"<text x="{}" y="{}" font-size="13" font-weight="bold" fill="#111">{}</text>"##,
            MARGIN + 8.0,
            top + BAR_TOP + 13.0,
            escape(&fit(&lane.title, label_room, 13.0))
        );
        if !lane.detail.is_empty() {
            let _ = writeln!(
                body,
                r##"<text x="{}" y="{}" font-size="11" fill="#555">{}</text>"##,
                MARGIN + 8.0,
                top + BAR_TOP + 29.0,
                escape(&fit(&lane.detail, label_room, 11.0))
            );
        }
        let bar_y = top + BAR_TOP;
        let band_y = bar_y + BAR_HEIGHT + BAND_GAP;
        let labels_y = band_y + BAND_HEIGHT + 8.0;
        // Bars first, then bands and shades, then instants on top.
        let order = |m: &Mark| match shape(m) {
            Shape::Bar => 0,
            Shape::Band => 1,
            Shape::Shade => 2,
            Shape::Line | Shape::Diamond => 3,
        };
        // Labels after every mark and leader line of the lane: no line crosses a label.
        let mut labels = String::new();
        let mut drawn: Vec<(usize, &Mark)> = lane.marks.iter().enumerate().collect();
        drawn.sort_by_key(|(_, m)| order(m));
        for (index, mark) in drawn {
            mark_number += 1;
            let fill = colour(mark.element, mark.crit);
            let x = axis.x(mark.start);
            let width = mark.end.map_or(0.0, |end| (axis.x(end) - x).max(2.0));
            let _ = writeln!(
                body,
                r#"<g id="m{mark_number}-{}" class="mark {}">"#,
                mark.element.name(),
                mark.element.name()
            );
            let _ = writeln!(body, "<title>{} ({})</title>", escape(&mark.caption()), mark.code);
            match shape(mark) {
                Shape::Bar => {
                    let _ = writeln!(
                        body,
                        r#"<rect x="{x:.1}" y="{bar_y}" width="{width:.1}" height="{BAR_HEIGHT}" rx="3" fill="{fill}"/>"#
                    );
                }
                Shape::Band => {
                    let _ = writeln!(
                        body,
                        r#"<rect x="{x:.1}" y="{band_y}" width="{width:.1}" height="{BAND_HEIGHT}" rx="2" fill="{fill}"/>"#
                    );
                }
                Shape::Shade => {
                    let _ = writeln!(
                        body,
                        r#"<rect x="{x:.1}" y="{}" width="{width:.1}" height="{}" fill="{fill}" fill-opacity="0.35" stroke="{fill}" stroke-width="1.5"/>"#,
                        bar_y - 4.0,
                        BAR_HEIGHT + 8.0
                    );
                }
                // Its line across every lane is drawn with the grid, under every label.
                Shape::Line => diamond(&mut body, x, bar_y + BAR_HEIGHT / 2.0, 8.0, fill),
                Shape::Diamond if mark.element == Element::Unlogged => {
                    ring(&mut body, x, bar_y + BAR_HEIGHT / 2.0, fill);
                }
                Shape::Diamond => diamond(&mut body, x, bar_y + BAR_HEIGHT / 2.0, 7.0, fill),
            }
            // The label, under the bars, with a leader line up to its mark.
            let (row, label_x, end_anchored) = places[index];
            #[allow(clippy::cast_precision_loss)]
            let baseline = labels_y + 10.0 + row as f64 * LABEL_ROW;
            let leader_from = if shape(mark) == Shape::Band { band_y + BAND_HEIGHT } else { bar_y + BAR_HEIGHT };
            let _ = writeln!(
                body,
                r##"<line x1="{label_x:.1}" y1="{leader_from}" x2="{label_x:.1}" y2="{}" stroke="#9aa4ae" stroke-width="1"/>"##,
                baseline - 10.0
            );
            let anchor = if end_anchored { "end" } else { "start" };
            let text_fill = if mark.crit { RED } else { "#222" };
            let weight = if mark.crit { r#" font-weight="bold""# } else { "" };
            let _ = writeln!(
                labels,
                r##"<text x="{label_x:.1}" y="{baseline}" font-size="{LABEL_SIZE}" text-anchor="{anchor}" fill="{text_fill}"{weight} stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke">{}</text>"##,
                escape(&mark.caption())
            );
            body.push_str("</g>\n");
        }
        body.push_str(&labels);
        body.push_str("</g>\n");
    }

    // The time axis, in the display zone's wall clock.
    let axis_y = lanes_bottom + 4.0;
    let _ = writeln!(
        body,
        r##"<g id="axis"><line x1="{PLOT_LEFT}" y1="{axis_y}" x2="{PLOT_RIGHT}" y2="{axis_y}" stroke="#333" stroke-width="1"/>"##
    );
    for (_, x, text) in &ticks {
        let _ = writeln!(
            body,
            r##"<line x1="{x:.1}" y1="{axis_y}" x2="{x:.1}" y2="{}" stroke="#333" stroke-width="1"/>"##,
            axis_y + 6.0
        );
        let _ = writeln!(
            body,
            r##"<text x="{x:.1}" y="{}" font-size="12" text-anchor="middle" fill="#333">{}</text>"##,
            axis_y + 20.0,
            escape(text)
        );
    }
    // A break where the scale changes, and each dense stretch's zoom under it (where it fits).
    let mut zoom_end = f64::MIN;
    for band in &bands {
        for x in [band.x0, band.x1] {
            if x > PLOT_LEFT + 1.0 && x < PLOT_RIGHT - 1.0 {
                let _ = writeln!(
                    body,
                    r##"<path class="axis-break" d="M {:.1} {:.1} L {:.1} {:.1} M {:.1} {:.1} L {:.1} {:.1}" stroke="#333" stroke-width="1.5"/>"##,
                    x - 5.0,
                    axis_y + 5.0,
                    x - 1.0,
                    axis_y - 5.0,
                    x + 1.0,
                    axis_y + 5.0,
                    x + 5.0,
                    axis_y - 5.0
                );
            }
        }
        let text = band.zoom_text();
        let (middle, half) = (f64::midpoint(band.x0, band.x1), text_width(&text, 11.0) / 2.0);
        if middle - half > zoom_end + 6.0 {
            let _ = writeln!(
                body,
                r##"<text class="zoom" x="{middle:.1}" y="{}" font-size="11" text-anchor="middle" fill="#7a5a00">{}</text>"##,
                axis_y + 34.0,
                escape(&text)
            );
            zoom_end = middle + half;
        }
    }
    let _ = writeln!(
        body,
        r##"<text x="{}" y="{}" font-size="12" text-anchor="end" fill="#333" font-weight="bold">{}</text></g>"##,
        PLOT_LEFT - 44.0,
        axis_y + 20.0,
        escape(&abbreviation)
    );
    y = axis_y + if axis.is_broken() { 56.0 } else { 44.0 };

    legend(&mut body, chart, axis.is_broken(), &mut y);
    footer(&mut body, chart, &mut y);
    document(&body, y + MARGIN)
}

fn diamond(body: &mut String, x: f64, y: f64, r: f64, fill: &str) {
    let _ = writeln!(
        body,
        r##"<path d="M {x:.1} {:.1} L {:.1} {y:.1} L {x:.1} {:.1} L {:.1} {y:.1} Z" fill="{fill}" stroke="#ffffff" stroke-width="1"/>"##,
        y - r,
        x + r,
        y + r,
        x - r
    );
}

/// A ring around an instant: it stays visible around a diamond at the same time (a stall
/// recovered unlogged is the rerun itself).
fn ring(body: &mut String, x: f64, y: f64, stroke: &str) {
    let _ =
        writeln!(body, r#"<circle cx="{x:.1}" cy="{y:.1}" r="10" fill="none" stroke="{stroke}" stroke-width="2.5"/>"#);
}

/// What each look means, for the elements this chart has.
fn legend(body: &mut String, chart: &Chart, broken: bool, y: &mut f64) {
    let mut used: Vec<(Element, bool)> = chart
        .lanes
        .iter()
        .flat_map(|l| &l.marks)
        .map(|m| (m.element, m.element == Element::Evidence && m.crit))
        .collect();
    used.sort();
    used.dedup();
    let _ = writeln!(body, r#"<g id="legend">"#);
    let mut x = MARGIN;
    for (element, crit) in used {
        let text = if element == Element::Evidence && crit { "evidence event (error)" } else { element.legend() };
        let width = 34.0 + text_width(text, 12.0);
        if x + width > WIDTH - MARGIN {
            x = MARGIN;
            *y += 20.0;
        }
        let fill = colour(element, crit);
        let (cx, cy) = (x + 12.0, *y - 4.0);
        match element {
            Element::Lock | Element::Run => {
                let _ =
                    writeln!(body, r#"<rect x="{x}" y="{}" width="24" height="12" rx="2" fill="{fill}"/>"#, cy - 6.0);
            }
            Element::RenewalWindow | Element::ExpiryWindow => {
                let _ =
                    writeln!(body, r#"<rect x="{x}" y="{}" width="24" height="7" rx="2" fill="{fill}"/>"#, cy - 3.5);
            }
            Element::Overlap => {
                let _ = writeln!(
                    body,
                    r#"<rect x="{x}" y="{}" width="24" height="14" fill="{fill}" fill-opacity="0.35" stroke="{fill}" stroke-width="1.5"/>"#,
                    cy - 7.0
                );
            }
            Element::Restart => {
                let _ = writeln!(
                    body,
                    r#"<line x1="{cx}" y1="{}" x2="{cx}" y2="{}" stroke="{fill}" stroke-width="2" stroke-dasharray="4 2"/>"#,
                    cy - 8.0,
                    cy + 8.0
                );
                diamond(body, cx, cy, 6.0, fill);
            }
            Element::Unlogged => ring(body, cx, cy, fill),
            _ => diamond(body, cx, cy, 6.0, fill),
        }
        let _ =
            writeln!(body, r##"<text x="{}" y="{}" font-size="12" fill="#333">{}</text>"##, x + 30.0, *y, escape(text));
        x += width + 18.0;
    }
    if broken {
        let text = "drawn at its own scale (×zoom); every label gives the real time";
        if x + 34.0 + text_width(text, 12.0) > WIDTH - MARGIN {
            x = MARGIN;
            *y += 20.0;
        }
        let _ = writeln!(
            body,
            r##"<rect x="{x}" y="{}" width="24" height="14" fill="{DENSE_TINT}" stroke="#d9c27a"/>"##,
            *y - 11.0
        );
        let _ =
            writeln!(body, r##"<text x="{}" y="{}" font-size="12" fill="#333">{}</text>"##, x + 30.0, *y, escape(text));
    }
    body.push_str("</g>\n");
    *y += 24.0;
}

/// What is not drawn, and where the picture comes from.
fn footer(body: &mut String, chart: &Chart, y: &mut f64) {
    if !chart.not_drawn.is_empty() {
        let text = format!("Not drawn: {}", chart.not_drawn.join("; "));
        for line in wrap(&text, 150, 3) {
            let _ = writeln!(
                body,
                r##"<text x="{MARGIN}" y="{}" font-size="12" fill="#555">{}</text>"##,
                *y,
                escape(&line)
            );
            *y += 16.0;
        }
    }
    let _ = writeln!(
        body,
        r##"<text x="{MARGIN}" y="{}" font-size="11" fill="#777">Drawn by leasetrace from the findings' metrics and evidence; red marks the parts that went wrong.</text>"##,
        *y
    );
    *y += 4.0;
}

fn document(body: &str, height: f64) -> String {
    let height = height.ceil();
    let mut out = String::with_capacity(body.len() + 400);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="{FONT}">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="{BACKGROUND}"/>"#);
    out.push_str(body);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::chart::{Lane, Source};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn evidence_text_is_escaped_as_xml() {
        assert_eq!(escape("a<b>&\"c'\u{7}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\\x07 ");
        // A bidi override would turn the label after it around: written out instead.
        assert_eq!(escape("PR-1\u{202E}kcab"), "PR-1&lt;U+202E&gt;kcab");
    }

    #[test]
    fn labels_that_would_overlap_go_a_row_lower() {
        let axis =
            Scale::over(&[at("2026-10-07T00:00:00Z"), at("2026-10-07T01:00:00Z")], PLOT_LEFT, PLOT_RIGHT, MIN_GAP)
                .unwrap();
        let mark = |start: &str| Mark {
            element: Element::Pick,
            label: "picks PR-4412 09:54:05.70".to_string(),
            start: at(start),
            end: None,
            crit: true,
            finding: 0,
            also: Vec::new(),
            code: "duplicate-selection",
            from: Source::Metrics("selected_a_at", None),
        };
        let places = place_labels(
            &axis,
            &[mark("2026-10-07T00:10:00Z"), mark("2026-10-07T00:10:01Z"), mark("2026-10-07T00:50:00Z")],
        );
        let rows: Vec<usize> = places.iter().map(|p| p.0).collect();
        assert_eq!(rows, [0, 1, 0]);
        // The last, 50 minutes into the hour (x 1004), would run 200 px past it: it ends at its mark.
        assert_eq!((places[0].2, places[2].2), (false, true));
    }

    #[test]
    fn a_chart_with_nothing_to_draw_says_so() {
        let chart = Chart {
            tz: chrono_tz::UTC,
            title: "No findings".into(),
            story: Vec::new(),
            chain: Vec::new(),
            warnings: Vec::new(),
            lanes: Vec::<Lane>::new(),
            not_drawn: vec![],
        };
        let svg = picture(&chart);
        assert!(svg.contains("No warning or error finding to draw."), "{svg}");
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\""), "{svg}");
    }
}
