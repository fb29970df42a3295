//! What the user decides on `init`'s command line instead of in the manifest it writes:
//! `--tz FILE=ZONE` (the zone a file's naive times were written in: init measures an offset and
//! lists the zones that have it, but never picks one) and `--display-tz ZONE`; and the display
//! zone init proposes when none is given.
//!
//! The display zone is not evidence about any source: it only says how times are printed. So
//! where a source's zone is never guessed, the display zone may be proposed: when the logs were
//! measured at one offset, every zone init lists for them shows the case's times alike, and the
//! first of them (by population, as listed) is written, saying so. A zone given for a log by
//! `--tz` is the better name and is taken first.

use std::collections::BTreeMap;

use chrono_tz::Tz;

use super::{Inspection, Zone};
use crate::error::{Error, Result};
use crate::ingest::SourceKind;

/// The choices given by flag, zones parsed, files not yet matched.
#[derive(Debug, Default)]
pub struct Choices {
    /// `--tz FILE=ZONE`, in the order given.
    pub zones: Vec<(String, Tz)>,
    pub display_tz: Option<Tz>,
}

/// The display zone written, and why (for the manifest's comment and init's report).
#[derive(Debug)]
pub struct Display {
    pub tz: Tz,
    pub why: String,
}

impl Default for Display {
    fn default() -> Self {
        Display {
            tz: chrono_tz::UTC,
            why: "the zone times are shown in: any IANA name (a choice, not from the files)".into(),
        }
    }
}

impl Choices {
    /// Reads `--tz FILE=ZONE` (repeatable) and `--display-tz ZONE`.
    pub fn parse(zones: &[String], display_tz: Option<&str>) -> Result<Choices> {
        let mut parsed: Vec<(String, Tz)> = Vec::new();
        for pair in zones {
            let Some((file, zone)) =
                pair.rsplit_once('=').filter(|(f, z)| !f.trim().is_empty() && !z.trim().is_empty())
            else {
                return Err(Error::usage(format!(
                    "--tz expects FILE=ZONE, the file as init names it in the manifest and an IANA zone (e.g. --tz server.log=Asia/Seoul), found '{pair}'"
                )));
            };
            let tz = crate::time::parse_zone(zone).map_err(|why| Error::usage(format!("--tz {pair}: {why}")))?;
            if let Some((_, earlier)) = parsed.iter().find(|(f, _)| f == file) {
                if *earlier != tz {
                    return Err(Error::usage(format!(
                        "--tz {pair}: {file} was given {} already; a file has one zone",
                        earlier.name()
                    )));
                }
                continue;
            }
            parsed.push((file.to_string(), tz));
        }
        let display_tz = display_tz
            .map(|zone| crate::time::parse_zone(zone).map_err(|why| Error::usage(format!("--display-tz: {why}"))))
            .transpose()?;
        Ok(Choices { zones: parsed, display_tz })
    }

    /// The zones given, by file name (`case/server.log` taken as `server.log` for `folder` case),
    /// not yet checked against the files found.
    pub fn zones_by_name(&self, folder: &std::path::Path) -> BTreeMap<String, Tz> {
        self.zones.iter().map(|(given, tz)| (name_in(given, folder), *tz)).collect()
    }

    /// The zones given, by the name init writes for each file: every FILE must be a file init
    /// proposes a source for, of a kind whose times a zone reads (a log or a ledger). `folder` is
    /// the path init was given: `case/server.log` is taken for `server.log`.
    pub fn zones_by_file(&self, inspection: &Inspection, folder: &std::path::Path) -> Result<BTreeMap<String, Tz>> {
        let mut by_file = BTreeMap::new();
        for (given, tz) in &self.zones {
            let wanted = name_in(given, folder);
            let named = |name: &str| wanted == name;
            let Some(proposal) = inspection.proposals.iter().find(|p| named(&p.file.name)) else {
                let found: Vec<String> =
                    inspection.proposals.iter().map(|p| crate::terminal::visible(&p.file.name).into_owned()).collect();
                let left_out = inspection
                    .skipped
                    .iter()
                    .find(|(name, _)| named(name))
                    .map(|(name, why)| format!(" ({name} is left out: {why})"))
                    .unwrap_or_default();
                let near = found
                    .iter()
                    .filter(|name| crate::spelling::edit_distance(&given.to_lowercase(), &name.to_lowercase()) <= 2)
                    .map(String::as_str)
                    .collect::<Vec<_>>();
                let near = match near.as_slice() {
                    [] => String::new(),
                    close => format!("; did you mean {}?", close.join(" or ")),
                };
                return Err(Error::usage(format!(
                    "--tz {given}={}: init found no source {given} in {}{left_out}; the files it proposes sources for: {}{near}",
                    tz.name(),
                    folder.display(),
                    if found.is_empty() { "none".to_string() } else { found.join(", ") }
                )));
            };
            let kind = proposal.file.kind();
            if !matches!(kind, SourceKind::Log | SourceKind::Ledger) {
                return Err(Error::usage(format!(
                    "--tz {given}={}: {} is a {} source, whose times are epoch counts or durations: no zone reads them (a zone is for a log or a ledger)",
                    tz.name(),
                    given,
                    kind.name()
                )));
            }
            by_file.insert(proposal.file.name.clone(), *tz);
        }
        Ok(by_file)
    }
}

