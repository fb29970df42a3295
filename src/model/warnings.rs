//! What a reader must know before trusting any number of a report, said at its top.
//!
//! A report computed from assumed lock parameters, from inputs that disagree about them, or from
//! a file that gave nothing, looks as confident as one computed from the real thing. These are the
//! cases where that would be a wrong answer nobody notices: each becomes a header warning (the
//! table prints them first; JSON has them as `warnings`), not a line under Assumptions.

use chrono_tz::Tz;
use serde::Serialize;

use super::params::{Given, Param, ParamOrigin};
use super::{Finding, InputSummary, LockParams};
use crate::time::format_datetime;

/// One header warning: a stable kind (for tools) and a sentence (for people).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    pub kind: &'static str,
    pub message: String,
}

/// Lock parameters that no flag, file or log line gave: BullMQ's defaults, which every lock time
/// of the findings then rests on.
pub fn defaults_in_force(params: &LockParams) -> Option<Warning> {
    let assumed: Vec<String> = Param::ALL
        .iter()
        .filter_map(|&param| {
            let value = param.show(params.value(param));
            match params.origins.get(param) {
                ParamOrigin::Default => Some(format!("{} {value}", param.name())),
                ParamOrigin::HalfOfLockDuration => Some(format!("{} {value} (lockDuration / 2)", param.name())),
                _ => None,
            }
        })
        .collect();
    if assumed.is_empty() {
        return None;
    }
    let every = assumed.len() == Param::ALL.len();
    let label = |plural| match &params.bull_version {
        Some(bull) => format!("{} {}", super::bull::named(bull), if plural { "defaults" } else { "default" }),
        None => crate::model::params::default_label(params.version.as_deref(), plural),
    };
    let message = if every {
        format!(
            "lock parameters are {} ({}): no parameters file, flag or log line gave them; every lock time below assumes them",
            label(true),
            assumed.join(", ")
        )
    } else {
        format!(
            "{} {} {}: no parameters file, flag or log line gave {}; every lock time below that uses {} assumes {}",
            join_and(&assumed),
            if assumed.len() == 1 { "is the" } else { "are" },
            label(assumed.len() > 1),
            if assumed.len() == 1 { "it" } else { "them" },
            if assumed.len() == 1 { "it" } else { "them" },
            if assumed.len() == 1 { "it" } else { "them" },
        )
    };
    Some(Warning { kind: "lock-params-default", message })
}

