//! Local times that a daylight-saving fall-back makes happen twice.
//!
//! When the clocks go back (America/Los_Angeles on 2026-11-01: 02:00 PDT becomes 01:00 PST),
//! every wall-clock time from 01:00 to 02:00 happens twice, an hour apart, and a line written
//! without an offset does not say which. A source says how to choose (`Ambiguous`, the manifest's
//! `ambiguous`): `earlier` or `later` for all of them, `error`, or, for a log, `order`.
//!
//! A log is written in time order, so the lines around an ambiguous one tell its pass: after a
//! line before the repeated hour, its lines are in the first pass; once a line's local time steps
//! back (more than `TOLERANCE` before the latest local time of the first pass) the clock went back,
//! and the rest of the hour is the second pass; after a line past the hour, an ambiguous line is in
//! the second pass. A log that starts inside the hour keeps its lines pending until the first of:
//! a step back (the pending lines were the first pass), a line past the hour (no step back: they
//! were the second pass), a line before it (the first pass). A log all of whose lines are in the
//! hour cannot be told: an error that names the setting, when an event depends on it.
//!
//! `LineOrder` follows one source (or one part of one, see `ingest::log::text`): each stamped line is
//! shown to it in order, it says where an event on that line goes, and at the end it moves the
//! pending events it was told about and writes what it did as notes for the report.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeDelta, TimeZone, Utc};
use chrono_tz::{OffsetName, Tz};

use super::Moment;

/// How a source places a local time that happens twice (`ambiguous` in the manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ambiguous {
    /// By the order of the lines around it (logs only: a log is written in time order).
    Order,
    /// The first time it happens (before the clocks go back: summer time, usually).
    Earlier,
    /// The second time it happens (after the clocks go back).
    Later,
    /// Not at all: such a time stops the run, naming the setting.
    Error,
}

impl Ambiguous {
    pub const NAMES: [&'static str; 4] = ["order", "earlier", "later", "error"];

    pub fn name(self) -> &'static str {
        match self {
            Ambiguous::Order => "order",
            Ambiguous::Earlier => "earlier",
            Ambiguous::Later => "later",
            Ambiguous::Error => "error",
        }
    }

    pub fn from_name(name: &str) -> Option<Ambiguous> {
        [Ambiguous::Order, Ambiguous::Earlier, Ambiguous::Later, Ambiguous::Error]
            .into_iter()
            .find(|choice| choice.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// A step back in local time of at most this much, inside the repeated hour, is writers out of
/// order (threads or processes sharing a log, a logger's buffer, whole-second stamps that round
/// differently), not the clock going back. The clock goes back by the whole fold (an hour), so a
/// step back of more is read as the second pass.
pub const TOLERANCE: TimeDelta = TimeDelta::seconds(5);

/// One fall-back in a zone: at `at` the clocks went back from `before` to `after` (seconds east
/// of UTC), and the local times from `start` (inclusive) to `end` happen twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    pub zone: Tz,
    pub at: DateTime<Utc>,
    before: i32,
    after: i32,
    pub start: NaiveDateTime,
    pub end: NaiveDateTime,
}

impl Fold {
    /// The fall-back whose repeated local times meet the local day `date` in `zone`, if any.
    /// Looks at the zone's offsets over the three days around it (the tz database has no two
    /// changes that close) and finds the change to the second.
    pub fn meeting(zone: Tz, date: NaiveDate) -> Option<Fold> {
        let offset = |at: i64| {
            DateTime::from_timestamp(at, 0)
                .map(|at| zone.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc())
        };
        let from = date.pred_opt()?.and_time(NaiveTime::MIN).and_utc().timestamp();
        let to = from + 3 * 86_400;
        let (before, after) = (offset(from)?, offset(to)?);
        if before <= after {
            // No change, or a spring-forward gap (times that never happen; see `ZoneProblem::Skipped`).
            return None;
        }
        let (mut low, mut high) = (from, to);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if offset(middle)? == before {
                low = middle;
            } else {
                high = middle;
            }
        }
        let at = DateTime::from_timestamp(high, 0)?;
        let start = at.naive_utc() + TimeDelta::seconds(i64::from(after));
        let end = at.naive_utc() + TimeDelta::seconds(i64::from(before));
        let day = date.and_time(NaiveTime::MIN);
        (start < day + TimeDelta::days(1) && end > day).then_some(Fold { zone, at, before, after, start, end })
    }

    pub fn contains(&self, local: NaiveDateTime) -> bool {
        self.start <= local && local < self.end
    }

    /// `local` the first time it happens.
    pub fn first(&self, local: NaiveDateTime) -> DateTime<Utc> {
        (local - TimeDelta::seconds(i64::from(self.before))).and_utc()
    }

    /// `local` the second time it happens.
    pub fn second(&self, local: NaiveDateTime) -> DateTime<Utc> {
        (local - TimeDelta::seconds(i64::from(self.after))).and_utc()
    }

    /// How much later the second time is than the first.
    pub fn length(&self) -> TimeDelta {
        TimeDelta::seconds(i64::from(self.before - self.after))
    }

    /// What the zone calls its offset in a pass (`PDT`, `PST`), or the offset (`UTC-07:00`)
    /// where the tz database has no name for it.
    pub fn name(&self, pass: Pass) -> String {
        let (at, seconds) = match pass {
            Pass::First => (self.at - TimeDelta::seconds(1), self.before),
            Pass::Second => (self.at, self.after),
        };
        let offset = self.zone.offset_from_utc_datetime(&at.naive_utc());
        match offset.abbreviation() {
            Some(name) if name.starts_with(|c: char| c.is_ascii_alphabetic()) => name.to_string(),
            _ => {
                let sign = if seconds < 0 { '-' } else { '+' };
                let minutes = seconds.unsigned_abs() / 60;
                format!("UTC{sign}{:02}:{:02}", minutes / 60, minutes % 60)
            }
        }
    }

    /// `the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles)`.
    pub fn describe(&self) -> String {
        let clock = |at: NaiveDateTime| {
            let text = at.format("%H:%M:%S").to_string();
            text.strip_suffix(":00").map(str::to_string).unwrap_or(text)
        };
        let span = if self.length() == TimeDelta::hours(1) {
            "hour".to_string()
        } else {
            #[allow(clippy::cast_precision_loss)]
            super::format_duration(self.length().num_seconds() as f64)
        };
        format!(
            "the repeated {span} {}–{} {}/{} on {} ({})",
            clock(self.start),
            clock(self.end),
            self.name(Pass::First),
            self.name(Pass::Second),
            self.start.date(),
            self.zone.name()
        )
    }
}

/// Which of the two times a local time in a fold is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    First,
    Second,
}

