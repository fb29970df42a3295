//! leasetrace: incident forensics for job queues.
//!
//! Data flows one way: sources (`ingest`) → one UTC timeline (`model`) → findings (`detect`) →
//! output (`render`). `config` validates everything the user said before any of it runs.

pub mod capture;
pub mod cli;
pub mod config;
pub mod confine;
pub mod coverage;
pub mod detect;
pub mod error;
/// What the fuzz targets (fuzz/) and their stable regression test run: not an API.
#[doc(hidden)]
pub mod fuzzing;
pub mod ingest;
pub mod init;
pub mod lock_plan;
pub mod model;
pub mod parallel;
pub mod phases;
pub mod progress;
pub mod render;
pub mod terminal;
pub mod time;

use config::Config;
use error::Result;
use model::report::{RawTexts, View};
use model::{LockParams, Report, Timeline};

/// Reads every source of a case and builds the report for `view`.
pub fn build_report(config: &Config, view: View) -> Result<Report> {
    let shows_raw = render::find(&config.format).is_none_or(|renderer| renderer.shows_raw(view));
    build(config, view, shows_raw).map(|(report, _)| report)
}

/// `build_report`, reading back the raw lines of the shown events only when `read_back` (they
/// stay in their files otherwise: a timeline's worth of lines nobody will print). Also returns
/// what the parameters file's reader noted (where nested parameters were found), which the report
/// holds among its assumptions.
fn build(config: &Config, view: View, read_back: bool) -> Result<(Report, Vec<String>)> {
    // A whole timeline with its lines would decompress a compressed source again for every chunk
    // of events it writes: its events keep their lines' texts instead.
    let mut sources: Vec<ingest::SourceSpec> = config
        .sources
        .iter()
        .map(|source| ingest::SourceSpec {
            reread_compressed: !(view == View::Timeline && read_back),
            ..source.clone()
        })
        .collect();
    // Standard input and FIFOs are read back from a copy made while they are read (stdin that
    // is a regular file, from that file).
    ingest::io::spool::attach(&mut sources)?;
    // The ledgers and logs are read in the window asked about (widened by the read margin): the
    // Redis dumps are bounded by Redis's own retention, and are read whole.
    let read_plan = config.filter.read_plan();
    for source in &mut sources {
        if matches!(source.kind, ingest::SourceKind::Ledger | ingest::SourceKind::Log) {
            source.window = read_plan.window();
        }
    }
    let phases = phases::Phases::from_env();
    let (events, mut inputs) = ingest::read_sources(&sources, &config.progress)?;
    phases.end("read");
    let mut params_notes = Vec::new();
    let file_params = match &config.params_path {
        Some(path) => {
            let selection = ingest::bullmq::params::Selection {
                at: config.params_at.as_deref(),
                version_given: config.param_flags.version.is_some(),
            };
            let file = ingest::bullmq::params::read_selected(path, selection)?;
            inputs.push(file.summary);
            params_notes = file.notes;
            file.overrides
        }
        None => model::params::ParamOverrides::default(),
    };
    let paths = config.sources.iter().map(|source| model::Text::from(source.display_path().as_str())).collect();
    // The sources' summaries come first, in source order.
    let line_texts = inputs.iter_mut().map(|input| std::mem::take(&mut input.texts)).collect();
    let envelope_times = inputs.iter_mut().map(|input| std::mem::take(&mut input.envelope_times)).collect();
    let timeline =
        Timeline::new(events).with_paths(paths).with_line_texts(line_texts).with_envelope_times(envelope_times);
    phases.end("sorted");
    // The worker settings the logs gave are evidence for the parameters no flag or file gives.
    let logged = model::params::Logged::from_timeline(&timeline);
    let activations = if model::params::Logged::values_differ(&logged) {
        model::params::Activation::from_timeline(&timeline)
    } else {
        Vec::new()
    };
    let file_path = config.params_path.as_ref().map(|path| path.display().to_string());
    let declared =
        model::params::Declared { file: &file_params, file_path: file_path.as_deref(), flags: &config.param_flags };
    let params = LockParams::resolve_with_log(declared, logged, &activations);
    let (findings, chains) = match view {
        View::Timeline => (Vec::new(), Vec::new()),
        View::Analyze | View::Check(_) => {
            let context = detect::Context::new(&timeline, &params, &config.settings);
            phases.end("context");
            let found = detect::analyze(&context);
            phases.end("detectors");
            found
        }
    };
    let mut assumptions = config.assumptions.clone();
    let outside =
        inputs.iter().filter_map(|input| input.ignored_by_reason.get(model::filter::OUTSIDE_READ_WINDOW)).sum::<u64>();
    assumptions.extend(read_plan.note(config.display_tz, outside, config.filter.clock_date(&timeline)));
    // The sources' summaries come first, in source order (the lock parameters file's after them).
    for (source, input) in config.sources.iter().zip(&inputs) {
        assumptions.extend(ledger_zone_note(source, input));
        assumptions.extend(time::fold::notes(&input.path, source.ambiguous, &input.folds));
    }
    assumptions.extend(params_notes.iter().cloned());
    assumptions
        .extend(inputs.iter().flat_map(|input| input.notes.iter().map(|note| format!("{}: {note}", input.path))));
    assumptions.extend(coverage::coverage_gaps(&timeline));
    if let Some(record) = &config.capture_record {
        assumptions.extend(capture::record::notes(record)?);
    }
    if view != View::Timeline {
        assumptions.extend(detect::models_applied(&params));
    }
    let (meta_warnings, meta_notes) = model::warnings::meta_versions(&params, &inputs);
    assumptions.extend(meta_notes);
    for param in model::Param::ALL {
        if matches!(params.origins.get(param), model::ParamOrigin::Default | model::ParamOrigin::HalfOfLockDuration) {
            let (name, value) = (param.name(), params.value(param));
            let unit = if name == "maxStalledCount" { "" } else { " ms" };
            assumptions.push(format!("{name} = {value}{unit}: {}", params.describe_origin(param)));
        }
    }
    for param in model::Param::ALL {
        if params.origins.get(param) == model::ParamOrigin::Log {
            assumptions.push(format!(
                "{} = {}: {} (no flag or parameters file gives it)",
                param.name(),
                param.show(params.value(param)),
                params.describe_origin(param)
            ));
        }
    }
    // Sources read outside the case folder come first: the report's evidence is not all in it.
    let mut warnings = config.warnings.clone();
    // BullMQ's parameters matter to a case with BullMQ jobs in it (a lease ledger alone has none).
    if view != View::Timeline && has_bullmq_jobs(&timeline) {
        warnings.extend(model::warnings::defaults_in_force(&params));
    }
    warnings.extend(model::warnings::disagreements(&params, config.display_tz));
    warnings.extend(model::warnings::renew_after_expiry(&params));
    warnings.extend(model::warnings::contradicted(&findings, detect::lock_params_contradicted::CODE));
    warnings.extend(model::warnings::zone_mixup(&findings, "clock-offset-suspected"));
    warnings.extend(model::warnings::version_assumed(&findings, &detect::version_assumptions(&params)));
    warnings.extend(meta_warnings);
    warnings.extend(model::warnings::empty_inputs(&inputs));
    warnings.extend(model::warnings::crowded_lines(&inputs));
    let mut report = Report {
        view,
        display_tz: config.display_tz,
        inputs,
        params,
        warnings,
        assumptions,
        timeline,
        findings,
        chains,
        raw_texts: RawTexts::Read(std::collections::HashMap::new()),
        shown: None,
    };
    // What the user asked to see, once everything is found (the warnings above see every finding).
    let filter = config.filter.place(&report.timeline).map_err(error::Error::usage)?;
    let outside: model::filter::OutsideIds =
        report.inputs.iter().flat_map(|input| input.outside_ids.iter().copied()).collect();
    let shows = |event: &model::Event| filter.as_ref().is_none_or(|filter| filter.shows(event));
    report.warnings.extend(model::warnings::window_cut(&report.timeline, shows, &outside));
    if let Some(filter) = filter {
        report.retain_shown(filter);
    }
    if read_back {
        report.raw_texts = match view {
            // Every event: its lines are read back while they are written, a chunk at a time.
            View::Timeline => RawTexts::OnDemand(Box::new(ingest::io::read_back::SourceFiles(sources))),
            View::Analyze | View::Check(_) => RawTexts::Read(ingest::io::read_back::read_back(
                &sources,
                &report.timeline,
                // The evidence of every finding shown, which a filter does not cut.
                &report.cited_events(),
                &config.progress,
            )?),
        };
    }
    phases.end("report");
    Ok((report, params_notes))
}

