//! What a report shows, when the user narrows it (`--since`, `--until`, `--job`, `--run`,
//! `--item`): a selection of the finished report, never an input of the analysis.
//!
//! Detectors always read the whole timeline: a stall is found from an activation before the
//! window and a rerun inside it, so cutting the timeline first would change what is found. The
//! filter is applied after the findings are known, in one place (`Report::shown_events` and
//! `Report::retain_shown`), and the report says what it hid (`Filter::notice`, a header warning
//! when findings are hidden).
//!
//! The rules (docs/outputs/filters.md):
//! - an event is shown when it is inside every given condition: its time within `since ..= until`
//!   (both inclusive), and, for each of `job`, `run` and `item` given, its field equal to one of
//!   the values given (an event without the field is outside);
//! - a finding is shown when at least one event it cites is shown, and so is every finding it
//!   follows from (its causes, transitively), so that its chain stays whole; a shown finding
//!   keeps all its evidence;
//! - `analyze` and `check` show the cited events that are shown; `timeline` every shown event;
//! - `check` passes or fails on the shown findings only.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use super::{Event, Finding, Moment, Timeline};
use crate::time::{Bound, format_datetime};

/// The filter as the user gave it, validated (`config.rs`): bounds read, not yet placed, since a
/// clock time needs the case's date.
#[derive(Debug, Clone, Default)]
pub struct FilterSpec {
    /// `--since` as written and as read.
    pub since: Option<(String, Bound)>,
    pub until: Option<(String, Bound)>,
    pub jobs: Vec<String>,
    pub runs: Vec<String>,
    pub items: Vec<String>,
    /// The display zone when the user declared one (`--tz`, the manifest's `display_tz`): local
    /// times are read in it; without one they are refused rather than read as UTC.
    pub zone: Option<Tz>,
    /// The zone the report shows times in (`zone`, else UTC): the notice is written in it.
    pub display_tz: Tz,
    /// How far past `since` and `until` the ledgers and logs are read (`--read-margin`): `None`
    /// reads everything, and so does a bound that is a clock time (`read_plan`).
    pub read_margin: Option<chrono::TimeDelta>,
    /// `--allow-empty-filter`: a filter that shows no event is said in a warning, not refused.
    pub allow_empty: bool,
}

/// The margin read on each side of `--since`/`--until` unless `--read-margin` says otherwise.
pub const DEFAULT_READ_MARGIN_S: i64 = 3600;

/// Why a ledger row or log line was counted and not kept (`InputSummary::ignored_by_reason`).
pub const OUTSIDE_READ_WINDOW: &str = "outside the read window";

/// The keys of the jobs and runs of rows and lines outside the read window (`outside_key`): a
/// hash each, so that a month of rows outside costs a few MB, not their texts.
pub type OutsideIds = rustc_hash::FxHashSet<u64>;

/// Which id `outside_key` is of.
#[derive(Debug, Clone, Copy)]
pub enum IdKind {
    Job,
    Run,
}

/// The key of a job or run id in `OutsideIds`. Two ids may share a key: a finding is then said to
/// be cut when it is not, never the other way.
pub fn outside_key(kind: IdKind, id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    (kind as u8).hash(&mut hasher);
    id.hash(&mut hasher);
    hasher.finish()
}

/// The keys of a row's or event's job and run, those it has.
pub fn outside_keys(job: Option<&str>, run: Option<&str>) -> [Option<u64>; 2] {
    [job.map(|id| outside_key(IdKind::Job, id)), run.map(|id| outside_key(IdKind::Run, id))]
}

/// The time range ledgers and logs are read in: `--since`/`--until` widened by the read margin.
/// An event outside it is counted (`OUTSIDE_READ_WINDOW`) and not kept, so memory follows the
/// window asked about, not the export; the margin holds what the shown findings' evidence reaches
/// back and forward to (an activation before a stall, the round that overlaps another).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadWindow {
    pub from: Option<Moment>,
    pub to: Option<Moment>,
}

impl ReadWindow {
    pub fn holds(&self, at: Moment) -> bool {
        self.from.is_none_or(|from| at >= from) && self.to.is_none_or(|to| at <= to)
    }
}

