//! The manifest `init` writes, and its report for the terminal.
//!
//! Decided keys are set, each with the evidence that decided it in a comment beside or above
//! it; what is not decided is commented out (a source that would contribute nothing as it
//! stands, a zone, a rule that matches more than its evidence) and listed at the top, so that
//! the user knows exactly what is left to declare. The text is valid TOML as written and after
//! any of the commented lines is uncommented.
//!
//! A file name is the case's text like any other, and may hold a line break, an escape sequence
//! or a bidi override. Every name written is quoted or escaped, never raw: as a value it is a TOML
//! string (`toml_string`, every control and invisible character escaped, so the value is exact);
//! in a comment, and on the terminal, it is written out (`terminal::visible`: `\n`, `\x1b`,
//! `<U+202E>`), so that it can neither end the comment (and add a `[[sources]]` of its own) nor
//! control the terminal. Each line is built as one string and made visible as a whole before the
//! lines are joined: no text inside a line can start another.

use std::fmt::Write as _;
use std::path::Path;

use crate::terminal::visible;

use super::ledger::EventValue;
use super::rules::{Channel, Outcome};
use super::sample::{SAMPLE_BYTES, SAMPLE_ROWS, group, shown, toml_pattern, toml_string};
use super::zone::{Measured, format_offset};
use super::{Found, Inspection, Proposal, Zone};

/// The manifest text.
pub fn write(inspection: &Inspection) -> String {
    let mut undecided: Vec<String> = Vec::new();
    let mut body = String::new();
    for proposal in &inspection.proposals {
        let (text, mut open) = source(proposal, inspection);
        undecided.append(&mut open);
        body.push('\n');
        body.push_str(&text);
    }
    for (name, reason) in &inspection.skipped {
        undecided.push(format!("{}: left out ({reason})", visible(name)));
    }
    undecided.extend(inspection.notes.iter().cloned());
    let mut out = format!(
        "# Written by `leasetrace init` from the files in {}: review every line before relying on it.\n\
         # init read at most the first {} MiB of each file and {} rows of a ledger. What it decided is set,\n\
         # with its evidence in a comment; what it could not decide is commented out and listed here.\n",
        shown(&inspection.folder, 80),
        SAMPLE_BYTES >> 20,
        group(SAMPLE_ROWS as u64)
    );
    if !undecided.is_empty() {
        out.push_str("#\n# Could not decide:\n");
        for line in &undecided {
            let _ = writeln!(out, "#   - {}", visible(line));
        }
    }
    let _ = writeln!(out, "\ndisplay_tz = \"{}\"   # {}", inspection.display.tz.name(), inspection.display.why);
    out.push_str(&body);
    // Every line was made one line above; this only writes out what a line of ours could still
    // hold (a tab), and leaves the values alone (`toml_string` escaped theirs).
    crate::terminal::visible_lines(&out).into_owned()
}

