//! Proposing a naive log's zone from evidence: the same moments seen on a clock with an offset.
//!
//! A log line that names a job or run id (`id=repeat:pr-review-sweep:1791333180000`) and a
//! moment of that id in a source with offsets (a ledger row in UTC, a stream entry, a job hash's
//! epoch milliseconds) are the same moment written twice: the log's naive time minus the UTC
//! instant is the offset of the zone it was written in, to within the seconds between the two
//! records. Every such pair is measured; pairs are grouped by the difference rounded to the
//! nearest 15 minutes (every zone offset in use is a multiple of it), each line going to the
//! group most lines support, so the pairs of one line with later moments of its job fall away.
//! The zones proposed are those whose offset at each pair's instant is the measured one: several
//! zones always share an offset, so the choice is left to the user, and a log whose offset
//! changes inside it (a DST change) is matched against zones that have both offsets at their
//! dates.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use super::What;

/// The most a naive time can differ from its instant: offsets run from −12:00 to +14:00.
const MAX_OFFSET_MS: i64 = 26 * 3_600_000;
/// Zone offsets in use are multiples of 15 minutes.
const QUARTER_MS: i64 = 15 * 60_000;
/// The most moments of one id a line is compared with (a hostile file may give one id thousands).
const MAX_PAIRS_PER_ID: usize = 256;
/// How far apart two records of one moment may be (a ledger row written seconds after the
/// activation it records, a log with whole seconds, client and Redis clocks).
pub const PAIR_TOLERANCE_MS: i64 = 120_000;

/// A moment on a clock with an offset.
#[derive(Debug, Clone)]
pub struct Reference {
    pub id: String,
    pub at: DateTime<Utc>,
    pub what: What,
    /// Which file, and its line.
    pub file: usize,
    pub line: u64,
}

/// A naive-time record naming ids.
#[derive(Debug, Clone)]
pub struct Mention {
    pub line: u64,
    pub naive: NaiveDateTime,
    pub ids: Vec<String>,
}

/// One line paired with one reference.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub mention: usize,
    /// The mention's line.
    pub line: u64,
    pub reference: usize,
    /// Naive time − instant − offset, in ms: how far the two records are apart.
    pub residual_ms: i64,
}

/// The lines that measured one offset.
#[derive(Debug)]
pub struct Cluster {
    pub offset_s: i32,
    pub pairs: Vec<Pair>,
}

impl Cluster {
    pub fn spread_ms(&self) -> (i64, i64) {
        let min = self.pairs.iter().map(|p| p.residual_ms).min().unwrap_or(0);
        let max = self.pairs.iter().map(|p| p.residual_ms).max().unwrap_or(0);
        (min, max)
    }
}

/// A zone that fits every kept pair, with what it does over the year.
#[derive(Debug, PartialEq)]
pub struct Candidate {
    pub tz: Tz,
    pub note: String,
}

#[derive(Debug)]
pub struct Measured {
    /// Kept groups, the largest first.
    pub clusters: Vec<Cluster>,
    /// Lines whose pairs measured an offset no zone has together with the kept ones.
    pub disagreeing: Vec<Cluster>,
    pub zones: Vec<Candidate>,
    /// Zones fitting as well, beyond those listed.
    pub more_zones: Vec<Tz>,
    /// The closest pair of the largest group: (its line, the line's time, the reference).
    pub example: Option<(u64, NaiveDateTime, Reference)>,
}

impl Measured {
    pub fn lines(&self) -> usize {
        self.clusters.iter().map(|c| c.pairs.len()).sum()
    }
}

/// How many zones to list.
pub const LISTED: usize = 6;