/// Where an event on a line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// The line's time is not in a repeated hour: it is converted as any other.
    Outside,
    /// In a repeated hour, at `at`. `pending`: the log started inside the hour and its pass is not
    /// known yet; `at` is the first pass, and an event pushed for the line must be given to
    /// `LineOrder::hold` so that it is moved if the lines turn out to be the second pass.
    In { at: DateTime<Utc>, pending: bool },
}

/// Lines of one pass: how many, the first and the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lines {
    pub count: u64,
    pub first: u64,
    pub last: u64,
}

impl Lines {
    /// One more line; the same line again (a second time on one ledger row) counts once.
    fn add(&mut self, line: u64) {
        if self.count == 0 {
            self.first = line;
        } else if self.last == line {
            return;
        }
        self.count += 1;
        self.last = line;
    }

    fn shift(&mut self, by: u64) {
        if self.count > 0 {
            self.first += by;
            self.last += by;
        }
    }

    fn merge(&mut self, other: Lines) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other;
            return;
        }
        self.count += other.count;
        self.first = self.first.min(other.first);
        self.last = self.last.max(other.last);
    }
}

/// What a source's lines in one fold became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoldLines {
    pub fold: Fold,
    pub first: Lines,
    pub second: Lines,
    /// A log all in the hour, none of whose lines became an event: nothing needed their pass.
    pub untold: Lines,
}

impl FoldLines {
    fn new(fold: Fold) -> Self {
        FoldLines { fold, first: Lines::default(), second: Lines::default(), untold: Lines::default() }
    }

    /// The same lines, counted from `by` lines later (a part of a file read apart).
    pub fn shift(&mut self, by: u64) {
        for lines in [&mut self.first, &mut self.second, &mut self.untold] {
            lines.shift(by);
        }
    }
}

/// Counts `local` on `line` in `folds` when it is in a repeated hour of `zone`, in the pass
/// `choice` (`earlier` or `later`) puts it: a source that is not read in order (a ledger).
pub fn count(folds: &mut Vec<FoldLines>, zone: Tz, local: NaiveDateTime, line: u64, choice: Ambiguous) {
    let known = folds.iter().position(|lines| lines.fold.contains(local));
    let index = match known {
        Some(index) => index,
        None => match Fold::meeting(zone, local.date()).filter(|fold| fold.contains(local)) {
            Some(fold) => {
                folds.push(FoldLines::new(fold));
                folds.len() - 1
            }
            None => return,
        },
    };
    let lines = &mut folds[index];
    match choice {
        Ambiguous::Later => lines.second.add(line),
        _ => lines.first.add(line),
    }
}

/// The lines of a log that started inside a repeated hour, while their pass is not known.
#[derive(Debug)]
struct Head {
    latest: NaiveDateTime,
    lines: Lines,
    /// Events on those lines, by their place in the reader's list.
    events: Vec<usize>,
}

#[derive(Debug)]
enum Phase {
    /// The last line was before the repeated hour (or on an earlier day).
    Before,
    /// The log started inside the hour (see `Head`).
    Head(Head),
    /// In the first pass; the latest local time seen in it.
    First(NaiveDateTime),
    /// In the second pass.
    Second,
    /// The last line was after the repeated hour (or on a later day).
    After,
}

#[derive(Debug)]
struct Track {
    lines: FoldLines,
    phase: Phase,
}

/// Follows the order of one source's lines through the folds of its zone (see the module comment).
#[derive(Debug)]
pub struct LineOrder {
    zone: Tz,
    choice: Ambiguous,
    /// The last day looked at and its fold.
    day: Option<(NaiveDate, Option<Fold>)>,
    /// The date of the last line as written (`YYYY-MM-DD`), when that day has no fold: a line of
    /// the same day changes nothing and is passed over at the cost of a comparison.
    plain_day: [u8; 10],
    /// The last day with a fold inside it that a text line was of (see `FoldDay`).
    fold_day: Option<FoldDay>,
    last_day: Option<NaiveDate>,
    seen: bool,
    began_in_fold: bool,
    track: Option<Track>,
    done: Vec<FoldLines>,
    /// Events found to be in the second pass after they were placed in the first.
    moved: Vec<(usize, TimeDelta)>,
}