/// Where the ledgers and logs are read: everything (with why, when a window was asked), or a window.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadPlan {
    /// With the clock-time bound (flag, as written) that made it read everything, if one did.
    Everything(Option<(&'static str, String)>),
    Window {
        window: ReadWindow,
        margin: chrono::TimeDelta,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
    },
}

impl ReadPlan {
    pub fn window(&self) -> Option<ReadWindow> {
        match self {
            ReadPlan::Everything(_) => None,
            ReadPlan::Window { window, .. } => Some(*window),
        }
    }

    /// What the report's assumptions say: the window, its margin, and what it left out
    /// (`outside`: ledger rows and log lines counted and not kept); or why everything was read,
    /// with the case's `date` (in the display zone) to write the bound with.
    pub fn note(&self, tz: Tz, outside: u64, date: Option<NaiveDate>) -> Option<String> {
        match self {
            ReadPlan::Everything(clock) => clock.as_ref().map(|(flag, text)| {
                let date = date.map_or_else(|| "YYYY-MM-DD".to_string(), |date| date.to_string());
                format!(
                    "{flag} {text} is a clock time, on the date the events give: every line was read, then the window shown; give the date too ({flag} '{date} {text}') to read only the window"
                )
            }),
            ReadPlan::Window { margin, from, to, .. } => {
                let bound = |at: &Option<DateTime<Utc>>, open: &str| {
                    at.map_or_else(|| open.to_string(), |at| format_datetime(at, tz))
                };
                let left_out = match outside {
                    0 => "nothing was outside it".to_string(),
                    1 => "1 ledger row or log line outside it was counted, not kept".to_string(),
                    n => format!("{n} ledger rows and log lines outside it were counted, not kept"),
                };
                Some(format!(
                    "ledgers and logs read from {} to {} ({}): --since/--until widened by {} s on each side (--read-margin); {left_out}; a finding whose evidence lies further out is not seen (--read-margin all reads everything)",
                    bound(from, "their start"),
                    bound(to, "their end"),
                    tz.name(),
                    margin.num_seconds(),
                ))
            }
        }
    }
}

/// The first and last instants of something.
pub type Span = (DateTime<Utc>, DateTime<Utc>);

/// A field the id filters compare: its label, its flag, the values given, and how to read it.
type IdField<'a> = (&'static str, &'static str, &'a [String], fn(&Event) -> Option<&str>);

/// How many ids of a field the error on a filter that matches nothing lists.
const LISTED_IDS: usize = 8;

/// The placed filter a report applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub jobs: Vec<String>,
    pub runs: Vec<String>,
    pub items: Vec<String>,
    /// How each bound was read, for the notice (`--since 09:50 read as …`).
    pub readings: Vec<String>,
}

impl FilterSpec {
    pub fn is_empty(&self) -> bool {
        self.since.is_none()
            && self.until.is_none()
            && self.jobs.is_empty()
            && self.runs.is_empty()
            && self.items.is_empty()
    }

