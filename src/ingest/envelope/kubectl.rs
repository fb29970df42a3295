//! `kubectl logs --timestamps` and `docker logs -t`: each line of the application preceded by the
//! time the runtime read it and one space.
//!
//! Both write the same layout, so one envelope reads both: the kubelet formats the time with
//! `RFC3339NanoFixed` (`2006-01-02T15:04:05.000000000Z07:00`, kubernetes
//! pkg/kubelet/kuberuntime/logs/logs.go `timeFormatOut`), and dockerd with jsonmessage's constant
//! of the same name and layout (moby api/server/httputils/write_log_stream.go). The 9 padded
//! digits are what tells the envelope from an application's own RFC 3339 time when sniffing: Go's
//! `RFC3339Nano` trims zeros and applications write 3 or 6 digits. Reading is lenient on the digits
//! (0 to 9), as the kubelet's own reader is, since a user who names the format means it.

use std::collections::VecDeque;

use super::runtime::{self, Shape};
use super::{Context, Envelope, OneLine, Piece, Split};
use crate::error::Result;

pub struct Kubectl;

const EXAMPLE: &str = "2026-10-06T23:50:00.001734812Z 2026-10-07 08:50:00.000 INFO  [main] log rotated";

impl Envelope for Kubectl {
    fn name(&self) -> &'static str {
        "kubectl"
    }

    fn sniff(&self, head: &str) -> bool {
        // A CRI file's lines also begin with a time (CRI-O's with 9 digits): its stream and tag
        // words make it that format, not this one.
        if super::cri::Cri.sniff(head) {
            return false;
        }
        let mut stamped = false;
        for line in runtime::head_lines(head) {
            if runtime::is_kubectl_error(line) {
                continue;
            }
            match runtime::split_stamp(line).or_else(|| runtime::stamp(line).map(|stamp| (stamp, ""))) {
                Some((stamp, _)) if stamp.digits == 9 => stamped = true,
                _ => return false,
            }
        }
        stamped
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn one_line(&self) -> Option<&dyn OneLine> {
        Some(self)
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn std::io::BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        runtime::pieces(input, context, Lines)
    }
}

struct Lines;

impl Shape for Lines {
    fn line(&mut self, number: u64, text: &str, out: &mut VecDeque<Piece>) {
        out.push_back(Kubectl.split(number, text).into_piece(number));
    }
}