/// One `[[sources]]` block, and what it leaves undecided.
fn source(proposal: &Proposal, inspection: &Inspection) -> (String, Vec<String>) {
    let file = &proposal.file;
    // In comments and the list of what is undecided: written out. The path is `file.name`, quoted.
    let name = visible(&file.name);
    let mut undecided = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut active = true;
    let mut what = format!("{name}: {}", describe(&file.found));
    let _ = write!(what, "; {} read", file.extent);
    lines.push(format!("# {what}"));
    if file.lossy {
        lines.push("# some bytes are not UTF-8 (replaced in the sample): the reader may refuse the file".into());
    }
    lines.push("[[sources]]".into());
    lines.push(format!("kind = \"{}\"", file.kind().name()));
    lines.push(format!("path = {}", toml_string(&file.name)));
    if let Some(format) = file.format() {
        lines.push(format!("format = \"{format}\""));
    }
    match (&file.check, file.truncated) {
        (Some(Ok(summary)), _) => lines.push(format!(
            "# the {} reader on the sample: {} events, {} ignored, {} rejected",
            file.kind().name(),
            group(summary.events),
            group(summary.ignored),
            group(summary.rejected)
        )),
        (Some(Err(error)), true) => lines.push(format!(
            "# the {} reader could not read the cut sample ({}): analyze reads the whole file",
            file.kind().name(),
            shown(error, 300)
        )),
        (Some(Err(error)), false) => {
            active = false;
            lines.push(format!("# NOT DECIDED: the {} reader stops: {}", file.kind().name(), shown(error, 400)));
            undecided.push(format!("{name}: the {} reader stops on it ({})", file.kind().name(), shown(error, 200)));
        }
        (None, _) => {}
    }
    let given = inspection.given.get(&file.name).copied();
    match (&proposal.zone, given) {
        (Some(zone), Some(tz)) => given_zone_lines(&mut lines, zone, tz, inspection),
        (Some(zone), None) => undecided_zone_lines(&mut lines, &mut undecided, &name, zone, inspection),
        (None, _) => {}
    }
    match &file.found {
        Found::Ledger(found) => {
            let p = &found.proposal;
            if let Some((line, fields)) = found.ragged {
                lines.push(format!(
                    "# WARNING: line {line} has {fields} fields and the header {}: the ledger reader stops there",
                    found.header.split(',').count()
                ));
            }
            if p.receiver {
                lines.push(
                    "# every row is one request the receiving side got, with what it did (an outcome on every row, no column of run steps): its own record of the effects, read with role = \"receiver\" (leasetrace docs inputs/ledger), never as a second sender's ledger, whose rows would be effects the app posted twice".into(),
                );
            }
            match &found.check {
                Ok(summary) => lines.push(format!(
                    "# the ledger reader on these {} rows with the mapping below: {} events, {} rejected{}",
                    group(p.rows as u64),
                    group(summary.events),
                    group(summary.rejected),
                    summary
                        .rejections
                        .first()
                        .map(|r| format!(" (e.g. line {}: {})", r.line, shown(&r.reason, 100)))
                        .unwrap_or_default()
                )),
                Err(error) => {
                    active = false;
                    lines.push(format!("# NOT DECIDED: the ledger reader stops on these rows: {}", shown(error, 200)));
                    undecided.push(format!(
                        "{name}: the ledger reader stops on its rows ({}); fix the mapping",
                        shown(error, 120)
                    ));
                }
            }
            for why in &p.undecided {
                undecided.push(format!("{name}: {why}"));
            }
            if !p.events_decided() || p.alternative.is_some() {
                active = false;
            }
            if p.receiver {
                // After `path`: the role says how the ledger's rows are read.
                let at = lines.iter().position(|l| l.starts_with("path = ")).map_or(lines.len(), |at| at + 1);
                lines.insert(at, "role = \"receiver\"".into());
            }
            lines.push(String::new());
            lines.push("[sources.columns]   # ledger field = column, found by what the column holds".into());
            let width = p.mapped.iter().map(|m| m.field.len() + toml_string(&m.column).len()).max().unwrap_or(0);
            for m in &p.mapped {
                let setting = format!("{} = {}", m.field, toml_string(&m.column));
                lines.push(format!("{setting:<w$}   # {}", shown(&m.why, 160), w = width + 3));
            }
            if let Some(alternative) = &p.alternative {
                let setting = format!("# event = {}", toml_string(&alternative.column));
                lines.push(format!("{setting:<w$}   # {}", shown(&alternative.why, 160), w = width + 3));
            }
            for (column, example) in &p.unmapped {
                lines.push(format!("# column {} is not mapped (e.g. '{example}')", toml_string(column)));
            }
            for note in &p.notes {
                lines.push(format!("# {}", shown(note, 400)));
            }
            // A receiver's record has no event column: every row is an effect received.
            if !p.receiver {
                lines.push(String::new());
                lines.push(format!(
                    "[sources.events]   # each value of column {} in the sample = the event kind proposed",
                    toml_string(&p.event_column)
                ));
                let runner: Vec<&EventValue> = p
                    .alternative
                    .iter()
                    .flat_map(|a| a.events.iter().filter(|e| !p.events.iter().any(|o| o.value == e.value)))
                    .collect();
                let width = p
                    .events
                    .iter()
                    .chain(runner.iter().copied())
                    .map(|e| toml_string(&e.value).len())
                    .max()
                    .unwrap_or(0)
                    + 18;
                if p.alternative.is_some() {
                    lines.push(format!("# the values of column {}:", toml_string(&p.event_column)));
                }
                for e in &p.events {
                    event_line(&mut lines, &mut undecided, &name, e, width);
                }
                if let Some(alternative) = p.alternative.as_ref().filter(|_| !runner.is_empty()) {
                    lines.push(format!(
                        "# the values of column {} (the runner-up) not listed above:",
                        toml_string(&alternative.column)
                    ));
                    for e in runner {
                        event_line(&mut lines, &mut undecided, &name, e, width);
                    }
                }
            }
            if p.more_events {
                lines.push(
                    "# (more distinct values than listed: the others are rejected with a reason until mapped)".into(),
                );
            }
        }
        Found::Params(found) => match &found.read {
            Ok((values, notes)) => {
                lines.push(format!("# the parameters reader takes {}", shown(&values.join(", "), 200)));
                for note in notes {
                    lines.push(format!("# {}", shown(note, 300)));
                }
            }
            Err(error) => {
                active = false;
                lines.push(format!("# NOT DECIDED: the parameters reader stops: {}", shown(error, 1000)));
                if found.places.len() > 1 {
                    lines
                        .push("# The places that hold lock options (keep the one of the workers in this case):".into());
                    for place in &found.places {
                        lines.push(format!(
                            "params_at = {}   # {}",
                            toml_string(&place.pointer),
                            place.keys.join(", ")
                        ));
                    }
                }
                if found.places.is_empty() {
                    // The reader's error opens with what it looked for: what it found is the news.
                    let keys = found.near.iter().any(|near| near.starts_with("the key"));
                    let strings = found.near.iter().any(|near| !near.starts_with("the key"));
                    let fix = [
                        keys.then_some("spell the keys as BullMQ does (lockDuration, stalledInterval, ...)"),
                        strings.then_some("save a config kept as a string as a file of its own"),
                    ];
                    undecided.push(format!(
                        "{name}: the parameters reader finds no BullMQ lock option in it, only {}, which BullMQ does not read; {}",
                        shown(&found.near.join(", "), 200),
                        fix.into_iter().flatten().collect::<Vec<_>>().join(", or ")
                    ));
                } else {
                    undecided.push(format!(
                        "{name}: the parameters reader stops on it ({}); {}",
                        shown(error, 200),
                        if found.places.len() > 1 { "uncomment it with one params_at line" } else { "fix it" }
                    ));
                }
            }
        },
        Found::Jobs(found) => match (&found.reader_error, file.truncated) {
            (None, _) => {}
            (Some(error), true) => lines.push(format!(
                "# the job-hash readers could not read the cut sample ({}): analyze reads the whole file",
                shown(error, 300)
            )),
            (Some(error), false) => {
                active = false;
                lines.push(format!("# NOT DECIDED: no job-hash reader reads it: {}", shown(error, 400)));
                undecided.push(format!(
                    "{name}: no job-hash reader reads it ({}); see `leasetrace docs inputs/jobs`",
                    shown(error, 200)
                ));
            }
        },
        Found::Events(_) => match &proposal.queue {
            Some(Ok((queue, why))) => lines.push(format!("queue = {}   # {}", toml_string(queue), shown(why, 300))),
            Some(Err(why)) => {
                lines.push(format!("# queue = \"...\"   # NOT DECIDED: {}", shown(why, 160)));
                undecided.push(format!("{name}: the queue of the stream ({why}); set queue (optional)"));
            }
            None => {}
        },
        Found::Log(_) | Found::Trace(_) | Found::Monitor(_) => {}
    }
    rule_lines(&mut lines, &mut undecided, proposal, inspection);
    if !active {
        undecided.push(format!("{name}: the source is commented out until the above is decided"));
        for line in &mut lines {
            if !line.is_empty() && !line.starts_with('#') {
                *line = format!("# {line}");
            }
        }
    }
    // Each element is one line: whatever text it quotes, it is written out, never broken.
    let mut text = lines.iter().map(|line| visible(line)).collect::<Vec<_>>().join("\n");
    text.push('\n');
    (text, undecided)
}

