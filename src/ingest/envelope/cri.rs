//! The CRI log file the container runtime writes for the kubelet under
//! `/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log`: `<time> <stream> <tag>
//! <line>`, where the stream is `stdout` or `stderr` and the tag's first `:`-separated word is `F`
//! (the line is full) or `P` (partial: the runtime cut a line longer than its buffer, 16 KiB by
//! default in containerd, or the stream ended without a line end).
//!
//! The layout is the kubelet's reader's (kubernetes pkg/kubelet/kuberuntime/logs/logs.go
//! `parseCRILog`) and containerd's writer's (internal/cri/io/logger.go `redirectLogs`): containerd
//! writes `time.RFC3339Nano`, which trims the fraction's zeros (to none at a whole second), in the
//! node's zone; CRI-O writes 9 digits and the node's offset. Both are read to the nanosecond.
//!
//! Partial lines are joined per stream: stdout and stderr are written by two goroutines into one
//! file, so a `P` line of stdout may be followed by stderr's lines before its `F`. The joined
//! record starts at its first line and has that line's time; its `lines` counts the lines it was
//! joined from, which are not consecutive when the other stream came between. Records are given
//! in the order they start: the lines after an unfinished `P` wait for its `F`, up to `MAX_HELD`
//! pieces, past which the partial line is given as it stands (a runtime that never finished it).
//!
//! The path gives the namespace, pod and container when it has the kubelet's shape (the folder
//! `<namespace>_<pod>_<uid>`, a uid of 32 to 36 hex digits and dashes, the container's folder, then
//! `<N>.log` or a rotated `<N>.log.<YYYYMMDD-hhmmss>[.gz]`), wherever the folder was copied to.

use std::collections::VecDeque;
use std::path::Path;

use super::runtime::{self, Shape};
use super::{Context, Envelope, Labels, Piece, Record};
use crate::error::Result;
use crate::ingest::io::lines;
use crate::model::Moment;

pub struct Cri;

const EXAMPLE: &str = "2026-10-06T23:50:00.001734812Z stdout F 2026-10-07 08:50:00.000 INFO  [main] log rotated";

/// The most pieces held back behind a partial line that waits for its `F`: bounds the memory an
/// unfinished partial line can take, far above the few lines the other stream writes meanwhile.
const MAX_HELD: usize = 4096;

const STREAMS: [&str; 2] = ["stdout", "stderr"];

impl Envelope for Cri {
    fn name(&self) -> &'static str {
        "cri"
    }

    fn sniff(&self, head: &str) -> bool {
        let mut seen = false;
        for line in runtime::head_lines(head) {
            if header(line).is_none() {
                return false;
            }
            seen = true;
        }
        seen
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn std::io::BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        let shape = Join {
            labels: path_labels(context.path),
            cap: context.max_line_bytes,
            open: [None, None],
            queue: VecDeque::new(),
        };
        runtime::pieces(input, context, shape)
    }
}

/// A CRI line's parts: its time, its stream (an index of `STREAMS`), whether it is partial, and
/// the application's bytes.
struct Header<'t> {
    stamp: runtime::Stamp,
    stream: usize,
    partial: bool,
    content: &'t str,
}

fn header(line: &str) -> Option<Header<'_>> {
    let (stamp, rest) = runtime::split_stamp(line)?;
    let (stream, rest) = rest.split_once(' ')?;
    let stream = STREAMS.iter().position(|known| *known == stream)?;
    // An empty line is `<time> <stream> F ` (each header is followed by its space); an editor may
    // have cut the trailing space.
    let (tag, content) = rest.split_once(' ').unwrap_or((rest, ""));
    // The tag is `:`-separated words kept open for later use; the first says full or partial.
    let partial = match tag.split(':').next() {
        Some("P") => true,
        Some("F") => false,
        _ => return None,
    };
    Some(Header { stamp, stream, partial, content })
}

/// The namespace, pod and container named by a path of the kubelet's shape (see the module's
/// introduction), or none.
fn path_labels(path: &Path) -> Labels {
    let mut labels = Labels::default();
    let mut parts = path.iter().rev().filter_map(|part| part.to_str());
    let (Some(file), Some(container), Some(folder)) = (parts.next(), parts.next(), parts.next()) else {
        return labels;
    };
    let restart = file.split('.').next().unwrap_or("");
    let after = &file[restart.len()..];
    let rotated = |tail: &str| {
        let tail = tail.strip_suffix(".gz").unwrap_or(tail);
        let bytes = tail.as_bytes();
        bytes.len() == 15 && bytes[8] == b'-' && bytes.iter().enumerate().all(|(at, b)| at == 8 || b.is_ascii_digit())
    };
    let file_ok = !restart.is_empty()
        && restart.bytes().all(|b| b.is_ascii_digit())
        && (after == ".log" || after.strip_prefix(".log.").is_some_and(rotated));
    let dns = |text: &str| {
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    };
    let mut names = folder.split('_');
    let (Some(namespace), Some(pod), Some(uid), None) = (names.next(), names.next(), names.next(), names.next()) else {
        return labels;
    };
    let uid_ok = (32..=36).contains(&uid.len()) && uid.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if file_ok && uid_ok && dns(namespace) && dns(pod) && dns(container) {
        labels.push("namespace", namespace);
        labels.push("pod", pod);
        labels.push("container", container);
    }
    labels
}

