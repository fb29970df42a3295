//! Where a time goes across a picture: a broken axis that gives each dense stretch of a chart its
//! own scale.
//!
//! An incident is minutes of waiting around a few decisive seconds: the reference incident's lock
//! is held from 09:33, and the two picks of the same item come 0.66 s apart at 09:54. On one
//! linear axis 1000 px wide the picks would be 0.4 px apart: one mark. So every two consecutive
//! moments of the chart (the times of its marks: the findings' metrics and evidence) are kept at
//! least `min_gap` pixels apart, and the quiet gaps share what width is left at one scale. A run of
//! gaps that needed more than their share is a dense stretch: it gets one linear scale of its own
//! (its closest two moments `min_gap` apart), narrowest stretch first, as long as dense stretches
//! take at most `DENSE_SHARE` of the width, so that the overview stays; a stretch past that keeps
//! the minimum separation gap by gap. Nothing is tuned to one incident: a dense stretch is
//! wherever the findings put moments close together.
//!
//! The pictures draw each dense stretch as a band with its zoom factor and a break on the axis at
//! each end; every mark keeps its label with its real time.
//!
//! The SVG places marks with `x`; the Mermaid gantt, whose axis is linear in time, is given the
//! times `x` maps back to (`chart_time`); the HTML report hands the knots to its script.

use chrono::{DateTime, Duration, Offset, Utc};
use chrono_tz::Tz;

use super::chart::Chart;

/// At most this share of the width goes to dense stretches.
pub const DENSE_SHARE: f64 = 0.6;

/// One piece of the axis, linear within itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub x0: f64,
    pub x1: f64,
    /// A dense stretch, at a scale of its own (`zoom` times the quiet stretches').
    pub dense: bool,
    pub zoom: f64,
}

impl Segment {
    /// Pixels per second.
    #[allow(clippy::cast_precision_loss)] // milliseconds of a chart: far below 2^53
    pub fn scale(&self) -> f64 {
        let ms = (self.end - self.start).num_milliseconds().max(1) as f64;
        (self.x1 - self.x0) / ms * 1000.0
    }
}

/// A dense stretch as drawn: its times, its place and its zoom (least, greatest).
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub x0: f64,
    pub x1: f64,
    pub zoom: (f64, f64),
}

impl Band {
    /// `×99`, or `×4–240` for a stretch kept apart gap by gap.
    pub fn zoom_text(&self) -> String {
        let (least, most) = (zoom_text(self.zoom.0), zoom_text(self.zoom.1));
        if least == most { format!("×{least}") } else { format!("×{least}–{most}") }
    }
}

/// A zoom factor as the pictures print it: `2.3`, `99`, `4,600`.
#[allow(clippy::cast_possible_truncation)]
pub fn zoom_text(zoom: f64) -> String {
    let digits = (if zoom < 10.0 { (zoom * 10.0).round() / 10.0 } else { zoom.round() }).to_string();
    let (whole, fraction) = digits.split_once('.').unwrap_or((&digits, ""));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if fraction.is_empty() { grouped } else { format!("{grouped}.{fraction}") }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// In time order, end to end, from `left` to `right`.
    pub segments: Vec<Segment>,
    pub left: f64,
    pub right: f64,
}

impl Scale {
    /// The axis of `chart` between `left` and `right`; `None` for a chart with nothing drawn.
    pub fn of(chart: &Chart, left: f64, right: f64, min_gap: f64) -> Option<Scale> {
        let mut times: Vec<DateTime<Utc>> =
            chart.lanes.iter().flat_map(|l| &l.marks).flat_map(|m| std::iter::once(m.start).chain(m.end)).collect();
        times.sort_unstable();
        times.dedup();
        Scale::over(&times, left, right, min_gap)
    }