/// The zone lines of a source whose zone init leaves to the user, and what that leaves undecided.
fn undecided_zone_lines(
    lines: &mut Vec<String>,
    undecided: &mut Vec<String>,
    name: &str,
    zone: &Zone,
    inspection: &Inspection,
) {
    match zone {
        Zone::NotNeeded(why) => lines.push(format!("# {why}")),
        Zone::Unmeasured(why) => {
            lines.push(format!("# ZONE NOT DECIDED: {why}."));
            lines.push("# tz = \"...\"   # the IANA zone the system wrote these times in (e.g. its TZ setting)".into());
            undecided.push(format!("{name}: its zone ({why}); declare tz, or give init --tz {name}=ZONE"));
        }
        Zone::Measured { measured, against, date, what } => {
            zone_lines(lines, measured, against, date, what, inspection);
            undecided.push(format!(
                "{name}: its zone: measured {} against {}; uncomment the tz line of the zone it was written in, or give init --tz {name}=ZONE",
                offsets(measured),
                visible(&against.join(", "))
            ));
        }
    }
}

/// The zone lines of a source whose zone was given by `init --tz`: the zone set, and what init
/// measured beside it, as evidence (a zone without the measured offset at those dates is warned).
fn given_zone_lines(lines: &mut Vec<String>, zone: &Zone, tz: chrono_tz::Tz, inspection: &Inspection) {
    match zone {
        Zone::NotNeeded(why) => {
            lines.push(format!("tz = \"{}\"   # given by init --tz", tz.name()));
            lines.push(format!("# {why}: the zone reads none of them"));
        }
        Zone::Unmeasured(why) => {
            lines.push(format!("tz = \"{}\"   # given by init --tz; not measured: {why}", tz.name()));
        }
        Zone::Measured { measured, against, date, what } => {
            lines.push(format!("tz = \"{}\"   # given by init --tz; {}", tz.name(), given_verdict(measured, tz)));
            let mut measured_lines = Vec::new();
            zone_lines(&mut measured_lines, measured, against, date, what, inspection);
            for line in measured_lines {
                // The evidence stays; the choice is made.
                // The other zones stay listed, not as `tz` lines: uncommenting one would declare
                // tz twice.
                let line = match (line.strip_prefix("# ZONE NOT DECIDED: "), line.strip_prefix("# tz = ")) {
                    (Some(rest), _) => format!("# {rest}"),
                    (_, Some(rest)) => format!("#   {rest}"),
                    _ => line.replace(" (uncomment the one it was written in)", ""),
                };
                lines.push(line);
            }
        }
    }
}

