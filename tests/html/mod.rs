//! `--format html`: one self-contained page. What a browser makes of it is checked in
//! `tests/browser` (headless Chromium); here, the page as bytes: nothing it could fetch, the
//! report's parts in reading order, and text from a hostile case kept as text.

use super::*;

fn page(case: &str) -> String {
    let run = leasetrace(&["analyze", case, "--format", "html"]).run();
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    run.stdout
}

#[test]
fn the_html_report_is_one_file_that_fetches_nothing() {
    let html = page(INCIDENT);
    assert!(html.starts_with("<!DOCTYPE html>\n"), "{html}");
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
    ));
    // The SVG namespace is a name, not a place: nothing else looks like an address.
    // nor does the timeline's clip path, a reference inside the page.
    let rest = html
        .replace("http://www.w3.org/2000/svg", "")
        .replace("clip-path=\"url(#plot)\"", "")
        .replace("clip-path=\"url(#marks)\"", "");
    for forbidden in ["http:", "https:", "src=", "url(", "@import", "<link", "<iframe", "<object", "<embed"] {
        assert!(!rest.contains(forbidden), "the page holds {forbidden:?}");
    }
    // One inline style sheet and one inline script.
    assert_eq!(html.matches("<style>").count(), 1);
    assert_eq!(html.matches("<script>").count(), 1);
    assert_eq!(html.matches("</script>").count(), 1);
}

#[test]
fn the_html_report_reads_chain_first_then_timeline_then_every_finding_with_its_evidence() {
    let html = page(INCIDENT);
    let at = |what: &str| html.find(what).unwrap_or_else(|| panic!("no {what:?} in the page"));
    assert!(at("<section id=\"chain\">") < at("<section id=\"timeline\">"));
    assert!(at("<section id=\"timeline\">") < at("<section id=\"findings\">"));
    // The chain links each finding to its section.
    assert!(html.contains(
        "<a href=\"#finding-4\" class=\"sev error\">ERROR [4] duplicate-selection</a>: PR-4412 was selected"
    ));
    assert!(html.contains("← caused by <a href=\"#finding-3\" class=\"sev warning\">WARNING [3] sweep-overlap</a>"));
    for number in 1..=5 {
        assert!(html.contains(&format!("id=\"finding-{number}\"")), "finding {number}");
    }
    // Arithmetic and evidence lines with file:line.
    assert!(html.contains("lock_expired_at = activated_at + lockDuration (1178 s) = 09:52:38"), "{html}");
    assert!(html.contains("<code class=\"source\">fixtures/incident-2026-10-07/server.log:385</code>"), "{html}");
    assert!(html.contains("<code class=\"source\">fixtures/incident-2026-10-07/ledger.csv:19</code>"), "{html}");
    // The filters offer the case's jobs, rounds and workers.
    for option in ["run-0954-a", "repeat:pr-review-sweep:1791333180000", "api-1/52117"] {
        assert!(html.contains(&format!("\">{option}</option>")), "{option}");
    }
    // The picks are placed on the broken axis, apart.
    let places: Vec<f64> = html
        .match_indices("<g class=\"mark pick crit\"")
        .map(|(i, _)| {
            let rest = &html[i..];
            let u = rest.split("data-u0=\"").nth(1).unwrap().split('"').next().unwrap();
            u.parse().unwrap()
        })
        .collect();
    assert_eq!(places.len(), 2, "{places:?}");
    assert!((places[1] - places[0]).abs() * 910.0 >= 20.0, "{places:?}");
}

/// The reference incident, with markup where its ledger's ids and items go and a log line that
/// closes the script and opens an image with a handler.
pub fn hostile_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    for file in ["leasetrace.toml", "bullmq.json"] {
        std::fs::copy(reference.join(file), dir.path().join(file)).unwrap();
    }
    let ledger = std::fs::read_to_string(reference.join("ledger.csv"))
        .unwrap()
        .replace("run-0954-a", "</script><script>alert(1)</script>")
        .replace("PR-4412", "<img src=x onerror=alert(2)>")
        // A CSV field: quoted, its quote doubled.
        .replace("review posted", "\"\"\"'><svg onload=alert(3)>\u{202E}\"");
    std::fs::write(dir.path().join("ledger.csv"), ledger).unwrap();
    let log = std::fs::read_to_string(reference.join("server.log"))
        .unwrap()
        .replace("server starting pid=52117", "server starting pid=52117 </script><img src=y onerror=alert(4)>");
    assert!(log.contains("</script><img src=y"));
    std::fs::write(dir.path().join("server.log"), log).unwrap();
    dir
}

