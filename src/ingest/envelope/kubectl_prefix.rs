//! `kubectl logs --prefix`: each line preceded by `[pod/NAME/CONTAINER] `, then, with
//! `--timestamps` too, the kubelet's time and one space, then the application's line.
//!
//! kubectl writes the prefix itself (staging/src/k8s.io/kubectl/pkg/cmd/logs/logs.go
//! `addPrefixIfNeeded`: `fmt.Sprintf("[pod/%s/%s] ", ref.Name, containerName)`) around the
//! stream the kubelet sends, which already holds the time: so the prefix comes first. It names no
//! namespace. Following several pods (`-f -l app=web`), kubectl interleaves their lines as they
//! arrive, which is why the pod and container are labels: a restart of one pod is that pod's.
//!
//! Whether a line carries the kubelet's time is decided line by line, by the 9 padded digits the
//! kubelet writes (`RFC3339NanoFixed`): without `--timestamps`, an application's own leading
//! `2026-10-07T00:33:00.123Z` stays in its line.

use std::collections::VecDeque;

use super::runtime::{self, Shape};
use super::{Context, Envelope, Labels, Piece, Record};
use crate::error::Result;

pub struct KubectlPrefix;

const EXAMPLE: &str =
    "[pod/web-7d9f8c6b5-x2k4p/api] 2026-10-06T23:50:00.001734812Z 2026-10-07 08:50:00.000 INFO  [main] log rotated";

impl Envelope for KubectlPrefix {
    fn name(&self) -> &'static str {
        "kubectl-prefix"
    }

    fn sniff(&self, head: &str) -> bool {
        let mut prefixed = false;
        for line in runtime::head_lines(head) {
            if runtime::is_kubectl_error(line) {
                continue;
            }
            if prefix(line).is_none() {
                return false;
            }
            prefixed = true;
        }
        prefixed
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn std::io::BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        runtime::pieces(input, context, Lines)
    }
}

/// The pod, the container (empty when kubectl could not tell it) and the rest of a prefixed line.
fn prefix(line: &str) -> Option<(&str, &str, &str)> {
    let inside = line.strip_prefix("[pod/")?;
    let (names, rest) = inside.split_once("] ")?;
    let (pod, container) = names.split_once('/')?;
    let name = |text: &str| !text.contains(['/', '[', ']']) && !text.contains(char::is_whitespace);
    (!pod.is_empty() && name(pod) && name(container)).then_some((pod, container, rest))
}

struct Lines;

impl Shape for Lines {
    fn line(&mut self, number: u64, text: &str, out: &mut VecDeque<Piece>) {
        out.push_back(piece(number, text));
    }
}

fn piece(line: u64, text: &str) -> Piece {
    if text.trim().is_empty() {
        return Piece::Ignored { line, lines: 1, reason: "blank line" };
    }
    if runtime::is_kubectl_error(text) {
        return Piece::Rejected { line, lines: 1, reason: runtime::KUBECTL_ERROR.to_string() };
    }
    // An empty application line under a prefix: kubectl writes `[pod/a/b] ` (the space may be cut).
    let spaced;
    let whole = if text.ends_with(']') {
        spaced = format!("{text} ");
        spaced.as_str()
    } else {
        text
    };
    let Some((pod, container, rest)) = prefix(whole) else {
        return Piece::Rejected {
            line,
            lines: 1,
            reason: format!(
                "expected a `kubectl logs --prefix` line: `[pod/NAME/CONTAINER] `, then (with --timestamps) an RFC 3339 time with 9 fraction digits and a space, then the application's line, like `{EXAMPLE}`"
            ),
        };
    };
    let mut labels = Labels::default();
    labels.push("pod", pod);
    labels.push("container", container);
    let (at, message) = match runtime::split_stamp(rest).or_else(|| runtime::stamp(rest).map(|stamp| (stamp, ""))) {
        Some((stamp, message)) if stamp.digits == 9 => match runtime::moment(stamp) {
            Ok(at) => (Some(at), message),
            Err(reason) => return Piece::Rejected { line, lines: 1, reason },
        },
        _ => (None, rest),
    };
    Piece::Record(Record { line, lines: 1, at, labels, message: message.to_string() })
}

#[cfg(test)]
mod tests {
    use super::super::runtime::tests::{accounted, fixture, other_logs, read};
    use super::*;
    use crate::ingest::envelope::testing::records;