/// Whether a zone given for a measured source has the offset measured at its dates.
fn given_verdict(measured: &Measured, tz: chrono_tz::Tz) -> String {
    if measured.zones.iter().any(|c| c.tz == tz) || measured.more_zones.contains(&tz) {
        format!("one of the zones with the measured {} at those dates", offsets(measured))
    } else {
        format!("WARNING: not one of the zones with the measured {} at those dates: check it", offsets(measured))
    }
}

/// One value of the event column: its kind, or commented out and listed as undecided.
fn event_line(lines: &mut Vec<String>, undecided: &mut Vec<String>, name: &str, e: &EventValue, width: usize) {
    let rows = format!("{} row{}", group(e.rows as u64), if e.rows == 1 { "" } else { "s" });
    if let Some(kind) = e.proposal.kind {
        let setting = format!("{} = \"{}\"", toml_string(&e.value), kind.name());
        lines.push(format!("{setting:<width$}   # {rows}; {}", e.proposal.why));
    } else {
        let setting = format!("# {} = \"...\"", toml_string(&e.value));
        lines.push(format!("{setting:<width$}   # {rows}; {}", e.proposal.why));
        undecided.push(format!(
            "{name}: the event kind of {} ({rows}; {}); rows of it are rejected until mapped",
            toml_string(&e.value),
            e.proposal.why
        ));
    }
}

