//! The analysis, the one way from validated settings to a finished report: every source read
//! (`ingest`), one UTC timeline (`model`), the lock parameters resolved from flags, files and logs,
//! the detectors run over it (`detect`), and the report's warnings and assumptions gathered, each
//! said where a reader sees it first. The verbs (`commands`) call it; renderers print what it
//! returns and compute nothing.

use crate::config::Config;
use crate::error::{self, Result};
use crate::model::report::{RawTexts, View};
use crate::model::{self, LockParams, Report, Timeline};
use crate::{capture, coverage, detect, ingest, phases, render, time};

/// The path a log read by time for the window is cited by: its lines are numbered from byte
/// `from`, not from the file's start (`ingest::io::seek`).
pub fn seek_label(path: &str, from: u64) -> String {
    format!("{path} (from byte {from})")
}

/// Reads every source of a case and builds the report for `view`.
pub fn build_report(config: &Config, view: View) -> Result<Report> {
    let shows_raw =
        config.formats.iter().any(|name| render::find(name).is_none_or(|renderer| renderer.shows_raw(view)));
    build(config, view, shows_raw).map(|(report, _)| report)
}

/// `build_report`, reading back the raw lines of the shown events only when `read_back` (they
/// stay in their files otherwise: a timeline's worth of lines nobody will print). Also returns
/// what the parameters file's reader noted (where nested parameters were found), which the report
/// holds among its assumptions.
pub(crate) fn build(config: &Config, view: View, read_back: bool) -> Result<(Report, Vec<String>)> {
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
                version_given: config.param_flags.version.is_some() || config.param_flags.bull_version.is_some(),
            };
            let file = ingest::bullmq::params::read_selected(path, selection)?;
            inputs.push(file.summary);
            params_notes = file.notes;
            file.overrides
        }
        None => model::params::ParamOverrides::default(),
    };
    // A log read by time for the window numbers its lines from the byte it was read from: its
    // path says so wherever a line is cited (`ingest::io::seek`), and so does its account.
    for input in &mut inputs {
        if let Some(read) = input.window_read
            && !read.from_start
        {
            input.path = seek_label(&input.path, read.from_byte);
        }
    }
    let paths = config
        .sources
        .iter()
        .zip(&inputs)
        .map(|(source, input)| match input.window_read {
            Some(read) if !read.from_start => {
                model::Text::from(seek_label(&source.display_path(), read.from_byte).as_str())
            }
            _ => model::Text::from(source.display_path().as_str()),
        })
        .collect();
    // The sources' summaries come first, in source order.
    let line_texts = inputs.iter_mut().map(|input| std::mem::take(&mut input.texts)).collect();
    let envelope_times = inputs.iter_mut().map(|input| std::mem::take(&mut input.envelope_times)).collect();
    let timeline =
        Timeline::new(events).with_paths(paths).with_line_texts(line_texts).with_envelope_times(envelope_times);
    phases.end("sorted");
    // A line or a file read twice is one piece of evidence: counted twice, one activation would be
    // a rerun. Said first, since it changes every count below.
    let (timeline, repeats) = ingest::io::repeats::drop_repeats(timeline, &sources, &mut inputs, &config.progress)?;
    let repeat_warnings = model::warnings::repeated_evidence(&timeline, &repeats, &inputs);
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
    // Workers of several queues that log settings of their own: each queue's jobs are analysed
    // with its workers' values.
    let params = LockParams::resolve_with_log(declared, logged, &activations)
        .per_queue(declared, &activations)
        .on_backend(ingest::bullmq::postgres::backend_of(&inputs));
    let (findings, chains, unattributed) = match view {
        View::Timeline => (Vec::new(), Vec::new(), Vec::new()),
        View::Analyze | View::Check(_) => {
            let context = detect::Context::new(&timeline, &params, &config.settings);
            phases.end("context");
            let (findings, chains) = detect::analyze(&context);
            phases.end("detectors");
            let unattributed: Vec<model::warnings::UnattributedJob> = context
                .unattributed
                .iter()
                .map(|job| model::warnings::UnattributedJob {
                    id: job.id.to_string(),
                    queues: job.queues.iter().map(ToString::to_string).collect(),
                    events: job.events.len(),
                    first: job.events.first().map_or_else(String::new, |&id| {
                        let event = timeline.get(id);
                        format!("{}:{}", timeline.path(event), event.origin().line)
                    }),
                })
                .collect();
            (findings, chains, unattributed)
        }
    };
    let mut assumptions = config.assumptions.clone();
    let outside =
        inputs.iter().filter_map(|input| input.ignored_by_reason.get(model::filter::OUTSIDE_READ_WINDOW)).sum::<u64>();
    assumptions.extend(read_plan.note(config.display_tz, outside, config.filter.clock_date(&timeline)));
    // The sources' summaries come first, in source order (the lock parameters file's after them).
    for (source, input) in sources.iter().zip(&inputs) {
        assumptions.extend(read_through_note(source, input));
    }
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
    warnings.extend(repeat_warnings);
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
    warnings.extend(model::warnings::unattributed_jobs(&unattributed));
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
        if !config.filter.allow_empty && !report.timeline.events().iter().any(|event| filter.shows(event)) {
            let outside = report.inputs.iter().fold((0, None), |(count, span), input| {
                let more = input.ignored_by_reason.get(model::filter::OUTSIDE_READ_WINDOW).copied().unwrap_or(0);
                let span = match (span, input.outside_span) {
                    (Some((a, b)), Some((c, d))) => Some((std::cmp::min(a, c), std::cmp::max(b, d))),
                    (span, more) => span.or(more),
                };
                (count + more, span)
            });
            return Err(error::Error::usage(filter.matches_nothing(&report.timeline, outside, config.display_tz)));
        }
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
/// Why a ledger or log of 1 MiB or more was read from its start for a read window, when it was not
/// sought by time (`ingest::io::seek`): said, since the window then costs the whole file.
fn read_through_note(source: &ingest::SourceSpec, input: &model::InputSummary) -> Option<String> {
    let window = source.window?;
    if (window.from.is_none() && window.to.is_none())
        || input.window_read.is_some()
        || input.notes.iter().any(|note| note.starts_with("read whole, not by time"))
    {
        return None;
    }
    let path = source.file();
    let size = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?.len();
    if size < ingest::io::seek::SEEK_AT_LEAST {
        return None;
    }
    let why = if source.spool.is_some() {
        "it is read once (standard input or a pipe), from its start"
    } else if std::fs::File::open(path).is_ok_and(|mut file| ingest::is_gzip(&mut file)) {
        "it is compressed, and a compressed file is read from its start"
    } else if source.kind == ingest::SourceKind::Ledger {
        "a ledger is not sought by time: a CSV record may hold line ends in a quoted cell, so a byte offset cannot be resynced to a record"
    } else {
        "only plain-text logs (format text) are sought by time: a record of this format may span lines, or carry what the lines after it need"
    };
    Some(format!(
        "{}: read from its start for the read window, every byte, the window applied to what was read: {why}",
        input.path
    ))
}

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