/// A `plain_day` no line has.
const NO_DAY: [u8; 10] = [0; 10];

impl LineOrder {
    /// For a source in `zone` that places ambiguous times by `choice`; `None` for `error`, where
    /// there is nothing to follow (the zone conversion refuses them).
    pub fn new(zone: Option<Tz>, choice: Ambiguous) -> Option<LineOrder> {
        let zone = zone?;
        (choice != Ambiguous::Error).then(|| LineOrder {
            zone,
            choice,
            day: None,
            plain_day: NO_DAY,
            fold_day: None,
            last_day: None,
            seen: false,
            began_in_fold: false,
            track: None,
            done: Vec::new(),
            moved: Vec::new(),
        })
    }

    /// A text log line that starts with a timestamp (`YYYY-MM-DD ...`, optionally in brackets),
    /// as written. Only its date is looked at unless a fold meets that day.
    pub fn line_text(&mut self, line: u64, text: &[u8]) -> Placed {
        let b = text.strip_prefix(b"[").unwrap_or(text);
        let Some(date_bytes) = b.get(..10) else { return Placed::Outside };
        if date_bytes == self.plain_day {
            return Placed::Outside;
        }
        // The lines of a fold's day outside its hour are told by their clock, without a parse (a
        // log of that day alone, rotated daily, would otherwise parse every line); a line that
        // changes nothing (the log is still before, or after, the hour) costs two comparisons.
        if let Some(day) = self.fold_day.filter(|day| day.bytes == date_bytes) {
            match day.side(b) {
                Some(side) if self.still(&day, &side) => return Placed::Outside,
                Some(side) => return self.beside(day.date, day.fold, side),
                None => {}
            }
        }
        let date = match (super::digits(b, 0, 4), super::digits(b, 5, 2), super::digits(b, 8, 2)) {
            (Some(year), Some(month), Some(day)) if b[4] == b'-' && b[7] == b'-' =>
            {
                #[allow(clippy::cast_possible_wrap)]
                NaiveDate::from_ymd_opt(year as i32, month, day)
            }
            _ => None,
        };
        let Some(date) = date else { return Placed::Outside };
        let Some(fold) = self.fold_on(date) else {
            self.plain(date);
            self.plain_day.copy_from_slice(date_bytes);
            return Placed::Outside;
        };
        if let Some(day) = FoldDay::new(date_bytes, date, fold) {
            self.fold_day = Some(day);
            if let Some(side) = day.side(b) {
                return self.beside(date, fold, side);
            }
        }
        match super::parse_datetime(b) {
            Ok((super::Stamp::Local(local), _)) => self.local(line, local),
            _ => Placed::Outside,
        }
    }

    /// Whether a line of `day` on `side` of its hour leaves everything as it is: the last line was
    /// of that day, on that side.
    fn still(&self, day: &FoldDay, side: &Phase) -> bool {
        self.last_day == Some(day.date)
            && self.plain_day == NO_DAY
            && self.track.as_ref().is_some_and(|track| {
                track.lines.fold == day.fold
                    && matches!((&track.phase, side), (Phase::Before, Phase::Before) | (Phase::After, Phase::After))
            })
    }

    /// A line whose local time (no offset) has been read.
    pub fn local(&mut self, line: u64, local: NaiveDateTime) -> Placed {
        self.plain_day = NO_DAY;
        let date = local.date();
        let Some(fold) = self.fold_on(date) else {
            self.plain(date);
            return Placed::Outside;
        };
        if local < fold.start {
            self.beside(date, fold, Phase::Before)
        } else if local >= fold.end {
            self.beside(date, fold, Phase::After)
        } else {
            self.follow(date, fold);
            let placed = self.in_fold(line, local);
            self.seen = true;
            placed
        }
    }

    /// Follows `fold` (met on a line of `date`) from now on.
    fn follow(&mut self, date: NaiveDate, fold: Fold) {
        if self.track.as_ref().is_none_or(|track| track.lines.fold != fold) {
            self.start(fold);
        }
        self.last_day = Some(date);
    }

    /// A line of `date`, a day `fold` meets, outside its repeated hour (before or after it).
    fn beside(&mut self, date: NaiveDate, fold: Fold, side: Phase) -> Placed {
        self.plain_day = NO_DAY;
        self.follow(date, fold);
        self.leave(side);
        self.seen = true;
        Placed::Outside
    }

    /// The event just pushed at `index` is on a line `local` placed as pending.
    pub fn hold(&mut self, index: usize) {
        if let Some(Track { phase: Phase::Head(head), .. }) = &mut self.track {
            head.events.push(index);
        }
    }

    /// Whether this part of a log began inside a repeated hour (its first line there): its lines'
    /// passes then depend on the part before it.
    pub fn began_in_fold(&self) -> bool {
        self.began_in_fold
    }

    /// Whether the lines so far end inside a repeated hour that the log started in, their pass
    /// not known yet.
    pub fn pending(&self) -> bool {
        matches!(self.track, Some(Track { phase: Phase::Head(_), .. }))
    }