    #[test]
    fn the_prefix_gives_pod_and_container_and_the_time_follows_it() {
        let pieces = read(&KubectlPrefix, &format!("{EXAMPLE}\n"));
        let record = records(&pieces)[0];
        assert_eq!(record.labels.get("pod"), Some("web-7d9f8c6b5-x2k4p"));
        assert_eq!(record.labels.get("container"), Some("api"));
        assert_eq!(record.labels.instance().as_deref(), Some("pod=web-7d9f8c6b5-x2k4p container=api"));
        assert_eq!(record.at.expect("time").utc().to_rfc3339(), "2026-10-06T23:50:00.001734812+00:00");
        assert_eq!(record.message, "2026-10-07 08:50:00.000 INFO  [main] log rotated");
    }

    #[test]
    fn without_timestamps_the_line_is_whole_and_has_no_time() {
        // An application's own RFC 3339 time (3 digits) is its line, not the kubelet's time.
        let pieces = read(
            &KubectlPrefix,
            "[pod/web-1/app] 2026-10-07T00:33:00.123Z job 7 active\n[pod/web-1/] x\n[pod/web-1/app] \n",
        );
        let records = records(&pieces);
        assert_eq!(records[0].at, None);
        assert_eq!(records[0].message, "2026-10-07T00:33:00.123Z job 7 active");
        assert_eq!(records[1].labels.get("container"), None);
        assert_eq!((records[2].message.as_str(), records[2].labels.get("pod")), ("", Some("web-1")));
    }

    #[test]
    fn an_empty_line_with_its_space_cut_keeps_its_pod() {
        let pieces = read(&KubectlPrefix, "[pod/web-1/app]\n");
        let record = records(&pieces)[0];
        assert_eq!((record.labels.get("pod"), record.labels.get("container")), (Some("web-1"), Some("app")));
        assert_eq!(record.message, "");
    }

    #[test]
    fn every_line_is_accounted_for_with_reasons() {
        let text = "[pod/a/b] x\n\n2026-10-06T23:50:00.001734812Z no prefix\nerror: pod b gone\n[pod/a b/c] y\n";
        let pieces = read(&KubectlPrefix, text);
        assert_eq!(accounted(&pieces), 5);
        assert!(matches!(pieces[1], Piece::Ignored { line: 2, .. }));
        assert!(
            matches!(&pieces[2], Piece::Rejected { line: 3, reason, .. } if reason.contains("[pod/NAME/CONTAINER]"))
        );
        assert!(matches!(&pieces[3], Piece::Rejected { line: 4, reason, .. } if reason.contains("error:")));
        assert!(matches!(&pieces[4], Piece::Rejected { line: 5, .. }));
    }

    #[test]
    fn hostile_bytes_do_not_panic() {
        for text in
            ["[pod/", "[pod//] x", "[pod/a/\u{1F600}] 2026-10-06T23:50:00.00173481\u{e9}Z", "[pod/a/b]] ]", "\r"]
        {
            let input: Box<dyn std::io::BufRead + Send> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
            let context = Context { path: std::path::Path::new("k.log"), max_line_bytes: 64 };
            let _ = KubectlPrefix.pieces(input, context).collect::<Vec<_>>();
            let _ = KubectlPrefix.sniff(text);
        }
    }

    #[test]
    fn the_fixture_interleaves_two_pods_read_whole() {
        let text = fixture("kubectl-prefix.log");
        let pieces = read(&KubectlPrefix, &text);
        assert_eq!(accounted(&pieces), text.lines().count() as u64);
        let records = records(&pieces);
        assert_eq!(records.len(), text.lines().count());
        assert!(records.iter().all(|record| record.at.is_some()));
        let mut pods: Vec<&str> = records.iter().filter_map(|record| record.labels.get("pod")).collect();
        pods.dedup();
        assert!(pods.len() > 2, "the two pods' lines alternate");
        pods.sort_unstable();
        pods.dedup();
        assert_eq!(pods.len(), 2);
        assert!(KubectlPrefix.sniff(&text));
    }

    #[test]
    fn sniffing_wants_the_prefix_on_every_line() {
        assert!(KubectlPrefix.sniff("[pod/web-1/app] job 7 active\nerror: x\n"));
        assert!(!KubectlPrefix.sniff("[pod/web-1/app] a\nb\n"));
        assert!(!KubectlPrefix.sniff("[main] server starting\n"));
        assert!(!KubectlPrefix.sniff("2026-10-06T23:50:00.001734812Z a\n"));
        assert!(!KubectlPrefix.sniff(""));
        for (path, head) in other_logs() {
            if !path.ends_with("kubectl-prefix.log") {
                assert!(!KubectlPrefix.sniff(&head), "{path} sniffs as kubectl-prefix");
            }
        }
    }
}