pub fn measure(mentions: &[Mention], references: &[Reference]) -> Option<Measured> {
    // References by id, in time order: a line is compared with those within a day of it only.
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, reference) in references.iter().enumerate() {
        by_id.entry(reference.id.as_str()).or_default().push(index);
    }
    for indexes in by_id.values_mut() {
        indexes.sort_by_key(|&i| references[i].at);
    }
    // Every pair of a line with a moment of an id it names, by offset.
    let mut candidates: Vec<Vec<(i64, Pair)>> = Vec::with_capacity(mentions.len());
    let mut support: HashMap<i64, usize> = HashMap::new();
    for (m, mention) in mentions.iter().enumerate() {
        let mut mine: Vec<(i64, Pair)> = Vec::new();
        let as_utc = mention.naive.and_utc();
        for id in &mention.ids {
            let Some(indexes) = by_id.get(id.as_str()) else { continue };
            let from = indexes.partition_point(|&i| (as_utc - references[i].at).num_milliseconds() > MAX_OFFSET_MS);
            for &r in indexes[from..].iter().take(MAX_PAIRS_PER_ID) {
                let difference = (as_utc - references[r].at).num_milliseconds();
                if difference < -MAX_OFFSET_MS {
                    break;
                }
                let quarters = (difference + QUARTER_MS / 2).div_euclid(QUARTER_MS);
                let residual_ms = difference - quarters * QUARTER_MS;
                if residual_ms.abs() <= PAIR_TOLERANCE_MS {
                    mine.push((quarters, Pair { mention: m, line: mention.line, reference: r, residual_ms }));
                }
            }
        }
        let mut offsets: Vec<i64> = mine.iter().map(|(q, _)| *q).collect();
        offsets.sort_unstable();
        offsets.dedup();
        for q in offsets {
            *support.entry(q).or_default() += 1;
        }
        candidates.push(mine);
    }
    // Each line to the offset most lines support, paired with its closest moment there.
    let mut groups: BTreeMap<i64, Vec<Pair>> = BTreeMap::new();
    for mine in &candidates {
        let best = mine
            .iter()
            .max_by_key(|(q, pair)| (support[q], std::cmp::Reverse(pair.residual_ms.abs())))
            .map(|(q, _)| *q);
        let Some(q) = best else { continue };
        if let Some((_, pair)) = mine.iter().filter(|(o, _)| *o == q).min_by_key(|(_, p)| p.residual_ms.abs()) {
            groups.entry(q).or_default().push(*pair);
        }
    }
    let mut groups: Vec<Cluster> = groups
        .into_iter()
        .map(|(q, pairs)| Cluster { offset_s: i32::try_from(q * QUARTER_MS / 1000).unwrap_or(0), pairs })
        .collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.pairs.len()));
    if groups.is_empty() {
        return None;
    }
    // The largest group, then each other one a zone can have together with those kept.
    let mut kept = vec![groups.remove(0)];
    let mut zones = fitting(&kept, references);
    let mut disagreeing = Vec::new();
    for group in groups {
        let large = group.pairs.len() * 10 >= kept[0].pairs.len() && group.pairs.len() >= 2;
        kept.push(group);
        let with = fitting(&kept, references);
        if large && !with.is_empty() {
            zones = with;
        } else if let Some(group) = kept.pop() {
            disagreeing.push(group);
        }
    }
    kept.sort_by_key(|c| c.pairs.iter().map(|p| references[p.reference].at).min());
    let more_zones = zones.iter().skip(LISTED).copied().collect();
    let year = references[kept[0].pairs[0].reference].at.year();
    let zones = zones.into_iter().take(LISTED).map(|tz| Candidate { tz, note: over_the_year(tz, year) }).collect();
    let example = kept
        .iter()
        .max_by_key(|c| c.pairs.len())
        .and_then(|c| c.pairs.iter().min_by_key(|p| p.residual_ms.abs()))
        .map(|p| (p.line, mentions[p.mention].naive, references[p.reference].clone()));
    Some(Measured { clusters: kept, disagreeing, zones, more_zones, example })
}

/// The zones whose offset at the instant of every pair is its group's offset, best known first,
/// one name for the aliases of a zone.
fn fitting(clusters: &[Cluster], references: &[Reference]) -> Vec<Tz> {
    // The checks per distinct hour: thousands of pairs, a few hours.
    let mut checks: Vec<(i64, i32)> = clusters
        .iter()
        .flat_map(|c| c.pairs.iter().map(|p| (references[p.reference].at.timestamp().div_euclid(3600), c.offset_s)))
        .collect();
    checks.sort_unstable();
    checks.dedup();
    let fits = |tz: Tz| {
        checks.iter().all(|&(hour, offset)| {
            DateTime::from_timestamp(hour * 3600, 0).is_some_and(|at| offset_at(tz, at) == offset)
        })
    };
    let mut zones: Vec<Tz> = chrono_tz::TZ_VARIANTS.iter().copied().filter(|tz| listed(*tz) && fits(*tz)).collect();
    zones.sort_by_key(|tz| (rank(*tz), tz.name()));
    let mut distinct: Vec<(Tz, Vec<i32>)> = Vec::new();
    for tz in zones {
        let history = history(tz);
        if !distinct.iter().any(|(_, h)| *h == history) {
            distinct.push((tz, history));
        }
    }
    distinct.into_iter().map(|(tz, _)| tz).collect()
}