/// A parameter given different values: by the flag, the file and the log (`lock-params-disagree`),
/// or by the log alone, at different boots or by different workers (`lock-params-changed`).
pub fn disagreements(params: &LockParams, tz: Tz) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for param in Param::ALL {
        let given = params.given(param);
        let first = given.first().map(|g| g.value);
        if given.iter().all(|g| Some(g.value) == first) {
            continue;
        }
        let in_force = params.in_force(param).map_or_else(
            || format!("{} ({})", param.show(params.value(param)), params.describe_origin(param)),
            |g| format!("{} ({})", param.show(g.value), short_place(g)),
        );
        let only_log = given.iter().all(|g| g.origin == ParamOrigin::Log);
        let values: Vec<String> = given.iter().map(|g| format!("{} ({})", param.show(g.value), place(g, tz))).collect();
        // The log's values, each from the workers of queues no other value came from: the
        // settings differ by queue, and one set for the case is wrong for some queue's jobs.
        let logged: Vec<&Given> = given.iter().filter(|g| g.origin == ParamOrigin::Log).collect();
        let by_queue = logged.len() >= 2
            && logged.iter().all(|g| !g.queues.is_empty())
            && logged.iter().enumerate().all(|(i, g)| {
                logged.iter().skip(i + 1).all(|other| g.queues.iter().all(|q| !other.queues.contains(q)))
            });
        let in_force_value = params.in_force(param).map_or(params.value(param), |g| g.value);
        let per_queue: Vec<String> = logged
            .iter()
            .map(|g| format!("{} for queue {} ({})", param.show(g.value), g.queues.join(", "), place(g, tz)))
            .collect();
        let others: Vec<String> = logged
            .iter()
            .filter(|g| g.value != in_force_value)
            .flat_map(|g| g.queues.iter().map(|q| format!("queue {q}")))
            .collect();
        let consequence = format!(
            "this report has one set of lock parameters and uses {in_force} for every queue, so the lock times of the jobs of {} are computed with a value their workers did not have: analyse those with {} set to their value",
            join_and(&others),
            param.flag()
        );
        let warning = if by_queue && only_log {
            // Each queue's jobs ran under its own workers' value (`LockParams::per_queue`).
            let own: Vec<String> = params
                .by_queue
                .iter()
                .map(|(queue, own)| format!("queue {queue}: {}", param.show(own.value(param))))
                .collect();
            let applied = if own.is_empty() {
                consequence.clone()
            } else {
                format!(
                    "each queue's jobs are analysed with its own workers' value ({}; the rest {in_force})",
                    join_and(&own)
                )
            };
            Warning {
                kind: "lock-params-changed",
                message: format!(
                    "{}: the workers of different queues log different values: {}; {applied}",
                    param.name(),
                    join_and(&per_queue),
                ),
            }
        } else if only_log {
            Warning {
                kind: "lock-params-changed",
                message: format!(
                    "{}: the log gives {} values: {}: the settings changed between boots, or the workers differ, and each job ran under the value of the last settings line before its activation; in force for this report: {in_force}, the value most job activations ran under; give {} to use another",
                    param.name(),
                    given.len(),
                    join_and(&values),
                    param.flag()
                ),
            }
        } else {
            let queues = if by_queue && !others.is_empty() {
                format!(
                    "; the workers of different queues log different values ({}): {consequence}",
                    join_and(&per_queue)
                )
            } else {
                String::new()
            };
            Warning {
                kind: "lock-params-disagree",
                message: format!(
                    "{}: the sources disagree: {}; in force: {in_force} (a flag wins over the parameters file, the file over the log){queues}",
                    param.name(),
                    values.join(", ")
                ),
            }
        };
        warnings.push(warning);
    }
    warnings
}

/// Where a value came from, for people: `--lock-duration`, `bullmq.json`, or the log line with
/// its time, worker and how many lines and activations go with it.
fn place(given: &Given, tz: Tz) -> String {
    match given.origin {
        ParamOrigin::Flag => format!("command line, {}", given.place),
        ParamOrigin::File => format!("parameters file {}", given.place),
        _ => {
            use std::fmt::Write as _;
            let mut text = format!("logged at {}", given.place);
            if let Some(at) = given.at {
                let _ = write!(text, " {}", format_datetime(at, tz));
            }
            if let Some(worker) = &given.worker {
                let _ = write!(text, " by worker {worker}");
            }
            if let Some(lines) = given.lines.filter(|&n| n > 1) {
                let _ = write!(text, ", {lines} lines");
            }
            if let Some(activations) = given.activations {
                let _ = write!(text, ", {activations} job activation(s) after it");
            }
            text
        }
    }
}

/// Where a value came from, in a few words: `command line, --lock-duration`, `logged at server.log:6`.
fn short_place(given: &Given) -> String {
    match given.origin {
        ParamOrigin::Flag => format!("command line, {}", given.place),
        ParamOrigin::File => format!("parameters file {}", given.place),
        _ => format!("logged at {}", given.place),
    }
}

