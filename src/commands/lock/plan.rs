//! `leasetrace lock`: BullMQ's lock arithmetic for one job, and what other `lockDuration` values
//! would have meant.
//!
//! The same model as `stalled-rerun` (renewal windows, stalled-check delays; see docs/bullmq.md),
//! asked forwards instead of backwards: given an activation and optionally the moment the process
//! died, when were renewals due, when did the lock run out, and when could a stalled check take
//! the job. The what-if table weighs recovery time after a crash against the share of observed
//! runs that would outlive a shorter lock if they blocked the event loop.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::detect::stalled_rerun::{RenewalModel, detection_delay_ms};
use crate::model::LockParams;
use crate::model::params::MAX_PARAM_VALUE;
use crate::terminal::visible;
use crate::time::{format_datetime, format_duration, format_rfc3339, plus_millis, seconds_between};

/// What the user asked about.
#[derive(Debug, Clone)]
pub struct Question {
    pub activated_at: DateTime<Utc>,
    pub died_at: Option<DateTime<Utc>>,
    pub params: LockParams,
    /// `lockDuration` values (ms) for the what-if table.
    pub what_if: Vec<u64>,
    /// Observed run durations (s), from a case, for the what-if table.
    pub runs: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct Plan {
    pub activated_at: String,
    pub died_at: Option<String>,
    pub renewal_model: &'static str,
    pub first_renewal_earliest_at: String,
    pub first_renewal_due_at: String,
    pub renewal_period_s: f64,
    /// Renewals that certainly happened before death (healthy event loop assumed).
    pub renewals_before_death: Option<String>,
    pub lock_expired_at: Option<String>,
    pub lock_expired_earliest_at: Option<String>,
    pub lock_expired_latest_at: Option<String>,
    pub stalled_check_earliest_at: Option<String>,
    pub stalled_check_latest_at: Option<String>,
    pub notes: Vec<String>,
    pub what_if: Vec<WhatIf>,
    /// What makes the numbers untrustworthy (defaults in force, parameters that disagree), as in
    /// the report's header (docs/json.md).
    pub warnings: Vec<crate::model::warnings::Warning>,
    #[serde(skip)]
    times: Vec<(&'static str, DateTime<Utc>)>,
}

#[derive(Debug, Serialize)]
pub struct WhatIf {
    pub lock_duration_ms: u64,
    pub lock_renew_time_ms: u64,
    /// After a crash, how long until a stalled check can take the job (min, max).
    pub recovery_min_s: f64,
    pub recovery_max_s: f64,
    /// The longest a run may block renewals before it loses the lock.
    pub blocking_limit_s: f64,
    /// Share of the observed runs longer than `blocking_limit_s` (None without a case).
    pub runs_over_limit: Option<f64>,
}

#[allow(clippy::cast_precision_loss)]
fn secs(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

fn ms(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub fn plan(question: &Question) -> Plan {
    let p = &question.params;
    let a = question.activated_at;
    let model = RenewalModel::for_params(p);
    let (early, due) = model.first_renewal_window(p);
    let (lock, renew) = (ms(p.lock_duration), ms(p.lock_renew_time));
    let (delay, delay_reason) = detection_delay_ms(p);
    let period = match model {
        RenewalModel::BatchTimer => renew / 2,
        RenewalModel::PerJobTimer => renew,
    };
    let first_early = plus_millis(a, early);
    let first_due = plus_millis(a, due);
    let renewal_words = if p.bull_version.is_some() { crate::model::bull::renewal_model() } else { model.describe() };
    let mut notes = vec![renewal_words.to_string(), delay_reason.to_string()];
    let mut times =
        vec![("activated_at", a), ("first_renewal_earliest_at", first_early), ("first_renewal_due_at", first_due)];
    let mut plan = Plan {
        activated_at: format_rfc3339(a),
        died_at: question.died_at.map(format_rfc3339),
        renewal_model: match (model, p.bull_version.is_some()) {
            (RenewalModel::PerJobTimer, true) => "per-job-timer (Bull)",
            (RenewalModel::BatchTimer, _) => "batch-timer (BullMQ >= 3.10)",
            (RenewalModel::PerJobTimer, false) => "per-job-timer (BullMQ 1.1-3.9)",
        },
        first_renewal_earliest_at: format_rfc3339(first_early),
        first_renewal_due_at: format_rfc3339(first_due),
        renewal_period_s: secs(period),
        renewals_before_death: None,
        lock_expired_at: None,
        lock_expired_earliest_at: None,
        lock_expired_latest_at: None,
        stalled_check_earliest_at: None,
        stalled_check_latest_at: None,
        notes: Vec::new(),
        what_if: Vec::new(),
        warnings: Vec::new(),
        times: Vec::new(),
    };
    if let Some(died) = question.died_at {
        times.push(("died_at", died));
        let expires_unrenewed = early >= lock;
        let (earliest, latest) = if died <= first_early || expires_unrenewed {
            // lockRenewTime ≥ lockDuration can put the earliest renewal after the expiry: the lock
            // then runs out at activation + lockDuration whenever the process died.
            plan.renewals_before_death = Some(if died <= first_early {
                "none: the process died before the earliest first renewal".into()
            } else {
                "none: the lock expires (activation + lockDuration) before the earliest first renewal".into()
            });
            let at = plus_millis(a, lock);
            plan.lock_expired_at = Some(format_rfc3339(at));
            times.push(("lock_expired_at", at));
            (at, at)
        } else if died <= first_due {
            plan.renewals_before_death = Some("zero or one: the process died inside the first renewal window".into());
            (plus_millis(a, lock), plus_millis(died, lock))
        } else {
            // Alive past the due time with a healthy event loop: renewals came every period, so the
            // last one was less than a period before death.
            plan.renewals_before_death =
                Some(format!("at least one; the last less than {} before death", format_duration(secs(period))));
            notes.push("assumes the event loop was healthy until death: a blocked loop renews nothing".into());
            (plus_millis(died, lock - period), plus_millis(died, lock))
        };
        if earliest != latest {
            plan.lock_expired_earliest_at = Some(format_rfc3339(earliest));
            plan.lock_expired_latest_at = Some(format_rfc3339(latest));
            times.push(("lock_expired_earliest_at", earliest));
            times.push(("lock_expired_latest_at", latest));
        }
        let check_latest = plus_millis(latest, delay);
        plan.stalled_check_earliest_at = Some(format_rfc3339(earliest));
        plan.stalled_check_latest_at = Some(format_rfc3339(check_latest));
        times.push(("stalled_check_earliest_at", earliest));
        times.push(("stalled_check_latest_at", check_latest));
        notes.push("the stalled check needs a live worker: the bounds hold only while one runs".into());
        if died < a {
            notes.push("died_at is before activated_at: check the times and their zones".into());
        }
    }
    let mut durations: Vec<u64> = question.what_if.clone();
    if durations.is_empty() {
        durations = vec![p.lock_duration / 4, p.lock_duration / 2, p.lock_duration, p.lock_duration * 2];
    }
    durations.retain(|d| *d > 0);
    durations.sort_unstable();
    durations.dedup();
    // Keep the renew time's share of the lock, as BullMQ's default does (half).
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let renew_share = p.lock_renew_time as f64 / p.lock_duration as f64;
    let mut capped = false;
    for duration in durations {
        // The share times a candidate at the ceiling can exceed what a parameter may be (10^12):
        // the candidate's renew time is then that ceiling, and a note says so.
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let shared = (duration as f64 * renew_share).round();
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let renew_ms = if shared > MAX_PARAM_VALUE as f64 {
            capped = true;
            MAX_PARAM_VALUE
        } else {
            shared as u64
        };
        let candidate = LockParams { lock_duration: duration, lock_renew_time: renew_ms, ..p.clone() };
        let (delay, _) = detection_delay_ms(&candidate);
        let period = match model {
            RenewalModel::BatchTimer => ms(renew_ms) / 2,
            RenewalModel::PerJobTimer => ms(renew_ms),
        };
        // A renewal period as long as the lock (lockRenewTime ≥ lockDuration) leaves no margin:
        // the lock may have run out before the crash (recovery from 0) and a run loses it
        // however free its event loop (limit 0), never a negative time.
        let limit = secs(ms(duration).saturating_sub(period).max(0));
        #[allow(clippy::cast_precision_loss)]
        let over = (!question.runs.is_empty())
            .then(|| question.runs.iter().filter(|r| **r > limit).count() as f64 / question.runs.len() as f64);
        plan.what_if.push(WhatIf {
            lock_duration_ms: duration,
            lock_renew_time_ms: renew_ms,
            recovery_min_s: limit,
            recovery_max_s: secs(ms(duration).saturating_add(delay)),
            blocking_limit_s: limit,
            runs_over_limit: over,
        });
    }
    if capped {
        notes.push(format!("what-if: lockRenewTime keeps its share of lockDuration, up to {MAX_PARAM_VALUE} ms (the largest parameter value); rows past that use {MAX_PARAM_VALUE} ms"));
    }
    notes.push("what-if: recovery is from a crash of a healthy worker to the stalled check that can take the job (last renewal up to one renewal period before the crash); runs_over_limit is the share of the case's observed runs (every job with a seen end) that would lose the lock if they blocked the event loop for their whole length".into());
    plan.notes = notes;
    plan.times = times;
    plan
}

pub fn render_json(plan: &Plan) -> String {
    let mut text = serde_json::to_string_pretty(plan).unwrap_or_default();
    text.push('\n');
    text
}

pub fn render_table(plan: &Plan, params: &LockParams, tz: Tz, runs: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "leasetrace lock · times in {}", tz.name());
    // Warnings, the parameters' places and the notes may quote the case (file names, keys): made
    // visible, as every human output makes the case's text.
    for warning in &plan.warnings {
        let _ = writeln!(out, "WARNING: {}", visible(&warning.message));
    }
    let _ = writeln!(out, "Lock parameters: {}", visible(&params.summary_line()));
    let _ = writeln!(out, "Renewal model: {}", plan.renewal_model);
    let _ = writeln!(out);
    for (name, at) in &plan.times {
        let _ = writeln!(out, "  {name:<27} {}", format_datetime(*at, tz));
    }
    let _ = writeln!(
        out,
        "  {:<27} every {} while the event loop is free",
        "renewals",
        format_duration(plan.renewal_period_s)
    );
    if let Some(renewals) = &plan.renewals_before_death {
        let _ = writeln!(out, "  {:<27} {renewals}", "renewals_before_death");
    }
    let activated = plan.times[0].1;
    if let Some((_, died)) = plan.times.iter().find(|(n, _)| *n == "died_at")
        && let Some((_, latest)) = plan.times.iter().find(|(n, _)| *n == "stalled_check_latest_at")
    {
        let _ = writeln!(
            out,
            "  {:<27} {} after the death ({} after activation)",
            "recovery at the latest",
            format_duration(seconds_between(*died, *latest)),
            format_duration(seconds_between(activated, *latest))
        );
    }
    let _ = writeln!(out);
    let mut grid = comfy_table::Table::new();
    grid.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    let over_header = if runs > 0 {
        format!("runs that would outlive it if blocking (of {runs})")
    } else {
        "runs over the limit (give a case)".into()
    };
    grid.set_header(vec![
        "lockDuration",
        "lockRenewTime",
        "recovery after a crash",
        "blocking limit",
        over_header.as_str(),
    ]);
    for row in &plan.what_if {
        let marker = if row.lock_duration_ms == params.lock_duration { " (now)" } else { "" };
        grid.add_row(vec![
            format!("{} ms{marker}", row.lock_duration_ms),
            format!("{} ms", row.lock_renew_time_ms),
            format!("{} – {}", format_duration(row.recovery_min_s), format_duration(row.recovery_max_s)),
            format_duration(row.blocking_limit_s),
            row.runs_over_limit.map_or("-".into(), |share| format!("{:.0}%", share * 100.0)),
        ]);
    }
    let _ = writeln!(out, "What if lockDuration were …\n{grid}");
    let _ = writeln!(out, "\nNotes");
    for note in &plan.notes {
        let _ = writeln!(out, "  - {}", visible(note));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::params::ParamOverrides;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn incident() -> Question {
        Question {
            activated_at: at("2026-10-07T00:33:00Z"),
            died_at: Some(at("2026-10-07T00:37:26Z")),
            params: LockParams::resolve(
                &ParamOverrides {
                    lock_duration: Some(1_178_000),
                    stalled_interval: Some(30_000),
                    ..ParamOverrides::default()
                },
                &ParamOverrides::default(),
            ),
            what_if: Vec::new(),
            runs: vec![210.6, 757.1, 160.3, 122.6, 210.0],
        }
    }

    #[test]
    fn the_incident_forwards() {
        let plan = plan(&incident());
        assert_eq!(plan.first_renewal_earliest_at, "2026-10-07T00:37:54.500Z");
        assert_eq!(plan.first_renewal_due_at, "2026-10-07T00:42:49.000Z");
        assert_eq!(plan.lock_expired_at.as_deref(), Some("2026-10-07T00:52:38.000Z"));
        assert_eq!(plan.stalled_check_latest_at.as_deref(), Some("2026-10-07T00:53:38.000Z"));
    }

    #[test]
    fn what_if_trades_recovery_against_runs_that_would_outlive_the_lock() {
        let plan = plan(&incident());
        let now = plan.what_if.iter().find(|w| w.lock_duration_ms == 1_178_000).unwrap();
        assert!((now.blocking_limit_s - 883.5).abs() < 1e-9);
        assert!((now.recovery_max_s - 1238.0).abs() < 1e-9);
        assert_eq!(now.runs_over_limit, Some(0.0));
        let quarter = plan.what_if.iter().find(|w| w.lock_duration_ms == 294_500).unwrap();
        // 294.5 s lock: blocking limit 220.875 s; 757.1 s is over it: 1 of 5 runs.
        assert_eq!(quarter.runs_over_limit, Some(0.2));
    }

    #[test]
    fn a_death_after_renewals_gives_a_window() {
        let mut question = incident();
        question.died_at = Some(at("2026-10-07T01:00:00Z"));
        let plan = plan(&question);
        assert_eq!(plan.lock_expired_at, None);
        assert_eq!(plan.lock_expired_earliest_at.as_deref(), Some("2026-10-07T01:14:43.500Z"));
        assert_eq!(plan.lock_expired_latest_at.as_deref(), Some("2026-10-07T01:19:38.000Z"));
    }

    fn with(lock: u64, renew: u64, interval: u64) -> Question {
        let mut question = incident();
        question.params = LockParams::resolve(
            &ParamOverrides {
                lock_duration: Some(lock),
                lock_renew_time: Some(renew),
                stalled_interval: Some(interval),
                ..ParamOverrides::default()
            },
            &ParamOverrides::default(),
        );
        question
    }

    #[test]
    fn lock_what_if_with_a_huge_value_prints_no_negative_recovery_bound() {
        let ceiling = MAX_PARAM_VALUE;
        for (lock, renew, interval) in
            [(1, ceiling, 1), (1_000, 3_000, 30_000), (ceiling, ceiling, ceiling), (30_000, 15_000, 1)]
        {
            let mut question = with(lock, renew, interval);
            question.what_if = vec![1, 1_000, ceiling];
            let plan = plan(&question);
            assert_eq!(plan.what_if.len(), 3);
            for row in &plan.what_if {
                assert!(row.recovery_min_s >= 0.0, "{lock}/{renew}/{interval}: {row:?}");
                assert!(row.recovery_min_s <= row.recovery_max_s, "{row:?}");
                assert!(row.blocking_limit_s >= 0.0, "{row:?}");
                assert!(row.lock_renew_time_ms <= ceiling, "{row:?}");
            }
        }
        // A renew time that would pass the ceiling is capped there, and the notes say so.
        let mut question = with(1, ceiling, 1);
        question.what_if = vec![ceiling];
        let plan = plan(&question);
        assert_eq!(plan.what_if[0].lock_renew_time_ms, ceiling);
        assert!(plan.notes.iter().any(|n| n.contains("up to 1000000000000 ms")), "{:?}", plan.notes);
    }

    #[test]
    fn lock_renew_after_expiry_means_no_renewal_before_the_lock_runs_out() {
        // Renewed at the earliest 1.5 s after activation, a 1 s lock is gone first: the lock
        // expires at activation + 1 s however late the process died.
        let plan = plan(&with(1_000, 3_000, 30_000));
        assert_eq!(plan.lock_expired_at.as_deref(), Some("2026-10-07T00:33:01.000Z"));
        assert!(plan.renewals_before_death.as_deref().unwrap().starts_with("none"), "{:?}", plan.renewals_before_death);
    }
}