pub fn offset_at(tz: Tz, at: DateTime<Utc>) -> i32 {
    tz.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc()
}

/// Region names and UTC; not the old country aliases (`US/Pacific`, `Japan`) or `Etc/GMT-9`.
fn listed(tz: Tz) -> bool {
    let name = tz.name();
    name == "UTC"
        || (name.contains('/')
            && !["Etc/", "US/", "Canada/", "Mexico/", "Brazil/", "Chile/", "SystemV/"]
                .iter()
                .any(|p| name.starts_with(p)))
}

/// The zone's offset every week from 1900 to 2037: equal only for aliases of one zone (the old
/// names the tz database keeps as links, `Asia/Calcutta` for `Asia/Kolkata`); zones that differ
/// in any year, if only by their local mean time before 1900s standard time, stay apart.
fn history(tz: Tz) -> Vec<i32> {
    const START: i64 = -2_208_988_800; // 1900-01-01T00:00:00Z
    (0..138 * 52)
        .map(|week| offset_at(tz, DateTime::from_timestamp(START + week * 7 * 86_400, 0).unwrap_or_default()))
        .collect()
}

/// "+09:00 all year", or "-08:00 in January, -07:00 in July".
fn over_the_year(tz: Tz, year: i32) -> String {
    let at = |month| {
        NaiveDate::from_ymd_opt(year, month, 15)
            .and_then(|d| d.and_hms_opt(12, 0, 0))
            .map_or(0, |naive| offset_at(tz, naive.and_utc()))
    };
    let (january, july) = (at(1), at(7));
    if january == july {
        format!("{} all year", format_offset(january))
    } else {
        format!("{} in January, {} in July", format_offset(january), format_offset(july))
    }
}

