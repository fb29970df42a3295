//! What to tell someone whose zone is not an IANA name: the name they likely meant.
//!
//! A zone is never guessed (`parse_zone` takes IANA region names, UTC and GMT, and nothing
//! else), but a refusal should name the fix. Three mistakes cover nearly every refusal: a
//! misspelt name (`Asia/Seol`: the nearest names by edit distance, case and `_`/space aside), an
//! abbreviation (`KST`, `IST`: the zones it is used for, all of them when it is used for several,
//! since `IST` is India, Ireland and Israel), and an offset (`+09:00`, `-0800`, `UTC+9`: the zones
//! that have it, and `Etc/GMT-9` for one fixed offset all year). An offset is refused rather than
//! taken as a fixed zone: a log written at −08:00 in January is at −07:00 in July, and a fixed
//! offset would place the summer's lines an hour off without a word; `Etc/GMT-9` is there for
//! the user who knows their system never changes its clock.

use chrono::{NaiveDate, Offset, TimeZone};
use chrono_tz::Tz;

/// Abbreviations people write for zones, with the IANA zones each is used for (the most
/// populous first). Several zones share each; an abbreviation used for zones of different
/// offsets (CST, IST, BST) lists them all.
const ABBREVIATIONS: &[(&str, &[&str])] = &[
    ("Z", &["UTC"]),
    ("KST", &["Asia/Seoul"]),
    ("JST", &["Asia/Tokyo"]),
    ("HKT", &["Asia/Hong_Kong"]),
    ("SGT", &["Asia/Singapore"]),
    ("PHT", &["Asia/Manila"]),
    ("WIB", &["Asia/Jakarta"]),
    ("ICT", &["Asia/Bangkok", "Asia/Ho_Chi_Minh"]),
    ("IST", &["Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"]),
    ("PKT", &["Asia/Karachi"]),
    ("CST", &["America/Chicago", "Asia/Shanghai", "America/Havana", "America/Mexico_City"]),
    ("CDT", &["America/Chicago", "America/Havana"]),
    ("CT", &["America/Chicago"]),
    ("EST", &["America/New_York", "America/Toronto", "America/Panama"]),
    ("EDT", &["America/New_York", "America/Toronto"]),
    ("ET", &["America/New_York", "America/Toronto"]),
    ("PST", &["America/Los_Angeles", "America/Vancouver", "America/Tijuana"]),
    ("PDT", &["America/Los_Angeles", "America/Vancouver", "America/Tijuana"]),
    ("PT", &["America/Los_Angeles", "America/Vancouver"]),
    ("MST", &["America/Denver", "America/Phoenix", "America/Edmonton"]),
    ("MDT", &["America/Denver", "America/Edmonton"]),
    ("MT", &["America/Denver", "America/Phoenix"]),
    ("AKST", &["America/Anchorage"]),
    ("AKDT", &["America/Anchorage"]),
    ("HST", &["Pacific/Honolulu"]),
    ("BRT", &["America/Sao_Paulo"]),
    ("ART", &["America/Argentina/Buenos_Aires"]),
    ("WET", &["Europe/Lisbon"]),
    ("WEST", &["Europe/Lisbon"]),
    ("BST", &["Europe/London", "Asia/Dhaka"]),
    ("CET", &["Europe/Berlin", "Europe/Paris", "Europe/Madrid", "Europe/Rome", "Europe/Warsaw"]),
    ("CEST", &["Europe/Berlin", "Europe/Paris", "Europe/Madrid", "Europe/Rome", "Europe/Warsaw"]),
    ("EET", &["Europe/Athens", "Europe/Helsinki", "Europe/Kyiv", "Africa/Cairo"]),
    ("EEST", &["Europe/Athens", "Europe/Helsinki", "Europe/Kyiv"]),
    ("MSK", &["Europe/Moscow"]),
    ("SAST", &["Africa/Johannesburg"]),
    ("WAT", &["Africa/Lagos"]),
    ("EAT", &["Africa/Nairobi"]),
    ("AEST", &["Australia/Sydney", "Australia/Melbourne", "Australia/Brisbane"]),
    ("AEDT", &["Australia/Sydney", "Australia/Melbourne"]),
    ("ACST", &["Australia/Adelaide", "Australia/Darwin"]),
    ("ACDT", &["Australia/Adelaide"]),
    ("AWST", &["Australia/Perth"]),
    ("NZST", &["Pacific/Auckland"]),
    ("NZDT", &["Pacific/Auckland"]),
];

/// Zones people mean, to name first among those that share an offset.
const WELL_KNOWN: &[&str] = &[
    "Asia/Seoul",
    "Asia/Tokyo",
    "Asia/Shanghai",
    "Asia/Singapore",
    "Asia/Kolkata",
    "Asia/Dubai",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Paris",
    "Europe/Helsinki",
    "Europe/Moscow",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Phoenix",
    "America/Los_Angeles",
    "America/Anchorage",
    "Pacific/Honolulu",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "Australia/Perth",
    "Pacific/Auckland",
];

/// How many zones a hint lists.
const LISTED: usize = 4;