    /// Where ledgers and logs are read: `since - margin ..= until + margin` when the bounds given
    /// are instants. A clock time's date comes from the events, so it reads everything (and says
    /// so); a bound that cannot be placed reads everything too, and `place` reports it.
    pub fn read_plan(&self) -> ReadPlan {
        if self.since.is_none() && self.until.is_none() {
            return ReadPlan::Everything(None);
        }
        let Some(margin) = self.read_margin else { return ReadPlan::Everything(None) };
        let mut clock = None;
        let mut place = |flag: &'static str, given: &Option<(String, Bound)>| -> Result<Option<DateTime<Utc>>, ()> {
            match given {
                None => Ok(None),
                Some((text, Bound::Clock(_))) => {
                    clock.get_or_insert_with(|| (flag, text.clone()));
                    Err(())
                }
                Some((_, bound)) => bound.place(self.zone, None).map(Some).map_err(|_| ()),
            }
        };
        let (since, until) = (place("--since", &self.since), place("--until", &self.until));
        let (Ok(since), Ok(until)) = (since, until) else { return ReadPlan::Everything(clock) };
        // A bound past what a timeline holds leaves that side open: nothing there is dropped.
        let from = since.and_then(|at| at.checked_sub_signed(margin));
        let to = until.and_then(|at| at.checked_add_signed(margin));
        let moment = |at: Option<DateTime<Utc>>| at.and_then(|at| Moment::new(at).ok());
        ReadPlan::Window { window: ReadWindow { from: moment(from), to: moment(to) }, margin, from, to }
    }

    /// The filter placed on `timeline`: a clock time alone is on the date every event of the case
    /// falls on in the display zone, and refused when they fall on more than one (which date
    /// would be a guess). `None` when nothing was asked.
    pub fn place(&self, timeline: &Timeline) -> Result<Option<Filter>, String> {
        if self.is_empty() {
            return Ok(None);
        }
        let mut readings = Vec::new();
        let mut place = |flag: &str, given: &Option<(String, Bound)>| -> Result<Option<DateTime<Utc>>, String> {
            let Some((text, bound)) = given else { return Ok(None) };
            let date = match bound {
                Bound::Clock(_) => Some(self.case_date(timeline, flag, text)?),
                Bound::At(_) => None,
            };
            let at = bound.place(self.zone, date).map_err(|problem| {
                let fix = "--tz ZONE (or display_tz in the manifest), or write the offset: 2026-10-07T09:50:00+09:00";
                format!("{flag} '{text}': {}", problem.explain(fix).replace("this source", "the filter"))
            })?;
            if matches!(bound, Bound::Clock(_)) || matches!(bound, Bound::At(crate::time::Stamp::Local(_))) {
                readings.push(format!(
                    "{flag} {text} read as {} {}",
                    format_datetime(at, self.display_tz),
                    self.display_tz.name()
                ));
            }
            Ok(Some(at))
        };
        let since = place("--since", &self.since)?;
        let until = place("--until", &self.until)?;
        if let (Some(since), Some(until)) = (since, until)
            && since > until
        {
            return Err(format!(
                "--since ({}) is after --until ({}): nothing could be shown",
                format_datetime(since, self.display_tz),
                format_datetime(until, self.display_tz)
            ));
        }
        Ok(Some(Filter {
            since,
            until,
            jobs: self.jobs.clone(),
            runs: self.runs.clone(),
            items: self.items.clone(),
            readings,
        }))
    }

    /// The date a clock-time bound is placed on (`case_date`), when one is given and the case has
    /// one date.
    pub fn clock_date(&self, timeline: &Timeline) -> Option<NaiveDate> {
        [("--since", &self.since), ("--until", &self.until)].into_iter().find_map(|(flag, given)| match given {
            Some((text, Bound::Clock(_))) => self.case_date(timeline, flag, text).ok(),
            _ => None,
        })
    }

    /// The one date, in the display zone, of every event of `timeline` (`case_date`).
    fn case_date(&self, timeline: &Timeline, flag: &str, text: &str) -> Result<NaiveDate, String> {
        case_date(timeline, self.zone, flag, text)
    }
}

/// The date a clock time alone (`--since 09:50`, `lock --activated-at 09:33:00`) is on: the one
/// date, in `zone` (the display zone, when one is declared), of every event of `timeline`. Refused
/// when the events fall on several dates, since which one would be a guess, and when no zone is
/// declared, since the date of an instant depends on the zone. Every time flag that takes a
/// clock time places it here.
pub fn case_date(timeline: &Timeline, zone: Option<Tz>, flag: &str, text: &str) -> Result<NaiveDate, String> {
    let zone = zone.ok_or_else(|| {
        format!(
            "{flag} '{text}': a clock time is read in the display zone, and none is declared; give --tz ZONE (or display_tz in the manifest), or a full time with its offset: 2026-10-07T09:50:00+09:00"
        )
    })?;
    let events = timeline.events();
    let (Some(first), Some(last)) = (events.first(), events.last()) else {
        return Err(format!("{flag} '{text}': the case has no events to take the date from; give the date too"));
    };
    let (first, last) = (first.at().with_timezone(&zone).date_naive(), last.at().with_timezone(&zone).date_naive());
    if first != last {
        return Err(format!(
            "{flag} '{text}': the case's events run from {first} to {last} in {}, so a clock time alone does not say which date; give it, e.g. '{first} {text}'",
            zone.name()
        ));
    }
    Ok(first)
}