/// Inputs that were read and gave nothing: a file in the wrong format, or whose log rules match
/// none of its lines, would otherwise pass as "no such event happened".
pub fn empty_inputs(inputs: &[InputSummary]) -> Vec<Warning> {
    inputs
        .iter()
        // A file read twice has its own warning (`duplicate-evidence`): its evidence is the other's.
        // Lines used that place no event (a PostgreSQL meta table's version and last stalled
        // check, said under Assumptions) are a contribution too.
        .filter(|input| {
            input.events == 0
                && (input.used == 0 || input.kind == "bullmq-params")
                && !input.ignored_by_reason.keys().any(|reason| reason.starts_with(super::input::SAME_EVIDENCE_AS))
        })
        .map(|input| {
            let mut reasons: Vec<String> =
                input.ignored_by_reason.iter().map(|(reason, count)| format!("{count} {reason}")).collect();
            if input.rejected > 0 {
                reasons.push(format!("{} rejected", input.rejected));
            }
            let account = if reasons.is_empty() { String::new() } else { format!(" ({})", reasons.join(", ")) };
            let no_entries = super::input::NO_ENTRIES;
            let message = if input.kind == "bullmq-params" {
                format!("{} contributed nothing: no lock parameter was read from it{account}", input.path)
            } else if input.ignored_by_reason.keys().eq([no_entries]) {
                // `[]`: the export ran and found nothing, which a 0-byte file (an error) cannot say.
                format!(
                    "{} contributed nothing: it holds no entries (an empty JSON array, `[]`, not an empty file); check that it is the export of the right stream (queue and prefix) and that the stream was not trimmed",
                    input.path
                )
            } else {
                format!(
                    "{} contributed nothing: none of its {} lines became an event{account}; check that it is the right file, its format ({}) and, for a log, its rules",
                    input.path, input.lines, input.format
                )
            };
            Warning { kind: "input-contributed-nothing", message }
        })
        .collect()
}

/// The header warning for what `ingest::io::repeats::drop_repeats` found: one per source, naming what was read once.
pub fn repeated_evidence(
    timeline: &super::Timeline,
    repeats: &[super::input::Repeat],
    inputs: &[InputSummary],
) -> Vec<Warning> {
    let path = |source: u16| inputs.get(usize::from(source)).map_or("?", |input| input.path.as_str());
    repeats
        .iter()
        .map(|repeat| {
            let message = match (repeat.same_as, repeat.first) {
                (Some(earlier), _) if path(earlier) == path(repeat.source) => format!(
                    "{} is named twice among the sources: it was read once; name each file once",
                    path(repeat.source)
                ),
                (Some(earlier), _) => format!(
                    "{} holds the same evidence as {} (the same events on the same lines): it was read once, as {}; name each file once",
                    path(repeat.source),
                    path(earlier),
                    path(earlier)
                ),
                (None, Some((line, earlier))) => {
                    let coarse = timeline.time_resolution_ns(repeat.source) >= 1_000_000_000;
                    format!(
                        "{} repeats {} of its lines word for word (the first: line {line} repeats line {earlier}): each was read once (a log shipper that delivers at least once, or an export taken twice into one file, writes such repeats){}",
                        path(repeat.source),
                        repeat.lines,
                        if coarse {
                            "; its times are whole seconds, so two events with the same text in one second were also read as one"
                        } else {
                            ""
                        }
                    )
                }
                (None, None) => format!("{} repeats lines", path(repeat.source)),
            };
            Warning { kind: "duplicate-evidence", message }
        })
        .collect()
}

/// A job id that two or more queues use, named without a queue by some events: those events were
/// given to no job (`detect::jobs`).
#[derive(Debug, Clone, PartialEq)]
pub struct UnattributedJob {
    pub id: String,
    pub queues: Vec<String>,
    pub events: usize,
    /// The first such event, as `path:line`.
    pub first: String,
}

/// Events that name a job id of several queues and no queue: left out of every job, said where a
/// reader sees it first (a job's stall or completion may be among them).
pub fn unattributed_jobs(jobs: &[UnattributedJob]) -> Option<Warning> {
    let first = jobs.first()?;
    let events: usize = jobs.iter().map(|job| job.events).sum();
    let more = if jobs.len() > 1 { format!(" (and {} more such ids)", jobs.len() - 1) } else { String::new() };
    Some(Warning {
        kind: "job-queue-ambiguous",
        message: format!(
            "{events} event(s) name a job id without its queue where the id is a job of two or more queues: job {} is in queues {}{more}, and {} event(s) name it without one (first: {}); they were given to neither job, so findings about these jobs may lack them. Map the source's queue field or column (`leasetrace docs inputs`) so each event names its queue",
            first.id,
            join_and(&first.queues),
            first.events,
            first.first
        ),
    })
}