/// Why `name` is not a zone leasetrace takes, and what to give instead.
pub fn refusal(name: &str) -> String {
    let trimmed = name.trim();
    let shown = crate::terminal::visible(trimmed);
    if let Some(zones) = abbreviation(trimmed) {
        let listed = zones.iter().map(|tz| described(*tz)).collect::<Vec<_>>();
        let meaning = match listed.as_slice() {
            [one] => format!("it is used for {one}"),
            several => format!(
                "it is used for several zones: {}; which one the system used is yours to say",
                several.join(", ")
            ),
        };
        return format!(
            "'{shown}' is an abbreviation, not an IANA zone name: {meaning}; give the IANA name, e.g. {} (leasetrace docs inputs)",
            zones[0].name()
        );
    }
    if let Some(offset) = offset_seconds(trimmed) {
        return offset_refusal(&shown, offset);
    }
    let near = nearest(trimmed);
    let hint = match near.as_slice() {
        [] => "expected an IANA name such as UTC, Asia/Seoul or Europe/Berlin".to_string(),
        [one] => format!("did you mean {one}?"),
        several => format!("did you mean one of {}?", several.join(", ")),
    };
    format!("unknown time zone '{shown}': {hint} (leasetrace docs inputs)")
}

/// The zones an abbreviation is used for, case aside.
fn abbreviation(text: &str) -> Option<Vec<Tz>> {
    ABBREVIATIONS
        .iter()
        .find(|(abbreviation, _)| abbreviation.eq_ignore_ascii_case(text))
        .map(|(_, zones)| zones.iter().filter_map(|z| z.parse::<Tz>().ok()).collect())
}