impl Filter {
    /// Whether `event` is inside every condition given.
    pub fn shows(&self, event: &Event) -> bool {
        let at = event.at();
        let field = |values: &[String], field: Option<&str>| {
            values.is_empty() || field.is_some_and(|field| values.iter().any(|v| v == field))
        };
        self.since.is_none_or(|since| at >= since)
            && self.until.is_none_or(|until| at <= until)
            && field(&self.jobs, event.job_id.as_deref())
            && field(&self.runs, event.run_id.as_deref())
            && field(&self.items, event.item.as_deref())
    }

    /// Whether `finding` cites a shown event.
    pub fn shows_finding(&self, finding: &Finding, timeline: &Timeline) -> bool {
        finding.evidence.iter().any(|&id| self.shows(timeline.get(id)))
    }

    /// Which of `findings` are shown: each citing a shown event, and every finding one of those
    /// follows from (`caused_by`, through any number of links), so that the chain explaining a
    /// shown finding stays whole.
    pub fn shown_findings(&self, findings: &[Finding], timeline: &Timeline) -> Vec<bool> {
        let mut shown: Vec<bool> = findings.iter().map(|finding| self.shows_finding(finding, timeline)).collect();
        let mut pending: Vec<usize> = (0..findings.len()).filter(|&i| shown[i]).collect();
        while let Some(index) = pending.pop() {
            for &cause in &findings[index].caused_by {
                if cause < findings.len() && !shown[cause] {
                    shown[cause] = true;
                    pending.push(cause);
                }
            }
        }
        shown
    }

