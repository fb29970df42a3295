//! leasetrace: incident forensics for job queues.
//!
//! Data flows one way: sources (`ingest`) → one UTC timeline (`model`) → findings (`detect`) →
//! output (`render`). `config` validates everything the user said before any of it runs.

pub mod cli;
pub mod config;
pub mod detect;
pub mod error;
pub mod ingest;
pub mod init;
pub mod model;
pub mod render;
pub mod time;

use config::Config;
use error::Result;
use model::report::View;
use model::{LockParams, Report, Timeline};

/// Reads every source of a case and builds the report for `view`.
pub fn build_report(config: &Config, view: View) -> Result<Report> {
    let (events, mut inputs) = ingest::read_sources(&config.sources)?;
    let file_params = match &config.params_path {
        Some(path) => {
            let (overrides, summary) = ingest::bullmq_params::read(path)?;
            inputs.push(summary);
            overrides
        }
        None => model::params::ParamOverrides::default(),
    };
    let params = LockParams::resolve(&file_params, &config.param_flags);
    let timeline = Timeline::new(events);
    let findings = match view {
        View::Timeline => Vec::new(),
        View::Analyze | View::Check(_) => {
            let context = detect::Context::new(&timeline, &params, &config.settings);
            detect::analyze(&context)
        }
    };
    let mut assumptions = config.assumptions.clone();
    assumptions.extend(coverage_gaps(&inputs));
    if view != View::Timeline {
        assumptions.extend(detect::models_applied(&params));
    }
    for (name, value, origin) in params.entries() {
        if matches!(origin, model::ParamOrigin::Default | model::ParamOrigin::HalfOfLockDuration) {
            let unit = if name == "maxStalledCount" { "" } else { " ms" };
            assumptions.push(format!("{name} = {value}{unit}: {}", origin.describe()));
        }
    }
    Ok(Report { view, display_tz: config.display_tz, inputs, params, assumptions, timeline, findings })
}

/// BullMQ trims its events stream (about 10,000 entries by default): when the stream starts after
/// the other evidence, the absence of a stream event before its first entry proves nothing.
fn coverage_gaps(inputs: &[model::InputSummary]) -> Vec<String> {
    let earliest_other = inputs.iter().filter(|i| i.kind != "bullmq-events").filter_map(|i| i.first_at).min();
    inputs
        .iter()
        .filter(|i| i.kind == "bullmq-events")
        .filter_map(|stream| {
            let (starts, other) = (stream.first_at?, earliest_other?);
            (starts > other).then(|| {
                format!(
                    "{}: the events stream starts at {}, after the other evidence begins ({}): it was trimmed, and says nothing about earlier times; a missing stream event before then is not evidence",
                    stream.path,
                    time::format_rfc3339(starts),
                    time::format_rfc3339(other)
                )
            })
        })
        .collect()
}