/// A line being joined from partial lines of one stream.
struct Open {
    line: u64,
    lines: u64,
    at: std::result::Result<Moment, String>,
    message: String,
    /// Joined past the cap: its content is dropped and it will be rejected.
    too_long: bool,
}

enum Slot {
    Done(Piece),
    /// The place of the line that stream's open partial line will complete.
    Waiting(usize),
}

struct Join {
    labels: Labels,
    cap: usize,
    open: [Option<Open>; 2],
    queue: VecDeque<Slot>,
}

impl Join {
    fn record(&self, stream: usize, open: Open) -> Piece {
        if open.too_long {
            return Piece::Rejected {
                line: open.line,
                lines: open.lines,
                reason: format!("a line joined from partial (`P`) lines: {}", lines::too_long(self.cap)),
            };
        }
        match open.at {
            Ok(at) => {
                let mut labels = self.labels.clone();
                labels.push("stream", STREAMS[stream]);
                Piece::Record(Record {
                    line: open.line,
                    lines: open.lines,
                    at: Some(at),
                    labels,
                    message: open.message,
                })
            }
            Err(reason) => Piece::Rejected { line: open.line, lines: open.lines, reason },
        }
    }

    /// Ends `stream`'s open line (complete or given up) in its place.
    fn close(&mut self, stream: usize) {
        if let Some(open) = self.open[stream].take() {
            let piece = self.record(stream, open);
            if let Some(slot) = self.queue.iter_mut().find(|slot| matches!(slot, Slot::Waiting(s) if *s == stream)) {
                *slot = Slot::Done(piece);
            }
        }
    }

    fn push(&mut self, piece: Piece) {
        self.queue.push_back(Slot::Done(piece));
    }

    fn drain(&mut self, out: &mut VecDeque<Piece>) {
        if let (true, Some(Slot::Waiting(stream))) = (self.queue.len() > MAX_HELD, self.queue.front()) {
            let stream = *stream;
            self.close(stream);
        }
        while let Some(Slot::Done(_)) = self.queue.front() {
            if let Some(Slot::Done(piece)) = self.queue.pop_front() {
                out.push_back(piece);
            }
        }
    }
}

impl Shape for Join {
    fn line(&mut self, number: u64, text: &str, out: &mut VecDeque<Piece>) {
        if text.trim().is_empty() {
            self.push(Piece::Ignored { line: number, lines: 1, reason: "blank line" });
            return self.drain(out);
        }
        let Some(header) = header(text) else {
            self.push(Piece::Rejected {
                line: number,
                lines: 1,
                reason: format!(
                    "expected a CRI log line: an RFC 3339 time with up to 9 fraction digits and `Z` or an offset, `stdout` or `stderr`, the tag `F` or `P`, each followed by one space, then the application's line, like `{EXAMPLE}`"
                ),
            });
            return self.drain(out);
        };
        let stream = header.stream;
        if let Some(open) = &mut self.open[stream] {
            open.lines += 1;
            if !open.too_long && open.message.len() + header.content.len() > self.cap {
                open.too_long = true;
                open.message = String::new();
            }
            if !open.too_long {
                open.message.push_str(header.content);
            }
        } else {
            let too_long = header.content.len() > self.cap;
            self.open[stream] = Some(Open {
                line: number,
                lines: 1,
                at: runtime::moment(header.stamp),
                message: if too_long { String::new() } else { header.content.to_string() },
                too_long,
            });
            self.queue.push_back(Slot::Waiting(stream));
        }
        if !header.partial {
            self.close(stream);
        }
        self.drain(out);
    }