fn describe(found: &Found) -> String {
    match found {
        Found::Params(found) => format!("BullMQ lock parameters: {}", found.evidence()),
        Found::Jobs(found) => format!("BullMQ job hashes: {}", found.evidence()),
        Found::Events(found) => format!("BullMQ events stream ({}): {}", found.format, found.evidence()),
        Found::Trace(found) => format!("OpenTelemetry traces: {}", found.evidence()),
        Found::Monitor(found) => super::monitor::evidence(found),
        Found::Log(found) => {
            format!("a server log ({}), {} lines with a timestamp", found.declared(), group(found.lines.len() as u64))
        }
        Found::Ledger(found) if found.proposal.receiver => format!(
            "a receiver's record of effects ({}) with the columns {}",
            found.proposal.format,
            shown(&found.header, 120)
        ),
        Found::Ledger(found) => {
            format!("a run ledger ({}) with the columns {}", found.proposal.format, shown(&found.header, 120))
        }
    }
}

/// "+09:00", or "+02:00 then +01:00".
fn offsets(measured: &Measured) -> String {
    measured.clusters.iter().map(|c| format_offset(c.offset_s)).collect::<Vec<_>>().join(" then ")
}

fn zone_lines(
    lines: &mut Vec<String>,
    measured: &Measured,
    against: &[String],
    date: &str,
    what: &str,
    inspection: &Inspection,
) {
    lines.push(format!("# ZONE NOT DECIDED: {what}."));
    let (low, high) = measured
        .clusters
        .iter()
        .map(super::zone::Cluster::spread_ms)
        .fold((i64::MAX, i64::MIN), |(l, h), (a, b)| (l.min(a), h.max(b)));
    lines.push(format!(
        "# Measured on {} lines that name job or run ids given with offsets in {}: naive time - UTC instant",
        group(measured.lines() as u64),
        visible(&against.join(", "))
    ));
    lines.push(format!(
        "#   = {} on {date} (to the nearest 15 min; the two records of a moment differ by {} s to {} s).",
        offsets(measured),
        seconds(low),
        seconds(high)
    ));
    if measured.clusters.len() > 1 {
        let parts: Vec<String> = measured
            .clusters
            .iter()
            .map(|c| {
                let lines: Vec<u64> = c.pairs.iter().map(|p| p.line).collect();
                let (from, to) = (lines.iter().min().copied().unwrap_or(0), lines.iter().max().copied().unwrap_or(0));
                format!("{} on lines {from}-{to}", format_offset(c.offset_s))
            })
            .collect();
        lines.push(format!("# The offset changes inside the file (a DST change): {}.", parts.join(", ")));
    }
    for group_ in &measured.disagreeing {
        let line = group_.pairs.first().map_or(0, |p| p.line);
        lines.push(format!(
            "# WARNING: {} line(s) measure {} instead (e.g. line {line}): no zone has that together with the rest; two systems in one file, or a clock off by hours?",
            group_.pairs.len(),
            format_offset(group_.offset_s)
        ));
    }
    if let Some((line, naive, reference)) = &measured.example {
        let other = inspection.proposals.get(reference.file).map_or("?".into(), |p| visible(&p.file.name));
        lines.push(format!(
            "#   e.g. line {line} at {} and {other}:{} at {} (the same {})",
            naive.format("%Y-%m-%d %H:%M:%S%.3f"),
            reference.line,
            crate::time::format_rfc3339(reference.at),
            if reference.id.len() > 60 { "id".to_string() } else { format!("id {}", shown(&reference.id, 60)) }
        ));
    }
    if measured.zones.is_empty() {
        lines.push("# No zone has these offsets at these dates: check the clocks before declaring one.".into());
        lines.push("# tz = \"...\"".into());
        return;
    }
    lines.push(format!("# Zones with {} at those dates (uncomment the one it was written in):", offsets(measured)));
    let width = measured.zones.iter().map(|c| c.tz.name().len()).max().unwrap_or(0) + 9;
    for candidate in &measured.zones {
        let setting = format!("# tz = \"{}\"", candidate.tz.name());
        lines.push(format!("{setting:<width$}   # {}", candidate.note));
    }
    match measured.more_zones.as_slice() {
        [] => {}
        more if more.len() <= 8 => {
            let names: Vec<&str> = more.iter().map(|tz| tz.name()).collect();
            lines.push(format!("# (also with these offsets then: {})", names.join(", ")));
        }
        more => lines.push(format!("# (and {} more zones with these offsets then)", more.len())),
    }
}

