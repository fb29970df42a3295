//! `leasetrace lock`: BullMQ's lock arithmetic for the one activation `--activated-at` gives
//! (`--died-at` when its process died), rendered as `--format table` or `json`. The lock
//! parameters come from `--params` and the lock flags as for a case; with a CASE (or sources by
//! flag) its observed runs feed the what-if table (`--what-if`, lockDuration values in ms) and its
//! manifest gives the zone, without one `--tz` reads the times. The filters of the report verbs
//! (`--since`, `--job`, ...) mean nothing here and are refused. The arithmetic itself is `plan`.

pub mod plan;

use crate::cli::CaseArgs;
use crate::config::Config;
use crate::error::{self, Result};
use crate::model::report::View;
use crate::model::{self, LockParams};
use crate::progress::Progress;
use crate::{analysis, detect, ingest, time};

/// The lock arithmetic for one job, rendered as `args.format` asks. With a case
/// (or sources given by flags), its observed runs feed the what-if table and its manifest gives the
/// zone; without one, only the lock parameters file and flags are read. `progress` is for those
/// sources.
pub fn report(
    args: &CaseArgs,
    activated: &str,
    died: Option<&str>,
    what_if: &[u64],
    progress: &Progress,
) -> Result<String> {
    if args.since.is_some()
        || args.until.is_some()
        || !args.job_ids.is_empty()
        || !args.run_ids.is_empty()
        || !args.items.is_empty()
    {
        return Err(error::Error::usage(
            "--since, --until, --job, --run and --item choose what timeline, analyze and check show; lock answers for the one activation --activated-at gives",
        ));
    }
    // Before anything is read: a 0 ms lock would give a plan of 0 s renewals.
    crate::config::check_lock_flags(args)?;
    if !matches!(args.main_format(), "table" | "json") {
        return Err(error::Error::usage(format!(
            "lock writes --format table or json, not {}: its what-if table is not a report of findings and events",
            args.main_format()
        )));
    }
    if let Some(output) = args.formats.iter().find(|output| output.path.is_some()) {
        return Err(error::Error::usage(format!(
            "--format {}=PATH: lock writes one format, to stdout or to --output-file",
            output.name
        )));
    }
    let has_sources = args.case.is_some() || !args.ledger.is_empty() || !args.log.is_empty() || !args.events.is_empty();
    // A local time is read in the display zone when one is declared (--tz, or the case's
    // display_tz), and a clock time alone on the case's date, as --since reads them.
    let (params, runs, tz, zone, timeline, params_notes, case_warnings) = if has_sources {
        let config = Config { progress: progress.clone(), ..Config::build(args)? };
        // Only the runs are needed: no raw lines.
        let (report, notes) = analysis::build(&config, View::Timeline, false)?;
        let context = detect::Context::new(&report.timeline, &report.params, &config.settings);
        let runs: Vec<f64> = detect::lock_headroom::runs(&context).iter().map(|r| r.seconds).collect();
        let zone = config.filter.zone;
        (report.params.clone(), runs, config.display_tz, zone, Some(report.timeline), notes, config.warnings)
    } else {
        let file = match &args.params {
            Some(path) => {
                let selection = ingest::bullmq::params::Selection {
                    at: args.params_at.as_deref(),
                    version_given: args.bullmq_version.is_some() || args.bull_version.is_some(),
                };
                ingest::bullmq::params::read_selected(path, selection)?
            }
            None if args.params_at.is_some() => {
                return Err(error::Error::usage(
                    "--params-at says where the lock parameters are in a parameters file: give the file with --params",
                ));
            }
            None => ingest::bullmq::params::ParamsFile::none(),
        };
        let flags = model::params::ParamOverrides {
            lock_duration: args.lock_duration,
            lock_renew_time: args.lock_renew_time,
            stalled_interval: args.stalled_interval,
            max_stalled_count: args.max_stalled_count,
            version: args.bullmq_version.clone(),
            version_at_least: None,
            bull_version: args.bull_version.clone(),
        };
        let tz = args
            .tz
            .as_deref()
            .map(|z| time::parse_zone(z).map_err(|e| error::Error::usage(format!("--tz: {e}"))))
            .transpose()?;
        let params = LockParams::resolve(&file.overrides, &flags);
        (params, Vec::new(), tz.unwrap_or(chrono_tz::UTC), tz, None, file.notes, Vec::new())
    };
    // The forms --since takes, read by the same parser and placed by the same rules.
    let instant = |flag: &str, text: &str| -> Result<chrono::DateTime<chrono::Utc>> {
        let bound = time::parse_bound(text).map_err(|e| error::Error::usage(format!("{flag} {e}")))?;
        let date = match (bound, &timeline) {
            (time::Bound::At(_), _) => None,
            (time::Bound::Clock(_), Some(timeline)) => {
                Some(model::filter::case_date(timeline, zone, flag, text).map_err(error::Error::usage)?)
            }
            (time::Bound::Clock(_), None) => {
                return Err(error::Error::usage(format!(
                    "{flag} '{text}': a clock time alone is on the case's date (the one date its events fall on), and lock was given no case: give the date too, e.g. '2026-10-07 {text}' with --tz ZONE, or a time with its offset, 2026-10-07T{text}+09:00 (leasetrace docs inputs)"
                )));
            }
        };
        // Within the years a timeline holds, as every time read from a source is: the plan adds
        // up to about 95 years of parameters to it, and RFC 3339 (the JSON plan's times) has
        // four-digit years (found by fuzzing: 9999-12-31 printed `+10031-…`).
        let fix = "--tz ZONE (or display_tz in the manifest), or write the offset: 2026-10-07T09:33:00+09:00";
        bound.place(zone, date).and_then(|at| time::moment(at).map(|_| at)).map_err(|p| {
            error::Error::usage(format!("{flag} '{text}': {}", p.explain(fix).replace("this source", "this time")))
        })
    };
    let question = plan::Question {
        activated_at: instant("--activated-at", activated)?,
        died_at: died.map(|d| instant("--died-at", d)).transpose()?,
        params: params.clone(),
        what_if: what_if.to_vec(),
        runs,
    };
    let mut plan = plan::plan(&question);
    // Every time of the plan rests on the parameters: what is assumed or disputed is said first,
    // and where they came from first among the notes. A case read outside its folder is said first.
    plan.warnings.extend(case_warnings);
    plan.warnings.extend(model::warnings::defaults_in_force(&params));
    plan.warnings.extend(model::warnings::disagreements(&params, tz));
    plan.warnings.extend(model::warnings::renew_after_expiry(&params));
    plan.notes.splice(0..0, params_notes);
    Ok(match args.main_format() {
        "json" => plan::render_json(&plan),
        _ => plan::render_table(&plan, &params, tz, question.runs.len()),
    })
}

/// `lock`'s output on stdout.
pub fn run(args: &CaseArgs, activated: &str, died: Option<&str>, what_if: &[u64], progress: &Progress) -> Result<u8> {
    let text = report(args, activated, died, what_if, progress)?;
    match &args.output_file {
        Some(path) => super::write_file(path, |out| out.write_all(text.as_bytes()))?,
        None => super::write_stdout(false, |out| out.write_all(text.as_bytes()))?,
    }
    Ok(0)
}