    fn end(&mut self, out: &mut VecDeque<Piece>) {
        // A last `P` line is the stream's end without a line end: its text is the line.
        for stream in 0..STREAMS.len() {
            self.close(stream);
        }
        self.drain(out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::runtime::tests::{accounted, fixture, other_logs, read, read_at};
    use super::*;
    use crate::ingest::envelope::testing::records;

    #[test]
    fn a_full_line_has_its_stream_time_and_message() {
        let pieces = read(&Cri, "2026-10-06T23:50:00.0017348Z stderr F a  b \n2026-10-06T23:50:01Z stdout F:x \n");
        let records = records(&pieces);
        assert_eq!(records[0].message, "a  b ");
        assert_eq!(records[0].labels.get("stream"), Some("stderr"));
        assert_eq!(records[0].at.expect("time").utc().to_rfc3339(), "2026-10-06T23:50:00.001734800+00:00");
        assert_eq!((records[1].message.as_str(), records[1].at.expect("time").subsec_nanos()), ("", 0));
    }

    #[test]
    fn partial_lines_are_joined_per_stream_in_the_order_they_start() {
        let text = "\
2026-10-06T23:50:00.1Z stdout P first half, \n\
2026-10-06T23:50:00.2Z stderr F warning between\n\
2026-10-06T23:50:00.3Z stderr P err \n\
2026-10-06T23:50:00.4Z stdout F second half\n\
2026-10-06T23:50:00.5Z stderr F end\n";
        let pieces = read(&Cri, text);
        assert_eq!(accounted(&pieces), 5);
        let records = records(&pieces);
        let got: Vec<(u64, u64, &str, Option<&str>)> =
            records.iter().map(|r| (r.line, r.lines, r.message.as_str(), r.labels.get("stream"))).collect();
        assert_eq!(
            got,
            [
                (1, 2, "first half, second half", Some("stdout")),
                (2, 1, "warning between", Some("stderr")),
                (3, 2, "err end", Some("stderr")),
            ]
        );
        assert_eq!(records[0].at.expect("time").utc().to_rfc3339(), "2026-10-06T23:50:00.100+00:00");
    }

    #[test]
    fn a_partial_line_at_the_end_is_the_line_and_a_blank_or_wrong_line_has_its_reason() {
        let pieces = read(&Cri, "2026-10-06T23:50:00.1Z stdout P no end\n\n2026-10-06T23:50:00.1Z stdin F x\n");
        assert_eq!(accounted(&pieces), 3);
        assert!(matches!(&pieces[0], Piece::Record(r) if r.message == "no end" && r.lines == 1));
        assert!(matches!(pieces[1], Piece::Ignored { line: 2, .. }));
        assert!(matches!(&pieces[2], Piece::Rejected { line: 3, reason, .. } if reason.contains(EXAMPLE)));
    }

    #[test]
    fn a_joined_line_past_the_cap_is_rejected_with_all_its_lines() {
        let chunk = "x".repeat(40);
        let text = format!(
            "2026-10-06T23:50:00.1Z stdout P {chunk}\n2026-10-06T23:50:00.2Z stdout P {chunk}\n2026-10-06T23:50:00.3Z stdout F {chunk}\n2026-10-06T23:50:00.4Z stdout F ok\n"
        );
        let pieces = read_at(&Cri, "0.log", &text, 100);
        assert_eq!(accounted(&pieces), 4);
        assert!(matches!(&pieces[0], Piece::Rejected { line: 1, lines: 3, reason } if reason.contains("partial")));
        assert!(matches!(&pieces[1], Piece::Record(r) if r.message == "ok"));
    }

    #[test]
    fn a_partial_line_never_finished_is_given_up_after_the_held_pieces() {
        let mut text = String::from("2026-10-06T23:50:00.1Z stderr P never ended\n");
        for _ in 0..MAX_HELD + 10 {
            text.push_str("2026-10-06T23:50:00.2Z stdout F x\n");
        }
        let pieces = read(&Cri, &text);
        assert_eq!(accounted(&pieces), (MAX_HELD + 11) as u64);
        assert!(matches!(&pieces[0], Piece::Record(r) if r.message == "never ended"));
        let lines: Vec<u64> = records(&pieces).iter().map(|r| r.line).collect();
        assert!(lines.windows(2).all(|pair| pair[0] < pair[1]), "in the order they start");
    }

    #[test]
    fn the_kubelet_path_gives_namespace_pod_and_container() {
        let uid = "3f1c2a9e-5b7d-4e21-9c0a-6d8e4f2b1a7c";
        for path in [
            format!("/var/log/pods/prod_web-7d9f8c6b5-x2k4p_{uid}/api/0.log"),
            format!("case/pods/prod_web-7d9f8c6b5-x2k4p_{uid}/api/1.log.20261007-093726.gz"),
            "prod_web-7d9f8c6b5-x2k4p_0f3b9c1de2a84b7f9a6c5d4e3f2a1b0c/api/12.log".to_string(),
        ] {
            let pieces = read_at(&Cri, &path, EXAMPLE, 1 << 20);
            let record = records(&pieces)[0].clone();
            assert_eq!(
                record.labels.instance().as_deref(),
                Some("namespace=prod pod=web-7d9f8c6b5-x2k4p container=api"),
                "{path}"
            );
            assert_eq!(record.labels.0.last(), Some(&("stream", "stdout".to_string())));
        }
        for path in [
            "fixtures/envelopes/cri.log".to_string(),
            format!("/var/log/pods/prod_web_{uid}/api/0.txt"),
            format!("/var/log/pods/prod_web_x_{uid}/api/0.log"),
            "/var/log/pods/prod_web_not-a-uid/api/0.log".to_string(),
            format!("/var/log/pods/Prod_web_{uid}/api/0.log"),
            "0.log".to_string(),
        ] {
            let pieces = read_at(&Cri, &path, EXAMPLE, 1 << 20);
            assert_eq!(records(&pieces)[0].labels.get("pod"), None, "{path}");
        }
    }

    #[test]
    fn hostile_bytes_do_not_panic() {
        for text in [
            "2026-10-06T23:50:00Z stdout",
            "2026-10-06T23:50:00Z stdout P",
            "2026-10-06T23:50:00Z stdout P \u{1F600}\n\n\n",
            "\u{feff}x",
        ] {
            let input: Box<dyn std::io::BufRead + Send> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
            let context = Context { path: Path::new("a_b_c/\u{e9}/0.log"), max_line_bytes: 8 };
            let _ = Cri.pieces(input, context).collect::<Vec<_>>();
            let _ = Cri.sniff(text);
        }
    }

    #[test]
    fn the_fixture_reads_whole_with_its_split_line_joined() {
        let text = fixture("cri.log");
        let pieces = read(&Cri, &text);
        assert_eq!(accounted(&pieces), text.lines().count() as u64);
        let records = records(&pieces);
        assert!(records.iter().any(|record| record.lines == 2), "a P/F line joined");
        assert_eq!(records.len() + 1, text.lines().count());
        assert!(Cri.sniff(&text));
    }

    /// Written by the real containerd 1.6.20 (its CRI plugin, driven through the CRI API) under the
    /// kubelet's folder shape: trimmed fractions, a 17 KB line cut at 16 KiB into `P` and `F`, an
    /// empty line, a stderr line, and a last `P` for output without a line end.
    #[test]
    fn the_real_containerd_file_reads_with_its_path_labels_and_its_cut_line_joined() {
        let name = "pods/prod_web-7d9f8c6b5-x2k4p_3f1c2a9e-5b7d-4e21-9c0a-6d8e4f2b1a7c/api/0.log";
        let text = fixture(name);
        assert!(Cri.sniff(&text));
        let pieces = read_at(&Cri, &format!("fixtures/envelopes/{name}"), &text, 1 << 20);
        assert_eq!(accounted(&pieces), 17);
        let records = records(&pieces);
        assert_eq!(records.len(), 16);
        assert!(records.iter().all(|record| record.labels.instance().as_deref()
            == Some("namespace=prod pod=web-7d9f8c6b5-x2k4p container=api")));
        let warning = &records[12];
        assert_eq!(
            (warning.message.as_str(), warning.labels.get("stream")),
            ("(node:1) Warning: an example line on stderr", Some("stderr"))
        );
        assert_eq!(warning.at.expect("time").utc().to_rfc3339(), "2026-12-02T05:20:32.016932120+00:00");
        let joined = &records[13];
        let expected = format!(
            "2026-10-07 08:51:53.160 INFO  [HTTP] POST /api/review-feedback 201 29.9ms body={} pid=41877",
            "x".repeat(17000)
        );
        assert_eq!((joined.line, joined.lines, joined.message == expected), (14, 2, true));
        assert_eq!((records[14].line, records[14].message.as_str()), (16, ""));
        assert_eq!((records[15].line, records[15].message.as_str()), (17, "no line end"));
    }

    #[test]
    fn sniffing_wants_the_stream_and_tag_on_every_line() {
        assert!(Cri.sniff("2026-10-06T23:50:00.1Z stdout F job 7 active\n2026-10-06T23:50:00+09:00 stderr P x\n"));
        assert!(!Cri.sniff("2026-10-06T23:50:00.1Z stdout F a\n2026-10-06T23:50:00.1Z b\n"));
        assert!(!Cri.sniff("2026-10-07T00:33:00.123Z job 7 active\n"));
        assert!(!Cri.sniff("2026-10-06T23:50:00.001734812Z stdout X a\n"));
        assert!(!Cri.sniff(""));
        for (path, head) in other_logs() {
            if !path.ends_with("cri.log") && !path.ends_with("api/0.log") {
                assert!(!Cri.sniff(&head), "{path} sniffs as cri");
            }
        }
    }
}