/// Plain-text logs with lines that hold many timestamps of the log's layout
/// (`InputSummary::crowded`): its line ends were lost (lines joined by a tool, or ends in a
/// convention leasetrace does not read), so each such "line" is read as one entry and the entries
/// joined after its first are not read at all.
pub fn crowded_lines(inputs: &[InputSummary]) -> Vec<Warning> {
    inputs
        .iter()
        .filter_map(|input| {
            let crowded = input.crowded?;
            let which = if crowded.lines == 1 {
                format!("line {} holds {} timestamps", crowded.first_line, crowded.first_stamps)
            } else {
                format!(
                    "{} lines hold {} or more timestamps each (the first, line {}, holds {})",
                    crowded.lines,
                    super::input::CROWDED_STAMPS,
                    crowded.first_line,
                    crowded.first_stamps
                )
            };
            Some(Warning {
                kind: "many-timestamps-on-a-line",
                message: format!(
                    "{}: {which} in the log's own layout: its line ends look lost (lines joined, or an end leasetrace does not read: it reads LF, CRLF and CR), and only the first entry of such a line is read; restore the line ends",
                    input.path
                ),
            })
        })
        .collect()
}

/// The evidence contradicts the parameters in force (findings of `code`, `lock-params-contradicted`,
/// each naming its `parameter`): every lock time computed from them is suspect.
pub fn contradicted(findings: &[Finding], code: &str) -> Vec<Warning> {
    let mut names: Vec<String> = findings
        .iter()
        .filter(|f| f.code == code)
        .filter_map(|f| match f.get("parameter") {
            Some(super::Value::Text(name)) => Some(name.clone()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Vec::new();
    }
    vec![Warning {
        kind: "lock-params-contradicted",
        message: format!(
            "the evidence contradicts the {} in force (see the lock-params-contradicted finding{}): every lock time below computed from {} is suspect",
            join_and(&names),
            if names.len() == 1 { "" } else { "s" },
            if names.len() == 1 { "it" } else { "them" }
        ),
    }]
}

/// `lockRenewTime` ≥ `lockDuration`: BullMQ accepts it, but the first renewal is due
/// `lockRenewTime` after activation (between half of it and all of it on BullMQ ≥ 3.10), so the lock
/// can run out before it is ever renewed and a job running longer than `lockDuration` loses it even
/// with a healthy event loop. Legal settings, so a warning and not an error; the lock times below
/// (expiry at activation + `lockDuration`) still follow from them.
pub fn renew_after_expiry(params: &LockParams) -> Option<Warning> {
    (params.lock_renew_time >= params.lock_duration).then(|| Warning {
        kind: "lock-renew-after-expiry",
        message: format!(
            "lockRenewTime {} ({}) ≥ lockDuration {} ({}): the lock expires before its first renewal is due, so a job that runs longer than lockDuration loses its lock even with a healthy event loop; check the worker's settings",
            Param::LockRenewTime.show(params.lock_renew_time),
            params.describe_origin(Param::LockRenewTime),
            Param::LockDuration.show(params.lock_duration),
            params.describe_origin(Param::LockDuration),
        ),
    })
}

/// Findings whose conclusion rests on a model that the BullMQ version selects, when no version
/// (or no range's lower bound) decided it: `assumed` holds, per finding code, the model assumed
/// instead. Only findings that call for action (`error`, `warning`) are counted: an `info` finding
/// concludes nothing a reader acts on.
pub fn version_assumed(findings: &[Finding], assumed: &[(&str, String)]) -> Vec<Warning> {
    let mut said = Vec::new();
    for (code, model) in assumed {
        let count = findings
            .iter()
            .filter(|f| f.code == *code && matches!(f.severity, super::Severity::Error | super::Severity::Warning))
            .count();
        if count > 0 {
            said.push(format!("{count} {code} finding{} ({model})", if count == 1 { "" } else { "s" }));
        }
    }
    if said.is_empty() {
        return Vec::new();
    }
    vec![Warning {
        kind: "bullmq-version-assumed",
        message: format!(
            "no exact BullMQ version: {} rest on an assumed version; give the version in use with --bullmq-version, [analysis] bullmq_version or the lock parameters file",
            join_and(&said)
        ),
    }]
}

/// The BullMQ version a queue's `:meta` hash names, set against the version in force. BullMQ's
/// `Queue` constructor writes it (`metaValues`: `version: bullmq:<its version>`, unless
/// `skipMetasUpdate`), so it is the version of the last process that opened the queue, often a producer, which the workers need not share: evidence, never the version
/// itself. A different version from the one in force is a warning (`bullmq-version-disagree`);
/// without a version in force it is said under Assumptions, as the version to check first.
pub fn meta_versions(params: &LockParams, inputs: &[InputSummary]) -> (Vec<Warning>, Vec<String>) {
    use super::params::parse_version;
    let (mut warnings, mut notes) = (Vec::new(), Vec::new());
    let mut seen = std::collections::BTreeSet::new();
    for input in inputs {
        for (version, line) in &input.meta_versions {
            if !seen.insert(version.clone()) {
                continue;
            }
            let place = format!("{}:{line}", input.path);
            match params.version.as_deref() {
                Some(in_force) if parse_version(in_force) != parse_version(version) => warnings.push(Warning {
                    kind: "bullmq-version-disagree",
                    message: format!(
                        "the queue's meta hash ({place}) says BullMQ {version}, but the version in force is {in_force}: BullMQ's Queue constructor writes the meta hash, so the last process to open the queue (often a producer, not a worker) ran {version}; check which version the workers ran and give it with --bullmq-version"
                    ),
                }),
                Some(_) => {}
                None => notes.push(format!(
                    "{place}: the queue's meta hash says BullMQ {version} (written by the last process to open the queue, often a producer; the workers may run another): not taken as the workers' version; give --bullmq-version {version} if they ran it"
                )),
            }
        }
    }
    (warnings, notes)
}

/// Sources that disagree by whole hours about the same moments (`clock-offset-suspected`): a zone
/// declared wrong moves every time of one of them, and every finding that puts their events side
/// by side (a restart against an activation, a log line against a stream entry) with it.
pub fn zone_mixup(findings: &[Finding], code: &str) -> Vec<Warning> {
    let pairs: Vec<String> = findings
        .iter()
        .filter(|f| f.code == code)
        .filter_map(|f| match (f.get("source_a"), f.get("source_b"), f.get("offset_hours")) {
            (Some(super::Value::Text(a)), Some(super::Value::Text(b)), Some(super::Value::Text(by))) => {
                Some(format!("{b} against {a} {by}"))
            }
            _ => None,
        })
        .collect();
    if pairs.is_empty() {
        return Vec::new();
    }
    vec![Warning {
        kind: "zone-mixup-suspected",
        message: format!(
            "sources disagree by whole hours about the same job activations: {} (see the {code} finding{}): a source's zone is likely declared wrong, and every finding below that compares their times is suspect",
            pairs.join("; "),
            if pairs.len() == 1 { "" } else { "s" }
        ),
    }]
}

fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Jobs and runs the shown events belong to that also have rows or lines outside the read window
/// (`filter::ReadWindow`): their stories are cut at its edges, so a finding about them may be
/// missing (an activation before the window, which a stall is found from) or say less than the
/// whole story would (a rerun read as a regular round). `shows` tells the events shown.
pub fn window_cut(
    timeline: &super::Timeline,
    shows: impl Fn(&super::Event) -> bool,
    outside: &super::filter::OutsideIds,
) -> Option<Warning> {
    const LISTED: usize = 4;
    if outside.is_empty() {
        return None;
    }
    // In the order first shown; each once (a day's window can show thousands of cut runs).
    let mut cut: Vec<String> = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    for event in timeline.events().iter().filter(|event| shows(event)) {
        let keys = super::filter::outside_keys(event.job_id.as_deref(), event.run_id.as_deref());
        let ids = [("job", event.job_id.as_deref()), ("run", event.run_id.as_deref())];
        for (key, (label, id)) in keys.into_iter().zip(ids) {
            if let (Some(key), Some(id)) = (key, id)
                && outside.contains(&key)
                && seen.insert(key)
            {
                cut.push(format!("{label} {id}"));
            }
        }
    }
    if cut.is_empty() {
        return None;
    }
    let more = cut.len().saturating_sub(LISTED);
    cut.truncate(LISTED);
    let listed = if more > 0 { format!("{}, and {more} more", cut.join(", ")) } else { join_and(&cut) };
    Some(Warning {
        kind: "read-window-cut",
        message: format!(
            "{listed} also {} rows or lines outside the read window (--since/--until widened by --read-margin): {} story is cut at its edges, so a finding about {} may be missing or say less than the whole story would (a rerun read as a regular round); widen --read-margin, or --read-margin all to read everything",
            if cut.len() + more == 1 { "has" } else { "have" },
            if cut.len() + more == 1 { "its" } else { "their" },
            if cut.len() + more == 1 { "it" } else { "them" },
        ),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn lock_renew_time_at_or_after_lock_duration_is_warned() {
        let params = |lock, renew| {
            LockParams::resolve(
                &ParamOverrides {
                    lock_duration: Some(lock),
                    lock_renew_time: Some(renew),
                    ..ParamOverrides::default()
                },
                &ParamOverrides::default(),
            )
        };
        assert_eq!(renew_after_expiry(&params(30_000, 15_000)), None);
        assert_eq!(renew_after_expiry(&params(30_000, 29_999)), None);
        for renew in [30_000, 1_000_000_000_000] {
            let warning = renew_after_expiry(&params(30_000, renew)).unwrap();
            assert_eq!(warning.kind, "lock-renew-after-expiry");
            assert!(warning.message.contains(&format!("lockRenewTime {renew} ms")), "{}", warning.message);
            assert!(warning.message.contains("lockDuration 30000 ms"), "{}", warning.message);
        }
        // The default renew time is half the lock: never warned.
        assert_eq!(renew_after_expiry(&LockParams::default()), None);
    }

    use super::*;
    use crate::model::params::{Declared, Logged, ParamOverrides};
    use crate::model::{Severity, WorkerSettings};

    #[test]
    fn an_assumed_version_is_a_warning_only_for_findings_that_act_on_it() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-10-07T00:00:00Z").unwrap().with_timezone(&chrono::Utc);
        let assumed = [("stalled-limit-exceeded", "stall-limit model: assumed ≥ 5.53.2".to_string())];
        let error = Finding::new("stalled-limit-exceeded", Severity::Error, at);
        let info = Finding::new("stalled-limit-exceeded", Severity::Info, at);
        let other = Finding::new("stalled-rerun", Severity::Warning, at);
        let warnings = version_assumed(&[error.clone(), error, other.clone()], &assumed);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].kind, "bullmq-version-assumed");
        assert!(
            warnings[0].message.starts_with(
                "no exact BullMQ version: 2 stalled-limit-exceeded findings (stall-limit model: assumed ≥ 5.53.2) rest on an assumed version"
            ),
            "{}",
            warnings[0].message
        );
        assert!(version_assumed(&[info, other.clone()], &assumed).is_empty());
        // A decided model leaves nothing assumed.
        let error = Finding::new("stalled-limit-exceeded", Severity::Error, at);
        assert!(version_assumed(&[error, other], &[]).is_empty());
    }

    #[test]
    fn defaults_are_named_all_or_one_by_one() {
        let all = defaults_in_force(&LockParams::default()).unwrap();
        assert_eq!(all.kind, "lock-params-default");
        assert!(
            all.message.starts_with(
                "lock parameters are BullMQ v2–v6 defaults (lockDuration 30000 ms, lockRenewTime 15000 ms (lockDuration / 2), stalledInterval 30000 ms, maxStalledCount 1)"
            ),
            "{}",
            all.message
        );
        let file = ParamOverrides {
            lock_duration: Some(1_178_000),
            stalled_interval: Some(30_000),
            max_stalled_count: Some(1),
            ..ParamOverrides::default()
        };
        let one = defaults_in_force(&LockParams::resolve(&file, &ParamOverrides::default())).unwrap();
        assert!(
            one.message.starts_with("lockRenewTime 589000 ms (lockDuration / 2) is the BullMQ v2–v6 default"),
            "{}",
            one.message
        );
        let every = ParamOverrides { lock_renew_time: Some(589_000), ..file };
        assert_eq!(defaults_in_force(&LockParams::resolve(&every, &ParamOverrides::default())), None);
    }

    #[test]
    fn a_flag_a_file_and_a_log_that_disagree_are_each_named() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-10-07T00:29:58Z").unwrap().with_timezone(&chrono::Utc);
        let logged = vec![Logged {
            at,
            place: "server.log:3".into(),
            source: 0,
            worker: Some("41877".into()),
            queue: None,
            settings: WorkerSettings { lock_duration: Some(12_000), ..WorkerSettings::default() },
            event: 0,
        }];
        let file = ParamOverrides { lock_duration: Some(30_000), ..ParamOverrides::default() };
        let flags = ParamOverrides { lock_duration: Some(60_000), ..ParamOverrides::default() };
        let declared = Declared { file: &file, file_path: Some("bullmq.json"), flags: &flags };
        let params = LockParams::resolve_with_log(declared, logged, &[]);
        let warnings = disagreements(&params, chrono_tz::Asia::Seoul);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].kind, "lock-params-disagree");
        assert_eq!(
            warnings[0].message,
            "lockDuration: the sources disagree: 60000 ms (command line, --lock-duration), 30000 ms (parameters file bullmq.json), 12000 ms (logged at server.log:3 2026-10-07 09:29:58 by worker 41877); in force: 60000 ms (command line, --lock-duration) (a flag wins over the parameters file, the file over the log)"
        );
        // The same value everywhere is no disagreement.
        let same = ParamOverrides { lock_duration: Some(30_000), ..ParamOverrides::default() };
        let declared = Declared { file: &same, file_path: Some("bullmq.json"), flags: &same };
        assert!(disagreements(&LockParams::resolve_with_log(declared, Vec::new(), &[]), chrono_tz::UTC).is_empty());
    }

    #[test]
    fn settings_that_differ_by_queue_say_which_queues_jobs_got_another_value() {
        // One pod starts a `review` worker with a 4 s lock and a `notify` worker with 30 s: one
        // set of parameters for the case is wrong for one of the queues, and the report says
        // which.
        let at = chrono::DateTime::parse_from_rfc3339("2026-12-06T02:42:50Z").unwrap().with_timezone(&chrono::Utc);
        let worker = |queue: &str, lock: u64, line: u32| Logged {
            at,
            place: format!("pod.log:{line}"),
            source: 0,
            worker: Some("pod-1/27805".into()),
            queue: Some(queue.into()),
            settings: WorkerSettings { lock_duration: Some(lock), ..WorkerSettings::default() },
            event: line,
        };
        let none = ParamOverrides::default();
        let declared = Declared { file: &none, file_path: None, flags: &none };
        let logged = vec![worker("review", 4_000, 1), worker("notify", 30_000, 2), worker("review", 4_000, 9)];
        let params = LockParams::resolve_with_log(declared, logged, &[]);
        assert_eq!(params.given(Param::LockDuration)[0].queues, vec!["review".to_string()]);
        let warnings = disagreements(&params, chrono_tz::UTC);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].kind, "lock-params-changed");
        let message = &warnings[0].message;
        assert!(
            message.contains("the workers of different queues log different values: 4000 ms for queue review"),
            "{message}"
        );
        assert!(message.contains("30000 ms for queue notify"), "{message}");
        let (in_force, other) = if params.lock_duration == 4_000 { ("4000", "notify") } else { ("30000", "review") };
        assert!(message.contains(&format!("uses {in_force} ms")), "{message}");
        assert!(
            message
                .contains(&format!("the jobs of queue {other} are computed with a value their workers did not have")),
            "{message}"
        );
        // With each queue's own parameters (`per_queue`), each queue's jobs get their workers' value.
        let logged = vec![worker("review", 4_000, 1), worker("notify", 30_000, 2), worker("review", 4_000, 9)];
        let params = LockParams::resolve_with_log(declared, logged, &[]).per_queue(declared, &[]);
        assert_eq!(params.of_queue(Some("review")).lock_duration, 4_000);
        assert_eq!(params.of_queue(Some("notify")).lock_duration, 30_000);
        assert_eq!(params.of_queue(Some("notify")).lock_renew_time, 15_000, "half of its own lock");
        assert_eq!(params.of_queue(None).lock_duration, params.lock_duration);
        let warnings = disagreements(&params, chrono_tz::UTC);
        assert!(
            warnings[0].message.contains("each queue's jobs are analysed with its own workers' value"),
            "{}",
            warnings[0].message
        );
        // A flag gives every queue the same value: no queue has parameters of its own.
        let flag = ParamOverrides { lock_duration: Some(10_000), ..ParamOverrides::default() };
        let forced = Declared { file: &none, file_path: None, flags: &flag };
        let logged = vec![worker("review", 4_000, 1), worker("notify", 30_000, 2)];
        let params = LockParams::resolve_with_log(forced, logged, &[]).per_queue(forced, &[]);
        assert!(params.by_queue.is_empty());
        assert_eq!(params.of_queue(Some("notify")).lock_duration, 10_000);
        // Workers of one queue that changed their settings between boots are not a queue matter.
        let logged = vec![worker("review", 4_000, 1), worker("review", 30_000, 2)];
        let params = LockParams::resolve_with_log(declared, logged, &[]);
        let warnings = disagreements(&params, chrono_tz::UTC);
        assert!(!warnings[0].message.contains("different queues"), "{}", warnings[0].message);
    }

    #[test]
    fn inputs_that_gave_nothing_and_contradicted_parameters_are_said() {
        let mut log = InputSummary::new("server.log", "log", "text", None);
        log.lines = 3;
        log.ignore("noise");
        log.ignore("noise");
        log.ignore("blank");
        let mut used = InputSummary::new("ledger.csv", "ledger", "csv", None);
        used.events = 4;
        let warnings = empty_inputs(&[log, used]);
        assert_eq!(warnings.len(), 1);
        assert_eq!(
            warnings[0].message,
            "server.log contributed nothing: none of its 3 lines became an event (1 blank, 2 noise); check that it is the right file, its format (text) and, for a log, its rules"
        );
        // An events export `[]`: no entries, which "none of its 1 lines" would not say.
        let mut stream = InputSummary::new("events.json", "bullmq-events", "xrange-json", None);
        stream.lines = 1;
        stream.ignore(crate::model::input::NO_ENTRIES);
        assert_eq!(
            empty_inputs(&[stream])[0].message,
            "events.json contributed nothing: it holds no entries (an empty JSON array, `[]`, not an empty file); check that it is the export of the right stream (queue and prefix) and that the stream was not trimmed"
        );
        let at = chrono::DateTime::parse_from_rfc3339("2026-10-07T00:29:58Z").unwrap().with_timezone(&chrono::Utc);
        let mut finding = Finding::new("lock-params-contradicted", Severity::Warning, at);
        finding.metric("parameter", crate::model::Value::Text("lockDuration".into()));
        let warnings = contradicted(&[finding.clone(), finding], "lock-params-contradicted");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].message.starts_with("the evidence contradicts the lockDuration in force"),
            "{}",
            warnings[0].message
        );
        assert!(contradicted(&[], "lock-params-contradicted").is_empty());
    }
}