#[allow(clippy::cast_precision_loss)]
fn seconds(ms: i64) -> String {
    format!("{:+.3}", ms as f64 / 1000.0)
}

fn rule_lines(lines: &mut Vec<String>, undecided: &mut Vec<String>, proposal: &Proposal, inspection: &Inspection) {
    if let Some(note) = &proposal.rules_note {
        lines.push(String::new());
        lines.push(format!("# Log rules: {note}."));
    }
    if proposal.rules.is_empty() {
        return;
    }
    let name = visible(&proposal.file.name);
    let place = |file: usize, line: u64| {
        let other = inspection.proposals.get(file).map_or("?".into(), |p| visible(&p.file.name));
        format!("{other}:{line}")
    };
    lines.push(String::new());
    lines.push("# Log rules: the lines this log writes at the moments other sources give for its jobs.".into());
    for rule in &proposal.rules {
        let from = match rule.channel {
            Channel::Stream => "the events stream",
            Channel::JobHash => "the job hashes",
            Channel::Ledger => "the ledger's round-started rows",
        };
        let head = format!(
            "{} ({} moment{} with a job id in {from})",
            rule.what,
            rule.moments,
            if rule.moments == 1 { "" } else { "s" }
        );
        let example = rule
            .example
            .as_ref()
            .map(|(line, message, file, at)| format!("line {line} '{}' at {}", shown(message, 90), place(*file, *at)))
            .unwrap_or_default();
        match &rule.outcome {
            Outcome::NoLine => {
                lines.push(format!("#   {head}: no line names the job at those moments: the app logs none (no rule)"));
            }
            Outcome::Builtin { lines: n } => lines.push(format!(
                "#   {head}: the built-in rules read these lines already ({n} line{}, e.g. {example})",
                if *n == 1 { "" } else { "s" }
            )),
            Outcome::Rule { pattern, decided, also, conflicts, enough } => {
                let read = if rule.builtin > 0 {
                    format!(" ({} more are read by the built-in rules already)", rule.builtin)
                } else {
                    String::new()
                };
                let evidence = format!("{head}: {} of them have a line like {example}{read}", rule.covered);
                let mut block = vec![
                    format!("# {}", shown(&evidence, 400)),
                    "[[sources.rules]]".to_string(),
                    format!("event = \"{}\"", rule.event.name()),
                    format!("pattern = {}", toml_pattern(pattern)),
                ];
                if !decided {
                    let why = match (*also, *conflicts) {
                        (0, 0) if !enough => format!(
                            "only {} of the {} moments has such a line: too little to put these words to the event",
                            rule.covered, rule.moments
                        ),
                        (0, c) => format!("the rule also matches {c} line(s) at another event of the same job"),
                        (a, 0) => format!("the rule also matches {a} other line(s) at no {} moment", rule.what),
                        (a, c) => format!(
                            "the rule also matches {c} line(s) at another event of the same job and {a} at no {} moment",
                            rule.what
                        ),
                    };
                    block.insert(1, format!("# NOT DECIDED: {why}"));
                    for line in block.iter_mut().skip(2) {
                        *line = format!("# {line}");
                    }
                    undecided.push(format!("{name}: a rule for its {} lines ({why}); review it", rule.what));
                }
                lines.push(String::new());
                lines.extend(block);
            }
        }
    }
}

