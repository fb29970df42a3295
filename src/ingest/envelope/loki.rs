//! What Grafana Loki's `logcli query` outputs share (grafana/loki pkg/logcli): its labels, as
//! Loki names them, mapped to leasetrace's; Go's `LabelSet.String()` form of them
//! (`{name="value", ...}`, sorted, values `strconv.Quote`'d) that the default output prints; the
//! lines logcli writes on its standard error (Go's `log` package: `2026/10/07 09:40:00 ...`),
//! found in an export saved with `2>&1`; and the reading of one line after another, with the
//! common labels logcli takes out of every line (`Common labels: {...}`, on standard error)
//! given back to the lines after them.

use std::io::BufRead;

use crate::error::Result;

use super::by_line::{ByLine, Line};
use super::{Context, Labels, Piece};

/// leasetrace's name for a Loki label, or `None` for a label it does not keep. Promtail's and
/// the Grafana Agent's Kubernetes discovery name them `namespace`, `pod`, `container`; the
/// OpenTelemetry collector's `k8s_*_name`; a host is `host`, `hostname` or `host_name`.
pub fn label_name(loki: &str) -> Option<&'static str> {
    Some(match loki {
        "host" | "hostname" | "host_name" => "host",
        "namespace" | "k8s_namespace_name" | "kubernetes_namespace" | "kubernetes_namespace_name" => "namespace",
        "pod" | "pod_name" | "k8s_pod_name" | "kubernetes_pod_name" => "pod",
        "container" | "container_name" | "k8s_container_name" | "kubernetes_container_name" => "container",
        "pid" => "pid",
        "stream" => "stream",
        "job" => "job",
        "app" | "app_kubernetes_io_name" => "app",
        "service_name" => "service",
        "instance" => "instance",
        "node_name" | "k8s_node_name" | "nodename" => "node",
        "filename" => "filename",
        _ => return None,
    })
}

/// Adds Loki's labels to `labels` under leasetrace's names: the first of two that map to one
/// name (`pod` and `k8s_pod_name`) is kept.
pub fn add_labels<'l>(labels: &mut Labels, pairs: impl IntoIterator<Item = (&'l str, &'l str)>) {
    for (name, value) in pairs {
        if let Some(ours) = label_name(name)
            && labels.get(ours).is_none()
        {
            labels.push(ours, value);
        }
    }
}

/// A label set as Go's `LabelSet.String()` writes it, at the start of `text`: its pairs and the
/// bytes it takes, or `None` when `text` does not start with one.
pub fn label_set(text: &str) -> Option<(Vec<(String, String)>, usize)> {
    let mut at = 1;
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut pairs = Vec::new();
    if bytes.get(1) == Some(&b'}') {
        return Some((pairs, 2));
    }
    loop {
        let name_len = bytes[at..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        if name_len == 0 || bytes[at].is_ascii_digit() || bytes.get(at + name_len) != Some(&b'=') {
            return None;
        }
        let name = &text[at..at + name_len];
        at += name_len + 1;
        let (value, used) = go_unquote(&text[at..])?;
        pairs.push((name.to_string(), value));
        at += used;
        match bytes.get(at..at + 2) {
            Some(b", ") => at += 2,
            _ if bytes.get(at) == Some(&b'}') => return Some((pairs, at + 1)),
            _ => return None,
        }
    }
}

/// A Go `strconv.Quote`d string at the start of `text`: its value and the bytes it takes.
fn go_unquote(text: &str) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut at = 1;
    loop {
        match *bytes.get(at)? {
            b'"' => return Some((String::from_utf8_lossy(&out).into_owned(), at + 1)),
            b'\\' => {
                let escape = *bytes.get(at + 1)?;
                at += 2;
                let simple = match escape {
                    b'a' => Some(7),
                    b'b' => Some(8),
                    b'f' => Some(12),
                    b'n' => Some(b'\n'),
                    b'r' => Some(b'\r'),
                    b't' => Some(b'\t'),
                    b'v' => Some(11),
                    b'\\' | b'"' | b'\'' => Some(escape),
                    _ => None,
                };
                if let Some(byte) = simple {
                    out.push(byte);
                    continue;
                }
                let (digits, radix) = match escape {
                    b'x' => (2, 16),
                    b'u' => (4, 16),
                    b'U' => (8, 16),
                    b'0'..=b'7' => {
                        at -= 1;
                        (3, 8)
                    }
                    _ => return None,
                };
                let code = text.get(at..at + digits).filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))?;
                let code = u32::from_str_radix(code, radix).ok()?;
                at += digits;
                if matches!(escape, b'u' | b'U') {
                    let mut buffer = [0; 4];
                    out.extend_from_slice(char::from_u32(code)?.encode_utf8(&mut buffer).as_bytes());
                } else {
                    out.push(u8::try_from(code).ok()?);
                }
            }
            byte => {
                out.push(byte);
                at += 1;
            }
        }
    }
}