/// `+09:00`, `-07:00`, `+05:45`.
pub fn format_offset(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Where a zone comes in the list: zones of the most populous cities first (roughly by the
/// population of each zone's largest city, from the UN's World Urbanization Prospects), then the
/// others by name. Only the order in which candidates are listed; never a decision.
fn rank(tz: Tz) -> usize {
    if tz.name() == "UTC" {
        return 0;
    }
    BY_POPULATION.iter().position(|name| *name == tz.name()).map_or(usize::MAX, |at| at + 1)
}

const BY_POPULATION: &[&str] = &[
    "Asia/Tokyo",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Dhaka",
    "America/Sao_Paulo",
    "Africa/Cairo",
    "America/Mexico_City",
    "America/New_York",
    "Asia/Karachi",
    "Asia/Manila",
    "Europe/Istanbul",
    "Africa/Lagos",
    "America/Argentina/Buenos_Aires",
    "Africa/Kinshasa",
    "Asia/Jakarta",
    "Europe/Moscow",
    "Asia/Bangkok",
    "Asia/Seoul",
    "America/Lima",
    "America/Los_Angeles",
    "Europe/Paris",
    "Europe/London",
    "America/Bogota",
    "Asia/Tehran",
    "Asia/Ho_Chi_Minh",
    "Asia/Hong_Kong",
    "Africa/Luanda",
    "Asia/Kuala_Lumpur",
    "Asia/Riyadh",
    "Asia/Baghdad",
    "America/Chicago",
    "Africa/Dar_es_Salaam",
    "Asia/Singapore",
    "Asia/Yangon",
    "Africa/Khartoum",
    "Africa/Johannesburg",
    "America/Santiago",
    "Europe/Madrid",
    "Asia/Taipei",
    "Africa/Abidjan",
    "America/Toronto",
    "Africa/Nairobi",
    "Africa/Addis_Ababa",
    "Asia/Kabul",
    "Asia/Tashkent",
    "Asia/Dubai",
    "Australia/Sydney",
    "Australia/Melbourne",
    "Africa/Casablanca",
    "Africa/Algiers",
    "Asia/Pyongyang",
    "Europe/Berlin",
    "Europe/Rome",
    "Europe/Kyiv",
    "America/Caracas",
    "Asia/Almaty",
    "Asia/Colombo",
    "Asia/Kathmandu",
    "Asia/Jerusalem",
    "America/Havana",
    "America/Guatemala",
    "America/Denver",
    "America/Phoenix",
    "America/Vancouver",
    "Africa/Accra",
    "Europe/Athens",
    "Europe/Bucharest",
    "Europe/Warsaw",
    "Europe/Lisbon",
    "Europe/Amsterdam",
    "Europe/Brussels",
    "Europe/Vienna",
    "Europe/Stockholm",
    "Europe/Prague",
    "Europe/Budapest",
    "Europe/Minsk",
    "Europe/Helsinki",
    "Asia/Baku",
    "Asia/Tbilisi",
    "Asia/Yerevan",
    "Asia/Novosibirsk",
    "Asia/Yekaterinburg",
    "Asia/Krasnoyarsk",
    "Asia/Irkutsk",
    "Asia/Vladivostok",
    "Asia/Yakutsk",
    "Asia/Omsk",
    "Europe/Samara",
    "Asia/Magadan",
    "Asia/Kamchatka",
    "Australia/Brisbane",
    "Australia/Perth",
    "Australia/Adelaide",
    "Australia/Darwin",
    "Australia/Hobart",
    "Pacific/Auckland",
    "America/Montevideo",
    "America/Asuncion",
    "America/La_Paz",
    "America/Panama",
    "America/Puerto_Rico",
    "America/Santo_Domingo",
    "America/Tijuana",
    "America/Edmonton",
    "America/Winnipeg",
    "America/Regina",
    "America/Halifax",
    "America/St_Johns",
    "America/Anchorage",
    "Pacific/Honolulu",
    "Atlantic/Azores",
    "Atlantic/Cape_Verde",
    "America/Noronha",
    "America/Nuuk",
    "Atlantic/Reykjavik",
    "Pacific/Port_Moresby",
    "Pacific/Guam",
    "Pacific/Fiji",
    "Pacific/Tongatapu",
    "Pacific/Apia",
    "Pacific/Kiritimati",
    "Pacific/Chatham",
    "Pacific/Pago_Pago",
    "Pacific/Marquesas",
    "Asia/Jayapura",
    "Asia/Dili",
    "Pacific/Palau",
    "Asia/Chita",
    "Asia/Sakhalin",
    "Pacific/Norfolk",
    "Australia/Lord_Howe",
    "Australia/Eucla",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn naive(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    fn reference(id: &str, at: &str) -> Reference {
        Reference { id: id.into(), at: utc(at), what: What::Active, file: 0, line: 1 }
    }

    fn mention(line: u64, at: &str, id: &str) -> Mention {
        Mention { line, naive: naive(at), ids: vec![id.into()] }
    }

    fn names(measured: &Measured) -> Vec<&'static str> {
        measured.zones.iter().map(|c| c.tz.name()).collect()
    }

    #[test]
    fn a_kst_log_measures_plus_nine_and_lists_the_zones_that_have_it() {
        // Each job: activation in the stream and a ledger row 3 s later; the log writes both.
        let references = [
            reference("a", "2026-10-07T00:33:00.004Z"),
            reference("a", "2026-10-07T00:33:03.118Z"),
            reference("a", "2026-10-07T00:37:26.912Z"),
            reference("b", "2026-10-07T00:54:00.004Z"),
        ];
        let mentions = [mention(1, "2026-10-07 09:33:00.000", "a"), mention(2, "2026-10-07 09:54:00.004", "b")];
        let measured = measure(&mentions, &references).unwrap();
        assert_eq!(measured.clusters.len(), 1);
        assert_eq!(measured.clusters[0].offset_s, 9 * 3600);
        assert_eq!(measured.clusters[0].spread_ms(), (-4, 0));
        let zones = names(&measured);
        assert_eq!(zones[..2], ["Asia/Tokyo", "Asia/Seoul"]);
        assert!(!zones.contains(&"Asia/Calcutta") && !zones.contains(&"Japan") && !zones.contains(&"ROK"));
        assert_eq!(measured.zones[1].note, "+09:00 all year");
        assert!(measured.disagreeing.is_empty());
    }

    #[test]
    fn a_los_angeles_log_lists_los_angeles_not_seoul() {
        let references = [reference("7", "2026-06-02T16:00:00Z"), reference("8", "2026-06-02T17:00:00.250Z")];
        let mentions = [mention(1, "2026-06-02 09:00:00.010", "7"), mention(2, "2026-06-02 10:00:00.240", "8")];
        let measured = measure(&mentions, &references).unwrap();
        assert_eq!(measured.clusters[0].offset_s, -7 * 3600);
        let zones = names(&measured);
        assert_eq!(zones[0], "America/Los_Angeles");
        assert!(zones.contains(&"America/Phoenix"), "{zones:?}");
        assert!(!zones.contains(&"Asia/Seoul"));
        assert_eq!(measured.zones[0].note, "-08:00 in January, -07:00 in July");
    }

    #[test]
    fn a_log_across_a_dst_change_keeps_zones_with_both_offsets_at_their_dates() {
        // Europe/Berlin leaves summer time on 2026-10-25 at 01:00 UTC.
        let references = [
            reference("a", "2026-10-24T10:00:00Z"),
            reference("b", "2026-10-24T12:00:00Z"),
            reference("c", "2026-10-26T10:00:00Z"),
            reference("d", "2026-10-26T12:00:00Z"),
        ];
        let mentions = [
            mention(1, "2026-10-24 12:00:00", "a"),
            mention(2, "2026-10-24 14:00:00", "b"),
            mention(3, "2026-10-26 11:00:00", "c"),
            mention(4, "2026-10-26 13:00:00", "d"),
        ];
        let measured = measure(&mentions, &references).unwrap();
        let offsets: Vec<i32> = measured.clusters.iter().map(|c| c.offset_s).collect();
        assert_eq!(offsets, [7200, 3600], "in time order");
        let zones = names(&measured);
        assert!(zones.contains(&"Europe/Berlin") && zones.contains(&"Europe/Paris"), "{zones:?}");
        assert!(!zones.contains(&"Africa/Cairo"), "+02:00 then, but not +01:00 after: {zones:?}");
        assert!(!zones.contains(&"Africa/Lagos"), "+01:00 always: {zones:?}");
    }

    #[test]
    fn a_line_goes_to_the_offset_most_lines_support() {
        // Line 1 names job a, which also finished exactly an hour later: the +08:00 pair is noise.
        let references = [
            reference("a", "2026-10-07T00:00:00Z"),
            reference("a", "2026-10-07T01:00:00Z"),
            reference("b", "2026-10-07T02:00:00Z"),
        ];
        let mentions = [mention(1, "2026-10-07 09:00:00", "a"), mention(2, "2026-10-07 11:00:00", "b")];
        let measured = measure(&mentions, &references).unwrap();
        assert_eq!(measured.clusters.len(), 1);
        assert_eq!((measured.clusters[0].offset_s, measured.lines()), (9 * 3600, 2));
    }

    #[test]
    fn no_pair_measures_nothing() {
        assert!(
            measure(&[mention(1, "2026-10-07 09:00:00", "x")], &[reference("y", "2026-10-07T00:00:00Z")]).is_none()
        );
        // Farther apart than any offset, or not within the tolerance of a 15-minute multiple.
        assert!(
            measure(&[mention(1, "2026-10-09 09:00:00", "x")], &[reference("x", "2026-10-07T00:00:00Z")]).is_none()
        );
        assert!(
            measure(&[mention(1, "2026-10-07 09:07:00", "x")], &[reference("x", "2026-10-07T00:00:00Z")]).is_none()
        );
    }

    #[test]
    fn utc_comes_first_for_a_log_in_utc_and_offsets_print_with_sign() {
        let measured =
            measure(&[mention(1, "2026-01-07 09:00:00", "x")], &[reference("x", "2026-01-07T09:00:00Z")]).unwrap();
        assert_eq!(names(&measured)[0], "UTC");
        assert_eq!(
            (format_offset(-25_200), format_offset(20_700), format_offset(0)),
            ("-07:00".into(), "+05:45".into(), "+00:00".into())
        );
    }

    #[test]
    fn every_ranked_zone_is_in_the_database() {
        for name in BY_POPULATION {
            assert!(crate::time::parse_zone(name).is_ok(), "{name}");
        }
    }
}