    /// The axis over `times` (sorted, distinct), with a margin of 4% each side.
    #[allow(clippy::cast_precision_loss)]
    pub fn over(times: &[DateTime<Utc>], left: f64, right: f64, min_gap: f64) -> Option<Scale> {
        let (&first, &last) = (times.first()?, times.last()?);
        let span = (last - first).num_milliseconds();
        let pad = Duration::milliseconds(if span == 0 { 30_000 } else { (span / 25).max(500) });
        let (start, end) = (first - pad, last + pad);
        let width = (right - left).max(1.0);
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]).num_milliseconds().max(1) as f64).collect();
        let pads = 2.0 * pad.num_milliseconds() as f64;
        // So many moments that not even `min_gap` each fits: as far apart as the width allows.
        #[allow(clippy::cast_precision_loss)]
        let min_gap = min_gap.min(width * 0.9 / gaps.len().max(1) as f64);

        // First every gap on its own: at least `min_gap`, else at the quiet scale `k`.
        let mut fixed: Vec<Option<f64>> = vec![None; gaps.len()];
        let mut k = quiet_scale(&gaps, &fixed, pads, width, min_gap);
        // Then each run of forced gaps, the narrowest first, at one scale of its own (its
        // closest gap `min_gap` wide), as long as the runs take at most `DENSE_SHARE` of the width.
        let mut runs = forced_runs(&gaps, k, min_gap);
        runs.sort_by(|a, b| a.2.total_cmp(&b.2));
        let mut taken = 0.0;
        for (from, to, run_width) in runs {
            if taken + run_width > DENSE_SHARE * width {
                break;
            }
            let closest = gaps[from..to].iter().copied().fold(f64::MAX, f64::min);
            let mut trial = fixed.clone();
            for (i, gap) in gaps.iter().enumerate().take(to).skip(from) {
                trial[i] = Some(gap * min_gap / closest);
            }
            let next = quiet_scale(&gaps, &trial, pads, width, min_gap);
            if next > 0.0 {
                fixed = trial;
                k = next;
                taken += run_width;
            }
        }

        // One segment per gap, and the margins; consecutive ones at the same scale joined.
        let mut pieces: Vec<(DateTime<Utc>, DateTime<Utc>, f64)> = Vec::new();
        pieces.push((start, first, k * pad.num_milliseconds() as f64));
        for (i, pair) in times.windows(2).enumerate() {
            let px = fixed[i].unwrap_or_else(|| (gaps[i] * k).max(min_gap));
            pieces.push((pair[0], pair[1], px));
        }
        pieces.push((last, end, k * pad.num_milliseconds() as f64));
        let mut segments: Vec<Segment> = Vec::new();
        let mut x = left;
        for (from, to, px) in pieces {
            let ms = (to - from).num_milliseconds().max(1) as f64;
            let zoom = px / ms / k;
            if let Some(previous) = segments.last_mut()
                && (previous.zoom - zoom).abs() <= 1e-6 * zoom
            {
                previous.end = to;
                previous.x1 += px;
                x += px;
                continue;
            }
            // A stretch hardly denser than the rest is not drawn as one.
            segments.push(Segment { start: from, end: to, x0: x, x1: x + px, dense: zoom >= 1.5, zoom });
            x += px;
        }
        if span == 0 {
            segments.truncate(1);
            segments[0].end = end;
        }
        // Rounding: the last segment ends at the right edge.
        if let Some(last) = segments.last_mut() {
            last.x1 = right;
        }
        Some(Scale { segments, left, right })
    }

    pub fn start(&self) -> DateTime<Utc> {
        self.segments[0].start
    }

    pub fn end(&self) -> DateTime<Utc> {
        self.segments[self.segments.len() - 1].end
    }

    /// The dense stretches as a picture draws them: adjacent dense segments joined (a stretch
    /// that kept the minimum separation gap by gap is several segments), with their least and
    /// greatest zoom.
    pub fn bands(&self) -> Vec<Band> {
        let mut bands: Vec<Band> = Vec::new();
        for segment in self.segments.iter().filter(|s| s.dense) {
            match bands.last_mut() {
                Some(band) if band.end == segment.start => {
                    band.end = segment.end;
                    band.x1 = segment.x1;
                    band.zoom = (band.zoom.0.min(segment.zoom), band.zoom.1.max(segment.zoom));
                }
                _ => bands.push(Band {
                    start: segment.start,
                    end: segment.end,
                    x0: segment.x0,
                    x1: segment.x1,
                    zoom: (segment.zoom, segment.zoom),
                }),
            }
        }
        bands
    }

    /// Whether some stretch has a scale of its own.
    pub fn is_broken(&self) -> bool {
        self.segments.iter().any(|s| s.dense)
    }

    /// Where `at` is drawn (clamped to the axis).
    #[allow(clippy::cast_precision_loss)]
    pub fn x(&self, at: DateTime<Utc>) -> f64 {
        let segment = self.segments.iter().find(|s| at <= s.end).unwrap_or(&self.segments[self.segments.len() - 1]);
        let span = (segment.end - segment.start).num_milliseconds().max(1) as f64;
        let offset = (at - segment.start).num_milliseconds().clamp(0, i64::MAX) as f64;
        (segment.x0 + offset / span * (segment.x1 - segment.x0)).min(segment.x1)
    }

    /// The time that would be drawn at `at`'s place on one linear axis from `start()` to `end()`:
    /// what a picture whose axis is linear in time (Mermaid's gantt) is given.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    pub fn chart_time(&self, at: DateTime<Utc>) -> DateTime<Utc> {
        let span = (self.end() - self.start()).num_milliseconds() as f64;
        let share = (self.x(at) - self.left) / (self.right - self.left).max(1.0);
        self.start() + Duration::milliseconds((share * span).round() as i64)
    }

    /// Ticks at round wall-clock times of `tz`, each segment at its own step, at least
    /// `spacing` pixels apart, with their labels (`09:40`, `09:54:05`, `09:54:05.50`).
    #[allow(clippy::cast_precision_loss)] // steps of at most two weeks, in milliseconds
    pub fn ticks(&self, tz: Tz, spacing: f64) -> Vec<(DateTime<Utc>, f64, String)> {
        let mut out: Vec<(DateTime<Utc>, f64, String)> = Vec::new();
        for segment in &self.segments {
            let per_ms = segment.scale() / 1000.0;
            let Some(&step) = STEPS_MS.iter().find(|&&step| step as f64 * per_ms >= spacing) else { continue };
            let offset = i64::from(segment.start.with_timezone(&tz).offset().fix().local_minus_utc()) * 1000;
            let local = segment.start.timestamp_millis() + offset;
            let mut tick = local.div_euclid(step) * step;
            if tick < local {
                tick += step;
            }
            while let Some(at) = DateTime::from_timestamp_millis(tick - offset) {
                if at > segment.end {
                    break;
                }
                let x = self.x(at);
                if out.last().is_none_or(|last| x - last.1 >= spacing) {
                    let label = if step >= 60_000 {
                        at.with_timezone(&tz).format("%H:%M").to_string()
                    } else {
                        crate::time::format_clock(at, tz)
                    };
                    out.push((at, x, label));
                }
                tick += step;
            }
        }
        out
    }
}