#[test]
fn hostile_text_in_a_case_stays_text_in_the_html_report() {
    let case = hostile_case();
    let html = page(case.path().to_str().unwrap());
    // The ids reached the page, as text.
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"), "{html}");
    assert!(html.contains("&quot;&#39;&gt;&lt;svg onload=alert(3)&gt;&lt;U+202E&gt;"), "{html}");
    // The log line, in the restart's evidence.
    assert!(html.contains("server starting pid=52117 &lt;/script&gt;&lt;img src=y onerror=alert(4)&gt;"), "{html}");
    // No markup of theirs: one script element (the page's own), no image, no handler.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(!html.contains("<img") && !html.contains("<svg onload") && !html.contains("\u{202E}"));
    assert!(!html.contains("onerror=alert(2)>") || html.contains("onerror=alert(2)&gt;"));
    for (i, _) in html.match_indices("onerror") {
        assert!(html[..i].ends_with("&lt;img src=x ") || html[..i].ends_with("&lt;img src=y "), "a handler at {i}");
    }
}

#[test]
fn the_docs_sample_is_the_real_output() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/outputs/html.md")).unwrap();
    let html = page(INCIDENT);
    let excerpt = |from: &str, to: &str| {
        let start = html.find(from).unwrap();
        let end = html[start..].find(to).unwrap() + start + to.len();
        html[start..end].to_string()
    };
    for part in [
        excerpt("<section id=\"chain\">", "</section>"),
        excerpt("<article class=\"finding error\" id=\"finding-4\"", "</article>"),
        // The second pick, wherever the axis places it.
        {
            let at = html.find("data-at=\"2026-10-07T00:54:06.360Z\"").unwrap();
            let start = html[..at].rfind("<g class=\"mark pick").unwrap();
            excerpt(&html[start..at], "</g>")
        },
    ] {
        assert!(
            doc.contains(&format!("```html\n{part}\n```")),
            "docs/outputs/html.md's sample is not the output:\n{part}"
        );
    }
}

#[test]
fn the_timeline_view_lists_every_event_with_its_source() {
    let run = leasetrace(&["timeline", INCIDENT, "--format", "html"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events =
        leasetrace(&["timeline", INCIDENT, "--format", "json"]).run().json()["timeline"].as_array().unwrap().len();
    let section = run.stdout.split("<section id=\"events\">").nth(1).unwrap().split("</section>").next().unwrap();
    assert_eq!(section.matches("<tr><td>").count(), events);
    assert!(run.stdout.contains("<h1>Timeline</h1>") && !run.stdout.contains("id=\"chart\""));
    assert!(run.stdout.contains("<code>fixtures/incident-2026-10-07/server.log:385</code>"));
    assert!(run.stdout.ends_with("</html>\n"));
}

#[test]
fn a_mark_several_findings_draw_is_drawn_once_with_every_number() {
    // In the fleet case one round is cited by five findings: it was drawn five times, one label
    // under another, each with its own number.
    let html = page("fixtures/fleet-bullmq-6.7.0-shared-ledger");
    let mut merged = 0;
    for lane in html.split("<g class=\"lane\"").skip(1) {
        let lane = lane.split("</g>\n</g>").next().unwrap_or(lane);
        let mut drawn: Vec<String> = Vec::new();
        for mark in lane.split("<g class=\"mark ").skip(1) {
            let class = mark.split('"').next().unwrap();
            let at = mark.split("data-at=\"").nth(1).unwrap().split('"').next().unwrap();
            let title = mark.split("<title>").nth(1).unwrap().split("</title>").next().unwrap();
            let findings = mark.split("data-finding=\"").nth(1).unwrap().split('"').next().unwrap();
            // The label without its numbers and code: what the mark draws.
            let label = title.rsplit_once(" [").map_or(title, |(label, _)| label);
            let numbers: Vec<usize> = title
                .rsplit_once(" [")
                .and_then(|(_, rest)| rest.split_once(']'))
                .map(|(numbers, _)| numbers.split(", ").map(|n| n.parse().unwrap()).collect())
                .unwrap();
            // Every number in the caption is a finding the mark answers to in the filters.
            let indices: Vec<usize> = findings.split(' ').map(|i| i.parse::<usize>().unwrap() + 1).collect();
            assert_eq!(numbers, indices, "{title}");
            merged += usize::from(numbers.len() > 1);
            let key = format!("{class}|{at}|{label}");
            assert!(!drawn.contains(&key), "drawn twice in one lane: {key}");
            drawn.push(key);
        }
    }
    assert!(merged > 0, "no mark in the fleet case is drawn for more than one finding");
}