/// Whether the timeline shows BullMQ jobs, which the lock parameters are about: an activation
/// (a `job-active` record, or a ledger row that starts a round of a job) or a stall.
/// A ledger read in its default zone (UTC, declared by nobody) says so only when a time it read
/// had no offset: a psql export's `+00`/`+09` cells never rested on the default.
fn ledger_zone_note(source: &ingest::SourceSpec, input: &model::InputSummary) -> Option<String> {
    (source.tz_defaulted && input.naive_times > 0).then(|| {
        let (count, noun) = match input.naive_times {
            1 => ("1".to_string(), "timestamp"),
            n => (n.to_string(), "timestamps"),
        };
        format!(
            "{}: {count} {noun} without an offset read as UTC (the ledger default; set tz or --ledger-tz otherwise)",
            input.path
        )
    })
}

fn has_bullmq_jobs(timeline: &Timeline) -> bool {
    use model::EventKind;
    let kinds = timeline.kinds_in_order();
    kinds.iter().any(|kind| matches!(kind, EventKind::JobActive | EventKind::JobStalled))
        || (0..).zip(kinds).any(|(id, kind)| *kind == EventKind::RoundStarted && timeline.get(id).job_id.is_some())
}

/// `leasetrace lock`: the lock arithmetic for one job, rendered as `args.format` asks. With a case
/// (or sources given by flags), its observed runs feed the what-if table and its manifest gives the
/// zone; without one, only the lock parameters file and flags are read. `progress` is for those
/// sources.
pub fn lock_report(
    args: &cli::CaseArgs,
    activated: &str,
    died: Option<&str>,
    what_if: &[u64],
    progress: &progress::Progress,
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
    if !matches!(args.format.as_str(), "table" | "json") {
        return Err(error::Error::usage(format!(
            "lock writes --format table or json, not {}: its what-if table is not a report of findings and events",
            args.format
        )));
    }
    let has_sources = args.case.is_some() || !args.ledger.is_empty() || !args.log.is_empty() || !args.events.is_empty();
    let (params, runs, tz, params_notes, case_warnings) = if has_sources {
        let config = Config { progress: progress.clone(), ..Config::build(args)? };
        // Only the runs are needed: no raw lines.
        let (report, notes) = build(&config, View::Timeline, false)?;
        let context = detect::Context::new(&report.timeline, &report.params, &config.settings);
        let runs: Vec<f64> = detect::lock_headroom::runs(&context).iter().map(|r| r.seconds).collect();
        (report.params.clone(), runs, config.display_tz, notes, config.warnings)
    } else {
        let file = match &args.params {
            Some(path) => {
                let selection = ingest::bullmq::params::Selection {
                    at: args.params_at.as_deref(),
                    version_given: args.bullmq_version.is_some(),
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
        };
        let tz = args
            .tz
            .as_deref()
            .map(|z| time::parse_zone(z).map_err(|e| error::Error::usage(format!("--tz: {e}"))))
            .transpose()?;
        let params = LockParams::resolve(&file.overrides, &flags);
        (params, Vec::new(), tz.unwrap_or(chrono_tz::UTC), file.notes, Vec::new())
    };
    let zone_given = args.tz.is_some() || has_sources;
    let instant = |flag: &str, text: &str| -> Result<chrono::DateTime<chrono::Utc>> {
        let stamp = time::parse_field(text).map_err(|e| error::Error::usage(format!("{flag}: {e}")))?;
        // Within the years a timeline holds, as every time read from a source is: the plan adds
        // up to about 95 years of parameters to it, and RFC 3339 (the JSON plan's times) has
        // four-digit years (found by fuzzing: 9999-12-31 printed `+10031-…`).
        stamp
            .to_utc(zone_given.then_some(tz))
            .and_then(|at| time::moment(at).map(|_| at))
            .map_err(|p| error::Error::usage(format!("{flag} '{text}': {}", p.explain("--tz"))))
    };
    let question = lock_plan::Question {
        activated_at: instant("--activated-at", activated)?,
        died_at: died.map(|d| instant("--died-at", d)).transpose()?,
        params: params.clone(),
        what_if: what_if.to_vec(),
        runs,
    };
    let mut plan = lock_plan::plan(&question);
    // Every time of the plan rests on the parameters: what is assumed or disputed is said first,
    // and where they came from first among the notes. A case read outside its folder is said first.
    plan.warnings.extend(case_warnings);
    plan.warnings.extend(model::warnings::defaults_in_force(&params));
    plan.warnings.extend(model::warnings::disagreements(&params, tz));
    plan.warnings.extend(model::warnings::renew_after_expiry(&params));
    plan.notes.splice(0..0, params_notes);
    Ok(match args.format.as_str() {
        "json" => lock_plan::render_json(&plan),
        _ => lock_plan::render_table(&plan, &params, tz, question.runs.len()),
    })
}