    /// The end of the source: moves the events found to be in the second pass, and returns what
    /// became of the lines in each fold, or, when the log is all in a repeated hour and an event
    /// there has no way to be placed, what the error says (its first line, and the message).
    pub fn finish(mut self, events: &mut [impl Timed], fix: &str) -> Result<Vec<FoldLines>, (u64, String)> {
        if let Some(Track { lines, phase: Phase::Head(head) }) = &mut self.track {
            if !head.events.is_empty() {
                let fold = lines.fold;
                return Err((
                    head.lines.first,
                    format!(
                        "every timestamped line of the log ({}) is in {}, and none steps back in time: line order cannot tell whether they are {} (the first pass) or {} (the second); say which with {fix}",
                        if head.lines.count == 1 {
                            format!("line {}", head.lines.first)
                        } else {
                            format!("{} lines, {}–{}", grouped(head.lines.count), head.lines.first, head.lines.last)
                        },
                        fold.describe(),
                        fold.name(Pass::First),
                        fold.name(Pass::Second)
                    ),
                ));
            }
            lines.untold.merge(head.lines);
        }
        if let Some(track) = self.track.take() {
            self.done.push(track.lines);
        }
        for (index, by) in self.moved {
            let event = &mut events[index];
            // The second pass is an hour after the first: a time near the end of the years a
            // timeline holds would leave them; it stays where it is then (never in practice).
            if let Ok(at) = Moment::new(event.at() + by) {
                event.set_at(at);
            }
        }
        Ok(self.done)
    }

    fn fold_on(&mut self, date: NaiveDate) -> Option<Fold> {
        match self.day {
            Some((day, fold)) if day == date => fold,
            _ => {
                let fold = Fold::meeting(self.zone, date);
                self.day = Some((date, fold));
                fold
            }
        }
    }

    /// A line of a day no fold meets: before or after the fold followed.
    fn plain(&mut self, date: NaiveDate) {
        if let Some(track) = &self.track {
            let phase = if date < track.lines.fold.start.date() { Phase::Before } else { Phase::After };
            self.leave(phase);
        }
        self.last_day = Some(date);
        self.seen = true;
    }

    /// Starts following `fold`: the fold followed so far is done (the log went past it), and where
    /// the last line was says where the log is.
    fn start(&mut self, fold: Fold) {
        if let Some(track) = &self.track {
            let phase = if fold.start > track.lines.fold.start { Phase::After } else { Phase::Before };
            self.leave(phase);
        }
        if let Some(track) = self.track.take() {
            self.done.push(track.lines);
        }
        let phase = match self.last_day {
            Some(day) if day > fold.start.date() => Phase::After,
            _ => Phase::Before,
        };
        self.track = Some(Track { lines: FoldLines::new(fold), phase });
    }

    /// A line outside the hour of the fold followed, before or after it: where the log is now. Lines
    /// of a log that started inside the hour were the first pass if it goes on before the hour,
    /// the second if after it.
    fn leave(&mut self, phase: Phase) {
        let Some(track) = &mut self.track else { return };
        if let Phase::Head(head) = std::mem::replace(&mut track.phase, Phase::Before) {
            let fold = track.lines.fold;
            if matches!(phase, Phase::After) {
                track.lines.second.merge(head.lines);
                self.moved.extend(head.events.into_iter().map(|index| (index, fold.length())));
            } else {
                track.lines.first.merge(head.lines);
            }
        }
        track.phase = phase;
    }

    fn in_fold(&mut self, line: u64, local: NaiveDateTime) -> Placed {
        let seen = self.seen;
        let Some(track) = &mut self.track else { return Placed::Outside };
        let fold = track.lines.fold;
        let pass = match self.choice {
            Ambiguous::Earlier | Ambiguous::Error => Pass::First,
            Ambiguous::Later => Pass::Second,
            Ambiguous::Order => match &mut track.phase {
                Phase::Before if !seen => {
                    // The first line of the log (or of this part) is inside the hour.
                    self.began_in_fold = true;
                    let mut lines = Lines::default();
                    lines.add(line);
                    track.phase = Phase::Head(Head { latest: local, lines, events: Vec::new() });
                    return Placed::In { at: fold.first(local), pending: true };
                }
                Phase::Before => {
                    track.phase = Phase::First(local);
                    Pass::First
                }
                Phase::First(latest) if local + TOLERANCE < *latest => {
                    track.phase = Phase::Second;
                    Pass::Second
                }
                Phase::First(latest) => {
                    *latest = (*latest).max(local);
                    Pass::First
                }
                Phase::Head(head) if local + TOLERANCE < head.latest => {
                    // The clock went back: the lines so far were the first pass.
                    track.lines.first.merge(head.lines);
                    track.phase = Phase::Second;
                    Pass::Second
                }
                Phase::Head(head) => {
                    head.latest = head.latest.max(local);
                    head.lines.add(line);
                    return Placed::In { at: fold.first(local), pending: true };
                }
                Phase::Second | Phase::After => {
                    track.phase = Phase::Second;
                    Pass::Second
                }
            },
        };
        match pass {
            Pass::First => {
                track.lines.first.add(line);
                Placed::In { at: fold.first(local), pending: false }
            }
            Pass::Second => {
                track.lines.second.add(line);
                Placed::In { at: fold.second(local), pending: false }
            }
        }
    }
}