    /// Why a filter that shows no event of `timeline` is refused, and what the evidence holds
    /// instead: the span of the events (and of the rows and lines left outside the read window,
    /// `outside`: how many, and their span), and the ids of the fields filtered on, the nearest to
    /// the values given first. An empty report would read as "nothing happened", and a CI gate
    /// with a mistyped id would pass.
    pub fn matches_nothing(&self, timeline: &Timeline, outside: (u64, Option<Span>), tz: Tz) -> String {
        use std::fmt::Write as _;
        let events = timeline.events();
        let mut text = format!(
            "the filter matches no event: none of the case's {} events read is among the {}",
            events.len(),
            self.describe(tz)
        );
        let read = events.first().zip(events.last()).map(|(first, last)| (first.at(), last.at()));
        let span = match (read, outside.1) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (span, more) => span.or(more),
        };
        match span {
            Some((first, last)) => {
                let _ = write!(
                    text,
                    "\n  the evidence runs from {} to {} ({})",
                    format_datetime(first, tz),
                    format_datetime(last, tz),
                    tz.name()
                );
            }
            None => text.push_str("\n  the sources gave no event"),
        }
        if outside.0 > 0 {
            let ids = if self.jobs.is_empty() && self.runs.is_empty() && self.items.is_empty() {
                ""
            } else {
                ": their ids are not listed below; --read-margin all reads them"
            };
            let _ = write!(
                text,
                "\n  {} rows and lines outside the read window (--read-margin) were counted, not read{ids}",
                outside.0
            );
        }
        let fields: [IdField<'_>; 3] = [
            ("jobs", "--job", &self.jobs, |event| event.job_id.as_deref()),
            ("runs", "--run", &self.runs, |event| event.run_id.as_deref()),
            ("items", "--item", &self.items, |event| event.item.as_deref()),
        ];
        for (label, flag, wanted, field) in fields {
            if wanted.is_empty() {
                continue;
            }
            let mut ids: Vec<&str> = events.iter().filter_map(field).collect();
            ids.sort_unstable();
            ids.dedup();
            if ids.is_empty() {
                let _ = write!(text, "\n  {flag}: no event read has a {} id", &label[..label.len() - 1]);
                continue;
            }
            // The ids nearest to one of the values given first: a typo's fix leads the list.
            let distance = |id: &str| {
                wanted.iter().map(|value| strsim::damerau_levenshtein(&value.to_lowercase(), &id.to_lowercase())).min()
            };
            ids.sort_by_key(|id| (distance(id), *id));
            let listed: Vec<String> =
                ids.iter().take(LISTED_IDS).map(|id| crate::terminal::visible(id).into_owned()).collect();
            let more = ids.len().saturating_sub(LISTED_IDS);
            let _ = write!(text, "\n  {flag}: the {label} read are {}", listed.join(", "));
            if more > 0 {
                let _ = write!(text, " and {more} more");
            }
        }
        let _ = write!(
            text,
            "\nIds are compared exactly as the sources wrote them, and times without an offset are read in {}. If a report that shows nothing is what you want (a window that may hold no event), add --allow-empty-filter.",
            tz.name()
        );
        text
    }

    /// The conditions in words: `events from 2026-10-07 09:50:00 to 2026-10-07 09:55:00 with job X`.
    pub fn describe(&self, tz: Tz) -> String {
        use std::fmt::Write as _;
        let mut text = String::from("events");
        let _ = match (self.since, self.until) {
            (Some(since), Some(until)) => {
                write!(text, " from {} to {} ({})", format_datetime(since, tz), format_datetime(until, tz), tz.name())
            }
            (Some(since), None) => write!(text, " from {} ({}) on", format_datetime(since, tz), tz.name()),
            (None, Some(until)) => write!(text, " up to {} ({})", format_datetime(until, tz), tz.name()),
            (None, None) => Ok(()),
        };
        for (label, values) in [("job", &self.jobs), ("run", &self.runs), ("item", &self.items)] {
            if !values.is_empty() {
                let _ = write!(text, " with {label} {}", values.join(" or "));
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, EventKind, Origin};
    use crate::time::parse_bound;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn event(time: &str, job: Option<&str>, item: Option<&str>) -> Event {
        let mut event = Event::new(
            at(time).into(),
            EventKind::ItemSelected,
            Origin { channel: Channel::Ledger, source: 0, line: 1 },
        );
        event.edit().job_id = job.map(Into::into);
        event.item = item.map(Into::into);
        event
    }

    fn spec(since: Option<&str>, until: Option<&str>, zone: Option<Tz>) -> FilterSpec {
        let bound = |text: Option<&str>| text.map(|t| (t.to_string(), parse_bound(t).unwrap()));
        FilterSpec {
            since: bound(since),
            until: bound(until),
            zone,
            display_tz: zone.unwrap_or(chrono_tz::UTC),
            ..FilterSpec::default()
        }
    }

    #[test]
    fn bounds_are_inclusive_and_fields_must_equal_a_value_given() {
        let seoul = Some(chrono_tz::Asia::Seoul);
        let timeline = Timeline::new(vec![event("2026-10-07T00:50:00Z", Some("7"), Some("PR-1"))]);
        let filter = spec(Some("09:50"), Some("09:55"), seoul).place(&timeline).unwrap().unwrap();
        assert_eq!((filter.since, filter.until), (Some(at("2026-10-07T00:50:00Z")), Some(at("2026-10-07T00:55:00Z"))));
        assert!(filter.shows(&event("2026-10-07T00:50:00Z", None, None)), "since is inclusive");
        assert!(filter.shows(&event("2026-10-07T00:55:00Z", None, None)), "until is inclusive");
        assert!(!filter.shows(&event("2026-10-07T00:55:00.001Z", None, None)));
        assert!(!filter.shows(&event("2026-10-07T00:49:59.999Z", None, None)));
        assert_eq!(
            filter.readings,
            [
                "--since 09:50 read as 2026-10-07 09:50:00 Asia/Seoul",
                "--until 09:55 read as 2026-10-07 09:55:00 Asia/Seoul"
            ]
        );

        let jobs = Filter { jobs: vec!["7".into(), "8".into()], ..filter.clone() };
        assert!(jobs.shows(&event("2026-10-07T00:51:00Z", Some("8"), None)), "any of the values");
        assert!(!jobs.shows(&event("2026-10-07T00:51:00Z", Some("9"), None)));
        assert!(!jobs.shows(&event("2026-10-07T00:51:00Z", None, None)), "an event without a job is outside");
        let items = Filter { items: vec!["PR-1".into()], ..filter };
        assert!(items.shows(&event("2026-10-07T00:51:00Z", None, Some("PR-1"))));
        assert!(!items.shows(&event("2026-10-07T00:51:00Z", None, Some("PR-10"))), "equal, not a prefix");
    }

    #[test]
    fn a_clock_time_needs_one_date_and_a_declared_zone() {
        // 23:54 UTC on the 6th to 01:15 on the 7th: one date in Seoul, two in UTC.
        let timeline =
            Timeline::new(vec![event("2026-10-06T23:54:00Z", None, None), event("2026-10-07T01:15:00Z", None, None)]);
        assert!(spec(Some("09:50"), None, Some(chrono_tz::Asia::Seoul)).place(&timeline).is_ok());
        let error = spec(Some("00:50"), None, Some(chrono_tz::UTC)).place(&timeline).unwrap_err();
        assert!(
            error.contains("run from 2026-10-06 to 2026-10-07 in UTC") && error.contains("'2026-10-06 00:50'"),
            "{error}"
        );
        let error = spec(Some("09:50"), None, None).place(&timeline).unwrap_err();
        assert!(error.contains("none is declared; give --tz ZONE"), "{error}");
        let error = spec(Some("2026-10-07 09:50"), None, None).place(&timeline).unwrap_err();
        assert!(error.starts_with("--since '2026-10-07 09:50': timestamp has no UTC offset"), "{error}");
        assert!(error.contains("--tz ZONE"), "{error}");
        // An instant with its offset needs neither, and is not restated.
        let filter = spec(Some("2026-10-07T09:50:00+09:00"), None, None).place(&timeline).unwrap().unwrap();
        assert_eq!(filter.since, Some(at("2026-10-07T00:50:00Z")));
        assert!(filter.readings.is_empty());
    }

    #[test]
    fn since_after_until_is_refused() {
        let timeline = Timeline::new(vec![event("2026-10-07T00:50:00Z", None, None)]);
        let error = spec(Some("09:55"), Some("09:50"), Some(chrono_tz::Asia::Seoul)).place(&timeline).unwrap_err();
        assert!(error.contains("is after --until"), "{error}");
    }

    #[test]
    fn a_finding_is_shown_when_one_of_its_events_is() {
        let timeline =
            Timeline::new(vec![event("2026-10-07T00:40:00Z", None, None), event("2026-10-07T00:52:00Z", None, None)]);
        let filter =
            spec(Some("09:50"), Some("09:55"), Some(chrono_tz::Asia::Seoul)).place(&timeline).unwrap().unwrap();
        let mut finding = Finding::new("stalled-rerun", crate::model::Severity::Error, at("2026-10-07T00:52:00Z"));
        finding.evidence = vec![0, 1];
        assert!(filter.shows_finding(&finding, &timeline));
        finding.evidence = vec![0];
        assert!(!filter.shows_finding(&finding, &timeline));
    }

    #[test]
    fn the_findings_a_shown_finding_follows_from_are_shown_with_it() {
        let timeline = Timeline::new(vec![
            event("2026-10-07T00:40:00Z", None, None),
            event("2026-10-07T00:52:00Z", None, None),
            event("2026-10-07T00:53:00Z", None, None),
        ]);
        let filter = spec(Some("09:52:30"), None, Some(chrono_tz::Asia::Seoul)).place(&timeline).unwrap().unwrap();
        let finding = |evidence: Vec<u32>, caused_by: Vec<usize>| {
            let mut finding = Finding::new("f", crate::model::Severity::Warning, at("2026-10-07T00:40:00Z"));
            finding.evidence = evidence;
            finding.caused_by = caused_by;
            finding
        };
        // 2 cites the shown event and follows from 1, which follows from 0; 3 follows from 2
        // (an effect, not a cause) and cites nothing shown.
        let findings =
            [finding(vec![0], vec![]), finding(vec![1], vec![0]), finding(vec![2], vec![1]), finding(vec![0], vec![2])];
        assert_eq!(filter.shown_findings(&findings, &timeline), [true, true, true, false]);
    }
}