/// Tick steps, in milliseconds: 10 ms to a week.
const STEPS_MS: [i64; 28] = [
    10,
    20,
    50,
    100,
    200,
    500,
    1000,
    2000,
    5000,
    10_000,
    15_000,
    30_000,
    60_000,
    120_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    21_600_000,
    43_200_000,
    86_400_000,
    172_800_000,
    345_600_000,
    604_800_000,
    1_209_600_000,
];

/// Pixels per millisecond of the gaps at no scale of their own, such that all fill `width`:
/// each free gap `max(min_gap, k × gap)`, the `fixed` ones as given, the margins `k × pads`.
/// 0 when the fixed ones leave no room.
fn quiet_scale(gaps: &[f64], fixed: &[Option<f64>], pads: f64, width: f64, min_gap: f64) -> f64 {
    let total = |k: f64| -> f64 {
        gaps.iter().zip(fixed).map(|(gap, fixed)| fixed.unwrap_or_else(|| (gap * k).max(min_gap))).sum::<f64>()
            + k * pads
    };
    if total(0.0) >= width {
        return 0.0;
    }
    // `total` grows with k; at `width / all` it is at least `width`.
    let (mut low, mut high) = (0.0, width / (gaps.iter().sum::<f64>() + pads));
    for _ in 0..80 {
        let mid = f64::midpoint(low, high);
        if total(mid) > width {
            high = mid;
        } else {
            low = mid;
        }
    }
    low
}