/// A FILE of `--tz` as init names it: the name in the folder when given with the folder's path.
fn name_in(given: &str, folder: &std::path::Path) -> String {
    let path = std::path::Path::new(given);
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() && parent == folder => {
            name.to_string_lossy().into_owned()
        }
        _ => given.to_string(),
    }
}

/// The display zone to write: `--display-tz`, else the zone given for a log by `--tz`, else a
/// zone at the offset the logs were measured at, else UTC; each with the reason.
pub fn display(choices: &Choices, given: &BTreeMap<String, Tz>, inspection: &Inspection) -> Display {
    if let Some(tz) = choices.display_tz {
        return Display { tz, why: "given by init --display-tz".into() };
    }
    let logs = || inspection.proposals.iter().filter(|p| p.file.kind() == SourceKind::Log);
    let given_logs: Vec<(&str, Tz)> =
        logs().filter_map(|p| given.get(&p.file.name).map(|tz| (p.file.name.as_str(), *tz))).collect();
    if let Some((name, tz)) = given_logs.first() {
        let others: Vec<String> =
            given_logs.iter().filter(|(_, z)| z != tz).map(|(n, z)| format!("{n} {}", z.name())).collect();
        let also = if others.is_empty() { String::new() } else { format!(" (the other logs: {})", others.join(", ")) };
        return Display {
            tz: *tz,
            why: format!(
                "the zone of {} (init --tz){also}: times are shown in it (any IANA name; only how times are printed)",
                crate::terminal::visible(name)
            ),
        };
    }
    let measured: Vec<(&str, &super::zone::Measured)> = logs()
        .filter_map(|p| match &p.zone {
            Some(Zone::Measured { measured, .. }) => Some((p.file.name.as_str(), measured.as_ref())),
            _ => None,
        })
        .collect();
    let Some((first_name, first)) = measured.first() else {
        return Display {
            tz: chrono_tz::UTC,
            why: "no log's zone was measured: UTC (any IANA name; only how times are printed)".into(),
        };
    };
    let offsets = |m: &super::zone::Measured| m.clusters.iter().map(|c| c.offset_s).collect::<Vec<_>>();
    if let Some((other, _)) = measured.iter().find(|(_, m)| offsets(m) != offsets(first)) {
        return Display {
            tz: chrono_tz::UTC,
            why: format!(
                "UTC: the logs were measured at different offsets ({} and {}), so no one zone shows them all as written (any IANA name; only how times are printed)",
                crate::terminal::visible(first_name),
                crate::terminal::visible(other)
            ),
        };
    }
    // Every log's listed zones, in the order listed for the first: one they all share.
    let shared = first
        .zones
        .iter()
        .map(|c| c.tz)
        .find(|tz| measured.iter().all(|(_, m)| m.zones.iter().any(|c| c.tz == *tz) || m.more_zones.contains(tz)));
    let Some(tz) = shared else {
        return Display {
            tz: chrono_tz::UTC,
            why: format!(
                "UTC: no zone has the offset measured for {} at its dates (any IANA name; only how times are printed)",
                crate::terminal::visible(first_name)
            ),
        };
    };
    let offset =
        first.clusters.iter().map(|c| super::zone::format_offset(c.offset_s)).collect::<Vec<_>>().join(" then ");
    Display {
        tz,
        why: format!(
            "the local zone measured for {} ({offset}): every zone listed for it shows the case's times alike, and {} is the first listed, not evidence of which; give init --display-tz ZONE or --tz FILE=ZONE to name it",
            crate::terminal::visible(first_name),
            tz.name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_zone_pairs_are_read_and_checked() {
        let choices =
            Choices::parse(&["server.log=asia/seoul".into(), "a=b.log=UTC".into()], Some("Asia/Tokyo")).unwrap();
        assert_eq!(choices.zones, [("server.log".to_string(), Tz::Asia__Seoul), ("a=b.log".to_string(), Tz::UTC)]);
        assert_eq!(choices.display_tz, Some(Tz::Asia__Tokyo));
        for (pair, needle) in [
            ("server.log", "--tz expects FILE=ZONE"),
            ("=UTC", "--tz expects FILE=ZONE"),
            ("server.log=KST", "--tz server.log=KST: 'KST' is an abbreviation"),
        ] {
            let error = Choices::parse(&[pair.into()], None).unwrap_err().to_string();
            assert!(error.contains(needle), "{pair}: {error}");
        }
        let twice = Choices::parse(&["x.log=UTC".into(), "x.log=Asia/Seoul".into()], None).unwrap_err().to_string();
        assert!(twice.contains("a file has one zone"), "{twice}");
        assert!(
            Choices::parse(&[], Some("+09:00"))
                .unwrap_err()
                .to_string()
                .contains("--display-tz: '+09:00' is an offset")
        );
    }
}