/// A day with a fold inside it (not crossing midnight), as its lines write it: its date, and the
/// clock times (`HH:MM:SS`) of the start and the end of its repeated hour.
#[derive(Debug, Clone, Copy)]
struct FoldDay {
    bytes: [u8; 10],
    date: NaiveDate,
    fold: Fold,
    start: [u8; 8],
    end: [u8; 8],
}

impl FoldDay {
    fn new(bytes: &[u8], date: NaiveDate, fold: Fold) -> Option<FoldDay> {
        if fold.start.date() != date || fold.end.date() != date {
            return None;
        }
        let clock = |at: NaiveDateTime| {
            let text = at.format("%H:%M:%S").to_string();
            <[u8; 8]>::try_from(text.as_bytes()).ok()
        };
        Some(FoldDay { bytes: bytes.try_into().ok()?, date, fold, start: clock(fold.start)?, end: clock(fold.end)? })
    }

    /// Whether the text line `b` (a `YYYY-MM-DD` of this day and then `[T ]HH:MM:SS[.fff]`
    /// without an offset) is before or after the repeated hour, judged from its bytes: clock
    /// times of one shape compare as their bytes do. `None` when it is in the hour, or when the
    /// bytes cannot say (another shape, an offset): the line is then parsed, and judged the same.
    fn side(&self, b: &[u8]) -> Option<Phase> {
        if !matches!(b.get(10), Some(b' ' | b'T' | b't')) {
            return None;
        }
        let clock = b.get(11..19)?;
        let (hour, minute, second) = (super::digits(b, 11, 2)?, super::digits(b, 14, 2)?, super::digits(b, 17, 2)?);
        if clock[2] != b':' || clock[5] != b':' || hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let mut at = 19;
        if matches!(b.get(at), Some(b'.' | b',')) {
            at += 1;
            while b.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
        }
        if matches!(b.get(at), Some(b'Z' | b'z' | b'+' | b'-')) {
            return None;
        }
        if clock < &self.start[..] {
            Some(Phase::Before)
        } else if clock >= &self.end[..] {
            Some(Phase::After)
        } else {
            None
        }
    }
}

/// The lines of `later`, a part of the same source read apart, added to `folds`.
pub fn merge(folds: &mut Vec<FoldLines>, later: Vec<FoldLines>) {
    for lines in later {
        match folds.iter_mut().find(|known| known.fold == lines.fold) {
            Some(known) => {
                known.first.merge(lines.first);
                known.second.merge(lines.second);
                known.untold.merge(lines.untold);
            }
            None => folds.push(lines),
        }
    }
}

/// The report's notes on what became of a source's lines in repeated hours, one per fold.
pub fn notes(path: &str, choice: Ambiguous, folds: &[FoldLines]) -> Vec<String> {
    use std::fmt::Write;
    let mut folds: Vec<&FoldLines> =
        folds.iter().filter(|lines| lines.first.count + lines.second.count + lines.untold.count > 0).collect();
    folds.sort_by_key(|lines| lines.fold.at);
    folds
        .into_iter()
        .map(|lines| {
            let fold = &lines.fold;
            let total = lines.first.count + lines.second.count + lines.untold.count;
            let pass = |pass: Pass, of: &Lines| {
                let which = if pass == Pass::First { "first pass" } else { "second pass" };
                let range = match of.count {
                    0 => String::new(),
                    1 => format!(", line {}", of.first),
                    _ => format!(", lines {}–{}", of.first, of.last),
                };
                format!("{} as {} ({which}{range})", grouped(of.count), fold.name(pass))
            };
            let how = match choice {
                Ambiguous::Order => {
                    let mut text = format!(
                        "resolved by line order: {}, {}",
                        pass(Pass::First, &lines.first),
                        pass(Pass::Second, &lines.second)
                    );
                    if lines.untold.count > 0 {
                        let _ = write!(
                            text,
                            "; {} (lines {}–{}) left unplaced: the log is all in the hour and none of them is an event",
                            grouped(lines.untold.count),
                            lines.untold.first,
                            lines.untold.last
                        );
                    }
                    text
                }
                Ambiguous::Earlier => format!(
                    "read as the first pass, as ambiguous = \"earlier\" says: {}",
                    pass(Pass::First, &lines.first)
                ),
                Ambiguous::Later => format!(
                    "read as the second pass, as ambiguous = \"later\" says: {}",
                    pass(Pass::Second, &lines.second)
                ),
                Ambiguous::Error => String::new(),
            };
            let noun = if total == 1 { "line" } else { "lines" };
            format!("{path}: {} {noun} in {} {how}", grouped(total), fold.describe())
        })
        .collect()
}