/// Whether a line is one logcli wrote on its standard error through Go's `log` package
/// (`2026/10/07 09:40:00 <text>`), and the text after the prefix.
pub fn stderr_line(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    let shaped = bytes.len() >= 20
        && digits.iter().all(|&i| bytes[i].is_ascii_digit())
        && [(4, b'/'), (7, b'/'), (10, b' '), (13, b':'), (16, b':'), (19, b' ')].iter().all(|&(i, c)| bytes[i] == c);
    shaped.then(|| &line[20..])
}

/// Reads a logcli output a line at a time: `read` makes the piece of each entry line, given the
/// common labels in force; a blank line and logcli's standard-error lines are ignored here.
pub fn by_line<'a>(
    input: Box<dyn BufRead + Send>,
    context: Context<'a>,
    read: fn(u64, &str, &Labels) -> Piece,
) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
    let mut lines = ByLine::new(input, context);
    let mut common = Labels::default();
    let mut failed = false;
    Box::new(std::iter::from_fn(move || {
        if failed {
            return None;
        }
        Some(match lines.next_line() {
            Ok(Some(Line::Text(line, text))) => Ok(if text.trim().is_empty() {
                Piece::Ignored { line, lines: 1, reason: "blank line" }
            } else if let Some(said) = stderr_line(&text) {
                match said.strip_prefix("Common labels: ").and_then(label_set) {
                    Some((pairs, _)) => {
                        common = Labels::default();
                        add_labels(&mut common, pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
                        Piece::Ignored {
                            line,
                            lines: 1,
                            reason: "logcli's common labels (its standard error), given to the lines after it",
                        }
                    }
                    None => Piece::Ignored { line, lines: 1, reason: "logcli's own message (its standard error)" },
                }
            } else {
                read(line, &text, &common)
            }),
            Ok(Some(long)) => return long.rejected().map(Ok),
            Ok(None) => return None,
            Err(error) => {
                failed = true;
                Err(error)
            }
        })
    }))
}

/// The labels of an entry: its own, then the common ones it does not have.
pub fn with_common(own: Labels, common: &Labels) -> Labels {
    let mut labels = own;
    for (name, value) in &common.0 {
        if labels.get(name).is_none() {
            labels.push(name, value.clone());
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_sets_are_read_as_go_writes_them() {
        let (pairs, used) = label_set(r#"{app="a\"b\\c", pod="web-1"}  rest"#).unwrap();
        assert_eq!(pairs, [("app".to_string(), "a\"b\\c".to_string()), ("pod".to_string(), "web-1".to_string())]);
        assert_eq!(used, r#"{app="a\"b\\c", pod="web-1"}"#.len());
        assert_eq!(label_set("{} x"), Some((vec![], 2)));
        let (pairs, _) = label_set(r#"{k="\u00e9\x41\101\t"}"#).unwrap();
        assert_eq!(pairs[0].1, "éAA\t");
        for not in
            [r#"{"level":30}"#, "{", r#"{a="b""#, r#"{a="b",c="d"}"#, r#"{1a="b"}"#, r#"{a="\q"}"#, "{a=\"\\u12\"}"]
        {
            assert_eq!(label_set(not), None, "{not}");
        }
    }

    #[test]
    fn loki_label_names_map_to_leasetraces() {
        let mut labels = Labels::default();
        add_labels(
            &mut labels,
            [("k8s_pod_name", "web-1"), ("pod", "web-2"), ("namespace", "prod"), ("color", "blue"), ("job", "j")],
        );
        assert_eq!(labels.instance().as_deref(), Some("namespace=prod pod=web-1"));
        assert_eq!(labels.get("job"), Some("j"));
        assert_eq!(labels.0.len(), 3);
    }

    #[test]
    fn logcli_stderr_lines_are_known_by_gos_log_prefix() {
        assert_eq!(stderr_line("2026/10/07 09:40:00 Common labels: {}"), Some("Common labels: {}"));
        assert_eq!(stderr_line("2026-10-07 09:40:00 INFO x"), None);
        assert_eq!(stderr_line("2026/10/07 09:40:0é x"), None);
    }
}