/// `+09:00`, `+0900`, `+9`, `-08:00`, `UTC+9`, `GMT-08:00`, `UTC+05:30`: seconds east of UTC.
/// `None` for anything else (a name, or hours past 14).
fn offset_seconds(text: &str) -> Option<i32> {
    let upper = text.to_ascii_uppercase();
    let rest = upper.strip_prefix("UTC").or_else(|| upper.strip_prefix("GMT")).unwrap_or(&upper).trim_start();
    let mut chars = rest.chars();
    let sign = match chars.next()? {
        '+' => 1,
        '-' | '\u{2212}' => -1,
        _ => return None,
    };
    let body: String = chars.collect();
    let (hours, minutes) = match body.split_once(':') {
        Some((h, m)) => (h.to_string(), m.to_string()),
        None if body.len() == 4 && body.is_ascii() => (body[..2].to_string(), body[2..].to_string()),
        None => (body.clone(), "0".to_string()),
    };
    let number = |text: &str| {
        (!text.is_empty() && text.len() <= 2 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<i32>().ok())
            .flatten()
    };
    let (hours, minutes) = (number(&hours)?, number(&minutes)?);
    (hours <= 14 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
}

fn offset_refusal(shown: &str, offset: i32) -> String {
    let written = format_offset(offset);
    let zones = zones_with(offset);
    let at = if zones.is_empty() {
        format!("no zone is at {written} in 2026")
    } else {
        let listed: Vec<String> = zones.iter().map(|tz| described(*tz)).collect();
        format!("zones at {written}: {}; give the one the system used", listed.join(", "))
    };
    // POSIX's sign: Etc/GMT-9 is nine hours east of Greenwich. Only whole hours have such a zone.
    let fixed = match offset {
        0 => ", or UTC".to_string(),
        _ if offset % 3600 == 0 => format!(
            ", or Etc/GMT{:+} for {written} all year with no daylight saving (the Etc/ names invert the sign)",
            -offset / 3600
        ),
        _ => String::new(),
    };
    format!(
        "'{shown}' is an offset, not a zone: a zone also knows when its clocks change (daylight saving), an offset does not, and leasetrace does not guess which zone an offset stands for; {at}{fixed} (leasetrace docs inputs)"
    )
}

/// `+09:00`.
fn format_offset(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// A zone's offsets in January and July of 2026 (a fixed year, so that a hint does not change
/// with the day it is given).
fn offsets(tz: Tz) -> (i32, i32) {
    let at = |month| {
        let day = NaiveDate::from_ymd_opt(2026, month, 15).and_then(|d| d.and_hms_opt(12, 0, 0)).unwrap_or_default();
        tz.offset_from_utc_datetime(&day).fix().local_minus_utc()
    };
    (at(1), at(7))
}

/// `Asia/Seoul (+09:00)`, `America/Los_Angeles (-08:00, -07:00 in daylight saving)`.
fn described(tz: Tz) -> String {
    let (january, july) = offsets(tz);
    let (standard, summer) = (january.min(july), january.max(july));
    if standard == summer {
        format!("{} ({})", tz.name(), format_offset(standard))
    } else {
        format!("{} ({}, {} in daylight saving)", tz.name(), format_offset(standard), format_offset(summer))
    }
}

/// Region zones at `offset` in January or July: well-known ones first, at most `LISTED`.
fn zones_with(offset: i32) -> Vec<Tz> {
    let fits = |tz: &Tz| {
        let (january, july) = offsets(*tz);
        january == offset || july == offset
    };
    let mut zones: Vec<Tz> = WELL_KNOWN.iter().filter_map(|n| n.parse::<Tz>().ok()).filter(fits).collect();
    for tz in chrono_tz::TZ_VARIANTS.iter().copied().filter(|tz| region(*tz) && fits(tz)) {
        if zones.len() >= LISTED {
            break;
        }
        if !zones.contains(&tz) {
            zones.push(tz);
        }
    }
    zones.truncate(LISTED);
    zones
}

/// A name `parse_zone` takes (`Continent/City`), not a legacy alias such as `US/Pacific` or an
/// `Etc/` fixed offset: what a hint should offer.
fn region(tz: Tz) -> bool {
    let name = tz.name();
    name.contains('/') && !name.starts_with("Etc/") && name.split('/').next().is_some_and(|area| area.len() > 3)
}

/// The zone names nearest to `text` by edit distance (case, `_` and spaces aside), compared
/// whole and, for a name without `/`, with each zone's city (`Seoul` → `Asia/Seoul`).
fn nearest(text: &str) -> Vec<String> {
    let fold = |s: &str| s.to_lowercase().replace([' ', '-'], "_");
    let wanted = fold(text);
    if wanted.is_empty() || wanted.chars().count() > 64 {
        return Vec::new();
    }
    let whole = wanted.contains('/');
    let mut scored: Vec<(usize, &str)> = chrono_tz::TZ_VARIANTS
        .iter()
        .filter(|tz| tz.name().contains('/'))
        .map(|tz| {
            let name = tz.name();
            let compared = if whole { fold(name) } else { fold(name.rsplit('/').next().unwrap_or(name)) };
            (crate::spelling::edit_distance(&wanted, &compared), name)
        })
        .collect();
    scored.sort_unstable();
    // Close enough to be the same name mistyped: one edit in five characters, at least one.
    let allowed = (wanted.chars().count() / 5).max(1);
    let best = scored.first().map_or(usize::MAX, |(d, _)| *d);
    scored.into_iter().filter(|(d, _)| *d <= allowed && *d == best).map(|(_, name)| name.to_string()).take(3).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_name_gets_the_nearest_names() {
        assert!(refusal("Asia/Seol").contains("did you mean Asia/Seoul?"), "{}", refusal("Asia/Seol"));
        assert!(refusal("america/los_angles").contains("did you mean America/Los_Angeles?"));
        assert!(refusal("America/New York").contains("did you mean America/New_York?"));
        assert!(refusal("Seoul").contains("did you mean Asia/Seoul?"), "a city alone: {}", refusal("Seoul"));
        assert!(refusal("Mars/Olympus").contains("expected an IANA name"), "{}", refusal("Mars/Olympus"));
    }

    #[test]
    fn an_abbreviation_names_every_zone_it_is_used_for() {
        let kst = refusal("KST");
        assert!(kst.contains("abbreviation") && kst.contains("Asia/Seoul (+09:00)"), "{kst}");
        let ist = refusal("ist");
        for zone in ["Asia/Kolkata (+05:30)", "Europe/Dublin", "Asia/Jerusalem"] {
            assert!(ist.contains(zone), "{ist}");
        }
        assert!(ist.contains("several zones"), "{ist}");
        let pdt = refusal("PDT");
        assert!(pdt.contains("America/Los_Angeles (-08:00, -07:00 in daylight saving)"), "{pdt}");
        assert!(refusal("Z").contains("UTC"));
        for (abbreviation, zones) in ABBREVIATIONS {
            for zone in *zones {
                assert!(zone.parse::<Tz>().is_ok(), "{abbreviation}: {zone}");
                assert!(crate::time::parse_zone(zone).is_ok(), "{abbreviation}: {zone} is taken");
            }
        }
    }

    #[test]
    fn an_offset_names_the_zones_that_have_it_and_the_fixed_zone() {
        for text in ["+09:00", "+0900", "+9", "UTC+9", "utc+09:00", "GMT+9"] {
            assert_eq!(offset_seconds(text), Some(9 * 3600), "{text}");
            let message = refusal(text);
            assert!(message.contains("is an offset, not a zone"), "{message}");
            assert!(message.contains("Asia/Seoul (+09:00)") && message.contains("Asia/Tokyo"), "{message}");
            assert!(message.contains("Etc/GMT-9 for +09:00 all year"), "{message}");
        }
        let pacific = refusal("-0800");
        assert!(pacific.contains("America/Los_Angeles (-08:00, -07:00 in daylight saving)"), "{pacific}");
        assert!(pacific.contains("Etc/GMT+8"), "{pacific}");
        let india = refusal("+05:30");
        assert!(india.contains("Asia/Kolkata") && !india.contains("Etc/"), "no whole-hour zone: {india}");
        for text in ["+", "+99", "UTC+", "+1:2:3", "+\u{e9}9", "-\u{1f600}"] {
            assert!(!refusal(text).is_empty(), "{text}");
        }
    }
}