/// `1234567` as `1,234,567`.
fn grouped(number: u64) -> String {
    let digits = number.to_string();
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// What a line order moves when it finds lines in the second pass of a repeated hour: a log's
/// events (`model::Event`), by their index.
pub trait Timed {
    fn at(&self) -> DateTime<Utc>;
    fn set_at(&mut self, at: Moment);
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono_tz::America::Los_Angeles;

    /// A log line's time, as an event keeps it.
    struct Line(Moment);

    impl Timed for Line {
        fn at(&self) -> DateTime<Utc> {
            self.0.utc()
        }

        fn set_at(&mut self, at: Moment) {
            self.0 = at;
        }
    }

    fn local(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_fall_back_of_a_day_is_found_to_the_second() {
        let fold = Fold::meeting(Los_Angeles, NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()).unwrap();
        assert_eq!(fold.at, utc("2026-11-01T09:00:00Z"));
        assert_eq!((fold.start, fold.end), (local("2026-11-01 01:00:00"), local("2026-11-01 02:00:00")));
        assert_eq!((fold.name(Pass::First), fold.name(Pass::Second)), ("PDT".into(), "PST".into()));
        assert_eq!(fold.first(local("2026-11-01 01:30:00.250")), utc("2026-11-01T08:30:00.250Z"));
        assert_eq!(fold.second(local("2026-11-01 01:30:00.250")), utc("2026-11-01T09:30:00.250Z"));
        assert_eq!(fold.describe(), "the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles)");
        // The days around it, the spring-forward gap and a zone without daylight saving: none.
        for (zone, day) in [
            (Los_Angeles, "2026-10-31"),
            (Los_Angeles, "2026-11-02"),
            (Los_Angeles, "2026-03-08"),
            (chrono_tz::Asia::Seoul, "2026-11-01"),
            (chrono_tz::UTC, "2026-11-01"),
        ] {
            let date = NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap();
            assert_eq!(Fold::meeting(zone, date), None, "{zone} {day}");
        }
        // Every zone's fold agrees with chrono-tz on which times happen twice.
        let berlin = Fold::meeting(chrono_tz::Europe::Berlin, NaiveDate::from_ymd_opt(2026, 10, 25).unwrap()).unwrap();
        assert_eq!(berlin.describe(), "the repeated hour 02:00–03:00 CEST/CET on 2026-10-25 (Europe/Berlin)");
        for zone in [Los_Angeles, chrono_tz::Europe::Berlin, chrono_tz::Australia::Lord_Howe] {
            for day in 0..366 {
                let date = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + TimeDelta::days(day);
                let fold = Fold::meeting(zone, date);
                for minute in (0..24 * 60).step_by(10) {
                    let at = date.and_time(NaiveTime::MIN) + TimeDelta::minutes(minute);
                    let twice = matches!(zone.from_local_datetime(&at), chrono::LocalResult::Ambiguous(..));
                    assert_eq!(fold.is_some_and(|fold| fold.contains(at)), twice, "{zone} {at}");
                }
            }
        }
    }

    #[test]
    fn a_half_hour_fold_and_one_that_ends_at_midnight_are_found_too() {
        // Lord Howe Island goes back 30 minutes; its offsets have no names in the tz database.
        let fold =
            Fold::meeting(chrono_tz::Australia::Lord_Howe, NaiveDate::from_ymd_opt(2026, 4, 5).unwrap()).unwrap();
        assert_eq!(
            fold.describe(),
            "the repeated 30 min 01:30–02:00 UTC+11:00/UTC+10:30 on 2026-04-05 (Australia/Lord_Howe)"
        );
        // Brazil ended its summer time at midnight: 2018-02-18 00:00 became 2018-02-17 23:00.
        let sao_paulo = chrono_tz::America::Sao_Paulo;
        let fold = Fold::meeting(sao_paulo, NaiveDate::from_ymd_opt(2018, 2, 17).unwrap()).unwrap();
        assert_eq!((fold.start, fold.end), (local("2018-02-17 23:00:00"), local("2018-02-18 00:00:00")));
        assert_eq!(Fold::meeting(sao_paulo, NaiveDate::from_ymd_opt(2018, 2, 18).unwrap()), None);
    }

    /// Each local time as a line of a log (line numbers from 1), read in order as `choice` says:
    /// every line is an event, and this gives each event's final time (UTC, RFC 3339) and what
    /// became of the lines of each fold.
    fn read(times: &[&str], choice: Ambiguous) -> Result<(Vec<String>, Vec<FoldLines>), (u64, String)> {
        let mut order = LineOrder::new(Some(Los_Angeles), choice).unwrap();
        let mut events = Vec::new();
        for (index, text) in times.iter().enumerate() {
            let line = index as u64 + 1;
            let at = match order.local(line, local(text)) {
                Placed::Outside => Los_Angeles.from_local_datetime(&local(text)).single().unwrap().with_timezone(&Utc),
                Placed::In { at, .. } => at,
            };
            events.push(Line(Moment::new(at).unwrap()));
            order.hold(events.len() - 1);
        }
        let folds = order.finish(&mut events, "ambiguous = \"earlier\" or ambiguous = \"later\"")?;
        Ok((events.iter().map(|e| e.at().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)).collect(), folds))
    }

    fn notes_of(folds: &[FoldLines], choice: Ambiguous) -> Vec<String> {
        notes("server.log", choice, folds)
    }

    #[test]
    fn a_log_across_the_fall_back_is_placed_by_its_order() {
        let (times, folds) = read(
            &[
                "2026-11-01 00:59:59.900",
                "2026-11-01 01:00:00.100",
                "2026-11-01 01:59:59.990",
                // Writers out of order by milliseconds: still the first pass.
                "2026-11-01 01:59:59.985",
                // The clock went back.
                "2026-11-01 01:00:00.200",
                "2026-11-01 01:30:00.000",
                "2026-11-01 01:59:59.999",
                "2026-11-01 02:00:00.001",
                // Out of order across the end of the hour: still the second pass.
                "2026-11-01 01:59:59.998",
            ],
            Ambiguous::Order,
        )
        .unwrap();
        assert_eq!(
            times,
            [
                "2026-11-01T07:59:59.900Z",
                "2026-11-01T08:00:00.100Z",
                "2026-11-01T08:59:59.990Z",
                "2026-11-01T08:59:59.985Z",
                "2026-11-01T09:00:00.200Z",
                "2026-11-01T09:30:00.000Z",
                "2026-11-01T09:59:59.999Z",
                "2026-11-01T10:00:00.001Z",
                "2026-11-01T09:59:59.998Z",
            ]
        );
        assert_eq!(
            notes_of(&folds, Ambiguous::Order),
            [
                "server.log: 7 lines in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) resolved by line order: 3 as PDT (first pass, lines 2–4), 4 as PST (second pass, lines 5–9)"
            ]
        );
    }

    #[test]
    fn a_step_back_of_more_than_the_tolerance_is_the_clock_going_back() {
        let first =
            |back: &str| read(&["2026-11-01 00:59:00", "2026-11-01 01:40:00", back], Ambiguous::Order).unwrap().0;
        assert_eq!(first("2026-11-01 01:39:55")[2], "2026-11-01T08:39:55.000Z", "5 s back: out of order");
        assert_eq!(first("2026-11-01 01:39:54.999")[2], "2026-11-01T09:39:54.999Z", "more: the second pass");
    }

    #[test]
    fn a_log_that_starts_inside_the_hour_waits_for_what_follows() {
        // A step back: the lines before it were the first pass.
        let (times, folds) =
            read(&["2026-11-01 01:30:00", "2026-11-01 01:45:00", "2026-11-01 01:10:00"], Ambiguous::Order).unwrap();
        assert_eq!(times, ["2026-11-01T08:30:00.000Z", "2026-11-01T08:45:00.000Z", "2026-11-01T09:10:00.000Z"]);
        assert_eq!((folds[0].first.count, folds[0].second.count), (2, 1));
        // Past the hour without a step back: they were the second pass.
        let (times, _) =
            read(&["2026-11-01 01:30:00", "2026-11-01 01:50:00", "2026-11-01 02:10:00"], Ambiguous::Order).unwrap();
        assert_eq!(times, ["2026-11-01T09:30:00.000Z", "2026-11-01T09:50:00.000Z", "2026-11-01T10:10:00.000Z"]);
        // A later day is past the hour too.
        let (times, _) = read(&["2026-11-01 01:30:00", "2026-11-02 00:10:00"], Ambiguous::Order).unwrap();
        assert_eq!(times[0], "2026-11-01T09:30:00.000Z");
        // Before the hour (out of order across its start): the first pass.
        let (times, _) =
            read(&["2026-11-01 01:00:00.004", "2026-11-01 00:59:59.999", "2026-11-01 01:00:01"], Ambiguous::Order)
                .unwrap();
        assert_eq!(times, ["2026-11-01T08:00:00.004Z", "2026-11-01T07:59:59.999Z", "2026-11-01T08:00:01.000Z"]);
    }

    #[test]
    fn a_log_that_ends_inside_the_hour_is_in_the_first_pass() {
        let (times, folds) = read(&["2026-10-31 23:50:00", "2026-11-01 01:10:00"], Ambiguous::Order).unwrap();
        assert_eq!(times[1], "2026-11-01T08:10:00.000Z");
        assert_eq!((folds[0].first.count, folds[0].second.count), (1, 0));
    }

    #[test]
    fn a_log_all_inside_the_hour_cannot_be_placed_by_order() {
        let (line, message) =
            read(&["2026-11-01 01:10:00", "2026-11-01 01:20:00", "2026-11-01 01:25:00"], Ambiguous::Order).unwrap_err();
        assert_eq!(line, 1);
        assert_eq!(
            message,
            "every timestamped line of the log (3 lines, 1–3) is in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles), and none steps back in time: line order cannot tell whether they are PDT (the first pass) or PST (the second); say which with ambiguous = \"earlier\" or ambiguous = \"later\""
        );
        // With nothing to place (no event held), it is said, not an error.
        let mut order = LineOrder::new(Some(Los_Angeles), Ambiguous::Order).unwrap();
        assert!(matches!(order.local(1, local("2026-11-01 01:10:00")), Placed::In { pending: true, .. }));
        assert!(order.pending() && order.began_in_fold());
        let folds = order.finish(&mut [] as &mut [Line], "").unwrap();
        assert_eq!(
            notes_of(&folds, Ambiguous::Order),
            [
                "server.log: 1 line in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) resolved by line order: 0 as PDT (first pass), 0 as PST (second pass); 1 (lines 1–1) left unplaced: the log is all in the hour and none of them is an event"
            ]
        );
        // Earlier and later need no order.
        for (choice, expected) in
            [(Ambiguous::Earlier, "2026-11-01T08:10:00.000Z"), (Ambiguous::Later, "2026-11-01T09:10:00.000Z")]
        {
            let (times, folds) = read(&["2026-11-01 01:10:00", "2026-11-01 01:20:00"], choice).unwrap();
            assert_eq!(times[0], expected);
            assert_eq!(folds[0].first.count + folds[0].second.count, 2);
        }
    }

    #[test]
    fn earlier_and_later_place_every_line_and_say_so() {
        let times = ["2026-11-01 00:59:00", "2026-11-01 01:40:00", "2026-11-01 01:10:00", "2026-11-01 02:00:00"];
        let (earlier, folds) = read(&times, Ambiguous::Earlier).unwrap();
        assert_eq!(earlier[1..3], ["2026-11-01T08:40:00.000Z", "2026-11-01T08:10:00.000Z"]);
        assert_eq!(
            notes_of(&folds, Ambiguous::Earlier),
            [
                "server.log: 2 lines in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) read as the first pass, as ambiguous = \"earlier\" says: 2 as PDT (first pass, lines 2–3)"
            ]
        );
        let (later, _) = read(&times, Ambiguous::Later).unwrap();
        assert_eq!(later[1..3], ["2026-11-01T09:40:00.000Z", "2026-11-01T09:10:00.000Z"]);
        assert!(LineOrder::new(Some(Los_Angeles), Ambiguous::Error).is_none());
        assert!(LineOrder::new(None, Ambiguous::Order).is_none());
    }

    #[test]
    fn each_fold_of_a_long_log_is_followed_on_its_own() {
        let (times, folds) = read(
            &[
                "2025-11-02 01:30:00",
                "2025-11-02 01:10:00",
                "2026-03-01 12:00:00",
                "2026-11-01 01:30:00",
                "2026-11-01 01:59:00",
            ],
            Ambiguous::Order,
        )
        .unwrap();
        // The first fold: the log starts in it and steps back; the second: entered from before.
        assert_eq!(times[0..2], ["2025-11-02T08:30:00.000Z", "2025-11-02T09:10:00.000Z"]);
        assert_eq!(times[3..5], ["2026-11-01T08:30:00.000Z", "2026-11-01T08:59:00.000Z"]);
        assert_eq!(notes_of(&folds, Ambiguous::Order).len(), 2);
    }

    #[test]
    fn parts_read_apart_merge_into_one_account() {
        let fold = Fold::meeting(Los_Angeles, NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()).unwrap();
        let mut first = FoldLines::new(fold);
        first.first.add(10);
        first.first.add(10);
        first.first.add(12);
        let mut later = FoldLines::new(fold);
        later.second.add(1);
        later.second.add(4);
        later.shift(100);
        let mut folds = vec![first];
        merge(&mut folds, vec![later]);
        assert_eq!(folds.len(), 1);
        assert_eq!(folds[0].first, Lines { count: 2, first: 10, last: 12 });
        assert_eq!(folds[0].second, Lines { count: 2, first: 101, last: 104 });
    }

    #[test]
    fn text_lines_are_judged_by_their_date_first() {
        let mut order = LineOrder::new(Some(Los_Angeles), Ambiguous::Order).unwrap();
        assert_eq!(order.line_text(1, b"2026-11-01 00:59:00.000 INFO x"), Placed::Outside);
        assert_eq!(
            order.line_text(2, b"[2026-11-01 01:59:00.500] INFO x"),
            Placed::In { at: utc("2026-11-01T08:59:00.500Z"), pending: false }
        );
        // Not a date, a line of another day, a time with an offset: nothing to place.
        assert_eq!(order.line_text(3, b"2026-13-45 01:00:00 x"), Placed::Outside);
        assert_eq!(order.line_text(4, b"2026-11-01T09:10:00Z x"), Placed::Outside);
        assert_eq!(
            order.line_text(5, b"2026-11-01 01:10:00 x"),
            Placed::In { at: utc("2026-11-01T09:10:00Z"), pending: false },
            "a step back of 49 min"
        );
    }

    #[test]
    fn the_clock_bytes_judge_a_line_as_its_parse_does() {
        // Every shape a line of the fold's day can have, judged by its bytes and by its parse.
        let fold = Fold::meeting(Los_Angeles, NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()).unwrap();
        let date = fold.start.date();
        let mut judged = 0;
        for clock in [
            "00:00:00", "00:59:59", "01:00:00", "01:30:00", "01:59:59", "02:00:00", "02:00:01", "23:59:59", "24:00:00",
            "1:30:00", "01:60:00",
        ] {
            for rest in ["", ".999", ",5", "Z", "+09:00", "-07", " INFO x", ".5 INFO", "x"] {
                for separator in [" ", "T", "_"] {
                    let text = format!("2026-11-01{separator}{clock}{rest}");
                    let parsed = match super::super::parse_datetime(text.as_bytes()) {
                        Ok((super::super::Stamp::Local(local), _)) if local < fold.start => Some("before"),
                        Ok((super::super::Stamp::Local(local), _)) if local >= fold.end => Some("after"),
                        _ => None,
                    };
                    let day = FoldDay::new(b"2026-11-01", date, fold).unwrap();
                    let by_bytes = match day.side(text.as_bytes()) {
                        Some(Phase::Before) => Some("before"),
                        Some(Phase::After) => Some("after"),
                        _ => None,
                    };
                    judged += usize::from(by_bytes.is_some());
                    assert_eq!(by_bytes, parsed, "{text}");
                }
            }
        }
        assert!(judged > 50, "{judged}");
    }

    #[test]
    fn choices_have_names() {
        for name in Ambiguous::NAMES {
            assert_eq!(Ambiguous::from_name(name).map(Ambiguous::name), Some(name));
        }
        assert_eq!(Ambiguous::from_name("Later"), Some(Ambiguous::Later));
        assert_eq!(Ambiguous::from_name("first"), None);
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }
}
