//! Server logs as plain text: each entry starts with a timestamp, the rest is the message.
//!
//! Lines without a leading timestamp continue the previous entry (stack traces, multi-line
//! payloads) and are counted as ignored continuations. A line that starts like a date but is not a
//! valid one is an error: a silently skipped line could be the one that matters.

use std::io::BufRead;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::model::{Event, InputSummary, Origin};
use crate::time::{self, Leading};

use super::lines::Lines;
use super::log_rules::RuleSet;
use super::{EventFormat, SourceKind, SourceSpec};

pub struct ServerLog;

impl EventFormat for ServerLog {
    fn name(&self) -> &'static str {
        "text"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["log", "txt"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        matches!(time::leading_stamp(first_line), Leading::Found(..))
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: usize,
        input: Box<dyn BufRead>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let path: Arc<str> = spec.display_path().into();
        let rules = RuleSet::new(&spec.rules, spec.builtin_rules, &spec.display_path())?;
        let mut lines = Lines::new(input);
        let mut stamped = 0u64;
        while let Some((line, text)) = lines.next_line(&spec.path)? {
            summary.lines += 1;
            if text.trim().is_empty() {
                summary.ignore("blank");
                continue;
            }
            let (stamp, rest) = match time::leading_stamp(text) {
                Leading::Found(stamp, rest) => (stamp, rest),
                Leading::Absent => {
                    summary.ignore("continuation");
                    continue;
                }
                Leading::Malformed(reason) => {
                    return Err(Error::input(&spec.path, Some(line), reason));
                }
            };
            stamped += 1;
            if matches!(stamp, time::Stamp::Local(_)) && spec.tz.is_none() {
                return Err(Error::input(&spec.path, Some(line), time::ZoneProblem::Undeclared.explain(&spec.tz_fix)));
            }
            let message = &text[rest..];
            let found = rules.classify(message);
            let Some(kind) = found.kind else {
                summary.ignore("noise");
                continue;
            };
            let at = stamp
                .to_utc(spec.tz)
                .map_err(|problem| Error::input(&spec.path, Some(line), problem.explain(&spec.tz_fix)))?;
            if kind.name().starts_with("job-") && found.job_id.is_none() {
                summary.reject(
                    line,
                    format!("{} line without a job id (expected id=<job id> or 'job <id> ...')", kind.name()),
                );
                continue;
            }
            let origin =
                Origin { channel: crate::model::Channel::Log, source, path: path.clone(), line, raw: text.to_string() };
            let mut event = Event::new(at, kind, origin);
            found.fill(&mut event);
            summary.used();
            events.push(event);
        }
        if summary.lines > 0 && stamped == 0 {
            return Err(Error::input(
                &spec.path,
                Some(1),
                "no line starts with a timestamp: expected lines like '2026-10-07 09:33:00.012 INFO ...' (YYYY-MM-DD HH:MM:SS, optionally with fraction and offset)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    fn read(text: &str, tz: Option<chrono_tz::Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("server.log"), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("server.log", "log", "text", tz);
        ServerLog.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    #[test]
    fn every_line_is_accounted_for() {
        let (events, summary) = read(
            "2026-10-07 09:33:00.004 INFO [worker] job active queue=q name=sweep id=7 pid=41877\n\
             2026-10-07 09:33:00.100 INFO GET /healthz 200 1ms\n\
             \n    at Object.<anonymous> (/app/main.js:1:1)\n\
             2026-10-07 09:33:01.000 INFO [worker] job active queue=q name=sweep\n",
            Some(chrono_tz::Asia::Seoul),
        )
        .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, EventKind::JobActive);
        assert_eq!(events[0].at.to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (5, 1, 3, 1));
        assert_eq!(summary.ignored_by_reason["noise"], 1);
        assert_eq!(summary.ignored_by_reason["continuation"], 1);
        assert_eq!(summary.rejections[0].line, 5);
    }

    #[test]
    fn undeclared_zone_names_the_flag() {
        let error = read("2026-10-07 09:33:00 INFO job active id=7\n", None).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("--log-tz"), "{error}");
    }

    #[test]
    fn lines_with_offsets_need_no_declared_zone() {
        let (events, _) = read("2026-10-07T00:33:00Z INFO job active id=7\n", None).unwrap();
        assert_eq!(events[0].at.to_rfc3339(), "2026-10-07T00:33:00+00:00");
    }

    #[test]
    fn a_file_without_timestamps_is_not_a_log() {
        let error = read("hello\nworld\n", Some(chrono_tz::UTC)).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1: no line starts with a timestamp"), "{error}");
    }
}