/// The runs of consecutive gaps narrower than `min_gap` at `k` (as index ranges), with the width
/// the run takes at a scale that keeps its closest gap `min_gap` wide.
fn forced_runs(gaps: &[f64], k: f64, min_gap: f64) -> Vec<(usize, usize, f64)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < gaps.len() {
        if gaps[i] * k >= min_gap {
            i += 1;
            continue;
        }
        let from = i;
        while i < gaps.len() && gaps[i] * k < min_gap {
            i += 1;
        }
        let closest = gaps[from..i].iter().copied().fold(f64::MAX, f64::min);
        runs.push((from, i, gaps[from..i].iter().sum::<f64>() * min_gap / closest));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// The reference incident's moments: activation, restart, renewal window, expiry, rerun,
    /// the rounds, the overlap and the two picks 0.66 s apart.
    fn reference() -> Vec<DateTime<Utc>> {
        let mut times: Vec<DateTime<Utc>> = [
            "00:33:00",
            "00:37:26",
            "00:37:54.5",
            "00:42:49",
            "00:52:38",
            "00:53:00",
            "00:53:03.204",
            "00:54:03.31",
            "00:54:05.7",
            "00:54:06.36",
            "00:55:40.2",
            "00:56:02.5",
        ]
        .iter()
        .map(|t| at(&format!("2026-10-07T{t}Z")))
        .collect();
        times.sort();
        times
    }

    #[test]
    fn every_two_moments_of_the_reference_incident_are_apart() {
        let times = reference();
        let scale = Scale::over(&times, 300.0, 1170.0, 24.0).unwrap();
        assert!(scale.is_broken());
        for pair in times.windows(2) {
            let gap = scale.x(pair[1]) - scale.x(pair[0]);
            assert!(gap >= 23.9, "{} and {} are {gap:.1} px apart", pair[0], pair[1]);
        }
        // The quiet stretches keep most of the width: the lock's 19 minutes still look long.
        assert!(scale.x(at("2026-10-07T00:52:38Z")) - scale.x(at("2026-10-07T00:33:00Z")) > 300.0);
        // End to end, in order.
        assert!((scale.segments[0].x0 - 300.0).abs() < 1e-9);
        assert!((scale.segments.last().unwrap().x1 - 1170.0).abs() < 1e-9);
        for pair in scale.segments.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
            assert!((pair[0].x1 - pair[1].x0).abs() < 1e-9);
        }
    }

    #[test]
    fn an_even_chart_keeps_one_linear_axis() {
        let times: Vec<DateTime<Utc>> =
            ["00:00:00", "00:10:00", "00:20:00", "00:30:00"].iter().map(|t| at(&format!("2026-10-07T{t}Z"))).collect();
        let scale = Scale::over(&times, 0.0, 1000.0, 24.0).unwrap();
        assert!(!scale.is_broken());
        assert_eq!(scale.segments.len(), 1);
        assert_eq!(scale.chart_time(times[1]), times[1]);
    }

    #[test]
    fn chart_times_keep_the_order_and_the_separation() {
        let times = reference();
        let scale = Scale::over(&times, 0.0, 1000.0, 24.0).unwrap();
        let chart: Vec<DateTime<Utc>> = times.iter().map(|&t| scale.chart_time(t)).collect();
        for pair in chart.windows(2) {
            // 24 px of 1000 over the 24.5 minutes of the axis: about 35 s.
            assert!((pair[1] - pair[0]).num_seconds() >= 30, "{chart:?}");
        }
    }

    #[test]
    fn ticks_of_a_dense_stretch_are_finer_and_never_crowd() {
        let scale = Scale::over(&reference(), 300.0, 1170.0, 24.0).unwrap();
        let ticks = scale.ticks(chrono_tz::Asia::Seoul, 60.0);
        assert!(ticks.iter().any(|t| t.2 == "09:40"), "{ticks:?}");
        assert!(ticks.iter().any(|t| t.2.len() > 5), "seconds in a dense stretch: {ticks:?}");
        for pair in ticks.windows(2) {
            assert!(pair[1].1 - pair[0].1 >= 60.0, "{ticks:?}");
        }
    }

    #[test]
    fn a_single_moment_or_thousands_stay_on_the_axis() {
        let one = [at("2026-10-07T00:00:00Z")];
        let scale = Scale::over(&one, 0.0, 100.0, 24.0).unwrap();
        assert!((scale.x(one[0]) - 50.0).abs() < 1.0);
        let many: Vec<DateTime<Utc>> = (0..5000).map(|i| one[0] + Duration::milliseconds(i * i)).collect();
        let scale = Scale::over(&many, 0.0, 1000.0, 24.0).unwrap();
        let mut last = f64::MIN;
        for &t in &many {
            let x = scale.x(t);
            assert!((0.0..=1000.0).contains(&x) && x >= last, "{x} after {last}");
            last = x;
        }
        assert!(Scale::over(&[], 0.0, 100.0, 24.0).is_none());
    }
}