/// What `init` prints: the file written and one line per file. Names and everything quoted from
/// the files are written out (`terminal::visible`), each line made one line before they are
/// joined, as in the manifest.
pub fn report(inspection: &Inspection, target: &Path) -> String {
    let mut lines = vec![format!("wrote {}", target.display())];
    lines.push(format!("  display_tz = {}: {}", inspection.display.tz.name(), inspection.display.why));
    let width = inspection
        .proposals
        .iter()
        .map(|p| visible(&p.file.name).chars().count())
        .chain(inspection.skipped.iter().map(|(n, _)| visible(n).chars().count()))
        .max()
        .unwrap_or(0)
        .min(40);
    for proposal in &inspection.proposals {
        let file = &proposal.file;
        let given = inspection.given.get(&file.name);
        let state = match &proposal.zone {
            Some(Zone::NotNeeded(_)) if given.is_some() => {
                format!("zone {} (init --tz; its times carry offsets)", given.map_or("", |tz| tz.name()))
            }
            Some(Zone::Unmeasured(_)) if given.is_some() => {
                format!("zone {} (init --tz; not measured)", given.map_or("", |tz| tz.name()))
            }
            Some(Zone::Measured { measured, .. }) if given.is_some() => {
                let tz = given.copied().unwrap_or(chrono_tz::UTC);
                format!("zone {} (init --tz; {})", tz.name(), given_verdict(measured, tz))
            }
            Some(Zone::NotNeeded(_)) => "zone not needed".to_string(),
            Some(Zone::Unmeasured(why)) => format!("ZONE UNDECIDED: {why}"),
            Some(Zone::Measured { measured, .. }) => {
                let zones: Vec<&str> = measured.zones.iter().take(3).map(|c| c.tz.name()).collect();
                format!(
                    "ZONE UNDECIDED: measured {} ({}{}): uncomment one tz line, or give init --tz {}=ZONE",
                    offsets(measured),
                    zones.join(", "),
                    if measured.zones.len() + measured.more_zones.len() > zones.len() { ", ..." } else { "" },
                    visible(&file.name)
                )
            }
            None => match &file.found {
                Found::Params(found) => match &found.read {
                    Ok((values, _)) => format!("the parameters reader takes {}", values.join(", ")),
                    Err(_) if found.places.is_empty() => format!(
                        "COMMENTED OUT: the parameters reader finds no lock option, only {}",
                        found.near.join(", ")
                    ),
                    Err(error) => format!("COMMENTED OUT: the parameters reader stops: {error}"),
                },
                Found::Jobs(found) => found.evidence(),
                Found::Events(found) => found.evidence(),
                Found::Trace(found) => found.evidence(),
                Found::Monitor(found) => super::monitor::evidence(found),
                _ => String::new(),
            },
        };
        // A source written commented out says so first.
        let blocked = match (&file.check, &file.found) {
            (Some(Err(error)), _) if !file.truncated => {
                Some(format!("the {} reader stops: {error}", file.kind().name()))
            }
            (_, Found::Ledger(found)) => match &found.check {
                _ if found.proposal.alternative.is_some() => Some(format!(
                    "two columns fit the event column about equally ({}, {})",
                    found.proposal.event_column,
                    found.proposal.alternative.as_ref().map_or("", |a| a.column.as_str())
                )),
                Err(error) => Some(format!("the ledger reader stops: {error}")),
                Ok(_) if !found.proposal.events_decided() => Some("no event value has a proposed kind".into()),
                Ok(_) => None,
            },
            (_, Found::Jobs(found)) if !file.truncated => {
                found.reader_error.as_ref().map(|e| format!("no job-hash reader reads it: {e}"))
            }
            _ => None,
        };
        let state = match blocked {
            Some(why) => format!("COMMENTED OUT: {why}"),
            None => state,
        };
        let mut extra = String::new();
        if let Found::Ledger(found) = &file.found {
            let p = &found.proposal;
            let proposed = p.events.iter().filter(|e| e.proposal.kind.is_some()).count();
            extra = if p.receiver {
                format!("{} columns mapped, a receiver's record (role = \"receiver\"); ", p.mapped.len())
            } else {
                format!("{} columns mapped, {proposed} of {} event values proposed; ", p.mapped.len(), p.events.len())
            };
        }
        let rules = proposal.rules.iter().filter(|r| matches!(r.outcome, Outcome::Rule { .. })).count();
        if rules > 0 {
            extra = format!("{rules} log rule(s) proposed; ");
        }
        lines.push(format!(
            "  {:<width$} {:<14} {:<12} {extra}{}",
            visible(&file.name),
            file.kind().name(),
            file.format().as_deref().unwrap_or("-"),
            shown(&state, 160)
        ));
    }
    for (name, reason) in &inspection.skipped {
        lines.push(format!("  {:<width$} left out: {reason}", visible(name)));
    }
    for note in &inspection.notes {
        lines.push(format!("  {note}"));
    }
    let mut out = lines.iter().map(|line| visible(line)).collect::<Vec<_>>().join("\n");
    out.push('\n');
    out
}