impl OneLine for Kubectl {
    fn split<'l>(&self, line: u64, text: &'l str) -> Split<'l> {
        // A line that starts with a digit is not blank: no trim over the rest of it.
        if !text.as_bytes().first().is_some_and(u8::is_ascii_digit) && text.trim().is_empty() {
            return Split::Other(Piece::Ignored { line, lines: 1, reason: "blank line" });
        }
        if runtime::is_kubectl_error(text) {
            return Split::Other(Piece::Rejected { line, lines: 1, reason: runtime::KUBECTL_ERROR.to_string() });
        }
        // An empty application line is the time and its space; an editor may have cut the space.
        let Some((stamp, message)) =
            runtime::split_stamp(text).or_else(|| runtime::stamp(text).map(|stamp| (stamp, "")))
        else {
            return Split::Other(Piece::Rejected {
                line,
                lines: 1,
                reason: format!(
                    "expected a `kubectl logs --timestamps` / `docker logs -t` line: an RFC 3339 time with up to 9 fraction digits and `Z` or an offset, one space, then the application's line, like `{EXAMPLE}`"
                ),
            });
        };
        match runtime::moment(stamp) {
            Ok(at) => Split::Record { at: Some(at), message },
            Err(reason) => Split::Other(Piece::Rejected { line, lines: 1, reason }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::runtime::tests::{accounted, fixture, other_logs, read, read_at};
    use super::*;
    use crate::ingest::envelope::testing::records;

    #[test]
    fn a_line_is_the_time_to_the_nanosecond_and_the_application_line_as_written() {
        let pieces = read(&Kubectl, "2026-10-06T23:50:00.001734812Z 2026-10-07 08:50:00.000 INFO  [main] a  b \n");
        let record = records(&pieces)[0];
        assert_eq!(record.message, "2026-10-07 08:50:00.000 INFO  [main] a  b ");
        assert_eq!(record.at.expect("time").utc().to_rfc3339(), "2026-10-06T23:50:00.001734812+00:00");
        assert_eq!((record.line, record.lines), (1, 1));
        assert!(record.labels.0.is_empty());
    }

    #[test]
    fn an_offset_is_taken_to_utc_and_an_empty_application_line_is_a_record() {
        let pieces = read(&Kubectl, "2026-10-07T08:50:00.000000001+09:00 x\n2026-10-06T23:50:01.000000000Z \n");
        let records = records(&pieces);
        assert_eq!(records[0].at.expect("time").utc().to_rfc3339(), "2026-10-06T23:50:00.000000001+00:00");
        assert_eq!(records[1].message, "");
    }

    #[test]
    fn every_line_is_accounted_for_with_reasons() {
        let text = "2026-10-06T23:50:00.000000001Z a\n\nnot a line of it\nerror: container \"app\" in pod \"web-1\" is waiting to start\n2026-10-06T23:50:00.000000002Z b";
        let pieces = read(&Kubectl, text);
        assert_eq!(accounted(&pieces), 5);
        assert!(matches!(pieces[1], Piece::Ignored { line: 2, lines: 1, reason: "blank line" }));
        match &pieces[2] {
            Piece::Rejected { line: 3, reason, .. } => assert!(reason.contains(EXAMPLE), "{reason}"),
            other => panic!("{other:?}"),
        }
        match &pieces[3] {
            Piece::Rejected { line: 4, reason, .. } => assert!(reason.contains("error:"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(records(&pieces)[1].line, 5);
    }

    #[test]
    fn a_line_past_the_cap_is_rejected_and_the_next_is_read() {
        let long = format!("2026-10-06T23:50:00.000000001Z {}\n", "x".repeat(200));
        let text = format!("{long}{long}2026-10-06T23:50:00.000000002Z short\n{long}");
        let pieces = read_at(&Kubectl, "k.log", &text, 100);
        assert_eq!(accounted(&pieces), 4);
        let lines: Vec<u64> = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Rejected { line, reason, .. } => {
                    assert!(reason.contains("--max-line-bytes"), "{reason}");
                    *line
                }
                Piece::Record(record) => record.line,
                Piece::Ignored { line, .. } => *line,
            })
            .collect();
        assert_eq!(lines, [1, 2, 3, 4]);
        assert_eq!(records(&pieces)[0].message, "short");
    }

    #[test]
    fn a_year_no_timeline_holds_is_rejected() {
        let pieces = read(&Kubectl, "9999-10-06T23:50:00.000000001Z a\n");
        assert!(matches!(&pieces[0], Piece::Rejected { reason, .. } if reason.contains("1677")));
    }

    #[test]
    fn hostile_bytes_do_not_panic() {
        for text in [
            "\u{feff}",
            "2026-10-06T23:50:00.\u{1F600}Z x",
            "2026-10-06T23:50:00.000000001Z\u{0}",
            "\r\r\n",
            "[",
            "2026-1",
        ] {
            let input: Box<dyn std::io::BufRead + Send> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
            let context = Context { path: std::path::Path::new("k.log"), max_line_bytes: 64 };
            let _ = Kubectl.pieces(input, context).collect::<Vec<_>>();
            let _ = Kubectl.sniff(text);
        }
    }

    #[test]
    fn the_fixtures_read_whole() {
        for name in ["kubectl.log", "docker.log"] {
            let text = fixture(name);
            let pieces = read(&Kubectl, &text);
            assert_eq!(accounted(&pieces), text.lines().count() as u64, "{name}");
            assert!(pieces.iter().all(|piece| matches!(piece, Piece::Record(_))), "{name}");
            assert!(Kubectl.sniff(&text), "{name}");
        }
    }

    /// Written by the real dockerd 20.10.24 (`docker logs -t`, stderr merged): an empty line is the
    /// time and its space, the last line had no line end.
    #[test]
    fn the_real_docker_output_reads_to_the_nanosecond() {
        let text = fixture("docker-real.log");
        assert!(Kubectl.sniff(&text));
        let pieces = read(&Kubectl, &text);
        assert_eq!(accounted(&pieces), text.lines().count() as u64);
        let records = records(&pieces);
        assert_eq!(records.len(), text.lines().count());
        assert_eq!(records[0].at.expect("time").utc().to_rfc3339(), "2026-12-02T05:19:01.678031716+00:00");
        assert_eq!(
            records[0].message,
            "2026-10-07 08:50:00.000 INFO  [main] log rotated file=server-2026-10-07.log pid=41877"
        );
        let last = records.len() - 1;
        assert_eq!(
            [records[last - 2].message.as_str(), records[last - 1].message.as_str(), records[last].message.as_str()],
            ["", "(node:1) Warning: an example line on stderr", "no line end"]
        );
    }

    #[test]
    fn sniffing_wants_nine_digits_on_every_line() {
        assert!(Kubectl.sniff("2026-10-06T23:50:00.001734812Z job 1 active\n"));
        assert!(Kubectl.sniff("2026-10-06T23:50:00.001734812+09:00 {\"level\":30}\nerror: gone\n"));
        // An application's own RFC 3339 UTC times, with 3 or trimmed digits, stay the text format.
        assert!(!Kubectl.sniff("2026-10-07T00:33:00.123Z job 7 active\n"));
        assert!(!Kubectl.sniff("2026-10-07T00:33:00.123456Z job 7 active\n"));
        assert!(!Kubectl.sniff("2026-10-06T23:50:00.001734812Z a\n2026-10-07T00:33:00.123Z b\n"));
        assert!(!Kubectl.sniff("2026-10-06T23:50:00.001734812Z stdout F a\n"));
        assert!(!Kubectl.sniff("[pod/web-1/app] 2026-10-06T23:50:00.001734812Z a\n"));
        assert!(!Kubectl.sniff("error: only errors\n"));
        assert!(!Kubectl.sniff(""));
        for (path, head) in other_logs() {
            // The fleet's pod logs are `kubectl logs --timestamps` exports too.
            let pod = path.contains("fixtures/fleet-")
                && path.rsplit('/').next().is_some_and(|n| n.starts_with("review-bot-"));
            if !pod && !["kubectl.log", "docker.log", "docker-real.log"].iter().any(|name| path.ends_with(name)) {
                assert!(!Kubectl.sniff(&head), "{path} sniffs as kubectl");
            }
        }
    }
}
